"""The ``openings`` table: each document's opening (its title and first sentences) as the second look's sentence
model embeds it, computed once by the indexer rather than at every query (docs/decisions/0051-openings-indexed.md).

A row is keyed by its document and dropped, by a trigger, with the document's first sentence: a document written
again gets new sentences, so its old opening cannot outlive the text it was read from. The vectors are float16; the
``meta`` key ``openings`` names the model and the cut they were read with, and rows read with another are ignored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from engine.store import meta
from engine.store.chunks import in_chunks

DIM = 384


def create(conn: sqlite3.Connection) -> None:
    """The table and the trigger that drops a row with its document's first sentence (idempotent)."""
    conn.execute("CREATE TABLE IF NOT EXISTS openings (doc_id INTEGER PRIMARY KEY, vector BLOB NOT NULL)")
    conn.execute("CREATE TRIGGER IF NOT EXISTS openings_of_removed AFTER DELETE ON sentences WHEN old.ordinal = 0 "
                 "BEGIN DELETE FROM openings WHERE doc_id = old.doc_id; END")


class Openings:
    """The stored openings of one index, valid for the model and cut named ``reader``."""

    def __init__(self, conn: sqlite3.Connection, reader: str) -> None:
        self.conn, self.reader = conn, reader

    def current(self) -> bool:
        """Whether the stored rows were read by ``reader``."""
        return meta.get(self.conn, meta.Key.OPENINGS) == self.reader

    def vectors(self, doc_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored opening vectors (float32) of those of ``doc_ids`` that have one ({} if read by another)."""
        if not doc_ids or not self.current():
            return {}
        out = {}
        for chunk, marks in in_chunks(doc_ids):
            for doc_id, blob in self.conn.execute(
                f"SELECT doc_id, vector FROM openings WHERE doc_id IN ({marks})", chunk
            ):
                out[int(doc_id)] = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
        return out

    def missing(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` searchable documents without an opening: (id, title). Rows read by another reader are
        dropped first (in the caller's transaction)."""
        if not self.current():
            self.conn.execute("DELETE FROM openings")
            meta.put(self.conn, meta.Key.OPENINGS, self.reader)
        rows = self.conn.execute(
            "SELECT d.id, coalesce(d.title, '') FROM documents d WHERE d.status = 'indexed' AND d.sentences > 0 "
            "AND NOT EXISTS (SELECT 1 FROM openings o WHERE o.doc_id = d.id) ORDER BY d.id LIMIT ?", [limit])
        return [(int(i), str(t)) for i, t in rows]

    def first_sentences(self, doc_ids: Sequence[int], count: int) -> dict[int, list[str]]:
        """The first ``count`` sentences of each of ``doc_ids``, in order."""
        out: dict[int, list[str]] = {}
        for chunk, marks in in_chunks(doc_ids):
            for doc_id, text in self.conn.execute(
                f"SELECT doc_id, text FROM sentences WHERE doc_id IN ({marks}) AND ordinal < ? ORDER BY doc_id, ordinal",
                [*chunk, count],
            ):
                out.setdefault(int(doc_id), []).append(str(text))
        return out

    def put(self, doc_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store ``vectors`` (one row each) as ``doc_ids``' openings (in the caller's transaction)."""
        rows = vectors.astype(np.float16)
        self.conn.executemany("INSERT OR REPLACE INTO openings VALUES (?, ?)",
                              [(int(d), rows[i].tobytes()) for i, d in enumerate(doc_ids)])


def stored_precision(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as a stored row reads back, so that an opening computed at query time scores as a stored one."""
    return vectors.astype(np.float16).astype(np.float32)
