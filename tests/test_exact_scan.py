"""A small collection has no codes: every vector is scored, and nothing but the sidecar is written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import opened_vectors, write_random_document

from engine import Index, IndexConfig, Mode
from engine.store import vectors
from engine.store.database import Store

DIM = 16
CONFIG = IndexConfig(workers=0)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "idx")
    yield s
    s.close()


def _nearest(store: Store, query: np.ndarray, k: int) -> list[int]:
    """Ids of the ``k`` stored vectors nearest ``query``, by brute force over the database."""
    ids, matrix = store.vectors.read("m")
    return ids[np.argsort(-(matrix @ query), kind="stable")[:k]].tolist()


def test_a_small_collection_is_scanned_exactly_and_writes_no_rows(store):
    ids, v = write_random_document(store, "/a", 300, seed=1)
    index = opened_vectors(store)
    assert not index.path.exists()
    assert json.loads(index.sidecar.read_text())["exact"] is True
    for q in v[:20]:
        found, sims = index.search(q, 10)
        assert found.tolist() == _nearest(store, q, 10)
        assert np.all(np.diff(sims) <= 0)
    index.remove(ids[:150])
    assert index.live_count == 150
    found, _ = index.search(v[0], 300)
    assert found.size == 150 and not set(found.tolist()) & set(ids[:150].tolist())
    assert index.vectors(ids[148:152])[0].tolist() == ids[150:152].tolist()


def test_codes_are_made_when_the_collection_reaches_the_threshold(store, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 100)
    write_random_document(store, "/a", 60, seed=2)
    index = opened_vectors(store)
    assert not index.coded and index.live_count == 60
    ids, v = write_random_document(store, "/b", 60, seed=3)
    index.add(ids, v)
    assert index.coded and index.live_count == 120
    assert index.search(v[5], 1)[0].tolist() == [int(ids[5])]
    index.save(store.meta.generation())
    assert index.path.exists() and "exact" not in json.loads(index.sidecar.read_text())
    reopened = opened_vectors(store)
    assert reopened.coded and reopened.live_count == 120 and reopened.path.exists()
    stored_ids, stored = store.vectors.read("m")
    exact = dict(zip(stored_ids.tolist(), stored))
    for q in v[:20]:  # 120 rows, every one a candidate: the exact ten, but for int8 rounding at near ties
        found = reopened.search(q, 10)[0].tolist()
        tenth = float(np.sort(stored @ q)[-10])
        assert found[0] == _nearest(store, q, 1)[0] and all(exact[i] @ q >= tenth - 0.01 for i in found)


def test_a_graph_left_by_an_earlier_quire_goes_at_the_next_run(tmp_path: Path, corpus: Path, monkeypatch) -> None:
    folder = tmp_path / "index"
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)  # as indexes were made before small ones had no graph
    with Index(folder, config=CONFIG) as idx:
        idx.add([corpus])
        before = [r.path for r in idx.search("Rigel is a blue supergiant star", mode=Mode.SEMANTIC).results]
    assert (folder / "vectors-static.npz").exists()
    monkeypatch.undo()
    with Index(folder, create=False, config=CONFIG) as idx:
        assert [r.path for r in idx.search("Rigel is a blue supergiant star", mode=Mode.SEMANTIC).results] == before
        assert (folder / "vectors-static.npz").exists()  # searches write nothing
        assert idx.add().documents == 0
    assert sorted(f.name for f in folder.glob("vectors-*")) == ["vectors-static.json"]
    with Index(folder, create=False, config=CONFIG) as idx:
        assert [r.path for r in idx.search("Rigel is a blue supergiant star", mode=Mode.SEMANTIC).results] == before
