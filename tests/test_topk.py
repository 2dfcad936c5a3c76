"""engine.store.topk: the k best scores, ties at the cut to the lowest key, so a shallow read is the head of a deep
one (a filtered search reads ten times deeper and must see what a search without filters sees)."""

from __future__ import annotations

import numpy as np

from engine.store.topk import best_k


def test_ties_at_the_cut_go_to_the_lowest_key_and_a_shallow_read_is_the_head_of_a_deep_one() -> None:
    rng = np.random.default_rng(3)
    scores = rng.choice([0.1, 0.5, 0.5, 0.5, 0.9], size=2_000)  # hundreds of ties at every cut
    keys = rng.permutation(2_000)
    deep = best_k(scores, keys, 1_500)
    for k in (1, 7, 200, 401, 1_500):
        shallow = best_k(scores, keys, k)
        assert shallow.tolist() == deep[:k].tolist()
    ordered = list(zip(-scores[deep], keys[deep]))
    assert ordered == sorted(ordered)  # best first, ties by key


def test_asking_for_more_than_there_are_gives_them_all_and_zero_gives_none() -> None:
    scores, keys = np.array([0.2, 0.9, 0.2]), np.array([5, 1, 2])
    assert best_k(scores, keys, 10).tolist() == [1, 2, 0]
    assert best_k(scores, keys, 0).tolist() == []
