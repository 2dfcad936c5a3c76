"""A large graph held in fewer dimensions: candidates from the graph, exact cosines from the full rows."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import opened_vectors, write_random_document

from engine.store import vectors
from engine.store.database import Store
from engine.store.fullrows import FullRows

DIM = 16


@pytest.fixture
def store(tmp_path, monkeypatch):
    # the sizes a real index reduces at, scaled down so a test graph crosses them
    monkeypatch.setattr(vectors, "GRAPH_DIM", 8)
    monkeypatch.setattr(vectors, "PROJECT_FROM", 100)
    monkeypatch.setattr(vectors, "RERANK", 60)
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)
    s = Store(tmp_path / "idx")
    yield s
    s.close()


def _exact(store: Store, query: np.ndarray, k: int) -> np.ndarray:
    """Ids of the ``k`` stored vectors nearest ``query``, by brute force."""
    ids, matrix = store.vectors("m")
    return ids[np.argsort(-(matrix @ query))[:k]]


def test_a_graph_past_the_threshold_is_reduced_and_scores_candidates_exactly(store):
    ids, v = write_random_document(store, "/a", 400, seed=1)
    index = opened_vectors(store)
    assert index._index.dim == 8 and index.reduced_path.exists() and index.rows_path.exists()
    assert not index.path.exists()
    hits = 0
    for q in v[:40]:
        found, sims = index.search(q, 5)
        exact_ids = _exact(store, q, 5)
        # the returned cosines are the full vectors' (as stored), best first
        stored_ids, stored = store.vectors("m", found.tolist())
        by_id = dict(zip(stored_ids.tolist(), stored @ q))
        assert np.allclose(sims, [by_id[i] for i in found.tolist()], atol=1e-6)
        assert (np.diff(sims) <= 0).all() and found[0] == exact_ids[0]
        hits += len(set(found.tolist()) & set(exact_ids.tolist()))
    assert hits / 200 >= 0.9
    got, rows = index.vectors([int(ids[3]), 10**9, int(ids[0])])
    assert got.tolist() == [int(ids[3]), int(ids[0])] and rows.shape == (2, DIM)
    assert np.allclose(rows, v[[3, 0]], atol=1e-3)


def test_a_small_graph_keeps_full_vectors_until_it_grows_past_the_threshold(store):
    write_random_document(store, "/a", 60, seed=2)
    index = opened_vectors(store)
    assert index._index.dim == DIM and index.path.exists() and not index.rows_path.exists()
    ids, v = write_random_document(store, "/b", 80, seed=3)
    index.add(ids, v)  # 140 vectors: the graph is rebuilt in 8 dimensions with the 60 it held
    assert index._index.dim == 8 and index.live_count == 140
    index.save(int(store.get_meta("generation", 0)))
    assert not index.path.exists() and index.reduced_path.exists()
    first = store.vectors("m")[0][0]
    assert index.search(store.vectors("m", [int(first)])[1][0], 1)[0].tolist() == [int(first)]


def test_a_reopened_reduced_graph_keeps_its_basis_and_deletions(store):
    ids, v = write_random_document(store, "/a", 300, seed=4)
    index = opened_vectors(store)
    index.remove(ids[:10])
    store.set_meta("generation", 7)
    index.save(7)
    reopened = opened_vectors(store)
    assert np.array_equal(reopened._basis, index._basis) and reopened.live_count == 290
    assert reopened.vectors(ids[:12].tolist())[0].tolist() == ids[10:12].tolist()
    found, _ = reopened.search(v[0], 20)
    assert int(ids[0]) not in found.tolist()
    assert reopened.search(v[50], 1)[0].tolist() == [int(ids[50])]


def test_a_crash_before_the_sidecar_names_the_reduced_graph_keeps_the_full_one(store):
    """Reducing writes the rows and the reduced graph, then the sidecar: killed in between, the old sidecar still
    names the full graph, which is still on disk."""
    write_random_document(store, "/a", 60, seed=5)
    index = opened_vectors(store)
    full_graph, sidecar = index.path.read_bytes(), index.sidecar.read_text()
    ids, v = write_random_document(store, "/b", 80, seed=6)
    index.add(ids, v)
    index.save(int(store.get_meta("generation", 0)))
    index.path.write_bytes(full_graph)
    index.sidecar.write_text(sidecar)  # as the crash left them
    reopened = opened_vectors(store)  # the full graph, caught up with what it missed
    assert reopened.live_count == 140
    assert reopened.search(v[5], 1)[0].tolist() == [int(ids[5])]


@pytest.mark.parametrize("damage", ["rows", "basis"])
def test_damaged_or_mismatched_rows_rebuild_the_graph(store, damage, caplog):
    ids, v = write_random_document(store, "/a", 200, seed=7)
    index = opened_vectors(store)
    if damage == "rows":
        index.rows_path.write_bytes(b"not a zip file")
    else:  # rows saved with another basis than the graph was built in (the sidecar names the graph's)
        other = np.linalg.qr(np.random.default_rng(8).normal(size=(DIM, 8)))[0].astype(np.float32)
        rows, _ = FullRows.load(index.rows_path, DIM)
        rows.save(index.rows_path, other)
    again = opened_vectors(store)
    assert "rebuilding" in caplog.text
    assert again.live_count == 200 and again._index.dim == 8
    assert [again.search(v[i], 1)[0].tolist() for i in range(30)] == [[int(i)] for i in ids[:30]]


def test_full_rows_find_labels_in_any_order_and_the_newest_copy_wins(tmp_path):
    rows = FullRows(2)
    rows.add(np.array([5, 9]), np.array([[1, 0], [0, 1]], np.float32))
    rows.add(np.array([3, 9]), np.array([[1, 1], [2, 2]], np.float32))  # 9 again, as a catch-up re-adds it
    got, m = rows.get([9, 4, 3, 5])
    assert got.tolist() == [9, 3, 5] and m.tolist() == [[2, 2], [1, 1], [1, 0]]
    rows.drop([3, 77])
    assert rows.get([3, 5])[0].tolist() == [5]
    rows.save(tmp_path / "rows.npz", np.eye(2, 1, dtype=np.float32))
    loaded, basis = FullRows.load(tmp_path / "rows.npz", 2)
    assert loaded.get([9, 3, 5])[0].tolist() == [9, 5] and basis.shape == (2, 1)
    with pytest.raises(ValueError):
        FullRows.load(tmp_path / "rows.npz", 3)


@pytest.mark.parametrize("labels", [np.arange(40, 60), np.r_[np.arange(40, 50), np.arange(51, 61)]])
def test_full_rows_find_rising_labels_with_and_without_gaps(labels: np.ndarray) -> None:
    """One indexing run's labels have no gap, and a label's row is its distance from the first; with a gap (or
    re-added labels) rows are searched for, with the same answers."""
    rows = FullRows(1)
    rows.add(labels[:12], labels[:12, None].astype(np.float32))
    rows.add(labels[12:], labels[12:, None].astype(np.float32))
    asked = np.array([59, 39, 40, 50, 61, 45, 1000, -3])
    rows.drop([45])
    got, vectors = rows.get(asked)
    expected = [int(a) for a in asked if a in set(labels.tolist()) and a != 45]
    assert got.tolist() == expected and vectors[:, 0].tolist() == expected
    rows.add(np.array([41]), np.array([[7.0]], np.float32))  # a catch-up re-adds a label: rows are searched for
    assert rows.get([41, 59])[1][:, 0].tolist() == [7.0, 59.0]


def test_a_full_graph_already_past_the_threshold_is_left_full_until_it_is_rebuilt(store, monkeypatch):
    """An index from before graphs were reduced must not stall its next run re-inserting every vector."""
    monkeypatch.setattr(vectors, "PROJECT_FROM", 10_000)
    write_random_document(store, "/a", 150, seed=9)
    index = opened_vectors(store)
    monkeypatch.setattr(vectors, "PROJECT_FROM", 100)
    ids, v = write_random_document(store, "/b", 20, seed=10)
    index.add(ids, v)
    assert index._index.dim == DIM and index.live_count == 170
    assert index.search(v[3], 1)[0].tolist() == [int(ids[3])]
    index.path.unlink()  # rebuilt from the stored vectors: reduced on the way
    assert opened_vectors(store)._index.dim == 8
