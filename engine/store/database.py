"""The SQLite side of an index: documents, sentences, passages (FTS5) and vectors, written in batched transactions."""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import sqlite_utils
from filelock import FileLock

from engine.errors import IndexDamagedError, IndexReadOnlyError, QuireError
from engine.filestate import FileState
from engine.ingest.documents import NewDocument
from engine.store import documents, facetrows, health, meta, postings, privacy, schema, sentences, space, vectorrows
from engine.store.connection import (
    READ_ONLY_ERRNOS,
    cannot_create,
    connect,
    empty_file,
    has_log,
    make_folder,
    map_for_search,
    reporting_damage,
    tune,
    why_unwritable,
)
from engine.store.counts import Counts
from engine.store.documents import Documents
from engine.store.facetrows import FacetRows
from engine.store.meta import Key, Meta
from engine.store.scans import FtsScans
from engine.store.sentences import Sentences
from engine.store.vectorrows import VectorRows
from engine.store.words import Words

log = logging.getLogger(__name__)

DB_NAME = "index.db"

# Opening waits this long for another connection's schema set-up (a migration of a large index takes seconds).
SCHEMA_LOCK_SECONDS = 120


class Store:
    """One index's SQLite database (WAL mode, so searches read while indexing writes).

    Only one process writes at a time; the facade holds that rule. Every write method is one transaction. The store
    itself does what spans tables (opening, checking, transactions, writing and deleting documents with their
    sentences, vectors and facets); callers read and write one table family through its attribute: ``meta``,
    ``documents``, ``sentences``, ``vectors``, ``facets``, ``words``.
    """

    def __init__(self, folder: Path, *, create: bool = True) -> None:
        self.folder = folder
        path = self.path = folder / DB_NAME
        _refuse_unusable(path, create)
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
        else:
            # before SQLite opens it: the log and shared-memory files it makes take the database file's mode
            privacy.tighten(folder)
            privacy.create_file(path)
        with reporting_damage(path):
            self.db = sqlite_utils.Database(self._connect())
        # counts every query needs, kept while the database is unchanged
        counts = Counts(self.db.conn)
        self._scans = FtsScans(self.db.conn, self._connect, counts)
        self.meta = Meta(self.db.conn)
        self.documents = Documents(self.db, counts)
        self.sentences = Sentences(self.db, counts)
        self.vectors = VectorRows(self.db)
        self.facets = FacetRows(self.db)
        self.words = Words(self.db, counts, self._scans)
        self._searching = False  # whether the file is mapped as a searching store maps it (serve_searches)
        self._pages_checked = False  # whether check() read every page since this store opened
        try:
            with reporting_damage(path):
                if self.read_only:
                    self._check_schema(folder)
                else:
                    # Switching a new file to WAL and creating or migrating the schema must not race another
                    # connection doing the same (the app opens its search and indexing connections together): SQLite
                    # answers "database is locked" at once there instead of waiting, so this setup is serialised
                    # across threads and processes.
                    with FileLock(str(schema_lock), timeout=SCHEMA_LOCK_SECONDS, mode=privacy.FILE_MODE):
                        self._set_up(folder)
                # a small file is read whole in milliseconds: its damage is found before anything reads it
                self.check(pages=self.small(health.OPEN_CHECK_BYTES))
        except BaseException:
            self.db.conn.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        """A connection to the database (:func:`engine.store.connection.connect`)."""
        return connect(self.path, read_only=self.read_only)

    def _refuse_damage(self, version: int | None = None) -> None:
        """Raise IndexDamagedError when the tables, settings or counts of an existing index show damage
        (:func:`engine.store.health.cheap_problems`); a database with no table yet is a new index."""
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").fetchone() is None:
            return
        problems = health.meta_problems(self.db.conn) if "meta" in self.db.table_names() else ["table meta missing"]
        if not problems:
            problems = health.cheap_problems(self.db.conn, version or self.meta.get(Key.SCHEMA_VERSION, 0))
        if problems:
            raise health.damaged(self.folder, problems)

    def check(self, *, pages: bool) -> None:
        """Raise IndexDamagedError when the index shows damage: its tables, settings and counts, and with ``pages``
        every page of the file (:func:`engine.store.health.page_problems`, a read of the whole file)."""
        self._refuse_damage()
        if not pages or self._pages_checked:
            return
        problems = health.page_problems(self.db.conn)
        if problems:
            raise health.damaged(self.folder, problems)
        self._pages_checked = True

    def small(self, limit: int = health.FULL_CHECK_BYTES) -> bool:
        """Whether the file is small enough to have every page checked whenever asked for its status or indexed
        (:data:`engine.store.health.FULL_CHECK_BYTES`), or at most ``limit`` bytes."""
        return self.path.stat().st_size <= limit

    def pages_due(self) -> bool:
        """Whether an indexing run should check every page first: the file is :meth:`small`, the last run was
        killed, or the last check is FULL_CHECK_DAYS old."""
        if self.small() or self.meta.get(Key.RUN_IN_PROGRESS):
            return True
        return time.time() - float(self.meta.get(Key.PAGES_CHECKED_AT, 0)) > health.FULL_CHECK_DAYS * 86_400

    @contextmanager
    def running(self) -> Iterator[None]:
        """An indexing run: the file checked first when due (:meth:`pages_due`), and marked as being written until
        the run ends, so that the next run knows to check it when this one is killed; at its end the words of what it
        removed or replaced leave the file (:meth:`reclaim_space`)."""
        due = self.pages_due()
        self.check(pages=due)
        with self.db.atomic():
            if due:
                self.meta.put(Key.PAGES_CHECKED_AT, time.time())
            self.meta.put(Key.RUN_IN_PROGRESS, True)
        yield
        with self.db.atomic():
            self.meta.delete(Key.RUN_IN_PROGRESS)
        if self.needs_purge():
            self.reclaim_space()

    def _check_schema(self, folder: Path) -> None:
        """What :meth:`_set_up` checks, for a database opened read-only: its schema must need no change."""
        try:
            tune(self.db.conn)
            version = self.meta.get(Key.SCHEMA_VERSION)
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
        self._refuse_damage(version)
        if version is None or int(version) < schema.SCHEMA_VERSION:
            raise IndexReadOnlyError(
                f"the index at {folder} was made by an older quire and must be upgraded, which needs write access; "
                f"its folder is read-only: run `quire status --db {folder}` once where it can be written")

    def _set_up(self, folder: Path) -> None:
        space.prepare(self.db.conn)  # before any table: a removal can give pages back (engine.store.space)
        self.db.enable_wal()
        self.db.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may lose the last commits
        self.db.execute("PRAGMA foreign_keys=OFF")
        # deleted rows and freed pages are overwritten with zeros, so that removed text leaves the file
        # (docs/decisions/0028-removed-words-leave-the-disk.md)
        self.db.execute("PRAGMA secure_delete=ON")
        tune(self.db.conn)
        migrated = False
        self._refuse_damage()  # before create(), which would make a lost table again, empty
        with self.db.atomic():
            schema.create(self.db)
            version = self.meta.get(Key.SCHEMA_VERSION)
            if version is None:
                self.meta.put(Key.SCHEMA_VERSION, schema.SCHEMA_VERSION)
            elif int(version) > schema.SCHEMA_VERSION:
                raise QuireError(f"index at {folder} was made by a newer quire (schema {version}); upgrade quire")
            elif int(version) < schema.SCHEMA_VERSION:
                if schema.migrate(self.db, int(version)):  # the word index is built by the next indexing run
                    self.meta.put(Key.WORD_INDEX_BACKFILL, postings.plan_backfill(self.db.conn))
                self.meta.put(Key.SCHEMA_VERSION, schema.SCHEMA_VERSION)
                migrated = True
            if self.meta.get(Key.INDEX_ID) is None:
                self.meta.put(Key.INDEX_ID, uuid.uuid4().hex)
        if migrated:  # what a migration dropped (schema 6: the static vectors, the facets) gives its space back
            self.reclaim_space()

    @property
    def index_id(self) -> str | None:
        """This database's own id, made when it was created: the graph files record it, so that graphs copied
        from another index (or left from a database made again) are not taken for this one's."""
        return self.meta.get(Key.INDEX_ID)

    def serve_searches(self) -> None:
        """Read the file as a store that searches reads it: mapped whole
        (:func:`engine.store.connection.map_for_search`, docs/decisions/0024-the-whole-index-file-mapped.md). A store
        that only indexes keeps the narrower window: the pages read through a map count in its process's memory, and
        indexing already holds the most."""
        if not self._searching:
            map_for_search(self.db.conn)
            self._searching = True

    def close(self) -> None:
        """Close the connections (the main one last, checkpointing the WAL)."""
        self._scans.close()
        self.db.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Several writes as one transaction: all of them land, or (on an exception) none. Writes of the store's own
        methods are each a transaction already; nested, they join the outer one."""
        with self.db.atomic():
            yield

    def record_unindexed(self, path: str, size: int, mtime: float, content_hash: str, status: FileState,
                         reason: str) -> list[int]:
        """Record a skipped or failed file; any content it had before is removed. Returns removed sentence ids."""
        with self.db.atomic():
            old = self.documents.get(path)
            removed = self._delete_content([old.id]) if old else []
            documents.write_unindexed(self.db, old, path, size, mtime, content_hash, status, reason)
        return removed

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
        table = self.vectors.table_to_write(method)
        with self.db.atomic():
            removed = self._delete_content(documents.ids_of(self.db.conn, [d.path for d in docs]))
            conn = self.db.conn
            first_sentence = meta.reserve_ids(conn, Key.NEXT_SENTENCE_ID, "sentences", n_sentences)
            first_passage = meta.reserve_ids(conn, Key.NEXT_PASSAGE_ID, "passages", sum(len(d.passages) for d in docs))
            now = time.time()
            doc_ids = [documents.write_indexed(self.db, doc, now) for doc in docs]
            new_ids = sentences.insert(conn, docs, doc_ids, first_sentence, first_passage)
            if table is not None:
                vectorrows.insert(conn, table, new_ids, vectors)
            firsts = first_sentence + np.cumsum([0, *(len(d.sentences) for d in docs)])
            facetrows.insert(conn, [(int(firsts[i]) + k, *row) for i, rows in enumerate(facets or ()) if rows is not None
                                    for k, row in enumerate(rows)])
            meta.bump_generation(conn)
        return removed, new_ids

    def delete_paths(self, paths: Sequence[str]) -> list[int]:
        """Forget files entirely; returns the sentence ids that disappeared."""
        with self.db.atomic():
            ids = documents.ids_of(self.db.conn, paths)
            removed = self._delete_content(ids)
            documents.delete(self.db.conn, ids)
        return removed

    def _delete_content(self, doc_ids: Sequence[int]) -> list[int]:
        """Delete sentences, passages (and their FTS rows) and vectors of these documents; caller's transaction."""
        removed: list[int] = []
        for doc_id in doc_ids:
            ids = sentences.delete_document(self.db.conn, doc_id)
            if not ids:
                continue
            # a document's sentence ids are one contiguous run (assigned together in write_documents)
            self.vectors.delete(min(ids), max(ids))
            facetrows.delete(self.db.conn, min(ids), max(ids))
            documents.emptied(self.db.conn, doc_id)
            removed.extend(ids)
        if removed:
            meta.bump_generation(self.db.conn)
            self.meta.put(Key.WORDS_TO_PURGE, True)  # their words leave the file at the next reclaim_space
        return removed

    def reclaim_space(self) -> space.Reclaimed:
        """Take the words of removed documents out of the file and give their disk space back
        (:func:`engine.store.space.reclaim`)."""
        return space.reclaim(self.db.conn, self.path)

    def needs_purge(self) -> bool:
        """Whether documents were removed or replaced since their words last left the file (:meth:`reclaim_space`
        takes them out)."""
        return bool(self.meta.get(Key.WORDS_TO_PURGE))


def _refuse_unusable(path: Path, create: bool) -> None:
    """Raise when ``path`` cannot be the database of an index: missing (unless it is to be created), not a file, or
    empty where it is not to be created."""
    folder = path.parent
    if not path.exists() and not create:
        raise QuireError(f"no index at {folder}")
    if path.exists() and not path.is_file():
        raise health.damaged(folder, f"{DB_NAME} is a folder or a device, not a database file")
    if empty_file(path):
        # SQLite takes a 0-byte file for a new database: an index truncated to nothing would answer nothing
        if not create:
            raise health.damaged(folder, f"{DB_NAME} is empty (0 bytes): it was truncated, or the run that made "
                                         f"it was killed at once")
        log.warning("the index database %s was empty (0 bytes); starting a new index", path)
