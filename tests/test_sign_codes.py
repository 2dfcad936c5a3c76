"""Sign codes (engine.store.signcodes): Hamming distances as a naive count gives them, the cut at the n nearest, and
coded rows that find the exact nearest, survive a save and refuse a damaged file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.store import signcodes
from engine.store.fullrows import FullRows
from engine.store.signcodes import SignProjection


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_distances_are_the_bits_that_differ() -> None:
    v = _unit(1000, 32, 1)
    projection = SignProjection.fitted(v)
    codes, query = projection.codes(v), projection.codes(v[:1])
    naive = [sum(bin(int(a) ^ int(b)).count("1") for a, b in zip(codes[:, i], query[:, 0])) for i in range(1000)]
    assert signcodes.distances(codes, query).tolist() == naive
    assert naive[0] == 0 and codes.shape == (signcodes.WORDS, 1000)


def test_the_same_vectors_give_the_same_codes_in_any_batch() -> None:
    v = _unit(300, 256, 2)
    projection = SignProjection.fitted(v)
    whole = projection.codes(v)
    assert np.array_equal(whole[:, 100:110], projection.codes(v[100:110]))
    assert np.array_equal(whole, SignProjection.fitted(v).codes(v))  # the planes come from a fixed seed


def test_nearest_cuts_at_n_smallest_in_position_order() -> None:
    dist = np.array([5, 1, 3, 3, 0, 3, 9], np.uint16)
    assert signcodes.nearest(dist, 3).tolist() == [1, 2, 4]  # 0 and 1, then the first of the ties at 3
    assert signcodes.nearest(dist, 5).tolist() == [1, 2, 3, 4, 5]
    assert signcodes.nearest(dist, 10).tolist() == list(range(7))


def test_coded_rows_find_the_exact_nearest_among_their_candidates(tmp_path: Path) -> None:
    v = _unit(5000, 64, 3)
    rows = FullRows(64, codes=SignProjection.fitted(v[:1000]))
    rows.add(np.arange(1, 5001), v)
    stored = rows.live()[1]
    hits = 0
    for q in v[:50]:
        exact = np.argsort(-(stored @ q), kind="stable")[:10] + 1
        found, sims = rows.nearest(q, 10, candidates=500)
        hits += len(set(found.tolist()) & set(exact.tolist()))
        assert np.all(np.diff(sims) <= 0)
    assert hits / 500 >= 0.95  # a tenth of the rows scored exactly
    assert rows.nearest(v[7], 1, candidates=5000)[0].tolist() == [8]
    rows.drop(np.arange(1, 4991))
    assert sorted(rows.nearest(v[0], 20, candidates=100)[0].tolist()) == list(range(4991, 5001))
    rows.save(tmp_path / "rows.npz")
    loaded = FullRows.load(tmp_path / "rows.npz", 64)
    assert loaded.live_count == 10 and loaded.nearest(v[4995], 1)[0].tolist() == [4996]
    assert loaded.compacted().dropped == 0 and loaded.compacted().nearest(v[4995], 1)[0].tolist() == [4996]


def test_a_damaged_rows_file_is_refused(tmp_path: Path) -> None:
    v = _unit(2000, 16, 4)
    rows = FullRows(16, codes=SignProjection.fitted(v))
    rows.add(np.arange(2000), v)
    path = tmp_path / "rows.npz"
    rows.save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError):
        FullRows.load(path, 16)
    with pytest.raises(ValueError):
        FullRows.load(tmp_path / "rows.npz", 32)
