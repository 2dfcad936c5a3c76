"""Evaluation metrics in plain numpy, so every number in ``bench/results`` comes from code a reader can check.

Conventions: ranks are 1-based; ``relevance`` maps a document id to a graded judgement (> 0 = relevant); a query
with no relevant document is the caller's to drop (BEIR evaluates only judged queries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of ``x`` with tied values sharing the mean of their ranks (what Spearman's rho needs)."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    # group boundaries of equal values; each group gets the mean of the positions it spans
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_x)) + 1]
    ends = np.r_[starts[1:], x.size]
    mean_rank = (starts + ends + 1) / 2.0  # mean of start+1 .. end
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of tie-averaged ranks (scipy.stats.spearmanr's definition)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"spearman needs two 1-d arrays of equal length >= 2, got {a.shape} and {b.shape}")
    ra, rb = average_ranks(a), average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denominator) if denominator > 0 else float("nan")


def mrr(ranks: Sequence[int] | np.ndarray) -> float:
    """Mean reciprocal rank of 1-based ranks."""
    ranks = np.asarray(ranks, dtype=np.float64)
    return float((1.0 / ranks).mean())


def hits_at(ranks: Sequence[int] | np.ndarray, k: int) -> float:
    """Share of ranks that are at most ``k``."""
    return float((np.asarray(ranks) <= k).mean())


def ndcg_at(ranking: Sequence[str], relevance: Mapping[str, float], k: int = 10) -> float:
    """nDCG@k with exponential gains 2^rel - 1 (Burges et al., 2005): sum gain / log2(rank + 1), over the ideal.

    Exponential rather than trec_eval's linear gains because the reference numbers (docs/benchmarks.md) use them; the
    two agree on binary judgements and differ only on graded ones (Cranfield: 32.02 vs 33.14 for BM25).
    """
    def gain(grades: np.ndarray) -> np.ndarray:
        return np.where(grades > 0, np.exp2(grades) - 1.0, 0.0)  # a zero or negative judgement is not relevant

    gains = gain(np.array([relevance.get(doc, 0.0) for doc in ranking[:k]], dtype=np.float64))
    ideal = np.sort(gain(np.array(list(relevance.values()), dtype=np.float64)))[::-1][:k]
    if not ideal.size or ideal[0] <= 0:
        raise ValueError("nDCG is undefined for a query without relevant documents")
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    return float((gains * discounts[: gains.size]).sum() / (ideal * discounts[: ideal.size]).sum())


def recall_at(ranking: Sequence[str], relevance: Mapping[str, float], k: int = 100) -> float:
    """Share of the relevant documents that appear in the first ``k`` of ``ranking``."""
    relevant = {doc for doc, grade in relevance.items() if grade > 0}
    if not relevant:
        raise ValueError("recall is undefined for a query without relevant documents")
    return len(relevant.intersection(ranking[:k])) / len(relevant)
