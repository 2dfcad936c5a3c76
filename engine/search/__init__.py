"""Answering queries: ranking by meaning and by words, fusion, the relevance gate, best passages, suggestions."""
