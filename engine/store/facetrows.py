"""The ``facets`` table: each sentence's facets as stored (``engine.facets.extract.FacetBatch.packed``), where an
index stores them (engine.config.IndexConfig.facets)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import sqlite_utils

from engine.store.chunks import in_chunks

FacetRow = tuple[int, int, bytes, bytes, bytes]  # sentence id, k, words, mixtures, mass


def insert(conn: sqlite3.Connection, rows: Iterable[FacetRow]) -> None:
    """Store (sentence id, k, words, mixtures, mass) rows, replacing old ones (in the caller's transaction)."""
    conn.executemany("INSERT OR REPLACE INTO facets VALUES (?, ?, ?, ?, ?)", rows)


def delete(conn: sqlite3.Connection, first: int, last: int) -> None:
    """Forget the facets of sentences ``first`` to ``last`` (in the caller's transaction)."""
    conn.execute("DELETE FROM facets WHERE sentence_id BETWEEN ? AND ?", [first, last])


class FacetRows:
    """The stored facets of one index's sentences; each write is a transaction of its own (or joins the caller's)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def add(self, rows: Iterable[FacetRow]) -> None:
        """Store (sentence id, k, words, mixtures, mass) rows (``engine.facets.extract.FacetBatch.packed``), replacing
        old ones."""
        with self._db.atomic():
            insert(self._db.conn, rows)

    def read(self, ids: Sequence[int]) -> dict[int, tuple[int, bytes, bytes, bytes]]:
        """Stored facet rows (k, words, mixtures, mass) keyed by sentence id; sentences without facets left out."""
        out: dict[int, tuple[int, bytes, bytes, bytes]] = {}
        for chunk, marks in in_chunks(ids):
            for sid, *row in self._db.conn.execute(
                f"SELECT sentence_id, k, words, mixtures, mass FROM facets WHERE sentence_id IN ({marks})", chunk
            ):
                out[int(sid)] = tuple(row)
        return out

    def clear(self) -> None:
        """Forget every sentence's facets (the static model they were computed with changed)."""
        with self._db.atomic():
            self._db.conn.execute("DELETE FROM facets")
