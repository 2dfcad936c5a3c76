"""Sentence-level quality and speed of one encoder: STS-B Spearman, EvalRank, sentences per second.

An encoder here is any callable from a list of texts to a (n, d) array, so product methods and baselines
(model2vec) are measured by the same code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed.base import normalise_rows
from engine.eval.datasets import EvalRankData, StsPairs
from engine.eval.metrics import hits_at, mrr, spearman

log = logging.getLogger(__name__)

Encode = Callable[[Sequence[str]], np.ndarray]

# Queries scored per matrix product in EvalRank: 512 x 25k float32 scores is 50 MB, small next to the pool.
_EVALRANK_BLOCK = 512


@dataclass(frozen=True)
class EvalRankScore:
    """MRR and Hits@k over all positive pairs, each in [0, 1]."""

    mrr: float
    hits1: float
    hits3: float
    pairs: int
    pool: int


def unit_rows(x: np.ndarray) -> np.ndarray:
    """A float32 copy of ``x`` with unit rows (zero rows stay zero): encoders outside quire need not normalise."""
    return normalise_rows(np.array(x, dtype=np.float32))


def sts_similarities(encode: Encode, pairs: StsPairs) -> np.ndarray:
    """The cosine of each pair's embeddings.

    Both sides are encoded in one call: the split's sentences are one collection, which matters to a method that
    centres on its collection (engine.embed.centre)."""
    both = unit_rows(encode([*pairs.first, *pairs.second]))
    a, b = both[:len(pairs.first)], both[len(pairs.first):]
    return (a * b).sum(axis=1)


def sts_spearman(encode: Encode, pairs: StsPairs) -> float:
    """Spearman correlation between the cosine of each pair's embeddings and the gold score."""
    return spearman(sts_similarities(encode, pairs), pairs.gold)


def evalrank_ranks(vectors: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Rank of each pair's positive among the pool, as the EvalRank toolkit computes it (paper Sec. 4.2).

    The pool's vectors are mean-centred and then L2-normalised; the rank is 1 + the number of pool sentences,
    other than the query itself, whose cosine with the query is strictly higher than the positive's. The
    positive's score is read from the same matrix product as the others, so rounding cannot rank it above itself.
    The released toolkit's loop lacks that guard, so its reference numbers run lower (docs/benchmarks.md, "EvalRank
    by the toolkit's code", has both).
    """
    pool = unit_rows(vectors - vectors.mean(axis=0, keepdims=True))
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ranks = np.empty(index.shape[0], dtype=np.int64)
    for start in range(0, index.shape[0], _EVALRANK_BLOCK):
        block = index[start : start + _EVALRANK_BLOCK]
        rows = np.arange(block.shape[0])
        scores = pool[block[:, 0]] @ pool.T
        positive = scores[rows, block[:, 1]].copy()
        scores[rows, block[:, 0]] = -np.inf  # the query itself never competes
        ranks[start : start + block.shape[0]] = 1 + (scores > positive[:, None]).sum(axis=1)
    return ranks


def evalrank(encode: Encode, data: EvalRankData) -> EvalRankScore:
    """EvalRank with cosine similarity over the data's pool."""
    ranks = evalrank_ranks(encode(list(data.pool)), data.pairs)
    return EvalRankScore(mrr(ranks), hits_at(ranks, 1), hits_at(ranks, 3), len(data.pairs), len(data.pool))


def sentences_per_second(encode: Encode, sentences: Sequence[str], *, warmup: int = 64) -> float:
    """Throughput of ``encode`` on ``sentences`` in one call, after a small warm-up call (lazy init, kernels)."""
    encode(list(sentences[:warmup]))
    started = time.perf_counter()
    encode(list(sentences))
    return len(sentences) / max(time.perf_counter() - started, 1e-9)
