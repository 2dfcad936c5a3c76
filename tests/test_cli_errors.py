"""Bad command lines get one clear line and a non-zero status, never a traceback (issue 33, item 10); run as real
processes, since the bytes of a command line are what is under test."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clock import wait_until
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


def test_a_queries_line_that_is_not_utf8_costs_only_that_line(db: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(b'{"id": 1, "text": "orion"}\n{"id": 2, "text": "caf\xe9"}\n')
    done = quire("search", "--queries", str(queries), "--db", str(db), "--no-explain")
    _says(done, 1, "1 line of", "could not be read")
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert first["id"] == 1 and first["results"]
    assert second["line"] == 2 and "not UTF-8" in second["error"] and "\\xe9" in second["error"]


def test_batch_queries_are_answered_as_each_line_comes_through_a_pipe(db: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "queries"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "search", "--queries", str(fifo), "--db", str(db),
                             "--no-explain"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with fifo.open("w") as writer:  # held open: the file has not ended when the answer is awaited
            writer.write(json.dumps({"id": "first", "text": "blue supergiant star"}) + "\n")
            writer.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no answer while the pipe stayed open"  # was: nothing until the file ended
            assert json.loads(proc.stdout.readline())["id"] == "first"
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()


# Memory is sampled each time the endless file's reader has read this much more: a line kept whole would grow by it.
SAMPLE_BYTES = 100_000_000


def _proc_field(pid: int, table: str, field: str) -> int:
    """A number from /proc/``pid``/``table`` (``io``: bytes; ``status``: kB)."""
    lines = Path(f"/proc/{pid}/{table}").read_text().splitlines()
    return int(next(line.split()[1] for line in lines if line.startswith(f"{field}:")))


def _peak_after_reading(pid: int, more: int) -> int:
    """The peak resident memory (kB) of process ``pid`` once it has read ``more`` bytes beyond what it has read now."""
    target = _proc_field(pid, "io", "rchar") + more
    assert wait_until(lambda: _proc_field(pid, "io", "rchar") >= target, timeout=120), "reading stopped"
    return _proc_field(pid, "status", "VmHWM")


def test_an_endless_queries_file_is_read_in_flat_memory(db: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "search", "--queries", "/dev/zero", "--db", str(db)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = json.loads(proc.stdout.readline())  # the first line's error comes at once
        assert first["line"] == 1 and "longer than 1 MB" in first["error"]
        peaks = []
        for _ in range(3):  # the skipping goes on; the memory must not (was 790 MB at 24 s)
            peaks.append(_peak_after_reading(proc.pid, SAMPLE_BYTES))
        assert peaks[-1] == peaks[0] or peaks[-1] - peaks[0] < 20_000, peaks  # kB
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


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


def _quire_without_readers(interpreter: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI where reader processes run ``interpreter``, which this account cannot run: as for an account that may
    not read the Python quire runs under (issue 58, item 6)."""
    code = (f"import multiprocessing; multiprocessing.set_executable({str(interpreter)!r}); "
            f"from app.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_reader_processes_that_cannot_start_are_one_line_not_a_silent_exit(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(4):
        (docs / f"n{n}.txt").write_text(f"Note {n}: owls hunt at night over the fields.", encoding="utf-8")
    interpreter = tmp_path / "python"
    interpreter.write_text("#!/bin/sh\nexit 0\n")
    interpreter.chmod(0o600)  # not executable: exec fails as for an interpreter the account may not read
    db = tmp_path / "index"
    done = _quire_without_readers(interpreter, "index", str(docs), "--db", str(db), "--workers", "1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: cannot start a reader process ({interpreter}: Permission denied); index with `--workers 0` to read "
        f"every file in this process"]  # was exit 1 and nothing, or a traceback of the pool's
    debug = _quire_without_readers(interpreter, "--debug", "index", str(docs), "--db", str(db), "--workers", "1")
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "ReaderStartError" in debug.stderr
    status = quire("status", "--db", str(db), "--json")
    assert b"\"failed\": 0" in status.stdout  # no file was recorded as one its reader crashed on
    done = _quire_without_readers(interpreter, "index", str(docs), "--db", str(db), "--workers", "0")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["index", ""], "a path is empty"),  # was an IndexError, then the current folder indexed
    (["remove", ""], "a path is empty"),
    (["index", "DOCS", "--max-size", "nan"], "nan is not a size"),  # was ValueError
    (["index", "DOCS", "--max-size", "inf"], "inf is not a size"),  # was OverflowError
    (["index", "DOCS", "--max-size", "-1"], "-1 is not a size"),  # indexed nothing without saying why
    (["index", "DOCS", "--workers", "-1"], "'--workers': -1 is not in the range x>=0"),
])
def test_bad_arguments_are_refused_before_any_work(tmp_path: Path, args: list[str], words: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("Owls hunt at night.", encoding="utf-8")
    db = tmp_path / "index"
    done = quire(*[str(docs) if a == "DOCS" else a for a in args], "--db", str(db))
    err = _says(done, 2, words)
    assert "Traceback" not in err and not db.exists()
