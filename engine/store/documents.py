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
from engine.text.paths import from_column, to_column

_COLUMNS = "id, path, size, mtime, hash, status, reason, title, kind, sentences, updated_at, byline"
COUNT_INDEXED = f"SELECT count(*) FROM documents WHERE status = '{FileState.INDEXED}'"


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


def _record(row: tuple) -> DocumentRecord:
    id_, path, size, mtime, content_hash, status, *rest = row
    return DocumentRecord(id_, from_column(path), size, mtime, content_hash, FileState(status), *rest)


def get(conn: sqlite3.Connection, path: str) -> DocumentRecord | None:
    """The record of one file, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE path = ?", [to_column(path)]).fetchone()
    return _record(row) if row else None


def listing(conn: sqlite3.Connection, under: str | None = None) -> Iterator[DocumentRecord]:
    """Records of all files, or of those at or below ``under``, ordered by path."""
    if under is None:
        yield from map(_record, conn.execute(f"SELECT {_COLUMNS} FROM documents ORDER BY path"))
        return
    prefix = to_column(under.rstrip("/\\") + "/")
    yield from map(_record, conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY path",
        [to_column(under), len(prefix), prefix],
    ))


def by_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, DocumentRecord]:
    """Records keyed by id: the ranking reads these for the documents it weighs."""
    out: dict[int, DocumentRecord] = {}
    for chunk, marks in in_chunks(ids):
        for row in conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE id IN ({marks})", chunk):
            out[row[0]] = _record(row)
    return out


def counts_by_status(conn: sqlite3.Connection) -> dict[FileState, int]:
    """How many records are in each state (states with none left out)."""
    rows = conn.execute("SELECT status, count(*) FROM documents GROUP BY status")
    return {FileState(status): int(n) for status, n in rows}


def ids_of(conn: sqlite3.Connection, paths: Sequence[str]) -> list[int]:
    """Ids of the records of ``paths`` (paths with none left out)."""
    if not paths:
        return []
    return [r[0] for r in conn.execute(
        f"SELECT id FROM documents WHERE path IN ({','.join('?' * len(paths))})", [to_column(p) for p in paths]
    )]


def duplicates_of(conn: sqlite3.Connection, content_hash: str) -> list[str]:
    """Paths of indexed files with this exact content."""
    return [
        from_column(r[0])
        for r in conn.execute(
            "SELECT path FROM documents WHERE hash = ? AND status = ? ORDER BY path", [content_hash, FileState.INDEXED]
        )
    ]


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


def touch(conn: sqlite3.Connection, path: str, size: int, mtime: float) -> None:
    """Give a file's record a new stat."""
    conn.execute("UPDATE documents SET size = ?, mtime = ? WHERE path = ?", [size, mtime, to_column(path)])


def emptied(conn: sqlite3.Connection, doc_id: int) -> None:
    """Note that a document's sentences were deleted."""
    conn.execute("UPDATE documents SET sentences = 0 WHERE id = ?", [doc_id])


def delete(conn: sqlite3.Connection, doc_ids: Iterable[int]) -> None:
    """Forget records (their content is deleted separately)."""
    for doc_id in doc_ids:
        conn.execute("DELETE FROM documents WHERE id = ?", [doc_id])


# -- roots ----------------------------------------------------------------------------------------------------------
def add_roots(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    """Remember folders and files the user asked to index."""
    now = time.time()
    for p in paths:
        conn.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES (?, ?)", [to_column(p), now])


def remove_roots(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    """Forget roots."""
    for p in paths:
        conn.execute("DELETE FROM roots WHERE path = ?", [to_column(p)])


def roots(conn: sqlite3.Connection) -> list[str]:
    """Indexed roots, oldest first."""
    return [from_column(r[0]) for r in conn.execute("SELECT path FROM roots ORDER BY added_at, path")]
