"""Opening an index's SQLite file: the folder checks that decide between read-write and read-only, connections and
their settings, and damage reported as an error that says what to do."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from engine.errors import ConfigError, DiskFullError, IndexReadOnlyError
from engine.store import health, privacy

log = logging.getLogger(__name__)

# Page cache per connection (SQLite's negative cache_size is in KiB) and memory-mapped read window.
SQLITE_CACHE_KB = 64 * 1024
SQLITE_MMAP_BYTES = 256 * 1024 * 1024
# The window of a connection that searches: the whole file, as far as SQLite's build allows (it caps the window, at
# 2 GB in Python's), for a query's reads land all over it (docs/decisions/0024-the-whole-index-file-mapped.md).
SEARCH_MMAP_BYTES = 1 << 40
# Prepared statements a connection keeps (Python's default is 128): every read by key at each of its IN-list lengths
# (docs/decisions/0026-in-lists-of-few-lengths.md).
CACHED_STATEMENTS = 512

# Errors of creating a file in a folder that say it is read-only, or not this account's to write: an index there
# is opened read-only.
READ_ONLY_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection to the database at ``path``; read-only (``mode=ro``) when its folder cannot be written.

    check_same_thread=False: the app's search worker and indexing worker each use their own Store, but a Store
    may be created on one thread and used on another.
    """
    if not read_only:
        return sqlite3.connect(str(path), check_same_thread=False, timeout=30, cached_statements=CACHED_STATEMENTS)
    uri = "file:" + quote(os.fsencode(os.path.abspath(path))) + "?mode=ro"
    if not has_log(path):
        # A WAL database is read through its -shm file, which a read-only folder cannot hold; with no log
        # (the last writer closed cleanly) nothing outside the file is needed, so SQLite may take it as
        # immutable. A log left beside it is read in mode=ro through its existing -shm.
        uri += "&immutable=1"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30, cached_statements=CACHED_STATEMENTS)
    conn.execute("PRAGMA query_only=ON")
    return conn


def tune(conn: sqlite3.Connection) -> None:
    """Cache and memory-map settings of every connection to an index.

    Bulk writes touch the FTS5 and sentence b-trees all over: a 64 MB page cache (the default is 2 MB) keeps them in
    memory, and reads of an index of millions of sentences go through the OS page cache via mmap.
    """
    conn.execute(f"PRAGMA cache_size={-SQLITE_CACHE_KB}")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")


def map_for_search(conn: sqlite3.Connection) -> None:
    """Map the whole file for reads: a query reads a few hundred rows and index entries scattered over it, and a
    page read through the map costs no system call and no copy into the page cache."""
    conn.execute(f"PRAGMA mmap_size={SEARCH_MMAP_BYTES}")


@contextmanager
def reporting_damage(path: Path) -> Iterator[None]:
    """Turn SQLite's report of a damaged database file at ``path`` into :class:`IndexDamagedError`, and a full disk
    into :class:`DiskFullError`, each saying what to do; other errors pass unchanged."""
    try:
        yield
    except OSError as e:  # a graph or sidecar written (SQLite's own errors are no OSError)
        if e.errno != errno.ENOSPC:
            raise
        raise _disk_full(path, e) from e
    except sqlite3.DatabaseError as e:
        if getattr(e, "sqlite_errorname", "") == "SQLITE_FULL":
            raise _disk_full(path, e) from e
        # SQLITE_CORRUPT and its extended codes (an FTS5 table: _VTAB), SQLITE_NOTADB: not a database at all; and
        # text whose bytes are not UTF-8, which only damage puts in a column quire wrote
        name = getattr(e, "sqlite_errorname", "")
        if not name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) and "Could not decode to UTF-8" not in str(e):
            raise
        raise health.damaged(path.parent, f"{path.name}: {e}") from e


def _disk_full(path: Path, error: Exception) -> DiskFullError:
    return DiskFullError(f"the disk holding the index at {path.parent} is full ({error}); everything indexed before "
                         f"is kept: free some space and run `quire index` again to go on from there")


def empty_file(path: Path) -> bool:
    """Whether ``path`` is a database file of 0 bytes with no write-ahead log holding its pages."""
    try:
        if path.stat().st_size:
            return False
        wal = path.with_name(path.name + "-wal")
        return not wal.exists() or wal.stat().st_size == 0
    except OSError:
        return False


def has_log(path: Path) -> bool:
    """Whether the database at ``path`` has a write-ahead log holding pages (a writer is open, or was killed)."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def make_folder(folder: Path) -> None:
    """Create the index folder and the parents it lacks, for its owner only (engine.store.privacy), or say in one
    line why it cannot be."""
    try:
        privacy.make_folder(folder)
    except FileExistsError as e:  # the path itself is a file
        raise ConfigError(f"{folder} is a file, not a folder; give the index a folder of its own") from e
    except NotADirectoryError as e:
        file = next((p for p in folder.parents if p.is_file()), folder.parent)
        raise ConfigError(f"cannot make the index folder {folder}: {file} is a file, not a folder; "
                          f"choose another place for the index") from e
    except OSError as e:
        raise IndexReadOnlyError(f"cannot make the index folder {folder}: {why_unwritable(folder, e)}; "
                                 f"choose a folder you can write to") from e


def cannot_create(lock: Path) -> OSError | None:
    """Why the file ``lock`` cannot be created or opened for writing in its folder, or None when it can.

    Tried for real rather than asked of os.access: that answers for the real user id, and a folder in /proc says
    it is writable, then refuses every new file with ENOENT (which filelock would retry until its timeout).
    """
    try:
        privacy.create_file(lock)
    except OSError as e:
        return e
    return None


def why_unwritable(folder: Path, error: OSError) -> str:
    """Why files cannot be made in ``folder``, in a few words: a read-only or virtual file system, permissions."""
    probe = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    try:
        read_only = bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs on Windows
        read_only = False
    if read_only or error.errno == errno.EROFS:
        return f"{probe} is on a read-only file system"
    if Path(os.path.abspath(probe)).parts[1:2] in (("proc",), ("sys",)):
        return f"{probe} is in a virtual file system of the kernel, not on a disk"
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"this account may not write in {probe}"
    return error.strerror or str(error)
