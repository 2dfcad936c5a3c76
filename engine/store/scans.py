"""Reads of the FTS5 table over passages (``passages_fts``): BM25 scans, split over cores for a query that matches
many passages, and the vocabulary's document frequencies."""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from engine.store.connection import tune
from engine.store.counts import Counts

# A BM25 scan of many passages may be split by passage id into up to this many parts, each scored by its own
# connection on its own core (SQLite releases the GIL while it works): a common query's scan is CPU-bound
# (docs/decisions/0050-store-reads-on-the-query-path.md).
SCAN_PARTS = max(1, min(4, os.cpu_count() or 1))


class FtsScans:
    """BM25 scans of one index: on its main connection, and for a split scan on reader connections and threads made
    when a scan first needs them (``connect`` opens one)."""

    def __init__(self, conn: sqlite3.Connection, connect: Callable[[], sqlite3.Connection], counts: Counts) -> None:
        self._conn = conn
        self._connect = connect
        self._counts = counts
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        #: every reader connection opened so far
        self.opened: list[sqlite3.Connection] = []
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def bm25(self, match: str, limit: int | None, *, parts: int = 1) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score, higher is better) of the best passages for an FTS5 query (``limit``
        None: every matching passage).

        ``parts`` > 1 splits the scan by passage id over that many connections (at most :data:`SCAN_PARTS`) and
        keeps the best ``limit`` of their rows, best first, ties by id: for a query that matches many passages.
        Every part's bm25() takes its statistics from the whole table, so the scores are the unsplit scan's.
        """
        parts = max(1, min(parts, SCAN_PARTS))
        if parts > 1:
            first = self._counts.count("first passage", "SELECT coalesce(min(id), 0) FROM passages")
            last = self._counts.count("last passage", "SELECT coalesce(max(id), 0) FROM passages")
            parts = min(parts, last - first + 1)
        if parts <= 1:
            return _bm25_rows(self._conn, match, limit)
        bounds = [first + (last - first + 1) * i // parts for i in range(parts + 1)]
        ranges = [(bounds[i], bounds[i + 1] - 1) for i in range(parts)]
        readers = [self._reader() for _ in ranges[1:]]
        try:
            scans = [self._scan_pool().submit(_bm25_rows, c, match, limit, r) for c, r in zip(readers, ranges[1:])]
            rows = _bm25_rows(self._conn, match, limit, ranges[0])
            for scan in scans:
                rows += scan.result()
        finally:
            for reader in readers:
                self._readers.put(reader)
        return sorted(rows, key=lambda r: (-r[2], r[0]))[:limit]  # [:None] keeps them all

    def close(self) -> None:
        """Stop the scan threads and close the reader connections (not the main one)."""
        if self._pool is not None:
            self._pool.shutdown()
        for reader in self.opened:
            reader.close()

    def _reader(self) -> sqlite3.Connection:
        """A connection for one part of a split scan: a free one, or a new one (readers never wait in WAL mode)."""
        try:
            return self._readers.get_nowait()
        except queue.Empty:
            reader = self._connect()
            tune(reader)
            reader.execute("PRAGMA query_only=ON")
            with self._lock:
                self.opened.append(reader)
            return reader

    def _scan_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(SCAN_PARTS - 1, thread_name_prefix="quire-bm25")
            return self._pool


def document_frequencies(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    """Passages holding each (stemmed, as FTS5 stores it) term, from FTS5's vocabulary; terms in none are left out.
    fts5vocab walks each term's whole posting list: 5 ms a query on the 3.09M-sentence corpus."""
    found = conn.execute(
        f"SELECT term, doc FROM passages_vocab WHERE term IN ({','.join('?' * len(terms))})", list(terms)
    ).fetchall()
    return {term: int(n) for term, n in found}


def _bm25_rows(conn: sqlite3.Connection, match: str, limit: int | None,
               ids: tuple[int, int] | None = None) -> list[tuple[int, int, float]]:
    """:meth:`FtsScans.bm25` on one connection, over the passages with ids in the range ``ids`` (None: all)."""
    within = " AND f.rowid BETWEEN ? AND ?" if ids else ""
    rows = conn.execute(
        "SELECT f.rowid, p.doc_id, -bm25(passages_fts) AS score FROM passages_fts f "
        f"JOIN passages p ON p.id = f.rowid WHERE passages_fts MATCH ?{within} ORDER BY bm25(passages_fts) LIMIT ?",
        [match, *(ids or ()), -1 if limit is None else limit],  # LIMIT -1: no limit
    ).fetchall()
    return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]
