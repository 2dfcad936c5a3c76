"""Stored sentences' vectors and their cosines with a query: from the graph's memory, and from the database those
not in it yet (being indexed)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from engine.embed.base import Embedder
from engine.store.database import Store
from engine.store.vectors import VectorIndex

log = logging.getLogger(__name__)


class SentenceVectors:
    """Reads the vectors of sentences of one index for one embedding method (none without an embedder)."""

    def __init__(self, store: Store, vectors: VectorIndex | None, embedder: Embedder | None) -> None:
        self.store, self.graph, self.embedder = store, vectors, embedder

    def vectors(self, sentence_ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of those of ``sentence_ids`` that have vectors: from the graph's memory, and from the
        database those not in it yet (being indexed)."""
        ids, vectors = np.zeros(0, np.int64), np.zeros((0, self.embedder.dim if self.embedder else 0), np.float32)
        if self.embedder is None or len(sentence_ids) == 0:
            return ids, vectors
        if self.graph is not None:
            ids, vectors = self.graph.vectors(sentence_ids)
        wanted = np.asarray(sentence_ids, dtype=np.int64)
        missing = wanted[:0] if ids.size == wanted.size else np.setdiff1d(wanted, ids)  # all found: the common case
        if missing.size:
            more_ids, more = self.store.vectors.read(self.embedder.name, missing.tolist())
            if more_ids.size:
                ids, vectors = np.concatenate([ids, more_ids]), np.concatenate([vectors, more])
        return ids, vectors

    def cosines(self, query_vectors: np.ndarray | None, sentence_ids: list[int]) -> dict[int, float]:
        """Each of ``sentence_ids``' cosine with the query (the mean over its sentences' vectors); none without
        query vectors."""
        if query_vectors is None:
            return {}
        ids, vectors = self.vectors(sentence_ids)
        if ids.size == 0:
            return {}
        # float16 storage can put an exact match a hair above 1; a cosine shown to people must not exceed it
        sims = np.clip((vectors @ query_vectors.T).mean(axis=1), -1.0, 1.0)
        return dict(zip(ids.tolist(), sims.tolist()))
