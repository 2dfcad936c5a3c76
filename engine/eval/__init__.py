"""quire's benchmark harness: metrics, loaders for the benchmark formats, runners (see ``harness.run``).

Heavy or optional pieces (torch methods, bm25s, model2vec) are imported only by the runs that need them.
"""
