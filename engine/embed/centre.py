"""Collection centring: subtract the mean vector of the collection a method's vectors live in, then re-normalise.

Why: neural embeddings (Eq. 1 of the micro-tuning paper) share a large component set by the text's domain. The
bundled head was fitted on Wikipedia, so it mispredicts the words of captions, forum posts or a user's notes in the
same way for every text of that kind, and every text's weight change carries that common direction. It says nothing
about how two texts of one collection differ, yet it dominates their cosine. Removing the collection's mean (as
EvalRank's toolkit centres its pool, and as All-But-The-Top removes the common direction of word vectors) measured
on STS-B test: Spearman 64.31 with Eq. 1 alone, 66.15 centred on the split's sentences; the mean of Wikipedia
sentences does not help (`bench/neural_speed.py`, bench/README.md). This step is not in the paper.

A collection's mean is stable (on 500 STS-B dev pairs, centring on the mean of 32 random sentences of the 987 gave
Spearman 74.2, on all of them 74.4, against 70.6 uncentred), so an index fixes its centre from the first batch it
embeds and keeps it: stored vectors never go stale.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.embed.base import Embedder, normalise_rows

# Fewer texts than this do not say what their collection has in common (two texts centred on their own mean point
# in opposite directions); such a collection is left uncentred.
MIN_TEXTS = 32


def collection_mean(vectors: np.ndarray) -> np.ndarray:
    """The mean of a collection's (unit) vectors, or zeros when there are too few to estimate it."""
    rows = vectors[np.linalg.norm(vectors, axis=1) > 0]  # texts without content carry no direction
    if len(rows) < MIN_TEXTS:
        return np.zeros(vectors.shape[1], dtype=np.float32)
    return rows.mean(axis=0, dtype=np.float64).astype(np.float32)


def centre_rows(vectors: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Unit rows of ``vectors - mean`` (float32); zero rows (texts without content) stay zero."""
    present = np.linalg.norm(vectors, axis=1, keepdims=True) > 0
    return normalise_rows(np.where(present, vectors - mean, 0.0).astype(np.float32))


def wants_centring(embedder: Embedder) -> bool:
    """Whether the method's vectors are meant to be centred on their collection (the neural method's are)."""
    return bool(getattr(embedder, "centres_on_collection", False))


class CentredEmbedder:
    """An embedder whose vectors are centred on a fixed collection mean; the same name, fingerprint and width, since
    the mean belongs to the index that stores it, not to the method."""

    def __init__(self, inner: Embedder, mean: np.ndarray) -> None:
        self.inner = inner
        self.mean = np.asarray(mean, dtype=np.float32)
        self.name, self.fingerprint = inner.name, inner.fingerprint

    @property
    def dim(self) -> int:
        """The wrapped method's width."""
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Centred unit rows."""
        return centre_rows(self.inner.encode(texts), self.mean)


def encode_collection(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors of ``texts`` taken as one collection (a file given to `quire embed`, a benchmark's sentences):
    centred on their own mean when the method centres, as an index centres on its documents."""
    vectors = embedder.encode(texts)
    return centre_rows(vectors, collection_mean(vectors)) if wants_centring(embedder) else vectors
