"""Each method's sentence vectors in the database: float16 rows in a table per method, or, for a method whose
vectors are computed from the text (the static model's), none stored and each computed when read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from engine.store import schema, sentences
from engine.store.chunks import in_chunks
from engine.store.sentences import StoredSentences
from engine.store.widen import as_float32

# Vectors are stored as float16: half the bytes of float32 for a cosine error of about 1e-3, far below the
# differences that change a ranking. They are the source of truth the HNSW index is rebuilt from.
VECTOR_DTYPE = np.float16


@dataclass(frozen=True)
class DerivedVectors:
    """How a method whose vectors are not stored computes them from the sentences' text (:meth:`VectorRows.derive`).

    ``encode`` gets whole documents' texts (documents in order, each one's sentences in order) and the sentences per
    document, and returns one vector per sentence; a sentence's vector may draw on at most ``reach`` sentences either
    side of it in its document (engine.embed.context), so a run of sentences that reaches that far past a sentence,
    or to its document's edge, gives the vector that the whole document gives.
    """

    encode: Callable[[Sequence[str], np.ndarray], np.ndarray]
    reach: int


class VectorRows:
    """The vectors of every method on one connection, stored or derived."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db
        self._derived: dict[str, DerivedVectors] = {}  # methods whose vectors are computed, not stored

    def derive(self, method: str, how: DerivedVectors) -> None:
        """Compute ``method``'s vectors from the sentences' text whenever they are read, and store none."""
        self._derived[method] = how

    def derives(self, method: str) -> bool:
        """Whether ``method``'s vectors are computed from the text (:meth:`derive`) rather than stored."""
        return method in self._derived

    def tables(self) -> list[str]:
        """Names of the per-method vector tables present."""
        return [t for t in self._db.table_names() if t.startswith("vectors_")]

    def table_to_write(self, method: str) -> str | None:
        """The table ``method``'s vectors are stored in, created if needed; None for a derived method."""
        return None if self.derives(method) else schema.create_vector_table(self._db, method)

    def documents_missing(self, method: str | None, batch: int) -> Iterator[StoredSentences]:
        """Sentences of whole documents (:func:`engine.store.sentences.whole_documents`); with ``method``, only
        batches holding a sentence that method has no vector of (none, where its vectors are derived)."""
        table = self.table_to_write(method) if method else None
        yield from sentences.whole_documents(self._db.conn, batch, without_vectors_in=table)

    def read(self, method: str, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of one method: all of them, or those of ``ids`` (missing ones left out)."""
        if self.derives(method):
            return self._derived_vectors(method, ids)
        table = schema.vector_table(method)
        if table not in self._db.table_names():
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        conn = self._db.conn
        if ids is None:
            rows = conn.execute(f"SELECT sentence_id, vector FROM [{table}] ORDER BY sentence_id").fetchall()
        else:
            rows = []
            for chunk, marks in in_chunks(ids):
                rows += conn.execute(
                    f"SELECT sentence_id, vector FROM [{table}] WHERE sentence_id IN ({marks})", chunk
                ).fetchall()
        return _matrix(rows)

    def batches(self, method: str, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All (ids, float32 vectors) of one method, ``batch`` rows at a time (in id order; whole documents at a time
        where the vectors are derived): rebuilding a graph of millions of sentences must not hold every vector twice
        over (bytes rows, then the matrix)."""
        if self.derives(method):
            encode = self._derived[method].encode
            for part in sentences.whole_documents(self._db.conn, batch):
                yield part.ids, encode(part.texts, part.doc_sizes)
            return
        table = schema.vector_table(method)
        if table not in self._db.table_names():
            return
        last = -1
        while True:
            rows = self._db.conn.execute(
                f"SELECT sentence_id, vector FROM [{table}] WHERE sentence_id > ? ORDER BY sentence_id LIMIT ?",
                [last, batch],
            ).fetchall()
            if not rows:
                return
            yield _matrix(rows)
            last = rows[-1][0]

    def ids(self, method: str) -> np.ndarray:
        """Sentence ids that have a vector for ``method`` (every sentence, where its vectors are derived)."""
        if self.derives(method):
            return sentences.all_ids(self._db.conn)
        table = schema.vector_table(method)
        if table not in self._db.table_names():
            return np.zeros(0, np.int64)
        rows = self._db.conn.execute(f"SELECT sentence_id FROM [{table}]").fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def delete(self, first: int, last: int) -> None:
        """Forget every method's vectors of sentences ``first`` to ``last`` (in the caller's transaction)."""
        for table in self.tables():
            self._db.conn.execute(f"DELETE FROM [{table}] WHERE sentence_id BETWEEN ? AND ?", [first, last])

    def add(self, method: str, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store vectors for existing sentences (re-embedding with another method), in one transaction; nothing for a
        method whose vectors are derived."""
        table = self.table_to_write(method)
        if table is None:
            return
        with self._db.atomic():
            insert(self._db.conn, table, ids, vectors, replace=True)

    def drop(self, method: str) -> None:
        """Remove a method's vectors (used when a method is abandoned or its vectors are stale)."""
        with self._db.atomic():
            self._db.execute(f"DROP TABLE IF EXISTS [{schema.vector_table(method)}]")

    def _derived_vectors(self, method: str, ids: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`read` of a derived method: the asked sentences with the sentences within ``reach`` of them, run
        by run of consecutive sentences of one document, are embedded as documents of their own; that gives each
        asked sentence the vector its whole document gives (DerivedVectors), for a few times its own cost."""
        if ids is None:
            parts = list(self.batches(method))
            if not parts:
                return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
            every, vectors = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            by_id = np.argsort(every)
            return every[by_id], vectors[by_id]
        how = self._derived[method]
        rows = sentences.around(self._db.conn, ids, how.reach)
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        order = sorted(rows, key=rows.__getitem__)
        place = np.array([rows[sid][:2] for sid in order], dtype=np.int64)
        # a run ends where the document changes or an ordinal is skipped
        starts = np.flatnonzero(np.r_[True, (place[1:, 0] != place[:-1, 0]) | (place[1:, 1] != place[:-1, 1] + 1)])
        vectors = how.encode([rows[sid][2] for sid in order], np.diff(np.r_[starts, len(order)]))
        at = {sid: i for i, sid in enumerate(order)}
        found = np.array([int(i) for i in ids if int(i) in at], dtype=np.int64)
        return found, vectors[[at[sid] for sid in found.tolist()]].astype(np.float32)


def insert(conn: sqlite3.Connection, table: str, ids: np.ndarray, vectors: np.ndarray, *,
           replace: bool = False) -> None:
    """Store vectors as float16 blobs keyed by sentence id (in the caller's transaction)."""
    conn.executemany(f"INSERT {'OR REPLACE ' if replace else ''}INTO [{table}](sentence_id, vector) VALUES (?, ?)",
                     zip(ids.tolist(), (row.tobytes() for row in vectors.astype(VECTOR_DTYPE))))


def _matrix(rows: list[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 matrix) of (sentence id, float16 blob) rows."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
    out_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=VECTOR_DTYPE).reshape(len(rows), -1)
    return out_ids, as_float32(matrix)
