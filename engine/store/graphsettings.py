"""The HNSW graphs' settings: how they are built and searched, and from what size an index has one."""

from __future__ import annotations

# The graph is built cheaply and searched widely: inserting is most of indexing time and its cost grows with
# ef_construction, while one search is cheap even at a high ef_search. These keep recall@10 (ties counted) above
# 0.95 on the 3.09M-sentence corpus; the measurements: docs/decisions/0004-hnsw-graph-settings.md.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 32
HNSW_EF_SEARCH = 2500
# Threads per insert (-1: one per core). Fewer threads cost less CPU, but at full size inserting outgrows one and
# becomes the run's critical path (docs/decisions/0004-hnsw-graph-settings.md).
ADD_THREADS = -1
# A graph past PROJECT_FROM vectors holds them cut to their first GRAPH_DIM principal components (fitted on those
# first vectors) and finds RERANK candidates there, which the full vectors (engine.store.fullrows) then score
# exactly; smaller graphs hold full vectors. Inserting is bound by reading neighbours' vectors, and these are half
# the size, for a little recall (docs/decisions/0005-graph-dimensions.md).
GRAPH_DIM = 128
PROJECT_FROM = 20_000
RERANK = 200
# Below EXACT_BELOW vectors a method has no graph: a search multiplies the query by every vector, which is exact and
# takes a few milliseconds at this size (an hnswlib search at ef 2500 takes longer), indexing inserts nothing, and
# nothing but the sidecar is written; the vectors are read from the database when the index is opened. The graph is
# built once the collection reaches it (docs/decisions/0013-exact-scan-threshold.md).
EXACT_BELOW = 100_000
# hnswlib's add_items is not safe to run beside knn_query: both take the lock, and adds go in chunks this size so a
# search during indexing waits a fraction of a second at most.
ADD_CHUNK = 4096
# Marked-deleted elements still cost memory and search time; past this share the graph is rebuilt.
REBUILD_DELETED_SHARE = 0.3
