"""The SQLite side of an index: documents, sentences, passages (FTS5) and vectors, written in batched transactions."""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils
from filelock import FileLock

from engine.errors import CancelFlag, Cancelled, IndexDamagedError, IndexReadOnlyError, QuireError
from engine.filestate import FileState
from engine.ingest.documents import NewDocument
from engine.store import (
    documents,
    facetrows,
    health,
    meta,
    postings,
    privacy,
    scans,
    schema,
    sentences,
    space,
    vectorrows,
    vocabulary,
)
from engine.store.bm25 import Postings, Scored, WordIndex, WordStatistics
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
from engine.store.documents import DocumentRecord
from engine.store.filters import Filters, matching_documents
from engine.store.scans import FtsScans
from engine.store.sentences import SentenceRow, StoredSentences
from engine.store.vectorrows import DerivedVectors, VectorRows

log = logging.getLogger(__name__)

DB_NAME = "index.db"

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
        if path.exists() and not path.is_file():
            raise health.damaged(folder, f"{DB_NAME} is a folder or a device, not a database file")
        if empty_file(path):
            # SQLite takes a 0-byte file for a new database: an index truncated to nothing would answer nothing
            if not create:
                raise health.damaged(folder, f"{DB_NAME} is empty (0 bytes): it was truncated, or the run that made "
                                             f"it was killed at once")
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
        else:
            # before SQLite opens it: the log and shared-memory files it makes take the database file's mode
            privacy.tighten(folder)
            privacy.create_file(path)
        with reporting_damage(path):
            self.db = sqlite_utils.Database(self._connect())
        # counts every query needs, kept while the database is unchanged
        self._counts = Counts(self.db.conn)
        self._scans = FtsScans(self.db.conn, self._connect, self._counts)
        self._words = WordIndex()
        self._vectors = VectorRows(self.db)
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
            problems = health.cheap_problems(self.db.conn, version or self.get_meta("schema_version", 0))
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
        if self.small() or self.get_meta(health.RUNNING_META):
            return True
        return time.time() - float(self.get_meta(health.CHECKED_META, 0)) > health.FULL_CHECK_DAYS * 86_400

    @contextmanager
    def running(self) -> Iterator[None]:
        """An indexing run: the file checked first when due (:meth:`pages_due`), and marked as being written until
        the run ends, so that the next run knows to check it when this one is killed; at its end the words of what it
        removed or replaced leave the file (:meth:`reclaim_space`)."""
        due = self.pages_due()
        self.check(pages=due)
        with self.db.atomic():
            if due:
                self.set_meta(health.CHECKED_META, time.time())
            self.set_meta(health.RUNNING_META, True)
        yield
        with self.db.atomic():
            meta.delete(self.db.conn, health.RUNNING_META)
        if self.needs_purge():
            self.reclaim_space()

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

    # -- meta -------------------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: Any = None) -> Any:
        """A JSON value stored under ``key``."""
        return meta.get(self.db.conn, key, default)

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value (in the caller's transaction, if any)."""
        meta.put(self.db.conn, key, value)

    # -- roots and documents (engine.store.documents) ---------------------------------------------------------
    def add_roots(self, paths: Iterable[str]) -> None:
        """Remember folders and files the user asked to index (the app lists them; `index` with no path reuses)."""
        with self.db.atomic():
            documents.add_roots(self.db.conn, paths)

    def remove_roots(self, paths: Iterable[str]) -> None:
        """Forget roots (their documents are removed separately)."""
        with self.db.atomic():
            documents.remove_roots(self.db.conn, paths)

    def roots(self) -> list[str]:
        """Indexed roots, oldest first."""
        return documents.roots(self.db.conn)

    def document(self, path: str) -> DocumentRecord | None:
        """The record of one file, or None."""
        return documents.get(self.db.conn, path)

    def documents(self, under: str | None = None) -> Iterator[DocumentRecord]:
        """Records of all files, or of those at or below ``under``, ordered by path."""
        return documents.listing(self.db.conn, under)

    def documents_by_id(self, ids: Sequence[int]) -> dict[int, DocumentRecord]:
        """Records keyed by id (:func:`engine.store.documents.by_ids`)."""
        return documents.by_ids(self.db.conn, ids)

    def duplicates_of(self, content_hash: str) -> list[str]:
        """Paths of indexed files with this exact content."""
        return documents.duplicates_of(self.db.conn, content_hash)

    def record_unindexed(self, path: str, size: int, mtime: float, content_hash: str, status: FileState,
                         reason: str) -> list[int]:
        """Record a skipped or failed file; any content it had before is removed. Returns removed sentence ids."""
        with self.db.atomic():
            old = self.document(path)
            removed = self._delete_content([old.id]) if old else []
            documents.write_unindexed(self.db, old, path, size, mtime, content_hash, status, reason)
        return removed

    def touch(self, path: str, size: int, mtime: float) -> None:
        """A file's metadata changed but its bytes did not: remember the new stat so it is not re-read next time."""
        with self.db.atomic():
            documents.touch(self.db.conn, path, size, mtime)

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
        table = self._vectors.table_to_write(method)
        with self.db.atomic():
            removed = self._delete_content(documents.ids_of(self.db.conn, [d.path for d in docs]))
            conn = self.db.conn
            first_sentence = meta.reserve_ids(conn, "next_sentence_id", "sentences", n_sentences)
            first_passage = meta.reserve_ids(conn, "next_passage_id", "passages", sum(len(d.passages) for d in docs))
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
            self._vectors.delete(min(ids), max(ids))
            facetrows.delete(self.db.conn, min(ids), max(ids))
            documents.emptied(self.db.conn, doc_id)
            removed.extend(ids)
        if removed:
            meta.bump_generation(self.db.conn)
            self.set_meta(space.PURGE_META, True)  # their words leave the file at the next reclaim_space
        return removed

    # -- sentences and vectors (engine.store.sentences, vectorrows) -------------------------------------------
    def sentence_count(self) -> int:
        """Number of indexed sentences (kept between queries, as the other counts every query needs)."""
        return self._counts.count("sentences", sentences.COUNT_SENTENCES)

    def sentences_by_id(self, ids: Sequence[int]) -> dict[int, SentenceRow]:
        """Sentence rows keyed by id (ids not there left out)."""
        return sentences.by_ids(self.db.conn, ids)

    def hashes_and_documents(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(sentence hash, document id) of each sentence of ``ids``, in their order, as arrays: what the calibration
        sample needs of thousands of sentences, without reading their text."""
        return sentences.hashes_and_documents(self.db.conn, ids)

    def sentence_keys(self, ids: Sequence[int], up_to: int) -> dict[int, tuple[int, int]]:
        """(document id, number of documents holding the same sentence, counted up to ``up_to``) of sentences keyed
        by id (:func:`engine.store.sentences.keys`)."""
        return sentences.keys(self.db.conn, ids, up_to)

    def neighbours(self, doc_id: int, ordinal: int, radius: int) -> list[SentenceRow]:
        """Sentences ``ordinal - radius`` .. ``ordinal + radius`` of a document, in order."""
        return sentences.neighbours(self.db.conn, doc_id, ordinal, radius)

    def document_sentences(self, doc_id: int) -> list[SentenceRow]:
        """Every sentence row of one document, in order (what "more like this" picks its query from)."""
        return sentences.of_document(self.db.conn, doc_id)

    def sentence_spans(self, doc_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(first, last) sentence id of each of ``doc_ids`` that has sentences (:func:`engine.store.sentences.spans`)."""
        return sentences.spans(self.db.conn, doc_ids)

    def iter_documents(self, batch: int = 10_000, *, without_vectors_for: str | None = None) -> Iterator[StoredSentences]:
        """Sentences of whole documents, about ``batch`` at a time (a batch ends where a document does, so one longer
        than ``batch`` comes whole); with ``without_vectors_for``, only batches holding a sentence that method has
        not embedded. Re-embedding reads this: a sentence's vector may take in its neighbours' words."""
        return self._vectors.documents_missing(without_vectors_for, batch)

    def set_sentence_hashes(self, ids: np.ndarray, hashes: np.ndarray) -> None:
        """Give sentences other hashes (a short line carries the hash of the sentence its vector stands for,
        engine.embed.context)."""
        with self.db.atomic():
            sentences.set_hashes(self.db.conn, ids, hashes)

    def random_sentence_ids(self, n: int, seed: int = 0) -> np.ndarray:
        """Up to ``n`` sentence ids drawn uniformly (for calibration)."""
        if self.sentence_count() == 0:
            return np.zeros(0, np.int64)
        return sentences.random_ids(self.db.conn, n, seed)

    def vector_tables(self) -> list[str]:
        """Names of the per-method vector tables present."""
        return self._vectors.tables()

    def derive(self, method: str, how: DerivedVectors) -> None:
        """Compute ``method``'s vectors from the sentences' text whenever they are read, and store none: for a method
        whose vectors cost less to make than to read (the static model's)."""
        self._vectors.derive(method, how)

    def derives(self, method: str) -> bool:
        """Whether ``method``'s vectors are computed from the text (:meth:`derive`) rather than stored."""
        return self._vectors.derives(method)

    def add_vectors(self, method: str, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Store vectors for existing sentences (re-embedding with another method); nothing for a method whose
        vectors are derived."""
        table = self._vectors.table_to_write(method)
        if table is None:
            return
        with self.db.atomic():
            vectorrows.insert(self.db.conn, table, ids, vectors, replace=True)

    def vectors(self, method: str, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of one method: all of them, or those of ``ids`` (missing ones left out)."""
        return self._vectors.read(method, ids)

    def vector_batches(self, method: str, batch: int = 65_536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All (ids, float32 vectors) of one method, ``batch`` rows at a time (:meth:`VectorRows.batches`)."""
        return self._vectors.batches(method, batch)

    def vector_ids(self, method: str) -> np.ndarray:
        """Sentence ids that have a vector for ``method`` (every sentence, where its vectors are derived)."""
        return self._vectors.ids(method)

    def drop_vectors(self, method: str) -> None:
        """Remove a method's vectors (used when a method is abandoned)."""
        with self.db.atomic():
            self._vectors.drop(method)

    # -- facets (engine.store.facetrows) ----------------------------------------------------------------------
    def add_facets(self, rows: Iterable[facetrows.FacetRow]) -> None:
        """Store (sentence id, k, words, mixtures, mass) rows (``engine.facets.extract.FacetBatch.packed``), replacing
        old ones."""
        with self.db.atomic():
            facetrows.insert(self.db.conn, rows)

    def facets(self, ids: Sequence[int]) -> dict[int, tuple[int, bytes, bytes, bytes]]:
        """Stored facet rows (k, words, mixtures, mass) keyed by sentence id; sentences without facets left out."""
        return facetrows.read(self.db.conn, ids)

    def clear_facets(self) -> None:
        """Forget every sentence's facets (the static model they were computed with changed)."""
        with self.db.atomic():
            facetrows.clear(self.db.conn)

    def matching_documents(self, within: Filters) -> frozenset[int]:
        """The ids of the indexed documents that ``within`` lets through (engine.store.filters)."""
        return matching_documents(self.db.conn, within)

    # -- lexical ----------------------------------------------------------------------------------------------
    def stems_from(self, prefix: str) -> list[tuple[str, int]]:
        """(stem, passages holding it) for every stem of the index that starts with ``prefix``."""
        return vocabulary.terms_from(self.db.conn, prefix)

    def passages_holding(self, stem: str, limit: int) -> list[int]:
        """The ids of up to ``limit`` passages that hold ``stem``."""
        return vocabulary.passages_holding(self.db.conn, stem, limit)

    def passage_count(self) -> int:
        """Number of passages (the N of BM25's IDF)."""
        return self._counts.count("passages", sentences.COUNT_PASSAGES)

    def bm25(self, match: str, limit: int | None, *, parts: int = 1) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score, higher is better) of the best passages for an FTS5 query
        (:meth:`engine.store.scans.FtsScans.bm25`)."""
        return self._scans.bm25(match, limit, parts=parts)

    def word_index_ready(self) -> bool:
        """Whether the word index covers every passage (an index made before it existed has to build it first:
        :meth:`build_word_index`)."""
        return self.get_meta(postings.BACKFILL_META) is None

    def word_postings(self, stems: Sequence[str]) -> Postings:
        """The word index's postings of ``stems`` (as the index stores them), read now for :meth:`word_bm25` to score
        later, on another thread: a hybrid query reads its related words' while it walks the graph."""
        return self._words.postings(self.db.conn, self._counts.version(), stems)

    def word_bm25(self, stems: Sequence[str], limit: int | None, added: tuple[np.ndarray, np.ndarray] | None = None,
                  collection: WordStatistics | None = None, weights: Sequence[float] | None = None,
                  within: np.ndarray | None = None, read: Postings | None = None) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score) of :meth:`word_scores`' passages, best first."""
        return self.word_scores(stems, limit, added, collection, weights, within, read).rows()

    def word_scores(self, stems: Sequence[str], limit: int | None, added: tuple[np.ndarray, np.ndarray] | None = None,
                    collection: WordStatistics | None = None, weights: Sequence[float] | None = None,
                    within: np.ndarray | None = None, read: Postings | None = None) -> Scored:
        """The ``limit`` best passages (None: all) for words ``stems`` (as the index stores them), best first, from
        the word index: the scores FTS5's bm25() gives for the same words OR-ed.
        ``added``: (passage ids, scores) of quoted phrases that FTS5 scored, added first. The words' document
        frequencies are kept for :meth:`term_document_frequencies`. ``collection``: the statistics to score with, for
        a shard of a collection (:meth:`word_statistics` summed over the shards). ``weights``: each stem's term is
        multiplied by its weight (words related to the query's, engine.search.related). ``within``: document ids,
        whose passages alone are scored. ``read``: the postings of ``stems`` read before (:meth:`word_postings`)."""
        scored, df = self._words.scores(self.db.conn, self._counts.version(), stems, limit, added, collection,
                                        weights, within, read)
        self._counts.current().update({"term:" + s: df.get(s, 0) for s in stems})
        return scored

    def word_statistics(self, stems: Sequence[str]) -> WordStatistics:
        """This index's BM25 statistics for ``stems`` from the word index (which must be ready)."""
        return self._words.statistics(self.db.conn, self._counts.version(), stems)

    def build_word_index(self, *, batch: int = 5_000, progress: Callable[[int, int], None] | None = None,
                         cancel: CancelFlag | None = None) -> None:
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
        """Take the words of removed documents out of the file and give their disk space back
        (:func:`engine.store.space.reclaim`)."""
        return space.reclaim(self.db.conn, self.path)

    def needs_purge(self) -> bool:
        """Whether documents were removed or replaced since their words last left the file (:meth:`reclaim_space`
        takes them out)."""
        return bool(self.get_meta(space.PURGE_META))

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

    def sentences_of_passages(self, passage_ids: Sequence[int]) -> dict[int, list[SentenceRow]]:
        """Each passage's sentences in order, keyed by passage id (passages without sentences left out)."""
        return sentences.of_passages(self.db.conn, passage_ids)

    def passage_texts(self, passage_ids: Sequence[int]) -> dict[int, str]:
        """Each passage's text as FTS5 was given it (its sentences joined by spaces), keyed by passage id."""
        return sentences.passage_texts(self.db.conn, passage_ids)

    def indexed_count(self) -> int:
        """Number of indexed documents (cheap: unlike :meth:`stats`, it does not count sentences)."""
        return self._counts.count("indexed", documents.COUNT_INDEXED)

    def stats(self) -> dict[str, int]:
        """Counts for `status`: documents by status, sentences, passages."""
        out = {"documents": 0, **{state.value: 0 for state in FileState}}
        for state, n in documents.counts_by_status(self.db.conn).items():
            out[state.value] = n
            out["documents"] += n
        out["sentences"] = self.sentence_count()
        out["passages"] = self.passage_count()
        return out
