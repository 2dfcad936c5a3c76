"""Pooling word vectors into sentence vectors: grouping texts by length sums exactly what a per-text loop sums."""

from __future__ import annotations

import numpy as np

from engine.embed.static import pool


def test_pool_equals_a_per_text_sum_for_ragged_and_empty_texts() -> None:
    rng = np.random.default_rng(0)
    table = rng.normal(size=(50, 8)).astype(np.float32)
    lengths = np.array([3, 0, 1, 3, 7, 0, 1, 12])
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    flat = rng.integers(0, 50, size=int(offsets[-1]))
    expected = np.stack([table[flat[a:b]].sum(axis=0) for a, b in zip(offsets[:-1], offsets[1:])])
    assert np.allclose(pool(table, flat, offsets), expected, atol=1e-5)
    assert pool(table, flat[:0], np.zeros(1, dtype=np.int64)).shape == (0, 8)
