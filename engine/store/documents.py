"""The ``documents`` table (one record per file: its stat, content hash, status and title) and the ``roots`` the user
asked to index. Paths are stored as engine.text.paths writes them and returned as the file system knows them."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlite_utils

from engine.filestate import FileState
from engine.ingest.documents import NewDocument
from engine.store.chunks import in_chunks
from engine.store.counts import Counts
from engine.store.filters import Filters, matching_documents
from engine.text.paths import from_column, to_column

_COLUMNS = "id, path, size, mtime, hash, status, reason, title, kind, sentences, updated_at, byline"
_COUNT_INDEXED = f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'"


@dataclass(frozen=True)
class DocumentRecord:
    """What the index knows of one file. ``status`` is indexed, skipped or failed, with the ``reason`` for the last
    two (or a note on an indexed file, such as a cut at the sentence limit); ``hash`` is of its content and
    ``sentences`` how many it has in the index; ``byline`` who wrote it and when (an e-mail's sender and date), for a
    result's card."""

    id: int
    path: str
    size: int | None
    mtime: float | None
    hash: str | None
    status: FileState
    reason: str | None
    title: str | None
    kind: str | None
    sentences: int | None
    updated_at: float | None
    byline: str | None = None


@dataclass(frozen=True)
class StateCounts:
    """How many files of an index are in each state."""

    indexed: int = 0
    skipped: int = 0
    failed: int = 0

    @property
    def documents(self) -> int:
        """Every file with a record."""
        return self.indexed + self.skipped + self.failed


def _record(row: tuple) -> DocumentRecord:
    id_, path, size, mtime, content_hash, status, *rest = row
    return DocumentRecord(id_, from_column(path), size, mtime, content_hash, FileState(status), *rest)


def ids_of(conn: sqlite3.Connection, paths: Sequence[str]) -> list[int]:
    """Ids of the records of ``paths`` (paths with none left out)."""
    if not paths:
        return []
    return [r[0] for r in conn.execute(
        f"SELECT id FROM documents WHERE path IN ({','.join('?' * len(paths))})", [to_column(p) for p in paths]
    )]


# -- writes (in the caller's transaction) ---------------------------------------------------------------------------
def write_indexed(db: sqlite_utils.Database, doc: NewDocument, now: float) -> int:
    """Insert or update the record of an indexed document; returns its id."""
    row = {"path": to_column(doc.path), "size": doc.size, "mtime": doc.mtime, "hash": doc.hash,
           "status": FileState.INDEXED, "reason": doc.reason, "title": doc.title, "kind": doc.kind,
           "sentences": len(doc.sentences), "updated_at": now, "byline": doc.byline or None}
    existing = db.execute("SELECT id FROM documents WHERE path = ?", [row["path"]]).fetchone()
    if existing:
        db.table("documents").update(existing[0], row)
        return existing[0]
    doc_id = db.table("documents").insert(row).last_pk
    assert doc_id is not None  # an insert into a rowid table always sets it
    return doc_id


def write_unindexed(db: sqlite_utils.Database, old: DocumentRecord | None, path: str, size: int, mtime: float,
                    content_hash: str, status: FileState, reason: str) -> None:
    """Record a skipped or failed file over its ``old`` record (None: it had none)."""
    row = {"path": to_column(path), "size": size, "mtime": mtime, "hash": content_hash, "status": status,
           "reason": reason, "title": None, "kind": None, "sentences": 0, "updated_at": time.time(),
           "byline": None}
    if old:
        db.table("documents").update(old.id, row)
    else:
        db.table("documents").insert(row)


def emptied(conn: sqlite3.Connection, doc_id: int) -> None:
    """Note that a document's sentences were deleted."""
    conn.execute("UPDATE documents SET sentences = 0 WHERE id = ?", [doc_id])


def delete(conn: sqlite3.Connection, doc_ids: Iterable[int]) -> None:
    """Forget records (their content is deleted separately)."""
    for doc_id in doc_ids:
        conn.execute("DELETE FROM documents WHERE id = ?", [doc_id])


# -- roots ----------------------------------------------------------------------------------------------------------
def roots(conn: sqlite3.Connection) -> list[str]:
    """Indexed roots, oldest first."""
    return [from_column(r[0]) for r in conn.execute("SELECT path FROM roots ORDER BY added_at, path")]


class Documents:
    """The records of one index's files and its roots; each write is a transaction of its own (or joins the
    caller's)."""

    def __init__(self, db: sqlite_utils.Database, counts: Counts) -> None:
        self._db, self._conn, self._counts = db, db.conn, counts

    def get(self, path: str) -> DocumentRecord | None:
        """The record of one file, or None."""
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE path = ?", [to_column(path)]).fetchone()
        return _record(row) if row else None

    def listing(self, under: str | None = None) -> Iterator[DocumentRecord]:
        """Records of all files, or of those at or below ``under``, ordered by path."""
        if under is None:
            yield from map(_record, self._conn.execute(f"SELECT {_COLUMNS} FROM documents ORDER BY path"))
            return
        prefix = to_column(under.rstrip("/\\") + "/")
        yield from map(_record, self._conn.execute(
            f"SELECT {_COLUMNS} FROM documents WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY path",
            [to_column(under), len(prefix), prefix],
        ))

    def by_ids(self, ids: Sequence[int]) -> dict[int, DocumentRecord]:
        """Records keyed by id (ids not there left out): the ranking reads these for the documents it weighs."""
        out: dict[int, DocumentRecord] = {}
        for chunk, marks in in_chunks(ids):
            for row in self._conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE id IN ({marks})", chunk):
                out[row[0]] = _record(row)
        return out

    def duplicates_of(self, content_hash: str) -> list[str]:
        """Paths of indexed files with this exact content."""
        rows = self._conn.execute("SELECT path FROM documents WHERE hash = ? AND status = ? ORDER BY path",
                                  [content_hash, FileState.INDEXED])
        return [from_column(r[0]) for r in rows]

    def matching(self, within: Filters) -> frozenset[int]:
        """The ids of the indexed documents that ``within`` lets through (engine.store.filters)."""
        return matching_documents(self._conn, within)

    def states(self) -> StateCounts:
        """How many files are in each state."""
        rows = self._conn.execute("SELECT status, count(*) FROM documents GROUP BY status")
        return StateCounts(**{FileState(status).name.lower(): int(n) for status, n in rows})

    def indexed_count(self) -> int:
        """Number of indexed documents (cheap: kept between queries, as the other counts every query needs)."""
        return self._counts.count("indexed", _COUNT_INDEXED)

    def touch(self, path: str, size: int, mtime: float) -> None:
        """A file's metadata changed but its bytes did not: remember the new stat so it is not re-read next time."""
        with self._db.atomic():
            self._conn.execute("UPDATE documents SET size = ?, mtime = ? WHERE path = ?", [size, mtime, to_column(path)])

    def add_roots(self, paths: Iterable[str]) -> None:
        """Remember folders and files the user asked to index (the app lists them; `index` with no path reuses)."""
        now = time.time()
        with self._db.atomic():
            for p in paths:
                self._conn.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES (?, ?)", [to_column(p), now])

    def remove_roots(self, paths: Iterable[str]) -> None:
        """Forget roots (their documents are removed separately)."""
        with self._db.atomic():
            for p in paths:
                self._conn.execute("DELETE FROM roots WHERE path = ?", [to_column(p)])

    def roots(self) -> list[str]:
        """Indexed roots, oldest first."""
        return roots(self._conn)
