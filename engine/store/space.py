"""Give disk space back once documents are removed (issue 35).

SQLite keeps the pages of deleted rows in the file as free pages for later inserts, and in WAL mode the log keeps
its size after a checkpoint while any connection stays open, so before this a `quire remove` of most of a folder
left the database as large as it was. New databases are made with ``auto_vacuum=INCREMENTAL``: free pages are moved
to the end of the file and cut off by ``PRAGMA incremental_vacuum`` (a cost in proportion to the pages freed, not to
the database), and ``wal_checkpoint(TRUNCATE)`` empties the log. A database made before has no pointer map, so only a
whole-file VACUUM can shrink it; that is done once free pages are a large share of it (VACUUM_FREE_SHARE), and turns
it incremental on the way.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from engine.store import meta, postings
from engine.store.meta import Key

log = logging.getLogger(__name__)

# The FTS5 table of passages (engine.store.schema).
FTS_TABLE = "passages_fts"
# Meta key set in the transaction that deletes passages and cleared once their words are purged from the file
# (:func:`purge`): a run killed in between purges at the next removal or indexing run.
# PRAGMA auto_vacuum values.
AUTO_VACUUM_NONE, AUTO_VACUUM_FULL, AUTO_VACUUM_INCREMENTAL = 0, 1, 2
# A VACUUM copies every live page twice (into a temporary database, then back through the WAL) and needs that much
# free disk while it runs: worth it for a database that is a quarter empty, not for the few pages a small removal
# frees (those are used again by the next indexing run anyway).
VACUUM_FREE_SHARE = 0.25


@dataclass(frozen=True)
class Reclaimed:
    """What :func:`reclaim` gave back: the database file and its WAL before and after, in bytes."""

    bytes_before: int
    bytes_after: int
    pages_freed: int
    vacuumed: bool  # a whole-file VACUUM (a database made before incremental vacuum), not an incremental one


def prepare(conn: sqlite3.Connection) -> None:
    """Make a new database incremental; run before its first table is created. A database that has tables is left
    alone (:func:`reclaim` turns an old one incremental when it vacuums it): setting the pragma there wrote to it
    on every open, even when it was incremental already, and an open that writes makes a concurrent indexing run's
    transaction stale, which SQLite fails at once with "database is locked"."""
    if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
        conn.execute(f"PRAGMA auto_vacuum={AUTO_VACUUM_INCREMENTAL}")


def reclaim(conn: sqlite3.Connection, path: Path) -> Reclaimed:
    """Take deleted passages' words out of the word indexes (:func:`purge`), cut the free pages off the database at
    ``path`` and empty its WAL; ``conn`` must be outside a transaction.

    Readers of other connections keep their snapshot: the checkpoint copies what they no longer need and leaves
    the log's tail (logged at debug) until they finish; the next checkpoint takes it.
    """
    if conn.in_transaction:
        raise RuntimeError("reclaim() needs a connection outside a transaction")
    before = _bytes(path)
    with conn:
        # segments of the word index that are mostly deleted passages are rewritten (as an indexing run does)
        postings.merge(conn)
        if meta.get(conn, Key.WORDS_TO_PURGE) or free_share(conn) >= VACUUM_FREE_SHARE:
            purge(conn)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    mode = conn.execute("PRAGMA auto_vacuum").fetchone()[0]
    vacuumed = False
    if free and mode == AUTO_VACUUM_INCREMENTAL:
        # each step of the statement frees one page, and execute() takes a statement without columns one step only:
        # executescript() runs it to the end
        conn.executescript("PRAGMA incremental_vacuum;")
    elif free and mode == AUTO_VACUUM_NONE and free >= VACUUM_FREE_SHARE * pages:
        log.info("vacuuming %s: %d of its %d pages are free", path, free, pages)
        conn.execute(f"PRAGMA auto_vacuum={AUTO_VACUUM_INCREMENTAL}")
        # the copy VACUUM makes goes where temporary tables do: the store keeps those in memory (engine.store.connection
        # tune), which for a large index would mean its whole size in RAM
        store = conn.execute("PRAGMA temp_store").fetchone()[0]
        conn.execute("PRAGMA temp_store=FILE")
        try:
            conn.execute("VACUUM")
        finally:
            conn.execute(f"PRAGMA temp_store={store}")
        vacuumed = True
    busy, logged, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        log.debug("checkpoint of %s left %d of %d WAL pages to readers", path, logged - copied, logged)
    after = _bytes(path)
    freed = free - conn.execute("PRAGMA freelist_count").fetchone()[0]
    log.info("reclaimed %d bytes of %s (%d pages)", before - after, path, freed)
    return Reclaimed(before, after, freed, vacuumed)


def purge(conn: sqlite3.Connection) -> None:
    """Take the words of deleted passages out of the file, in the caller's transaction
    (docs/decisions/0028-removed-words-leave-the-disk.md).

    FTS5 keeps a deleted passage's entries, and a marker that hides them, until the segments holding both are merged:
    its SQLite (3.40 here) has no ``secure-delete`` option (3.44), so every segment is merged into one, a cost in
    proportion to the FTS5 index left. The word index's segments that hold a deleted passage are rewritten without
    it. The pages they leave are zeroed as they are freed (``PRAGMA secure_delete``, set on every writing connection).
    """
    conn.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")
    postings.purge(conn)
    meta.delete(conn, Key.WORDS_TO_PURGE)


def free_share(conn: sqlite3.Connection) -> float:
    """The share of the database's pages that are free."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    return conn.execute("PRAGMA freelist_count").fetchone()[0] / max(1, pages)


def _bytes(path: Path) -> int:
    """The database file and its WAL."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
