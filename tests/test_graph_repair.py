"""A missing, damaged or far-behind graph is repaired by the indexer, never inside a search (issue 58, item 5): the
search is ranked by words at once, with a note that says so, and the next indexing run rebuilds or catches up the
graph and saves it, after which searches rank by meaning again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import write_corpus

from engine import Index, IndexConfig
from engine.store import vectors

CONFIG = IndexConfig(workers=0)
QUERY = "a blue supergiant star in Orion"
NOTE = "ranked by their words alone until `quire index` rebuilds it"


def _notes(folder: Path, mode: str = "semantic") -> tuple[str, ...]:
    with Index(folder, create=False, config=CONFIG) as idx:
        response = idx.search(QUERY, mode=mode, explain=False)
        assert response.results  # the words still find the document
        return response.notes


def test_a_missing_graph_is_rebuilt_by_the_next_run_not_by_a_search(corpus: Path, tmp_path: Path,
                                                                     graph_always: None) -> None:
    folder = tmp_path / "index"
    with Index(folder, config=CONFIG) as idx:
        idx.add([corpus])
    (folder / "vectors-static.npz").unlink()
    for mode in ("semantic", "hybrid"):
        assert any("is missing or damaged" in n and NOTE in n for n in _notes(folder, mode))
    assert not (folder / "vectors-static.npz").exists()  # the searches built nothing
    with Index(folder, create=False, config=CONFIG) as idx:
        assert idx.add().documents == 0
    assert (folder / "vectors-static.npz").exists()
    assert not any(NOTE in n for n in _notes(folder))


def test_a_graph_far_behind_after_a_killed_run_is_caught_up_by_the_next_run(tmp_path: Path, graph_always: None,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "READER_CATCH_UP", 5)  # the test's few sentences stand for a large run's many
    docs = write_corpus(tmp_path / "docs")
    folder = tmp_path / "index"
    with Index(folder, config=CONFIG) as idx:
        idx.add([docs])
    saved = tmp_path / "saved"
    saved.mkdir()
    for path in folder.glob("vectors-*"):
        shutil.copy(path, saved / path.name)
    write_corpus(tmp_path / "docs" / "more", {f"n{i}.txt": f"Note {i} on tides and moons. The sea rose." * 3
                                              for i in range(6)})
    with Index(folder, create=False, config=CONFIG) as idx:
        idx.add()
    for path in saved.iterdir():  # the graph as a run killed before its last save left it
        shutil.copy(path, folder / path.name)
    assert any("sentences behind the database" in n and NOTE in n for n in _notes(folder))
    with Index(folder, create=False, config=CONFIG) as idx:
        idx.add()
    assert not any(NOTE in n for n in _notes(folder))
