"""Removing documents gives their disk space back (engine.store.space), on real indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from engine import Index, IndexConfig
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.store import space
from engine.store.database import Store

FILES = 40
SENTENCES = 60
WORDS = ("harbour lantern orchard glacier violin turbine parallax porpoise kettle bridge "
         "meadow comet ledger quarry saddle tundra").split()


def _folder(root: Path) -> Path:
    """FILES text files of SENTENCES sentences each, every sentence its own."""
    root.mkdir()
    for i in range(FILES):
        lines = [f"Report {i} line {j} says the {WORDS[(i + j) % len(WORDS)]} met the {WORDS[(i * j) % len(WORDS)]}"
                 f" near marker {i * SENTENCES + j}." for j in range(SENTENCES)]
        (root / f"r{i:02d}.txt").write_text(" ".join(lines), encoding="utf-8")
    return root


def _bytes(db: Path) -> int:
    """The database file and its WAL."""
    wal = db / "index.db-wal"
    return (db / "index.db").stat().st_size + (wal.stat().st_size if wal.exists() else 0)


@pytest.mark.parametrize("how", ["quire remove", "deleted from disk, then indexed again"])
def test_removing_most_of_a_folder_shrinks_the_database(tmp_path: Path, how: str) -> None:
    docs = _folder(tmp_path / "docs")
    db = tmp_path / "index"
    with Index(db, config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        full = _bytes(db)
        gone = [p for p in sorted(docs.iterdir()) if p.name != "r39.txt"]
        if how == "quire remove":
            assert idx.remove(gone) == FILES - 1
        else:
            for path in gone:
                path.unlink()
            assert idx.add([docs]).removed == FILES - 1
        # while the index is still open (the app keeps its connections): the WAL is emptied, not only checkpointed
        assert not (db / "index.db-wal").exists() or (db / "index.db-wal").stat().st_size == 0
        assert _bytes(db) < 0.25 * full
        hit = idx.search("Report 39 line 7 says", k=3, mode="lexical")
        assert [Path(r.path).name for r in hit.results] == ["r39.txt"]
    with sqlite3.connect(db / "index.db") as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == space.AUTO_VACUUM_INCREMENTAL
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # the removed passages are gone from the word indexes too, not only hidden
        assert conn.execute("SELECT count(*) FROM lexical_dead").fetchone()[0] == 0


def _doc(n: int) -> NewDocument:
    texts = [f"document {n} sentence {j} about {WORDS[j % len(WORDS)]} number {n * 100 + j}" for j in range(100)]
    sentences = tuple(SentenceRecord(t, 0, len(t), None, hash(t) & 0xFFFF) for t in texts)
    return NewDocument(f"/d/{n}", 1, 1.0, str(n), str(n), "text", sentences, ((0, 49), (50, 99)))


def _legacy_store(folder: Path, monkeypatch: pytest.MonkeyPatch, documents: int) -> Store:
    """A store made as before incremental vacuum (auto_vacuum NONE), holding ``documents`` documents."""
    with monkeypatch.context() as m:
        m.setattr(space, "prepare", lambda conn: None)
        store = Store(folder)
    vectors = np.random.default_rng(0).normal(size=(100, 64)).astype(np.float32)
    for n in range(documents):
        store.write_documents([_doc(n)], vectors, "m")
    assert store.db.execute("PRAGMA auto_vacuum").fetchone()[0] == space.AUTO_VACUUM_NONE
    return store


def test_an_index_made_before_is_vacuumed_once_mostly_free_and_becomes_incremental(tmp_path, monkeypatch) -> None:
    store = _legacy_store(tmp_path / "idx", monkeypatch, 30)
    try:
        store.delete_paths([f"/d/{n}" for n in range(3)])
        small = store.reclaim_space()  # a tenth removed: the free pages wait for the next inserts
        assert not small.vacuumed and small.pages_freed == 0
        assert small.bytes_after == store.path.stat().st_size  # the WAL is emptied all the same
        store.delete_paths([f"/d/{n}" for n in range(3, 27)])
        large = store.reclaim_space()
        assert large.vacuumed and large.bytes_after < 0.3 * small.bytes_after
        assert store.db.execute("PRAGMA auto_vacuum").fetchone()[0] == space.AUTO_VACUUM_INCREMENTAL
        assert store.db.execute("PRAGMA temp_store").fetchone()[0] == 2  # the store's own setting, back
        assert [r[0] for r in store.words.fts_bm25('"number 2905"', 5)] and not store.words.fts_bm25('"number 105"', 5)
    finally:
        store.close()


def test_reclaim_refuses_to_run_inside_a_transaction(tmp_path) -> None:
    store = Store(tmp_path / "idx")
    try:
        with store.db.atomic(), pytest.raises(RuntimeError, match="outside a transaction"):
            store.db.execute("INSERT INTO meta VALUES ('x', '1')")
            store.reclaim_space()
    finally:
        store.close()
