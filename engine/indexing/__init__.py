"""What an indexing run does beside the store, above the layers it combines: ``prepare`` computes, in the reader
processes, what the static model and the facets make of each document (ingest, embed and facets together)."""
