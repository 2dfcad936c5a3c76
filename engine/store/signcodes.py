"""Sign codes: 256 bits per vector, the signs of its centred vector under a fixed random projection, whose Hamming
distances to a query's code order vectors nearly as their cosines do.

A large index scans every code for a query's candidates and scores only those exactly with the full vectors
(engine.store.fullrows): the codes are a twentieth of the bytes an HNSW graph held per sentence, need no compiled
library, and the scan's recall is set by how many candidates are scored, not by a graph's walk
(docs/decisions/0042-sign-codes-instead-of-a-graph.md). Codes are kept column by column (one array of 64-bit
words per bit range), so a scan reads each word of every vector in one pass.
"""

from __future__ import annotations

import numpy as np

BITS = 256
WORDS = BITS // 64
# A fixed seed: the projection is part of the saved codes' meaning, and tests and rebuilds must give the same codes.
SEED = 20261207
# Codes scanned per step: four words and a distance each, a few MB, stay in the cache between the passes.
SCAN_CHUNK = 262_144


class SignProjection:
    """The centre and projection that turn vectors into sign codes (fitted once, on an index's first vectors)."""

    def __init__(self, centre: np.ndarray, projection: np.ndarray) -> None:
        self.centre = np.asarray(centre, dtype=np.float32)
        self.projection = np.asarray(projection, dtype=np.float32)

    @classmethod
    def fitted(cls, sample: np.ndarray) -> SignProjection:
        """A projection for vectors like ``sample``: centred on its mean (a shared component would put every vector
        on one side of each plane), random planes, orthonormal where the dimensions allow (fewer wasted bits)."""
        dim = sample.shape[1]
        planes = np.random.default_rng(SEED).standard_normal((dim, BITS))
        if dim >= BITS:
            planes = np.linalg.qr(planes)[0]
        return cls(sample.mean(axis=0), planes)

    def codes(self, vectors: np.ndarray) -> np.ndarray:
        """(WORDS, n) uint64: each vector's bits, a column each."""
        signs = (np.asarray(vectors, dtype=np.float32) - self.centre) @ self.projection > 0
        return np.ascontiguousarray(np.packbits(signs, axis=1).view(np.uint64).T)

    @classmethod
    def checked(cls, centre: np.ndarray, projection: np.ndarray) -> SignProjection:
        """The projection of a saved ``centre`` and ``projection``; ValueError for arrays of another shape."""
        if centre.ndim != 1 or projection.shape != (centre.size, BITS):
            raise ValueError("the sign projection has another shape")
        return cls(centre, projection)


def distances(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Hamming distance (uint16) of the query's code, a (WORDS, 1) column, to each column of ``codes``."""
    count = codes.shape[1]
    out = np.empty(count, np.uint16)
    word, bits = np.empty(min(count, SCAN_CHUNK), np.uint64), np.empty(min(count, SCAN_CHUNK), np.uint8)
    for start in range(0, count, SCAN_CHUNK):
        end = min(start + SCAN_CHUNK, count)
        n, part = end - start, out[start:end]
        part[:] = 0
        for w in range(codes.shape[0]):
            np.bitwise_xor(codes[w, start:end], query[w, 0], out=word[:n])
            np.bitwise_count(word[:n], out=bits[:n])
            part += bits[:n]
    return out


def nearest(dist: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` smallest of ``dist`` (all below the n-th's distance, then those at it in position
    order), in position order: a count of each distance finds the cut without sorting millions."""
    if dist.size <= n:
        return np.arange(dist.size)
    cut = int(np.searchsorted(np.cumsum(np.bincount(dist, minlength=BITS + 2)), n))
    inside = np.flatnonzero(dist < cut)
    return np.sort(np.concatenate([inside, np.flatnonzero(dist == cut)[: n - inside.size]]))
