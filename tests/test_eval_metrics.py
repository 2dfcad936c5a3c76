"""Each benchmark metric on cases small enough to compute by hand (the expected numbers are worked out inline)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.eval.datasets import load_collection, load_evalrank, load_sts
from engine.eval.intrinsic import evalrank_ranks
from engine.eval.metrics import average_ranks, hits_at, mrr, ndcg_at, recall_at, spearman

BENCH = Path(__file__).parent / "data" / "bench"


def test_average_ranks_share_ties():
    assert average_ranks(np.array([10, 20, 20, 5])).tolist() == [2.0, 3.5, 3.5, 1.0]


def test_spearman_with_ties_by_hand():
    # ranks a = [1, 2.5, 2.5, 4], b = [1, 3, 2, 4]; centred: [-1.5, 0, 0, 1.5] and [-1.5, .5, -.5, 1.5]
    # rho = 4.5 / sqrt(4.5 * 5)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(22.5))


def test_spearman_matches_scipy_and_is_rank_based():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 5, 200), rng.normal(size=200)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert spearman([1, 2, 3], [10, 100, 1000]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_mrr_and_hits_by_hand():
    ranks = [1, 2, 4]
    assert mrr(ranks) == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
    assert hits_at(ranks, 1) == pytest.approx(1 / 3)
    assert hits_at(ranks, 3) == pytest.approx(2 / 3)


def test_ndcg_graded_by_hand():
    relevance = {"a": 2, "b": 1, "c": 1}
    # gains 2^rel - 1: a 3, b 1, c 1. DCG = 3/log2(2) + 0 + 1/log2(4) = 3.5; ideal = 3 + 1/log2(3) + 1/log2(4)
    expected = 3.5 / (3 + 1 / math.log2(3) + 0.5)
    assert ndcg_at(["a", "x", "b"], relevance, 10) == pytest.approx(expected)
    assert ndcg_at(["a", "b", "c"], relevance, 10) == pytest.approx(1.0)


def test_ndcg_cuts_at_k_and_needs_a_relevant_document():
    ranking = [f"x{i}" for i in range(10)] + ["a"]
    assert ndcg_at(ranking, {"a": 1}, 10) == 0.0
    assert ndcg_at(ranking, {"a": 1}, 11) == pytest.approx(1 / math.log2(12))
    with pytest.raises(ValueError):
        ndcg_at(["a"], {"a": 0}, 10)


def test_recall_by_hand():
    relevance = {"a": 1, "b": 3, "c": 1, "z": 0}
    assert recall_at(["a", "x", "b"], relevance, 100) == pytest.approx(2 / 3)
    assert recall_at(["a", "x", "b"], relevance, 1) == pytest.approx(1 / 3)


def test_evalrank_ranks_by_hand():
    # a pool with mean zero; the query's own score (1) is excluded, ties with the positive are not counted
    pool = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [0.8, 0.6], [-0.8, -0.6]], dtype=np.float32)
    pairs = [(0, 2), (0, 4), (2, 3)]
    # (0,2): positive scores 0; only v4 (0.8) is strictly higher -> 2.  (0,4): 0.8, nothing higher -> 1.
    # (2,3): positive scores -1; v0, v1 (0), v4 (0.6), v5 (-0.6) are higher -> 5
    assert evalrank_ranks(pool, pairs).tolist() == [2, 1, 5]
    # the pool is mean-centred first, so a shared offset changes nothing
    assert evalrank_ranks(pool + np.array([10.0, -3.0], dtype=np.float32), pairs).tolist() == [2, 1, 5]


def test_loaders_read_the_benchmark_layouts():
    sts = load_sts(BENCH / "sts" / "sts-test.csv")
    assert len(sts.first) == len(sts.gold) == len(sts.source) == 8 and sts.gold[0] == pytest.approx(4.0)
    assert sts.source[0] == "fixture"
    er = load_evalrank(BENCH / "evalrank")
    assert all(er.pool[a] != er.pool[b] for a, b in er.pairs)
    assert (er.pairs[1][1], er.pairs[1][0]) == er.pairs[0]  # both directions are in the file
    small = load_evalrank(BENCH / "evalrank", pairs_limit=3, pool_limit=8)
    assert len(small.pairs) == 3 and len(small.pool) == 8
    coll = load_collection(BENCH / "retrieval" / "tiny")
    assert coll.judged_queries() == ["1", "2", "3"]
    assert coll.qrels["1"] == {"d1": 2.0, "d2": 1.0}
    sub = load_collection(BENCH / "retrieval" / "tiny", queries_limit=1, distractors=2)
    assert set(sub.queries) == {"1"} and len(sub.documents) == 4
