"""A damaged index on real files (issue 33, item 7): no segfault, no traceback, a message that says what to do, and
the graph rebuilt from the vectors in the database where it can be."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Index, IndexConfig
from engine.errors import IndexDamagedError

REPO = Path(__file__).resolve().parent.parent
CONFIG = IndexConfig(workers=0)
RIGEL = "Rigel is a blue supergiant star in the constellation of Orion."


# the CLI building a graph at any size, as the index of the `indexed` fixture has one (conftest.graph_always)
GRAPH_CLI = "from engine.store import vectors; vectors.EXACT_BELOW = 0; from app.cli import main; main()"


def quire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", GRAPH_CLI, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def indexed(corpus: Path, tmp_path: Path, graph_always: None) -> Path:
    folder = tmp_path / "index"
    with Index(folder, config=CONFIG) as idx:
        idx.add([corpus])
    return folder


def _first_result(folder: Path, mode: str) -> str:
    done = quire("search", RIGEL, "--db", str(folder), "--mode", mode, "-k", "1", "--json", "--no-explain")
    assert done.returncode == 0, done.stderr
    return Path(json.loads(done.stdout)["results"][0]["path"]).name


@pytest.mark.parametrize("damage", ["random bytes", "empty", "truncated", "another index's"])
def test_a_damaged_graph_is_rebuilt_from_the_database(indexed: Path, tmp_path: Path, corpus: Path,
                                                      damage: str) -> None:
    graph, sidecar = indexed / "vectors-static.npz", indexed / "vectors-static.json"
    data = graph.read_bytes()
    if damage == "random bytes":  # in a graph, links that hnswlib followed out of its memory; here, vectors and codes
        middle = len(data) // 3
        graph.write_bytes(data[:middle] + os.urandom(len(data) // 3) + data[middle + len(data) // 3:])
    elif damage == "empty":
        graph.write_bytes(b"")
    elif damage == "truncated":
        graph.write_bytes(data[: len(data) // 2])
    else:  # the files of another index of the same method, whose generation counts the same
        other = tmp_path / "other"
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "note.txt").write_text("Kettles boil water for tea.", encoding="utf-8")
        with Index(other, config=CONFIG) as idx:
            idx.add([tmp_path / "elsewhere"])
        shutil.copy(other / "vectors-static.npz", graph)
        shutil.copy(other / "vectors-static.json", sidecar)
    damaged = {f.name: f.read_bytes() for f in indexed.glob("vectors-*")}

    for mode in ("semantic", "hybrid"):
        assert _first_result(indexed, mode) == "rigel.txt"  # was rc 139 (segfault) with random bytes
    done = quire("search", RIGEL, "--db", str(indexed), "--mode", "semantic", "--json")
    # not rebuilt inside the search (that took minutes on a large index): ranked by words, and said so
    assert "ranked by their words alone until `quire index` rebuilds it" in " ".join(json.loads(done.stdout)["notes"])
    assert {f.name: f.read_bytes() for f in indexed.glob("vectors-*")} == damaged  # searches write nothing

    with Index(indexed, create=False, config=CONFIG) as idx:  # a run with nothing to read saves the rebuilt graph
        assert idx.add().documents == 0
        sentences = idx.store.sentences.count()
    info = json.loads(sidecar.read_text())
    assert info["size"] == graph.stat().st_size and info["count"] == sentences
    assert graph.read_bytes() != damaged[graph.name]
    with Index(indexed, create=False, config=CONFIG) as idx:
        assert [Path(r.path).name for r in idx.search(RIGEL, k=1, mode="semantic").results] == ["rigel.txt"]
        assert idx.vector_index(idx.methods.embedder()).live_count == sentences


def test_an_hnsw_graph_left_by_an_earlier_quire_is_replaced_by_the_next_run(indexed: Path) -> None:
    """An index made when quire kept HNSW graphs: searches rank by words and say so, the next run saves the
    vectors and deletes the graph's files (they hold every sentence's vector)."""
    for name in ("vectors-static.npz", "vectors-static.json"):
        (indexed / name).rename(indexed / name.replace("vectors-static.npz", "hnsw-static.rows.npz")
                                .replace("vectors-static.json", "hnsw-static.json"))
    (indexed / "hnsw-static.reduced.bin").write_bytes(b"graph")
    done = quire("search", RIGEL, "--db", str(indexed), "--mode", "semantic", "--json")
    assert "ranked by their words alone until `quire index` rebuilds it" in " ".join(json.loads(done.stdout)["notes"])
    with Index(indexed, create=False, config=CONFIG) as idx:
        assert idx.add().documents == 0
    assert sorted(p.name for p in indexed.glob("*static*")) == ["vectors-static.json", "vectors-static.npz"]
    assert _first_result(indexed, "semantic") == "rigel.txt"


def _damage_pages(db: Path, table: str | None) -> None:
    """Overwrite the root page of ``table`` (None: every page after the first) with random bytes."""
    with sqlite3.connect(db) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", [table]).fetchone() if table else None
    size = db.stat().st_size
    start, length = ((root[0] - 1) * page_size, page_size) if root else (page_size, size - page_size)
    with db.open("r+b") as f:
        f.seek(start)
        f.write(os.urandom(length))


def _refused_as_damaged(folder: Path, *command: str) -> None:
    done = quire(*command, "--db", str(folder))
    assert done.returncode == 1, (command, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "is damaged" in done.stderr and f"`quire index --rebuild --db {folder}`" in done.stderr, done.stderr


@pytest.mark.parametrize("damage", ["not a database", "pages"])
def test_a_damaged_database_gives_a_clear_message(indexed: Path, damage: str) -> None:
    db = indexed / "index.db"
    if damage == "not a database":
        db.write_bytes(os.urandom(db.stat().st_size))
    else:
        _damage_pages(db, None)
    for command in [("search", RIGEL), ("search", "orion blue star", "--mode", "lexical"), ("status",), ("index",)]:
        _refused_as_damaged(indexed, *command)


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_damage_found_by_a_search_gives_the_same_message(indexed: Path, mode: str) -> None:
    """Opening reads the metadata only; damaged sentence pages are found when a search shows its results. Semantic
    and hybrid searches rank the words on another thread, which is done before the error reaches the caller."""
    _damage_pages(indexed / "index.db", "sentences")
    _refused_as_damaged(indexed, "search", RIGEL, "--mode", mode)
    with pytest.raises(IndexDamagedError), Index(indexed, create=False) as idx:
        idx.search(RIGEL, mode=mode)


def test_an_empty_database_file_is_not_an_empty_index(indexed: Path, corpus: Path) -> None:
    db = indexed / "index.db"
    db.write_bytes(b"")
    for command in (("search", RIGEL), ("status",)):
        done = quire(*command, "--db", str(indexed))
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert "is empty (0 bytes)" in done.stderr and "`quire index --rebuild --db" in done.stderr
    assert db.stat().st_size == 0  # refusing wrote nothing
    done = quire("index", str(corpus), "--db", str(indexed), "--workers", "0", "--json")
    assert done.returncode == 0 and "was empty (0 bytes); starting a new index" in done.stderr
    assert json.loads(done.stdout)["documents"] == 5
    # the old graph files name the database they were made for, not this new one
    assert _first_result(indexed, "semantic") == "rigel.txt"
