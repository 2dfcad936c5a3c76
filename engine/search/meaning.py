"""A document's meaning for a query, read from its sentences: its best sentence and its centroid.

The semantic ranking finds documents by their nearest sentences among the whole index's; weighing each candidate
document by all its sentences corrects what that misses. A document found by its words alone gets a semantic score
too; a long query's sentences are each compared with every sentence (the nearest-sentence search counts a sentence 0
for a query sentence it is not among the nearest of); and the centroid says what the whole document is about, so a
document that keeps to the query's subject outranks one with a single close sentence. On the five classic
collections this lifted hybrid nDCG@10 from 47.1 to 48.1 (docs/decisions/0015-document-meaning.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

# How much the centroid's cosine adds to the best sentence's (docs/decisions/0015-document-meaning.md).
CENTROID_WEIGHT = 1.0
# Sentences scored per query, over all the candidate documents: a document longer than its share is read at evenly
# spaced sentences (a book's centroid does not need all of them), which bounds a query's work on folders of books.
SCORED_SENTENCES = 32_768


def sentences_to_score(spans: Mapping[int, tuple[int, int]]) -> np.ndarray:
    """The ids of the sentences to score for documents whose sentences are ``spans`` (first, last id): all of each,
    or evenly spaced ones where a document is longer than its share of SCORED_SENTENCES."""
    if not spans:
        return np.zeros(0, np.int64)
    share = max(1, SCORED_SENTENCES // len(spans))
    parts = [np.arange(first, last + 1, dtype=np.int64) if last - first < share
             else np.unique(np.linspace(first, last, share).round().astype(np.int64))
             for first, last in spans.values()]
    return np.concatenate(parts)


def document_meaning(query: np.ndarray, ids: np.ndarray, vectors: np.ndarray, spans: Mapping[int, tuple[int, int]],
                     repeated: Collection[int] = (), penalty: float = 1.0) -> dict[int, tuple[float, float]]:
    """(best sentence's cosine, centroid's cosine) with ``query`` of each document of ``spans`` (its first and last
    sentence id) that has sentences among ``ids`` (their unit ``vectors``, in any order). Sentences in ``repeated``
    (boilerplate) count at ``penalty`` times their cosine for the best sentence; the centroid is the mean of the
    document's vectors, renormalised."""
    if ids.size == 0 or not spans:
        return {}
    docs = sorted(spans, key=lambda d: spans[d][0])
    firsts = np.array([spans[d][0] for d in docs], dtype=np.int64)
    lasts = np.array([spans[d][1] for d in docs], dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ids, vectors = ids[order], np.asarray(vectors, dtype=np.float32)[order]
    owner = np.searchsorted(firsts, ids, side="right") - 1
    inside = owner >= 0
    inside[inside] = ids[inside] <= lasts[owner[inside]]
    ids, vectors, owner = ids[inside], vectors[inside], owner[inside]
    if ids.size == 0:
        return {}
    query = np.asarray(query, dtype=np.float32)
    # numpy's own loop, one thread: a BLAS product waits for its second thread when the machine is busy
    # (docs/decisions/0013-exact-scan-threshold.md)
    sims = np.einsum("ij,j->i", vectors, query)
    if repeated:
        sims = np.where(np.isin(ids, np.fromiter(repeated, np.int64)), sims * penalty, sims)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    best = np.maximum.reduceat(sims, starts)
    sums = np.add.reduceat(vectors, starts, axis=0)
    centroid = np.einsum("ij,j->i", sums, query) / np.maximum(np.linalg.norm(sums, axis=1), 1e-12)
    return {docs[o]: (float(b), float(c)) for o, b, c in zip(owner[starts].tolist(), best.tolist(), centroid.tolist())}
