"""The index on disk: SQLite tables, the word index and BM25, the HNSW graphs, and reclaiming space."""
