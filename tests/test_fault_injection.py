"""`quire index` killed with SIGKILL at seeded random moments, then run again to the end (issue 33): the index equals
one made by a clean run (documents, sentences, facets, the word index, the graph), no temporary file is left, and
no process the killed indexer started outlives it."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import docgen
import pytest
from clock import wait_until
from processes import descendants, ended

from engine import Index

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc")]

REPO = Path(__file__).resolve().parent.parent
SEED = 33
KILLS = 6
# Small batches, so that a run makes many transactions and graph saves for a kill to fall between; a reader process
# asked for, so that a kill also falls while it reads (it must end with the indexer).
INDEX_ARGS = ["--batch", "20", "--workers", "1", "--json"]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """The toy corpus as 42 files."""
    docgen.write_toy_corpus(tmp_path / "docs")
    return tmp_path / "docs"


def start_index(docs: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", "index", str(docs), "--db", str(db), *INDEX_ARGS],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for_documents(run: subprocess.Popen, db: Path, count: int) -> None:
    """Wait until ``db`` records ``count`` documents, or ``run`` has ended. Starting (imports, the model, reader
    processes) takes most of a short run: a kill timed from the start would nearly always fall before the first
    write."""
    assert wait_until(lambda: run.poll() is not None or documents(db) >= count, timeout=120), "no documents written"


def documents(db: Path) -> int:
    """How many documents ``db`` records now (0 before it is made)."""
    try:
        with sqlite3.connect(f"file:{db / 'index.db'}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    except sqlite3.Error:
        return 0


def outcome(db: Path, docs: Path) -> dict:
    """What an index holds, independent of row ids: each file's record and sentences, the facets, the word index's
    vocabulary with its counts, the vector index's sentences (a graph's, or the exact rows'), and stray temporary
    files."""
    with Index(db) as idx:
        rows = lambda sql: idx.store.db.execute(sql).fetchall()  # noqa: E731
        return {
            "documents": sorted((Path(p).relative_to(docs).as_posix(), s, n) for p, s, n in
                                rows("SELECT path, status, sentences FROM documents")),
            "sentences": sorted((Path(p).name, o, t) for p, o, t in rows(
                "SELECT d.path, s.ordinal, s.text FROM sentences s JOIN documents d ON d.id = s.doc_id")),
            "passages": rows("SELECT count(*) FROM passages")[0][0],
            "with facets": rows("SELECT count(*) FROM sentences WHERE id IN (SELECT sentence_id FROM facets)")[0][0],
            "words": rows("SELECT term, doc, cnt FROM passages_vocab ORDER BY term"),
            "graph": idx.vector_index(idx.methods.embedder()).live_count,
            "temporary files": sorted(f.name for f in db.glob("*.tmp")),
        }


def test_index_killed_at_random_moments_ends_as_a_clean_run(docs: Path, tmp_path: Path) -> None:
    clean = start_index(docs, tmp_path / "clean")
    assert clean.wait(timeout=120) == 0, clean.stderr.read()
    files = len(list(docs.iterdir()))
    # Each kill falls once the index holds a number of documents drawn at random (the last once it holds them all,
    # while the run saves its graph), a little after, so that it lands inside a transaction or between two.
    rng = random.Random(SEED)
    points = [*sorted(rng.sample(range(1, files), KILLS - 1)), files]
    killed_db = tmp_path / "killed"
    killed = 0
    for documents in points:
        run = start_index(docs, killed_db)
        wait_for_documents(run, killed_db, documents)
        time.sleep(rng.uniform(0, 0.05))
        children = descendants(run.pid)
        run.send_signal(signal.SIGKILL)
        killed += run.wait(timeout=30) == -signal.SIGKILL
        assert wait_until(partial(ended, children), timeout=60), "processes of the killed indexer live on"
    assert killed >= KILLS - 1  # a run may end before its kill

    final = start_index(docs, killed_db)
    assert final.wait(timeout=120) == 0, final.stderr.read()
    expected = outcome(tmp_path / "clean", docs)
    # the default path: every sentence in the vector index (scanned exactly at this size), facets not stored
    assert expected["graph"] == len(expected["sentences"]) > 400 and expected["with facets"] == 0
    assert outcome(killed_db, docs) == expected
