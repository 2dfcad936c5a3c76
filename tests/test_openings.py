"""Documents' openings read by the indexer for the second look (engine.indexing.openings, engine.store.openings):
stored once per searchable document, gone with its text, read again when it changes, and scoring as an opening
read at query time does."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from engine import Index
from engine.embed import onnx
from engine.indexing import openings as phase
from engine.search import secondlook
from engine.store import meta

pytestmark = pytest.mark.skipif(not onnx.available(), reason="the second look's model is not built")

TOPICS = [
    "Tomatoes need full sun and regular watering. Prune the suckers weekly.",
    "The night train to Vienna leaves at 22:10 from platform 4. Buy tickets early.",
    "Dolphins are marine mammals. They breathe air through a blowhole.",
    "Sourdough needs a lively starter. Rye flour ferments faster than wheat.",
    "A binary search halves the interval each step. The list must be sorted first.",
]
QUERIES = ["overnight rail service to Austria", "how often should I cut back tomato shoots", "sea creatures"]


def _folder(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / f"note{i:02d}.txt").write_text(f"Note {i}.\n\n{TOPICS[i % len(TOPICS)]} Entry number {i}.\n",
                                              encoding="utf-8")
    return root


def _stored(index_dir: Path) -> dict[int, bytes]:
    with sqlite3.connect(index_dir / "index.db") as conn:
        return dict(conn.execute("SELECT doc_id, vector FROM openings").fetchall())


def _looks(index: Index) -> list[list[tuple[str, float, float]]]:
    out = []
    for query in QUERIES:
        response = index.search(query, k=5, include_weak=True, explain=False)
        out.append([(r.path, r.explanation.confidence_features["m_opening"],
                     r.explanation.confidence_features["m_sentence"]) for r in response.results
                    if "m_opening" in r.explanation.confidence_features])
    return out


def test_each_searchable_document_has_its_opening_and_a_query_scores_it_as_if_read_now(tmp_path):
    folder = _folder(tmp_path / "docs", 5)
    (folder / "empty.txt").write_text("", encoding="utf-8")
    with Index(tmp_path / "idx") as index:
        index.add([folder])
        documents = {r.path: r for r in index.store.documents.listing(str(folder))}
        stored = _looks(index)
    indexed = {r.id for r in documents.values() if r.status == "indexed" and r.sentences}
    assert set(_stored(tmp_path / "idx")) == indexed and len(indexed) == 5
    with sqlite3.connect(tmp_path / "idx" / "index.db") as conn:
        conn.execute("DELETE FROM openings")
    with Index(tmp_path / "idx") as index:
        read_now = _looks(index)
    assert stored == read_now and all(stored)


def test_a_changed_document_is_read_again_and_a_removed_one_leaves_no_opening(tmp_path):
    folder = _folder(tmp_path / "docs", 3)
    with Index(tmp_path / "idx") as index:
        index.add([folder])
        ids = {Path(r.path).name: r.id for r in index.store.documents.listing(str(folder))}
    before = _stored(tmp_path / "idx")
    (folder / "note00.txt").write_text("Volcanoes erupt molten rock called lava.\n", encoding="utf-8")
    (folder / "note01.txt").unlink()
    with Index(tmp_path / "idx") as index:
        index.add([folder])
    after = _stored(tmp_path / "idx")
    assert ids["note01.txt"] not in after
    assert after[ids["note02.txt"]] == before[ids["note02.txt"]]
    changed = np.frombuffer(after[ids["note00.txt"]], dtype=np.float16)
    old = np.frombuffer(before[ids["note00.txt"]], dtype=np.float16)
    assert float(changed.astype(np.float32) @ old.astype(np.float32)) < 0.9


def test_a_run_stopped_while_reading_openings_leaves_the_rest_to_the_next(tmp_path):
    folder = _folder(tmp_path / "docs", phase.CHUNK + 8)
    stop = threading.Event()

    def progress(p):
        if p.phase == "openings" and p.files_done:
            stop.set()

    with Index(tmp_path / "idx") as index:
        index.add([folder], progress=progress, cancel=stop)
    assert len(_stored(tmp_path / "idx")) == phase.CHUNK
    with Index(tmp_path / "idx") as index:
        index.add([folder])
    assert len(_stored(tmp_path / "idx")) == phase.CHUNK + 8


def test_openings_read_by_another_model_are_ignored_and_read_again(tmp_path):
    folder = _folder(tmp_path / "docs", 3)
    with Index(tmp_path / "idx") as index:
        index.add([folder])
        wanted = _looks(index)
    with sqlite3.connect(tmp_path / "idx" / "index.db") as conn:
        conn.execute("UPDATE openings SET vector = ?", [np.ones(secondlook.onnx.DIM, np.float16).tobytes()])
        meta.put(conn, meta.Key.OPENINGS, "another model")
    with Index(tmp_path / "idx") as index:
        assert _looks(index) == wanted  # the rows of another model are not read
        index.add([folder])
    with sqlite3.connect(tmp_path / "idx" / "index.db") as conn:
        assert meta.get(conn, meta.Key.OPENINGS) == secondlook.reader()
        assert all(np.frombuffer(v, np.float16).std() > 0 for (v,) in conn.execute("SELECT vector FROM openings"))
