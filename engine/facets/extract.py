"""Facets of indexed sentences and of queries, and their compact storage form.

A document sentence's facets cluster the words that co-occur with it: its own words and, at lower weight, those of
the sentences before and after it (the paper's co-occurrence set N_t, Sec. 2.1, is the neighbouring sentences;
including the sentence itself keeps the facets about what the passage says). Stop words are removed and the rest
SIF-weighted, as the paper does for co-occurring words (Sec. 3.1, Appendix C.1).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed.static import quantise
from engine.facets.nnsc import cluster
from engine.facets.space import FacetSpace

log = logging.getLogger(__name__)

# Facets per sentence: 3-5 read well as chips; the paper's similarity results use 10 (Table 2), which bench/ compares.
DEFAULT_K = 5
# A neighbouring sentence's words count this much relative to the sentence's own.
NEIGHBOUR_WEIGHT = 0.5
# The paper caps co-occurring words at 30 after stop-word removal (Appendix C.1); the heaviest are kept.
MAX_CONTEXT_WORDS = 32
# Sentences clustered per numpy pass: bounds the (sentences x words x dim) temporaries to some 30 MB.
CHUNK = 1024
# A facet explaining less than this share of the weighted words is noise, not a facet.
MIN_MASS_SHARE = 0.02


@dataclass(frozen=True)
class FacetSet:
    """Facets of one text: unit ``centres`` (k, dim), heaviest first, and each one's share of the words (``mass``)."""

    centres: np.ndarray
    mass: np.ndarray

    @property
    def k(self) -> int:
        """Number of facets (0 for a text without content words)."""
        return int(self.mass.size)


def empty(dim: int) -> FacetSet:
    """The facets of a text with no content word."""
    return FacetSet(np.zeros((0, dim), np.float32), np.zeros(0, np.float32))


