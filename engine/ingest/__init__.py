"""Reading files: walking folders, the readers of each format, the reader processes, sentences and passages."""
