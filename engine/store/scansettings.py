"""How a method's vectors are searched: from what size they carry sign codes, and how many candidates the codes
pick for the exact score."""

from __future__ import annotations

# Below EXACT_BELOW vectors a query multiplies every vector, which is exact and takes a few milliseconds at this
# size; nothing but the sidecar is written, and the vectors are read from the database when the index is opened
# (docs/decisions/0013-exact-scan-threshold.md). From there each vector also has a 256-bit sign code, the rows are
# saved beside the database, and a query scores exactly the CODE_CANDIDATES whose codes are nearest its own: recall@10
# against the exact scan stays above 0.95 up to the whole corpus (docs/decisions/0042-sign-codes-instead-of-a-graph.md).
EXACT_BELOW = 100_000
CODE_CANDIDATES = 2000
# Removed rows still cost memory and scan time; past this share of the live ones they are dropped from memory.
REBUILD_DELETED_SHARE = 0.3
