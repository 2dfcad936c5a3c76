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
# Sentences scored per query, over all the candidate documents: a document longer than its share (5 sentences for
# 400 candidates) is read at evenly spaced sentences, its best among them standing beside its best of the nearest
# sentences. This bounds a query's added work to a few milliseconds (docs/decisions/0015-document-meaning.md).
SCORED_SENTENCES = 2_048


def sentences_to_score(spans: Mapping[int, tuple[int, int]]) -> np.ndarray:
    """The ids of the sentences to score for documents whose sentences are ``spans`` (first, last id): all of each,
    or evenly spaced ones where a document is longer than its share of SCORED_SENTENCES."""
    if not spans:
        return np.zeros(0, np.int64)
    bounds = np.array(sorted(spans.values()), dtype=np.int64).reshape(-1, 2)  # ids in rising order
    length = bounds[:, 1] - bounds[:, 0] + 1
    taken = np.minimum(length, max(1, SCORED_SENTENCES // len(spans)))
    which = np.repeat(np.arange(len(bounds)), taken)
    nth = np.arange(taken.sum()) - np.repeat(np.cumsum(taken) - taken, taken)
    # the nth of ``taken`` evenly spaced sentences from first to last (every one where all are taken)
    step = (length - 1) / np.maximum(taken - 1, 1)
    return bounds[which, 0] + np.round(nth * step[which]).astype(np.int64)


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
    vectors = np.asarray(vectors, dtype=np.float32)
    if np.any(ids[1:] < ids[:-1]):  # copies of a few MB are a query's largest cost: made only when needed
        order = np.argsort(ids, kind="stable")
        ids, vectors = ids[order], vectors[order]
    owner = np.searchsorted(firsts, ids, side="right") - 1
    inside = owner >= 0
    inside[inside] = ids[inside] <= lasts[owner[inside]]
    if not inside.all():
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
    sums = _sums(vectors, starts)
    centroid = np.einsum("ij,j->i", sums, query) / np.maximum(np.linalg.norm(sums, axis=1), 1e-12)
    return {docs[o]: (float(b), float(c)) for o, b, c in zip(owner[starts].tolist(), best.tolist(), centroid.tolist())}


def _sums(vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sum of each run of ``vectors`` rows that begins at one of ``starts``.

    The runs are laid side by side in a zero-padded (runs, longest run, dim) array and summed along it: the same sums
    as summing each slice, in half the time for 4,096 rows in runs of about equal length (a loop over
    slices costs a call per document; np.add.reduceat along rows took twice as long as the loop). Where the longest
    run is more than twice the mean, padding would outgrow the rows and the slices are summed one by one.
    """
    counts = np.diff(np.r_[starts, len(vectors)])
    width = int(counts.max())
    if starts.size * width > 2 * len(vectors):
        return np.stack([vectors[a : a + n].sum(axis=0) for a, n in zip(starts.tolist(), counts.tolist())])
    padded = np.zeros((starts.size, width, vectors.shape[1]), np.float32)
    padded[np.repeat(np.arange(starts.size), counts), np.arange(len(vectors)) - np.repeat(starts, counts)] = vectors
    return padded.sum(axis=1)
