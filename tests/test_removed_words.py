"""Removed words leave the disk (issue 58, item 3): after `quire remove`, and after a re-index that finds a file gone
or changed, the raw bytes of every file in the index folder (index.db, its log, the graph files) hold neither the
removed text nor its words' keys in the word index; what is left is still found, by words and by phrases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ondisk
import pytest

from engine import Index, IndexConfig
from engine.store.meta import Key

REPO = Path(__file__).resolve().parent.parent
# the CLI building a graph at any size, so that the graph files are searched for the words too
GRAPH_CLI = "from engine.store import vectors; vectors.EXACT_BELOW = 0; from app.cli import main; main()"
MARKERS = ("zqxvaultpin", "hunterquux")  # words no stemmer changes and no other file holds
SECRET = f"The vault PIN is {MARKERS[0]} and the password is {MARKERS[1]}, kept in the drawer.\n"
KEPT = "The ferryman rowed travellers across the misty river every evening."


def quire(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", GRAPH_CLI, *args, "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def traces(folder: Path) -> dict[str, list[str]]:
    return ondisk.traces(folder, MARKERS)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(30):
        (folder / f"note{n}.txt").write_text(f"Note {n}. {KEPT} The tide was high on day {n}.\n" * 4)
    (folder / "secret.txt").write_text(SECRET * 3)
    return folder


@pytest.mark.parametrize("how", ["quire remove", "deleted, then indexed", "changed, then indexed"])
def test_removed_words_are_nowhere_in_the_index_folder(docs: Path, tmp_path: Path, how: str) -> None:
    db = tmp_path / "index"
    quire("index", str(docs), "--db", str(db), "--workers", "0")
    assert set(traces(db)) == {"index.db"}  # the markers are found where they are
    secret = docs / "secret.txt"
    if how == "quire remove":
        quire("remove", str(secret), "--db", str(db))
    elif how == "deleted, then indexed":
        secret.unlink()
        quire("index", "--db", str(db), "--workers", "0")
    else:
        secret.write_text("The drawer is empty now.\n")
        quire("index", "--db", str(db), "--workers", "0")
    assert {p.name for p in db.iterdir()} >= {"index.db", "vectors-static.npz"}
    assert traces(db) == {}  # FTS5's segments held both words, and the free pages their text
    for query, mode in ((KEPT, "lexical"), (f'"{KEPT}"', "lexical"), (KEPT, "hybrid")):
        found = json.loads(quire("search", query, "--db", str(db), "-k", "3", "--mode", mode, "--no-explain").stdout)
        assert found["results"] and all(Path(r["path"]).name.startswith("note") for r in found["results"])


def test_a_purge_cut_short_is_done_by_the_next_run(docs: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        idx.store.delete_paths([str(docs / "secret.txt")])  # as a run killed between its delete and its purge
        assert idx.store.needs_purge() and traces(tmp_path / "index")
    (docs / "secret.txt").unlink()
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        report = idx.add([docs])
        assert report.documents == 0 and not idx.store.needs_purge()
        assert idx.store.meta.get(Key.WORDS_TO_PURGE) is None
    assert traces(tmp_path / "index") == {}
