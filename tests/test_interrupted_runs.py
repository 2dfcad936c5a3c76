"""Indexing killed at the points between its writes (issue 33, item 9): the next run ends where a clean run does,
with every sentence's facets, the graph up to date and no temporary files left."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import docgen
import pytest

from engine import Index, IndexConfig
from engine.filestate import FileState
from engine.store.meta import Key

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
CONFIG = IndexConfig(workers=0, batch_sentences=40, facets=True)

# Runs an indexing of argv[1] into argv[2] that kills itself with SIGKILL at the point argv[3] names.
KILLED_RUN = """
import os, signal, sys
from engine import Index, IndexConfig
from engine.store import facetrows, fullrows, vectors

docs, folder, point = sys.argv[1:4]
calls = []
vectors.EXACT_BELOW = 0  # a graph at any size, as the test's own runs build (conftest.graph_always)

def kill_on(count):
    calls.append(1)
    if len(calls) == count:
        os.kill(os.getpid(), signal.SIGKILL)

if point == "facets":  # the second batch's facets, after its documents, sentences and vectors
    insert = facetrows.insert
    def insert_then_die(conn, rows):
        kill_on(2)
        insert(conn, rows)
    facetrows.insert = insert_then_die
else:  # the vectors written to their temporary file at the end of the run, not yet renamed
    replace = fullrows.replace_file
    def written_then_die(path, write):
        replace(path, lambda tmp: (write(tmp), kill_on(1)))
    fullrows.replace_file = written_then_die
with Index(folder, config=IndexConfig(workers=0, batch_sentences=40, facets=True)) as idx:
    idx.add([docs])
"""


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    docgen.write_toy_corpus(tmp_path / "docs", lines=200)
    return tmp_path / "docs"


def outcome(folder: Path) -> dict:
    """What an index holds: documents, sentences, sentences with facets, live graph vectors, stray files."""
    with Index(folder, create=False, config=CONFIG) as idx:
        count = lambda sql: idx.store.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "documents": count(f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'"),
            "sentences": count("SELECT count(*) FROM sentences"),
            "with facets": count("SELECT count(*) FROM sentences WHERE id IN (SELECT sentence_id FROM facets)"),
            "graph": idx.vector_index(idx.methods.embedder()).live_count,
            "temporary files": sorted(f.name for f in folder.glob("*.tmp")),
        }


@pytest.mark.parametrize("point", ["facets", "graph"])
def test_a_run_killed_between_writes_is_completed_by_the_next(docs: Path, tmp_path: Path, point: str,
                                                              graph_always: None) -> None:
    killed = tmp_path / "killed"
    run = subprocess.run([sys.executable, "-c", KILLED_RUN, str(docs), str(killed), point], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == -signal.SIGKILL, run.stderr
    if point == "graph":
        assert [f.name for f in killed.glob("vectors-static.npz.*.tmp")]  # the graph, written but never renamed

    with Index(killed, create=False, config=CONFIG) as idx:
        again = idx.add()
        generation = idx.store.meta.get(Key.GENERATION)
    assert not again.issues and (again.documents == 0) == (point == "graph")  # the killed batch read again
    clean = tmp_path / "clean"
    with Index(clean, config=CONFIG) as idx:
        idx.add([docs])
    expected = outcome(clean)
    assert expected["with facets"] == expected["sentences"] > 100 and expected["graph"] == expected["sentences"]
    assert outcome(killed) == expected  # 8,000 sentences kept no facets for good when they were written apart
    assert json.loads((killed / "vectors-static.json").read_text())["generation"] == generation


def test_indexing_removes_temporary_graph_files_left_by_killed_runs(docs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    with Index(folder, config=CONFIG) as idx:
        idx.add([docs])
    left = ["hnsw-static.tmp", "hnsw-static.rows.tmp", "vectors-static.npz.k3j_x9.tmp", "vectors-static.json.a1b2.tmp"]
    for name in left:
        (folder / name).write_bytes(b"partial")
    (folder / "notes.tmp").write_text("not ours")
    with Index(folder, create=False, config=CONFIG) as idx:
        assert idx.add().documents == 0
    assert sorted(f.name for f in folder.glob("*.tmp")) == ["notes.tmp"]
