"""The ``facets`` table: each sentence's facets as stored (``engine.facets.extract.FacetBatch.packed``), where an
index stores them (engine.config.IndexConfig.facets)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from engine.store.chunks import in_chunks

FacetRow = tuple[int, int, bytes, bytes, bytes]  # sentence id, k, words, mixtures, mass


def insert(conn: sqlite3.Connection, rows: Iterable[FacetRow]) -> None:
    """Store (sentence id, k, words, mixtures, mass) rows, replacing old ones (in the caller's transaction)."""
    conn.executemany("INSERT OR REPLACE INTO facets VALUES (?, ?, ?, ?, ?)", rows)


def read(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[int, bytes, bytes, bytes]]:
    """Stored facet rows (k, words, mixtures, mass) keyed by sentence id; sentences without facets left out."""
    out: dict[int, tuple[int, bytes, bytes, bytes]] = {}
    for chunk, marks in in_chunks(ids):
        for sid, *row in conn.execute(
            f"SELECT sentence_id, k, words, mixtures, mass FROM facets WHERE sentence_id IN ({marks})", chunk
        ):
            out[int(sid)] = tuple(row)
    return out


def delete(conn: sqlite3.Connection, first: int, last: int) -> None:
    """Forget the facets of sentences ``first`` to ``last`` (in the caller's transaction)."""
    conn.execute("DELETE FROM facets WHERE sentence_id BETWEEN ? AND ?", [first, last])


def clear(conn: sqlite3.Connection) -> None:
    """Forget every sentence's facets (in the caller's transaction)."""
    conn.execute("DELETE FROM facets")
