"""The SQLite side of an index: documents, sentences, passages (FTS5) and vectors, written in batched transactions."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils
from filelock import FileLock

from engine.errors import Cancelled, IndexDamagedError, IndexReadOnlyError, QuireError
from engine.ingest.documents import NewDocument
from engine.store import meta, postings, scans, schema, space
from engine.store.bm25 import WordIndex, WordStatistics
from engine.store.chunks import in_chunks
from engine.store.connection import (
    READ_ONLY_ERRNOS,
    cannot_create,
    connect,
    empty_file,
    has_log,
    make_folder,
    reporting_damage,
    tune,
    why_unwritable,
)
from engine.store.counts import Counts
from engine.store.scans import FtsScans
from engine.text.paths import from_column, to_column

log = logging.getLogger(__name__)

DB_NAME = "index.db"
# Vectors are stored as float16: half the bytes of float32 for a cosine error of about 1e-3, far below the
# differences that change a ranking. They are the source of truth the HNSW index is rebuilt from.
VECTOR_DTYPE = np.float16


@dataclass(frozen=True)
class StoredSentences:
    """Whole documents' sentences as stored: documents in id order, each one's sentences in order, so that a sentence
    can be embedded with its neighbours (engine.embed.context). ``missing`` marks the sentences without a vector of
    the method asked about."""

    ids: np.ndarray  # int64 sentence ids
    texts: list[str]
    hashes: np.ndarray  # int64, as stored
    doc_sizes: np.ndarray  # sentences per document, in order
    missing: np.ndarray  # bool, one per sentence


@dataclass(frozen=True)
class DerivedVectors:
    """How a method whose vectors are not stored computes them from the sentences' text (:meth:`Store.derive`).

    ``encode`` gets whole documents' texts (documents in order, each one's sentences in order) and the sentences per
    document, and returns one vector per sentence; a sentence's vector may draw on at most ``reach`` sentences either
    side of it in its document (engine.embed.context), so a run of sentences that reaches that far past a sentence,
    or to its document's edge, gives the vector that the whole document gives.
    """

    encode: Callable[[Sequence[str], np.ndarray], np.ndarray]
    reach: int


# Opening waits this long for another connection's schema set-up (a migration of a large index takes seconds).
SCHEMA_LOCK_SECONDS = 120



class Store:
    """One index's SQLite database (WAL mode, so searches read while indexing writes).

    Only one process writes at a time; the facade holds that rule. Every write method is one transaction.
    """

    def __init__(self, folder: Path, *, create: bool = True) -> None:
        self.folder = folder
        path = self.path = folder / DB_NAME
        if not path.exists() and not create:
            raise QuireError(f"no index at {folder}")
        if empty_file(path):
            # SQLite takes a 0-byte file for a new database: an index truncated to nothing would answer nothing
            if not create:
                raise IndexDamagedError(f"the index database {path} is empty (0 bytes): it was truncated, or the run "
                                        f"that made it was killed at once; re-index with `quire index PATH`")
            log.warning("the index database %s was empty (0 bytes); starting a new index", path)
        if create:
            make_folder(folder)
        schema_lock = folder / "schema.lock"
        # An index on a read-only mount (or in a folder this account may not write) is still searched: opened
        # read-only, with no lock file and no schema set-up. A folder with no index in it must be writable.
        unwritable = cannot_create(schema_lock)
        if unwritable is not None and path.exists() and unwritable.errno not in READ_ONLY_ERRNOS:
            raise QuireError(f"cannot use the index folder {folder}: {schema_lock.name}: "
                             f"{unwritable.strerror or unwritable}") from unwritable
        if unwritable is not None and (not path.exists() or empty_file(path)):
            raise IndexReadOnlyError(f"cannot make an index in {folder}: {why_unwritable(folder, unwritable)}; "
                                     f"choose a folder you can write to")
        #: True when the folder cannot be written: searches work, every write raises IndexReadOnlyError
        self.read_only = unwritable is not None
        if self.read_only:
            log.info("%s cannot be written (%s): opening the index read-only", folder, unwritable)
        with reporting_damage(path):
            self.db = sqlite_utils.Database(self._connect())
        # counts every query needs, kept while the database is unchanged
        self._counts = Counts(self.db.conn)
        self._scans = FtsScans(self.db.conn, self._connect, self._counts)
        self._words = WordIndex()
        self._derived: dict[str, DerivedVectors] = {}  # methods whose vectors are computed, not stored
        try:
            if self.read_only:
                with reporting_damage(path):
                    self._check_schema(folder)
                return
            # Switching a new file to WAL and creating or migrating the schema must not race another connection
            # doing the same (the app opens its search and indexing connections together): SQLite answers "database
            # is locked" at once there instead of waiting, so this setup is serialised across threads and processes.
            with reporting_damage(path), FileLock(str(schema_lock), timeout=SCHEMA_LOCK_SECONDS):
                self._set_up(folder)
        except BaseException:
            self.db.conn.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        """A connection to the database (:func:`engine.store.connection.connect`)."""
        return connect(self.path, read_only=self.read_only)

    def _check_schema(self, folder: Path) -> None:
        """What :meth:`_set_up` checks, for a database opened read-only: its schema must need no change."""
        try:
            tune(self.db.conn)
            version = self.get_meta("schema_version")
        except sqlite3.OperationalError as e:
            if "no such table" in str(e):
                raise IndexDamagedError(f"the index database {self.path} holds no index ({e}); re-index with "
                                        f"`quire index PATH` in a folder you can write to") from e
            if not has_log(self.path):
                raise QuireError(f"cannot read the index database {self.path}: {e}") from e
            raise IndexReadOnlyError(
                f"the index at {folder} cannot be read where it is: its folder is read-only and its write-ahead log "
                f"({DB_NAME}-wal) holds changes not yet merged; open it once with write access (`quire status "
                f"--db {folder}`) to merge them") from e
        if version is not None and int(version) > schema.SCHEMA_VERSION:
            raise QuireError(f"index at {folder} was made by a newer quire (schema {version}); upgrade quire")
        if version is None or int(version) < schema.SCHEMA_VERSION:
            raise IndexReadOnlyError(
                f"the index at {folder} was made by an older quire and must be upgraded, which needs write access; "
                f"its folder is read-only: run `quire status --db {folder}` once where it can be written")

    def _set_up(self, folder: Path) -> None:
        space.prepare(self.db.conn)  # before any table: a removal can give pages back (engine.store.space)
        self.db.enable_wal()
        self.db.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may lose the last commits
        self.db.execute("PRAGMA foreign_keys=OFF")
        tune(self.db.conn)
        migrated = False
        with self.db.atomic():
            schema.create(self.db)
            version = self.get_meta("schema_version")
            if version is None:
                self.set_meta("schema_version", schema.SCHEMA_VERSION)
            elif int(version) > schema.SCHEMA_VERSION:
                raise QuireError(f"index at {folder} was made by a newer quire (schema {version}); upgrade quire")
            elif int(version) < schema.SCHEMA_VERSION:
                if schema.migrate(self.db, int(version)):  # the word index is built by the next indexing run
                    self.set_meta(postings.BACKFILL_META, postings.plan_backfill(self.db.conn))
                self.set_meta("schema_version", schema.SCHEMA_VERSION)
                migrated = True
            if self.get_meta("index_id") is None:
                self.set_meta("index_id", uuid.uuid4().hex)
        if migrated:  # what a migration dropped (schema 6: the static vectors, the facets) gives its space back
            self.reclaim_space()

    @property
    def index_id(self) -> str | None:
        """This database's own id, made when it was created: the graph files record it, so that graphs copied
        from another index (or left from a database made again) are not taken for this one's."""
        return self.get_meta("index_id")

    def close(self) -> None:
        """Close the connections (the main one last, checkpointing the WAL)."""
        self._scans.close()
        self.db.conn.close()

    # -- meta -------------------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: Any = None) -> Any:
        """A JSON value stored under ``key``."""
        return meta.get(self.db.conn, key, default)

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value (in the caller's transaction, if any)."""
        meta.put(self.db.conn, key, value)

    # -- roots ------------------------------------------------------------------------------------------------
    def add_roots(self, paths: Iterable[str]) -> None:
        """Remember folders and files the user asked to index (the app lists them; `index` with no path reuses)."""
        with self.db.atomic():
            now = time.time()
            for p in paths:
                self.db.execute("INSERT OR IGNORE INTO roots(path, added_at) VALUES (?, ?)", [to_column(p), now])

    def remove_roots(self, paths: Iterable[str]) -> None:
        """Forget roots (their documents are removed separately)."""
        with self.db.atomic():
            for p in paths:
                self.db.execute("DELETE FROM roots WHERE path = ?", [to_column(p)])

    def roots(self) -> list[str]:
        """Indexed roots, oldest first."""
        return [from_column(r[0]) for r in self.db.execute("SELECT path FROM roots ORDER BY added_at, path")]

    # -- documents --------------------------------------------------------------------------------------------
    def document(self, path: str) -> dict | None:
        """The record of one file, or None."""
        rows = list(self.db.query("SELECT * FROM documents WHERE path = ?", [to_column(path)]))
        return _document_row(rows[0]) if rows else None

    def documents(self, under: str | None = None) -> Iterator[dict]:
        """Records of all files, or of those at or below ``under``, ordered by path."""
        if under is None:
            yield from map(_document_row, self.db.query("SELECT * FROM documents ORDER BY path"))
            return
        prefix = to_column(under.rstrip("/\\") + "/")
        yield from map(_document_row, self.db.query(
            "SELECT * FROM documents WHERE path = ? OR substr(path, 1, ?) = ? ORDER BY path",
            [to_column(under), len(prefix), prefix],
        ))

    def documents_by_id(self, ids: Sequence[int]) -> dict[int, dict]:
        """Records keyed by id."""
        return {key: _document_row(row) for key, row in self._by_id("documents", ids).items()}

    def duplicates_of(self, content_hash: str) -> list[str]:
        """Paths of indexed files with this exact content."""
        return [
            from_column(r[0])
            for r in self.db.execute(
                "SELECT path FROM documents WHERE hash = ? AND status = 'indexed' ORDER BY path", [content_hash]
            )
        ]

    def record_unindexed(self, path: str, size: int, mtime: float, content_hash: str, status: str, reason: str) -> list[int]:
        """Record a skipped or failed file; any content it had before is removed. Returns removed sentence ids."""
        with self.db.atomic():
            old = self.document(path)
            removed = self._delete_content([old["id"]]) if old else []
            row = {"path": to_column(path), "size": size, "mtime": mtime, "hash": content_hash, "status": status,
                   "reason": reason, "title": None, "kind": None, "sentences": 0, "updated_at": time.time()}
            if old:
                self.db["documents"].update(old["id"], row)
            else:
                self.db["documents"].insert(row)
        return removed

    def touch(self, path: str, size: int, mtime: float) -> None:
        """A file's metadata changed but its bytes did not: remember the new stat so it is not re-read next time."""
        with self.db.atomic():
            self.db.execute("UPDATE documents SET size = ?, mtime = ? WHERE path = ?", [size, mtime, to_column(path)])

    def write_documents(self, docs: Sequence[NewDocument], vectors: np.ndarray, method: str,
                        facets: Sequence[Sequence[tuple] | None] | None = None) -> tuple[list[int], np.ndarray]:
        """Replace or insert documents with their sentences, passages, vectors and facets in one transaction.

        ``vectors`` holds one row per sentence, documents in order; ``facets`` each document's facet rows
        (``engine.facets.extract.FacetBatch.packed``, one per sentence; None: none computed). Facets go in the same
        transaction: a run killed between two would leave sentences without facets that re-indexing, which skips
        unchanged files, never adds. Returns (sentence ids that no longer exist, ids of the new sentences in the
        same order as ``vectors``).
        """
        n_sentences = sum(len(d.sentences) for d in docs)
        if vectors.shape[0] != n_sentences:
            raise ValueError(f"{vectors.shape[0]} vectors for {n_sentences} sentences")
        table = None if self.derives(method) else schema.create_vector_table(self.db, method)
        with self.db.atomic():
            old_ids = [r[0] for r in self.db.execute(
                f"SELECT id FROM documents WHERE path IN ({','.join('?' * len(docs))})", [to_column(d.path) for d in docs]
            )] if docs else []
            removed = self._delete_content(old_ids)
            first_sentence = meta.reserve_ids(self.db.conn, "next_sentence_id", "sentences", n_sentences)
            first_passage = meta.reserve_ids(self.db.conn, "next_passage_id", "passages",
                                             sum(len(d.passages) for d in docs))
            sentence_rows: list[tuple] = []
            passage_rows: list[tuple] = []
            fts_rows: list[tuple] = []
            facet_rows: list[tuple] = []
            sid, pid = first_sentence, first_passage
            now = time.time()
            for i, doc in enumerate(docs):
                if facets is not None and facets[i] is not None:
                    facet_rows.extend((sid + k, *row) for k, row in enumerate(facets[i]))
                doc_row = {"path": to_column(doc.path), "size": doc.size, "mtime": doc.mtime, "hash": doc.hash,
                           "status": "indexed", "reason": doc.reason, "title": doc.title, "kind": doc.kind,
                           "sentences": len(doc.sentences), "updated_at": now}
                existing = self.db.execute("SELECT id FROM documents WHERE path = ?", [doc_row["path"]]).fetchone()
                if existing:
                    doc_id = existing[0]
                    self.db["documents"].update(doc_id, doc_row)
                else:
                    doc_id = self.db["documents"].insert(doc_row).last_pk
                passage_of = np.zeros(len(doc.sentences), dtype=np.int64)
                for first, last in doc.passages:
                    passage_rows.append((pid, doc_id, first, last))
                    fts_rows.append((pid, " ".join(s.text for s in doc.sentences[first : last + 1])))
                    passage_of[first : last + 1] = pid
                    pid += 1
                for ordinal, s in enumerate(doc.sentences):
                    sentence_rows.append((sid, doc_id, ordinal, s.text, s.start, s.end, s.page, int(passage_of[ordinal]), s.hash))
                    sid += 1
            conn = self.db.conn
            conn.executemany("INSERT INTO sentences VALUES (?,?,?,?,?,?,?,?,?)", sentence_rows)
            conn.executemany("INSERT INTO passages VALUES (?,?,?,?)", passage_rows)
            conn.executemany("INSERT INTO passages_fts(rowid, text) VALUES (?,?)", fts_rows)
            postings.add(conn, [r[0] for r in passage_rows], [r[1] for r in passage_rows], [r[1] for r in fts_rows])
            new_ids = np.arange(first_sentence, sid, dtype=np.int64)
            if table is not None:
                _insert_vectors(conn, table, new_ids, vectors)
            self._insert_facets(facet_rows)
            meta.bump_generation(self.db.conn)
        return removed, new_ids

    def delete_paths(self, paths: Sequence[str]) -> list[int]:
        """Forget files entirely; returns the sentence ids that disappeared."""
        with self.db.atomic():
            ids = [r[0] for r in self.db.execute(
                f"SELECT id FROM documents WHERE path IN ({','.join('?' * len(paths))})", [to_column(p) for p in paths]
            )] if paths else []
            removed = self._delete_content(ids)
            for doc_id in ids:
                self.db.execute("DELETE FROM documents WHERE id = ?", [doc_id])
        return removed

    def _delete_content(self, doc_ids: Sequence[int]) -> list[int]:
        """Delete sentences, passages (and their FTS rows) and vectors of these documents; caller's transaction."""
        removed: list[int] = []
        for doc_id in doc_ids:
            sentences = self.db.execute(
                "SELECT id, text, passage_id FROM sentences WHERE doc_id = ? ORDER BY ordinal", [doc_id]
            ).fetchall()
            if not sentences:
                continue
            # a contentless FTS5 row is deleted by sending back exactly the text it was given
            texts: dict[int, list[str]] = {}
            for _, text, passage_id in sentences:
                texts.setdefault(passage_id, []).append(text)
            self.db.conn.executemany(
                "INSERT INTO passages_fts(passages_fts, rowid, text) VALUES ('delete', ?, ?)",
                [(pid, " ".join(parts)) for pid, parts in texts.items()],
            )
            postings.forget(self.db.conn, list(texts))
            self.db.execute("DELETE FROM passages WHERE doc_id = ?", [doc_id])
            ids = [s[0] for s in sentences]
            # a document's sentence ids are one contiguous run (assigned together in write_documents)
            for table in [*self.vector_tables(), "facets"]:
                self.db.execute(f"DELETE FROM [{table}] WHERE sentence_id BETWEEN ? AND ?", [min(ids), max(ids)])
            self.db.execute("DELETE FROM sentences WHERE doc_id = ?", [doc_id])
            self.db.execute("UPDATE documents SET sentences = 0 WHERE id = ?", [doc_id])
            removed.extend(ids)
        if removed:
            meta.bump_generation(self.db.conn)
        return removed

    # -- sentences and vectors --------------------------------------------------------------------------------
    def vector_tables(self) -> list[str]:
        """Names of the per-method vector tables present."""
        return [t for t in self.db.table_names() if t.startswith("vectors_")]

    def derive(self, method: str, how: DerivedVectors) -> None:
        """Compute ``method``'s vectors from the sentences' text whenever they are read, and store none: for a method
        whose vectors cost less to make than to read (the static model's)."""
        self._derived[method] = how

    def derives(self, method: str) -> bool:
        """Whether ``method``'s vectors are computed from the text (:meth:`derive`) rather than stored."""
        return method in self._derived

    def sentence_count(self) -> int:
        """Number of indexed sentences (kept between queries, as the other counts every query needs)."""
        return self._counts.count("sentences", "SELECT count(*) FROM sentences")

    def sentences_by_id(self, ids: Sequence[int]) -> dict[int, dict]:
        """Sentence rows keyed by id."""
        return self._by_id("sentences", ids)

    def sentence_keys(self, ids: Sequence[int], up_to: int) -> dict[int, tuple[int, int]]:
        """(document id, number of documents holding the same sentence, counted up to ``up_to``) of sentences keyed
        by id: what ranking needs of each of hundreds of semantic hits, the count telling boilerplate (headers,
        footers, licence blocks).

        One statement: each count is a subquery on the (hash, doc_id) covering index, which on the 3.09M-sentence
        corpus took 3.2 ms for 200 hits where a second statement for the counts made it 4.3. The cap keeps a
        sentence repeated thousands of times from being counted once per hit (120 ms for one query).
        """
        out: dict[int, tuple[int, int]] = {}
        for chunk, marks in in_chunks(ids):
            for sid, doc_id, copies in self.db.execute(
                "SELECT s.id, s.doc_id, (SELECT count(*) FROM (SELECT DISTINCT t.doc_id FROM sentences t "
                f"WHERE t.hash = s.hash LIMIT ?)) FROM sentences s WHERE s.id IN ({marks})", [up_to, *chunk]
            ):
                out[sid] = (doc_id, copies)
        return out

    def _dicts(self, sql: str, params: Sequence[Any]) -> list[dict]:
        """Rows as dicts, for the reads every search makes: ``db.query`` wraps each read in a savepoint, two more
        statements per read."""
        cursor = self.db.conn.execute(sql, params)
        keys = [d[0] for d in cursor.description]
        return [dict(zip(keys, row)) for row in cursor]

    def _by_id(self, table: str, ids: Sequence[int]) -> dict[int, dict]:
        out: dict[int, dict] = {}
        for chunk, marks in in_chunks(ids):
            for row in self._dicts(f"SELECT * FROM {table} WHERE id IN ({marks})", chunk):
                out[row["id"]] = row
        return out

    def neighbours(self, doc_id: int, ordinal: int, radius: int) -> list[dict]:
        """Sentences ``ordinal - radius`` .. ``ordinal + radius`` of a document, in order."""
        return self._dicts(
            "SELECT * FROM sentences WHERE doc_id = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal",
            [doc_id, ordinal - radius, ordinal + radius],
        )

    def document_sentences(self, doc_id: int) -> list[dict]:
        """Every sentence row of one document, in order (what "more like this" picks its query from)."""
        return self._dicts("SELECT * FROM sentences WHERE doc_id = ? ORDER BY ordinal", [doc_id])

    def iter_documents(self, batch: int = 10_000, *, without_vectors_for: str | None = None) -> Iterator[StoredSentences]:
        """Sentences of whole documents, about ``batch`` at a time (a batch ends where a document does, so one longer
        than ``batch`` comes whole); with ``without_vectors_for``, only batches holding a sentence that method has
        not embedded. Re-embedding reads this: a sentence's vector may take in its neighbours' words."""
        missing, join = "1", ""
        if without_vectors_for and not self.derives(without_vectors_for):
            table = schema.create_vector_table(self.db, without_vectors_for)
            missing, join = "v.sentence_id IS NULL", f"LEFT JOIN [{table}] v ON v.sentence_id = s.id"
        select = f"SELECT s.id, s.doc_id, s.ordinal, s.text, {missing}, s.hash FROM sentences s {join}"
        last = -1
        while True:
            rows = self.db.execute(
                f"{select} WHERE s.doc_id > ? ORDER BY s.doc_id, s.ordinal LIMIT ?", [last, batch]
            ).fetchall()
            if not rows:
                return
            last = rows[-1][1]
            if len(rows) == batch:  # the last document may go on past the limit
                rows += self.db.execute(
                    f"{select} WHERE s.doc_id = ? AND s.ordinal > ? ORDER BY s.ordinal", [last, rows[-1][2]]
                ).fetchall()
            flags = np.fromiter((bool(r[4]) for r in rows), dtype=bool, count=len(rows))
            if not flags.any():
                continue
            docs = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
            starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
            yield StoredSentences(
                ids=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
                texts=[r[3] for r in rows], hashes=np.fromiter((r[5] for r in rows), dtype=np.int64, count=len(rows)),
                doc_sizes=np.diff(np.r_[starts, len(rows)]), missing=flags,
            )

    def set_sentence_hashes(self, ids: np.ndarray, hashes: np.ndarray) -> None:
        """Give sentences other hashes (a short line carries the hash of the sentence its vector stands for,
        engine.embed.context)."""
        with self.db.atomic():
            self.db.conn.executemany("UPDATE sentences SET hash = ? WHERE id = ?", zip(hashes.tolist(), ids.tolist()))

    def add_vectors(self, method: str, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store vectors for existing sentences (re-embedding with another method); nothing for a method whose
        vectors are derived."""
        if self.derives(method):
            return
        table = schema.create_vector_table(self.db, method)
        with self.db.atomic():
            _insert_vectors(self.db.conn, table, ids, vectors, replace=True)

    def vectors(self, method: str, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of one method: all of them, or those of ``ids`` (missing ones left out)."""
        if self.derives(method):
            return self._derived_vectors(method, ids)
        table = schema.vector_table(method)
        if table not in self.db.table_names():
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        if ids is None:
            rows = self.db.execute(f"SELECT sentence_id, vector FROM [{table}] ORDER BY sentence_id").fetchall()
        else:
            rows = []
            for chunk, marks in in_chunks(ids):
                rows += self.db.execute(
                    f"SELECT sentence_id, vector FROM [{table}] WHERE sentence_id IN ({marks})", chunk
                ).fetchall()
        return _vector_rows(rows)

    def vector_batches(self, method: str, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All (ids, float32 vectors) of one method, ``batch`` rows at a time (in id order; whole documents at a time
        where the vectors are derived): rebuilding a graph of millions of sentences must not hold every vector twice
        over (bytes rows, then the matrix)."""
        if self.derives(method):
            encode = self._derived[method].encode
            for part in self.iter_documents(batch):
                yield part.ids, encode(part.texts, part.doc_sizes)
            return
        table = schema.vector_table(method)
        if table not in self.db.table_names():
            return
        last = -1
        while True:
            rows = self.db.execute(
                f"SELECT sentence_id, vector FROM [{table}] WHERE sentence_id > ? ORDER BY sentence_id LIMIT ?",
                [last, batch],
            ).fetchall()
            if not rows:
                return
            yield _vector_rows(rows)
            last = rows[-1][0]

    def vector_ids(self, method: str) -> np.ndarray:
        """Sentence ids that have a vector for ``method`` (every sentence, where its vectors are derived)."""
        if self.derives(method):
            rows = self.db.execute("SELECT id FROM sentences").fetchall()
            return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        table = schema.vector_table(method)
        if table not in self.db.table_names():
            return np.zeros(0, np.int64)
        rows = self.db.execute(f"SELECT sentence_id FROM [{table}]").fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def _derived_vectors(self, method: str, ids: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`vectors` of a derived method: the asked sentences with the sentences within ``reach`` of them, run
        by run of consecutive sentences of one document, are embedded as documents of their own; that gives each
        asked sentence the vector its whole document gives (DerivedVectors), for a few times its own cost."""
        if ids is None:
            parts = list(self.vector_batches(method))
            if not parts:
                return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
            every, vectors = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            order = np.argsort(every)
            return every[order], vectors[order]
        how = self._derived[method]
        rows: dict[int, tuple[int, int, str]] = {}
        for chunk, marks in in_chunks(ids):
            for sid, doc_id, ordinal, text in self.db.execute(
                f"SELECT w.id, w.doc_id, w.ordinal, w.text FROM sentences s JOIN sentences w ON w.doc_id = s.doc_id "
                f"AND w.ordinal BETWEEN s.ordinal - ? AND s.ordinal + ? WHERE s.id IN ({marks})",
                [how.reach, how.reach, *chunk],
            ):
                rows[sid] = (doc_id, ordinal, text)
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

    def drop_vectors(self, method: str) -> None:
        """Remove a method's vectors (used when a method is abandoned)."""
        with self.db.atomic():
            self.db.execute(f"DROP TABLE IF EXISTS [{schema.vector_table(method)}]")

    def random_sentence_ids(self, n: int, seed: int = 0) -> np.ndarray:
        """Up to ``n`` sentence ids drawn uniformly (for calibration)."""
        count = self.sentence_count()
        if count == 0:
            return np.zeros(0, np.int64)
        rows = self.db.execute(
            "SELECT id FROM sentences ORDER BY (id * 2654435761 + ?) % 4294967291 LIMIT ?", [seed, n]
        ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    # -- facets -----------------------------------------------------------------------------------------------
    def add_facets(self, rows: Iterable[tuple[int, int, bytes, bytes, bytes]]) -> None:
        """Store (sentence id, k, words, mixtures, mass) rows (``engine.facets.extract.FacetBatch.packed``), replacing
        old ones."""
        with self.db.atomic():
            self._insert_facets(rows)

    def _insert_facets(self, rows: Iterable[tuple[int, int, bytes, bytes, bytes]]) -> None:
        """:meth:`add_facets` in the caller's transaction."""
        self.db.conn.executemany("INSERT OR REPLACE INTO facets VALUES (?, ?, ?, ?, ?)", rows)

    def facets(self, ids: Sequence[int]) -> dict[int, tuple[int, bytes, bytes, bytes]]:
        """Stored facet rows (k, words, mixtures, mass) keyed by sentence id; sentences without facets left out."""
        out: dict[int, tuple[int, bytes, bytes, bytes]] = {}
        for chunk, marks in in_chunks(ids):
            for sid, *row in self.db.execute(
                f"SELECT sentence_id, k, words, mixtures, mass FROM facets WHERE sentence_id IN ({marks})",
                chunk,
            ):
                out[int(sid)] = tuple(row)
        return out

    def clear_facets(self) -> None:
        """Forget every sentence's facets (the static model they were computed with changed)."""
        with self.db.atomic():
            self.db.execute("DELETE FROM facets")

    # -- lexical ----------------------------------------------------------------------------------------------
    def passage_count(self) -> int:
        """Number of passages (the N of BM25's IDF)."""
        return self._counts.count("passages", "SELECT count(*) FROM passages")

    def bm25(self, match: str, limit: int | None, *, parts: int = 1) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score, higher is better) of the best passages for an FTS5 query
        (:meth:`engine.store.scans.FtsScans.bm25`)."""
        return self._scans.bm25(match, limit, parts=parts)

    def word_index_ready(self) -> bool:
        """Whether the word index covers every passage (an index made before it existed has to build it first:
        :meth:`build_word_index`)."""
        return self.get_meta(postings.BACKFILL_META) is None

    def word_bm25(self, stems: Sequence[str], limit: int, added: tuple[np.ndarray, np.ndarray] | None = None,
                  collection: WordStatistics | None = None) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score) of the ``limit`` best passages for words ``stems`` (as the index
        stores them), best first, from the word index: the scores FTS5's bm25() gives for the same words OR-ed.
        ``added``: (passage ids, scores) of quoted phrases that FTS5 scored, added first. The words' document
        frequencies are kept for :meth:`term_document_frequencies`. ``collection``: the statistics to score with, for
        a shard of a collection (:meth:`word_statistics` summed over the shards)."""
        rows, df = self._words.scores(self.db.conn, self._counts.version(), stems, limit, added, collection)
        self._counts.current().update({"term:" + s: df.get(s, 0) for s in stems})
        return rows

    def word_statistics(self, stems: Sequence[str]) -> WordStatistics:
        """This index's BM25 statistics for ``stems`` from the word index (which must be ready)."""
        return self._words.statistics(self.db.conn, self._counts.version(), stems)

    def build_word_index(self, *, batch: int = 5_000, progress: Callable[[int, int], None] | None = None,
                         cancel: threading.Event | None = None) -> None:
        """Index the words of passages written before the word index existed, ``batch`` passages per transaction,
        from where the last call stopped. The caller holds the index's write lock.

        ``progress(done, total)`` is called after each batch; ``cancel`` stops between batches (raises Cancelled).
        """
        plan = self.get_meta(postings.BACKFILL_META)
        if plan is None:
            return
        total = self.db.execute("SELECT count(*) FROM passages WHERE id BETWEEN ? AND ?",
                                [plan["next"], plan["last"]]).fetchone()[0]
        done = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"building the word index paused at {done:,} of {total:,} passages")
            rows = self.db.execute(
                "SELECT id, doc_id FROM passages WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?",
                [plan["next"], plan["last"], batch],
            ).fetchall()
            with self.db.atomic():
                if not rows:
                    postings.forget_unindexed(self.db.conn)
                    postings.compact(self.db.conn)
                    meta.delete(self.db.conn, postings.BACKFILL_META)
                    return
                texts = self.passage_texts([r[0] for r in rows])
                postings.add(self.db.conn, [r[0] for r in rows], [r[1] for r in rows],
                             [texts.get(r[0], "") for r in rows])
                plan = {**plan, "next": rows[-1][0] + 1}
                self.set_meta(postings.BACKFILL_META, plan)
            done += len(rows)
            if progress is not None:
                progress(done, total)

    def compact_word_index(self) -> bool:
        """Merge the word index into one segment if an indexing run wrote enough to make it worth it
        (:func:`engine.store.postings.compact`); returns whether it did."""
        with self.db.atomic():
            return postings.compact(self.db.conn)

    def reclaim_space(self) -> space.Reclaimed:
        """Give the disk space of removed documents back (:func:`engine.store.space.reclaim`)."""
        return space.reclaim(self.db.conn, self.path)

    def term_document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """Passages containing each (stemmed, as FTS5 stores it) term; terms in none are left out.

        From the word index when it is complete, else from FTS5 (fts5vocab walks each term's whole posting list: 5
        ms a query on the 3.09M-sentence corpus); kept while the database is unchanged, as typing a query asks for
        the same words at every keystroke.
        """
        cache = self._counts.current()
        missing = sorted({t for t in terms if "term:" + t not in cache})
        if missing and self.word_index_ready():
            found = self._words.frequencies(self.db.conn, self._counts.version(), missing)
            cache.update({"term:" + t: found.get(t, 0) for t in missing})
        elif missing:
            found = scans.document_frequencies(self.db.conn, missing)
            cache.update({"term:" + t: found.get(t, 0) for t in missing})
        return {t: n for t in terms if (n := cache.get("term:" + t, 0))}

    def passages_of(self, passage_ids: Sequence[int]) -> dict[int, dict]:
        """Passage rows keyed by id."""
        return self._by_id("passages", passage_ids)

    def sentences_of_passages(self, passage_ids: Sequence[int]) -> dict[int, list[dict]]:
        """Each passage's sentences in order, keyed by passage id (passages without sentences left out)."""
        out: dict[int, list[dict]] = {}
        for chunk, marks in in_chunks(sorted({int(i) for i in passage_ids})):
            # a passage's sentences have consecutive ids in ordinal order: ordering by id lets SQLite walk the
            # passage_id index in order instead of sorting
            for row in self._dicts(
                f"SELECT * FROM sentences WHERE passage_id IN ({marks}) ORDER BY passage_id, id",
                chunk,
            ):
                out.setdefault(row["passage_id"], []).append(row)
        return out

    def passage_texts(self, passage_ids: Sequence[int]) -> dict[int, str]:
        """Each passage's text as FTS5 was given it (its sentences joined by spaces), keyed by passage id: what
        counting a passage's words needs, joined in SQLite rather than built into a dict per sentence."""
        out: dict[int, str] = {}
        for chunk, marks in in_chunks(sorted({int(i) for i in passage_ids})):
            out.update(self.db.execute(
                f"SELECT passage_id, group_concat(text, ' ') FROM sentences "
                f"WHERE passage_id IN ({marks}) GROUP BY passage_id",
                chunk,
            ).fetchall())
        return out

    def indexed_count(self) -> int:
        """Number of indexed documents (cheap: unlike :meth:`stats`, it does not count sentences)."""
        return self._counts.count("indexed", "SELECT count(*) FROM documents WHERE status = 'indexed'")

    def stats(self) -> dict[str, int]:
        """Counts for `status`: documents by status, sentences, passages."""
        out = {"documents": 0, "indexed": 0, "skipped": 0, "failed": 0}
        for status, n in self.db.execute("SELECT status, count(*) FROM documents GROUP BY status"):
            out[status] = int(n)
            out["documents"] += int(n)
        out["sentences"] = self.sentence_count()
        out["passages"] = self.passage_count()
        return out


def _document_row(row: dict) -> dict:
    """A documents row with its path as the file system knows it (engine.text.paths)."""
    row["path"] = from_column(row["path"])
    return row


def _insert_vectors(conn: sqlite3.Connection, table: str, ids: np.ndarray, vectors: np.ndarray, *,
                    replace: bool = False) -> None:
    """Store vectors as float16 blobs keyed by sentence id (in the caller's transaction)."""
    conn.executemany(f"INSERT {'OR REPLACE ' if replace else ''}INTO [{table}](sentence_id, vector) VALUES (?, ?)",
                     zip(ids.tolist(), (row.tobytes() for row in vectors.astype(VECTOR_DTYPE))))


def _vector_rows(rows: list[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 matrix) of (sentence id, float16 blob) rows."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
    out_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=VECTOR_DTYPE).reshape(len(rows), -1)
    return out_ids, matrix.astype(np.float32)
