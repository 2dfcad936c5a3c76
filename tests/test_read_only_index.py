"""An index on a read-only mount is searched without writing a byte; a folder that cannot hold an index is refused
in one line (issue 33, item 10). Run as real processes of the CLI on a real read-only bind mount.

The tests may run as root, where ``chmod a-w`` stops nothing: the folder is made read-only for real by a bind
mount with ``-o ro`` in a private mount namespace (``unshare -rm``, no privileges needed where user namespaces are
allowed). Where that is impossible, a non-root account falls back to ``chmod a-w``; root has no real alternative
and those tests are skipped. The refusals that do not depend on permissions (under /proc, below a regular file)
always run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 120


def _can_bind_read_only() -> bool:
    """Whether a folder can be bound read-only over itself here, and is then really read-only."""
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as folder:
        probe = shlex.quote(folder)
        try:
            done = subprocess.run(["unshare", "-rm", "sh", "-c",
                                   f"mount --bind -o ro {probe} {probe} && ! touch {probe}/probe 2>/dev/null"],
                                  capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


BIND = _can_bind_read_only()
ROOT = os.geteuid() == 0
needs_read_only = pytest.mark.skipif(
    not BIND and ROOT,
    reason="running as root without unshare/user namespaces: chmod cannot stop root writing, and a read-only "
           "mount needs a mount namespace, so no real read-only folder can be made here",
)


def quire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=TIMEOUT)


def quire_read_only(folders: list[Path], *args: str) -> subprocess.CompletedProcess:
    """The CLI with ``folders`` read-only: bound read-only over themselves in a private mount namespace, or (not
    root, no namespaces) with their write permission taken away for the run."""
    argv = [sys.executable, "-m", "app.cli", *args]
    if BIND:
        mounts = " && ".join(f"mount --bind -o ro {shlex.quote(str(f))} {shlex.quote(str(f))}" for f in folders)
        return subprocess.run(["unshare", "-rm", "sh", "-c", f"{mounts} && exec {shlex.join(argv)}"], cwd=REPO,
                              capture_output=True, text=True, timeout=TIMEOUT)
    modes = {f: f.stat().st_mode for f in folders}
    try:
        for f in folders:
            f.chmod(0o555)
        return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        for f, mode in modes.items():
            f.chmod(mode)


def _says(done: subprocess.CompletedProcess, status: int, *words: str) -> None:
    assert done.returncode == status, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert all(w in done.stderr for w in words), done.stderr


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """A real index whose lock files are gone, as on a copy that holds only what a search reads."""
    from conftest import indexed_corpus

    folder = indexed_corpus(tmp_path_factory.mktemp("read_only"))
    for lock in ("schema.lock", "write.lock"):
        (folder / lock).unlink(missing_ok=True)
    assert not list(folder.glob("index.db-*"))  # closed cleanly: no log beside it
    return folder


@needs_read_only
def test_status_works_on_a_read_only_index_and_writes_nothing(db: Path) -> None:
    before = _snapshot(db)
    done = quire_read_only([db], "status", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr  # was a traceback: schema.lock could not be created
    assert '"indexed": 5' in done.stdout
    assert _snapshot(db) == before


@needs_read_only
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_search_works_on_a_read_only_index_and_writes_nothing(db: Path, mode: str) -> None:
    before = _snapshot(db)
    done = quire_read_only([db], "search", "blue supergiant star in Orion", "--db", str(db), "--mode", mode,
                           "-k", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert "rigel.txt" in done.stdout
    assert _snapshot(db) == before


@needs_read_only
def test_changing_a_read_only_index_is_refused_in_one_line(db: Path) -> None:
    done = quire_read_only([db], "remove", str(db.parent / "docs" / "finance"), "--db", str(db))
    _says(done, 1, "read-only", "can be searched")
    done = quire_read_only([db], "index", "--db", str(db))
    _says(done, 1, "read-only")


@needs_read_only
def test_an_index_left_with_its_write_ahead_log_is_read(db: Path, tmp_path: Path) -> None:
    # a copy taken while a writer had it open: the last commit is only in index.db-wal, read through index.db-shm
    source, copy = tmp_path / "source", tmp_path / "copy"
    shutil.copytree(db, source)
    writer = sqlite3.connect(source / "index.db")
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("DELETE FROM roots")
        writer.commit()
        shutil.copytree(source, copy)
    finally:
        writer.close()
    assert (copy / "index.db-wal").stat().st_size > 0
    done = quire_read_only([copy], "status", "--db", str(copy), "--json")
    assert done.returncode == 0, done.stderr
    assert '"roots": []' in done.stdout  # the log's commit was seen
    (copy / "index.db-shm").unlink()  # a log without its index cannot be read where nothing may be written
    done = quire_read_only([copy], "status", "--db", str(copy))
    _says(done, 1, "read-only", "write-ahead log")


@needs_read_only
def test_a_new_index_in_a_read_only_empty_folder_is_refused(tmp_path: Path) -> None:
    from conftest import write_corpus

    docs, empty = write_corpus(tmp_path / "docs"), tmp_path / "empty"
    empty.mkdir()
    done = quire_read_only([empty], "index", str(docs), "--db", str(empty))
    _says(done, 1, str(empty), "choose a folder you can write to")  # was sqlite3's "unable to open database file"
    done = quire_read_only([empty], "index", str(docs), "--db", str(empty / "sub"))
    _says(done, 1, str(empty / "sub"), "choose a folder you can write to")
    assert list(empty.iterdir()) == []


@pytest.mark.parametrize("where", ["/proc/quire-index", "/proc/self"])
def test_an_index_under_proc_is_refused(tmp_path: Path, where: str) -> None:
    from conftest import write_corpus

    docs = write_corpus(tmp_path / "docs")
    done = quire("index", str(docs), "--db", where)
    _says(done, 1, where, "virtual file system")  # was a FileNotFoundError or sqlite3 traceback
    _says(quire("status", "--db", where), 1, "no index at")


def test_an_index_below_a_regular_file_is_refused(tmp_path: Path) -> None:
    from conftest import write_corpus

    docs = write_corpus(tmp_path / "docs")
    file = tmp_path / "notes.txt"
    file.write_text("a file, not a folder\n", encoding="utf-8")
    for below in (file / "index", file / "a" / "b"):
        _says(quire("index", str(docs), "--db", str(below)), 1, str(file), "is a file")  # was NotADirectoryError
        _says(quire("search", "star", "--db", str(below)), 1, "no index at", f"{file} is a file")
        _says(quire("status", "--db", str(below)), 1, "no index at", f"{file} is a file")
