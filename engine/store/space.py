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

from engine.store import postings

log = logging.getLogger(__name__)

# The FTS5 table of passages (engine.store.schema).
FTS_TABLE = "passages_fts"
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
    """Make a new database incremental; run before its first table is created (on one that has tables, SQLite
    only records the wish, which the next VACUUM carries out).

    A database that is incremental already is left alone: setting the pragma commits its header page even when
    the value is unchanged, and a reader opening the index mid-run then made the run's open transaction fail at
    once with "database is locked" (its snapshot was no longer the latest)."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_INCREMENTAL:
        conn.execute(f"PRAGMA auto_vacuum={AUTO_VACUUM_INCREMENTAL}")


def reclaim(conn: sqlite3.Connection, path: Path) -> Reclaimed:
    """Drop deleted passages from the word indexes, cut the free pages off the database at ``path`` and empty its
    WAL; ``conn`` must be outside a transaction.

    Readers of other connections keep their snapshot: the checkpoint copies what they no longer need and leaves
    the log's tail (logged at debug) until they finish; the next checkpoint takes it.
    """
    if conn.in_transaction:
        raise RuntimeError("reclaim() needs a connection outside a transaction")
    before = _bytes(path)
    with conn:
        # segments of the word index that are mostly deleted passages are rewritten (as an indexing run does)
        postings.merge(conn)
        if free_share(conn) >= VACUUM_FREE_SHARE:
            # FTS5 keeps a deleted passage's entries, and a marker that hides them, until the segments holding both
            # are merged: after a large removal, merge them all (a cost in proportion to what is left)
            conn.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")
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
        # the copy VACUUM makes goes where temporary tables do: the store keeps those in memory (engine.store.database
        # _tune), which for a large index would mean its whole size in RAM
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


def free_share(conn: sqlite3.Connection) -> float:
    """The share of the database's pages that are free."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    return conn.execute("PRAGMA freelist_count").fetchone()[0] / max(1, pages)


def _bytes(path: Path) -> int:
    """The database file and its WAL."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
