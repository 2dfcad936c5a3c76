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
# A coded index keeps its rows as int8, each dimension stepped by its largest value in the fitting sample times this:
# a later vector's larger value is clipped (one value in ten million of Wikipedia's), and a cosine is off by 7e-4 on
# average, 4e-3 at most (docs/decisions/0042-sign-codes-instead-of-a-graph.md).
INT8_HEADROOM = 1.25
# Codes scanned per step: four words and a distance each, a few MB, stay in the cache between the passes.
SCAN_CHUNK = 262_144


class SignProjection:
    """What turns an index's vectors into sign codes, and the scale of their int8 rows (fitted once, on its first
    vectors)."""

    def __init__(self, centre: np.ndarray, projection: np.ndarray, scale: np.ndarray) -> None:
        self.centre = np.asarray(centre, dtype=np.float32)
        self.projection = np.asarray(projection, dtype=np.float32)
        self.scale = np.asarray(scale, dtype=np.float32)

    @classmethod
    def fitted(cls, sample: np.ndarray) -> SignProjection:
        """A projection for vectors like ``sample``: centred on its mean (a shared component would put every vector
        on one side of each plane), random planes, orthonormal where the dimensions allow (fewer wasted bits); and
        each dimension's int8 step, from the sample's largest value with INT8_HEADROOM."""
        dim = sample.shape[1]
        planes = np.random.default_rng(SEED).standard_normal((dim, BITS))
        if dim >= BITS:
            planes = np.linalg.qr(planes)[0]
        top = np.abs(sample).max(axis=0) if len(sample) else np.ones(dim, np.float32)
        return cls(sample.mean(axis=0), planes, np.maximum(top, 1e-6) * INT8_HEADROOM / 127)

    def codes(self, vectors: np.ndarray) -> np.ndarray:
        """(WORDS, n) uint64: each vector's bits, a column each."""
        signs = (np.asarray(vectors, dtype=np.float32) - self.centre) @ self.projection > 0
        return np.ascontiguousarray(np.packbits(signs, axis=1).view(np.uint64).T)

    def narrowed(self, vectors: np.ndarray) -> np.ndarray:
        """``vectors`` as int8 rows in this scale."""
        return np.clip(np.rint(np.asarray(vectors, dtype=np.float32) / self.scale), -127, 127).astype(np.int8)

    def widened(self, rows: np.ndarray) -> np.ndarray:
        """int8 ``rows`` as float32 vectors."""
        return rows.astype(np.float32) * self.scale

    @classmethod
    def checked(cls, centre: np.ndarray, projection: np.ndarray, scale: np.ndarray) -> SignProjection:
        """The projection of a saved ``centre``, ``projection`` and ``scale``; ValueError for arrays of another
        shape."""
        if centre.ndim != 1 or projection.shape != (centre.size, BITS) or scale.shape != centre.shape:
            raise ValueError("the sign projection has another shape")
        return cls(centre, projection, scale)


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
