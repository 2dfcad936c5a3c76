"""Bad command lines get one clear line and a non-zero status, never a traceback (issue 33, item 10); run as real
processes, since the bytes of a command line are what is under test."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from engine import Index

REPO = Path(__file__).resolve().parent.parent


def quire(*args: str | bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    from conftest import indexed_corpus

    return indexed_corpus(tmp_path_factory.mktemp("cli_errors"))


def _says(done: subprocess.CompletedProcess, status: int, *words: str) -> str:
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == status, (done.returncode, err)
    assert "Traceback" not in err and all(w in err for w in words), err
    return err


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_a_query_that_is_not_utf8_is_refused_clearly(db: Path, mode: str) -> None:
    # a terminal in Latin-1: Python hands the byte to the program as a lone surrogate (was a traceback, then a
    # segfault in hybrid mode)
    done = quire("search", b"caf\xe9 star", "--db", str(db), "--mode", mode)
    err = _says(done, 1, "not valid UTF-8", "\\xe9")
    assert err.startswith("error: ")


def test_a_queries_file_that_is_not_utf8_is_refused_before_any_search(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(b'{"id": 1, "text": "orion"}\n{"id": 2, "text": "caf\xe9"}\n')
    done = quire("search", "--queries", str(queries), "--db", str(db))
    _says(done, 2, "not UTF-8", "line 2")
    assert done.stdout == b""


def test_an_escaped_surrogate_in_a_queries_file_costs_only_that_query(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": 1, "text": "caf\\udce9"}\n{"id": 2, "text": "blue supergiant star"}\n',
                       encoding="utf-8")
    done = quire("search", "--queries", str(queries), "--db", str(db), "--no-explain")
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert first["id"] == 1 and "not valid UTF-8" in first["error"] and first["results"] == []
    assert second["id"] == 2 and second["results"]


def test_indexing_a_path_that_does_not_exist_fails(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    done = quire("index", str(missing), "--db", str(tmp_path / "index"))
    _says(done, 1, str(missing), "does not exist")  # was "0 documents" and status 0
    assert done.stdout == b""


def test_remove_while_another_process_writes_says_so(db: Path) -> None:
    with FileLock(str(db / "write.lock")):  # what an indexing process holds for its whole run
        started = time.monotonic()
        done = quire("remove", str(db.parent / "docs" / "finance"), "--db", str(db))
    _says(done, 1, "another quire process is writing")  # was a filelock.Timeout traceback after 30 s
    assert time.monotonic() - started < 20
    with Index(db, create=False) as idx:
        assert idx.status().indexed == 5
