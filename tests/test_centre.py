"""Collection centring (engine.embed.centre): the arithmetic every centred method and index relies on."""

from __future__ import annotations

import numpy as np

from engine.embed.base import normalise_rows
from engine.embed.centre import MIN_TEXTS, centre_rows, collection_mean


def _unit_rows(n: int, dim: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=dim) * 3  # a strong common direction, like a domain's in neural vectors
    return normalise_rows((shared + rng.normal(size=(n, dim))).astype(np.float32))


def test_the_mean_ignores_texts_without_content():
    rows = _unit_rows(MIN_TEXTS)
    with_empty = np.vstack([rows, np.zeros((5, rows.shape[1]), np.float32)])
    assert np.allclose(collection_mean(with_empty), rows.mean(axis=0), atol=1e-6)


def test_too_few_texts_are_left_uncentred():
    # Two texts centred on their own mean would point in opposite directions whatever they say.
    rows = _unit_rows(MIN_TEXTS - 1)
    assert not collection_mean(rows).any()
    assert np.allclose(centre_rows(rows, collection_mean(rows)), rows, atol=1e-6)


def test_centred_rows_are_unit_have_no_common_direction_and_zero_rows_stay_zero():
    rows = np.vstack([_unit_rows(200), np.zeros((1, 12), np.float32)])
    mean = collection_mean(rows)
    centred = centre_rows(rows, mean)
    assert centred.dtype == np.float32
    assert np.allclose(np.linalg.norm(centred[:-1], axis=1), 1.0, atol=1e-5)
    assert not centred[-1].any()
    # Before, every pair looked alike through the shared direction; after, pairs are about orthogonal on average.
    assert (rows[:-1] @ rows[:-1].T).mean() > 0.5
    assert abs((centred[:-1] @ centred[:-1].T).mean()) < 0.05