def context_words(space: FacetSpace, texts: Sequence[str], doc_of: np.ndarray | None = None,
                  max_words: int = MAX_CONTEXT_WORDS, *,
                  ids: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Word ids and weights of each sentence's co-occurrence set, padded: (B, J) ids and (B, J) weights (0 = pad).

    ``doc_of`` gives each sentence's document (consecutive sentences of one document are neighbours); None means
    every text stands alone (queries, benchmark pairs). Each distinct word appears once, at its largest weight.
    ``ids`` are the texts' word ids (``space.ids(texts)``) when the caller has them already: indexing tokenises
    once for the embedder and the facets.
    """
    n = len(texts)
    flat, offsets = ids if ids is not None else space.ids(list(texts))
    owner = np.repeat(np.arange(n), np.diff(offsets))
    weight = space.sif[flat]
    targets, ids, weights = [owner], [flat], [weight]
    if doc_of is not None and n > 1:
        doc_of = np.asarray(doc_of)
        for shift in (1, -1):  # words of sentence i join sentence i + shift's context
            neighbour = owner + shift
            ok = (neighbour >= 0) & (neighbour < n)
            ok[ok] = doc_of[neighbour[ok]] == doc_of[owner[ok]]
            targets.append(neighbour[ok])
            ids.append(flat[ok])
            weights.append(weight[ok] * NEIGHBOUR_WEIGHT)
    target, word, weight = np.concatenate(targets), np.concatenate(ids), np.concatenate(weights)
    keep = weight > 0
    target, word, weight = target[keep], word[keep], weight[keep]
    # one entry per (sentence, word) at its largest weight, then the heaviest max_words per sentence
    order = np.lexsort((-weight, word, target))
    target, word, weight = target[order], word[order], weight[order]
    first = np.ones(target.size, dtype=bool)
    first[1:] = (target[1:] != target[:-1]) | (word[1:] != word[:-1])
    target, word, weight = target[first], word[first], weight[first]
    order = np.lexsort((word, -weight, target))
    target, word, weight = target[order], word[order], weight[order]
    starts = np.searchsorted(target, np.arange(n))
    slot = np.arange(target.size) - starts[target]
    keep = slot < max_words
    width = max(1, int(slot[keep].max()) + 1) if keep.any() else 1
    out_ids = np.zeros((n, width), dtype=np.int64)
    out_weights = np.zeros((n, width), dtype=np.float32)
    out_ids[target[keep], slot[keep]] = word[keep]
    out_weights[target[keep], slot[keep]] = weight[keep]
    return out_ids, out_weights


@dataclass(frozen=True)
class FacetBatch:
    """Facets of many texts as arrays: ``centres`` (B, K, E) unit rows heaviest first, ``mass`` (B, K) shares;
    text ``i`` has ``counts[i]`` facets, its first rows (the rest are below MIN_MASS_SHARE: noise, not facets)."""

    centres: np.ndarray
    mass: np.ndarray
    counts: np.ndarray

    def sets(self) -> list[FacetSet]:
        """One :class:`FacetSet` per text."""
        return [FacetSet(self.centres[i, :c], self.mass[i, :c]) for i, c in enumerate(self.counts.tolist())]

    def packed(self) -> list[tuple[int, bytes, bytes, bytes]]:
        """:func:`pack` of every text's facets, quantising the whole batch in one pass."""
        b, k, e = self.centres.shape
        q, scales = quantise(self.centres.reshape(b * k, e))
        q, scales = q.reshape(b, k, e), scales.reshape(b, k)
        mass = self.mass.astype(np.float32, copy=False)
        return [(c, q[i, :c].tobytes(), scales[i, :c].tobytes(), mass[i, :c].tobytes())
                for i, c in enumerate(self.counts.tolist())]


def facet_batches(space: FacetSpace, ids: np.ndarray, weights: np.ndarray, k: int = DEFAULT_K) -> Iterator[FacetBatch]:
    """Cluster each row's weighted words into at most ``k`` facets (NNSC, Eq. 1), ``CHUNK`` rows per numpy pass."""
    for start in range(0, ids.shape[0], CHUNK):
        chunk_ids, chunk_weights = ids[start : start + CHUNK], weights[start : start + CHUNK]
        result = cluster(space.unit[chunk_ids], chunk_weights, k)
        total = result.mass.sum(axis=1, keepdims=True)
        share = np.divide(result.mass, total, out=np.zeros_like(result.mass), where=total > 0)
        norms = np.linalg.norm(result.centres, axis=2, keepdims=True)
        unit = np.divide(result.centres, norms, out=np.zeros_like(result.centres), where=norms > 0)
        order = np.argsort(-share, axis=1, kind="stable")
        share = np.take_along_axis(share, order, axis=1)
        unit = np.take_along_axis(unit, order[:, :, None], axis=1)
        yield FacetBatch(unit, share, (share >= MIN_MASS_SHARE).sum(axis=1))


def facets_of_words(space: FacetSpace, ids: np.ndarray, weights: np.ndarray, k: int = DEFAULT_K) -> list[FacetSet]:
    """:func:`facet_batches` as one :class:`FacetSet` per row."""
    return [f for batch in facet_batches(space, ids, weights, k) for f in batch.sets()]


def document_facets(space: FacetSpace, texts: Sequence[str], doc_of: Sequence[int] | np.ndarray,
                    k: int = DEFAULT_K) -> list[FacetSet]:
    """Facets of consecutive sentences, ``doc_of[i]`` naming sentence i's document (see :func:`context_words`)."""
    if not texts:
        return []
    ids, weights = context_words(space, texts, np.asarray(doc_of))
    return facets_of_words(space, ids, weights, k)


def text_facets(space: FacetSpace, texts: Sequence[str], k: int = DEFAULT_K) -> list[FacetSet]:
    """Facets of texts that stand alone (queries, benchmark sentences): their own content words only."""
    if not texts:
        return []
    ids, weights = context_words(space, texts)
    return facets_of_words(space, ids, weights, k)


# -- storage ------------------------------------------------------------------------------------------------------
def pack(facets: FacetSet) -> tuple[int, bytes, bytes, bytes]:
    """(k, int8 centres, float32 row scales, float32 masses) for the facets table: about dim bytes per facet."""
    batch = FacetBatch(facets.centres[None], facets.mass[None], np.array([facets.k]))
    return batch.packed()[0]


def unpack(k: int, centres: bytes, scales: bytes, mass: bytes, dim: int) -> FacetSet:
    """Inverse of :func:`pack` (centres renormalised after dequantising)."""
    if k == 0:
        return empty(dim)
    q = np.frombuffer(centres, dtype=np.int8).reshape(k, -1).astype(np.float32)
    rows = q * np.frombuffer(scales, dtype=np.float32)[:, None]
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return FacetSet(rows, np.frombuffer(mass, dtype=np.float32).copy())
