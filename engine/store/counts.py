"""Counts that only a write changes, kept between queries: every query needs the collection's size and its words'
document frequencies, and on an index of millions of sentences each costs milliseconds to count."""

from __future__ import annotations

import sqlite3

# Counts kept between queries before the cache starts over.
COUNT_CACHE_ENTRIES = 50_000


class Counts:
    """A cache of counts on one connection, emptied whenever the database changes (:meth:`version`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._cache: dict[str, int] = {}
        self._version: tuple[int, int] | None = None

    def version(self) -> tuple[int, int]:
        """Changes when the database does: PRAGMA data_version moves when another connection commits,
        total_changes when this one writes."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0]), self._conn.total_changes

    def current(self) -> dict[str, int]:
        """The counts kept for the database as it is now (callers may add to them)."""
        version = self.version()
        if version != self._version or len(self._cache) > COUNT_CACHE_ENTRIES:
            self._cache, self._version = {}, version
        return self._cache

    def count(self, key: str, sql: str) -> int:
        """The number ``sql`` counts, kept under ``key``."""
        cache = self.current()
        if key not in cache:
            cache[key] = int(self._conn.execute(sql).fetchone()[0])
        return cache[key]
