"""The facade: one ``Index`` object owns a folder with the database and vector graphs; the CLI and app use only it."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
from filelock import FileLock

from engine import embed
from engine.blas import one_blas_thread
from engine.config import IndexConfig
from engine.embed import context
from engine.embed.base import Embedder
from engine.errors import (
    CancelFlag,
    ConfigError,
    GraphUnavailableError,
    IndexNotFoundError,
    IndexReadOnlyError,
    MethodMismatchError,
)
from engine.facets.service import load_space
from engine.indexing.methods import Methods
from engine.indexing.reembed import reembed
from engine.indexing.run import IndexingRun, Progress, ProgressCallback
from engine.ingest.pool import Extractor, extract_all
from engine.locations import default_index_dir
from engine.reports import FileStatus, IndexReport, IndexStatus
from engine.search import related
from engine.search.like import LikeQuery, LikeSource, like_query
from engine.search.present import explain as explain_results
from engine.search.query import check_text, query_stems
from engine.search.results import Mode, SearchResponse, SearchResult
from engine.search.searcher import Searcher
from engine.search.statistics import CollectionStatistics
from engine.store import health, privacy
from engine.store.connection import reporting_damage
from engine.store.database import DB_NAME, Store
from engine.store.files import bytes_on_disk, remove_leftovers
from engine.store.filters import Filters
from engine.store.locking import holding
from engine.store.meta import Key
from engine.store.vectorrows import DerivedVectors
from engine.store.vectors import LEFTOVERS, VectorIndex
from engine.text.paths import readable

log = logging.getLogger(__name__)

# Random sentences a query is compared with for its own null distribution: enough for a stable mean and spread,
# few enough to cost a query little (docs/decisions/0002-score-fusion-and-relevance-gate.md).
NULL_SAMPLE = 1000


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _reports_damage(method: _Method) -> _Method:
    """An :class:`Index` method whose damaged-database errors become :class:`engine.errors.IndexDamagedError`."""

    @functools.wraps(method)
    def wrapper(self: Index, *args: Any, **kwargs: Any) -> Any:
        with reporting_damage(self.folder / DB_NAME):
            return method(self, *args, **kwargs)

    return cast(_Method, wrapper)


class Index:
    """An index folder: SQLite database (documents, sentences, passages, vectors) plus one HNSW graph per method.

    Use as a context manager. Any number of ``Index`` objects may read the same folder; writing (``add``,
    ``remove``, ``reembed``) takes a lock file so that only one process writes at a time.
    """

    def __init__(self, folder: Path | str | None = None, *, create: bool = True, method: str | None = None,
                 config: IndexConfig | None = None) -> None:
        self.folder = Path(folder) if folder else default_index_dir()
        if not create and not (self.folder / DB_NAME).exists():
            file = next((p for p in (self.folder, *self.folder.parents) if p.is_file()), None)
            where = f" ({file} is a file, not a folder)" if file is not None else ""
            raise IndexNotFoundError(f"no index at {self.folder}{where}; run `quire index PATH` first")
        self.config = config or IndexConfig()
        self.store = Store(self.folder, create=create)
        #: what the index records of its embedding methods (engine.indexing.methods)
        self.methods = Methods(self.store)
        for name in embed.derived():  # stored by no index: computed from the text when read
            # a vector draws on at most MAX_SPAN sentences, its own included (engine.embed.context)
            self.store.vectors.derive(name, DerivedVectors(functools.partial(_derived_vectors, name),
                                                           context.MAX_SPAN - 1))
        self._lock = FileLock(str(self.folder / "write.lock"), mode=privacy.FILE_MODE)
        stored = self.store.meta.get(Key.METHOD)
        if stored is None and self.store.read_only:
            self.store.close()
            raise IndexNotFoundError(f"the index at {self.folder} holds nothing yet and its folder is read-only; "
                                     f"index into a folder you can write to")
        if stored is None:
            with self.store.transaction():
                self.methods.record(embed.load(method or embed.DEFAULT_METHOD))
        self._vectors: dict[str, VectorIndex] = {}
        self._null: tuple[tuple, np.ndarray | None] | None = None  # (state it was read in, the sample)
        self._searcher_lock = threading.Lock()
        with reporting_damage(self.store.path):
            self._opened = self.methods.state()

    # -- context manager ----------------------------------------------------------------------------------------
    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Release the database."""
        self.store.close()

    def is_current(self) -> bool:
        """Whether the graphs this object loaded (or will) still match the index: no sentence added or removed and the
        same method since it opened. A reader that finds so after another process's run keeps this object instead of
        reopening, which on a 3M-sentence index would mean reading its 3.6 GB graph again."""
        return self.methods.state() == self._opened

    # -- method ---------------------------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """The embedding method searches use."""
        return self.methods.current

    def vector_index(self, embedder: Embedder, *, load: bool = True, repair: bool = True) -> VectorIndex:
        """The method's graph, loaded (caught up in memory) unless ``load`` is False; saved only by writers. Without
        ``repair`` (searches), one that would have to be rebuilt raises GraphUnavailableError
        (:meth:`engine.store.vectors.VectorIndex.open`)."""
        # the graph holds the stored vectors: it is named by the fingerprint they were made under (model and rule)
        fingerprint = context.fingerprint(embedder)
        key = f"{embedder.name}:{fingerprint}"
        if key not in self._vectors:
            self._vectors[key] = VectorIndex(self.folder, embedder.name, fingerprint, embedder.dim,
                                             owner=self.store.index_id)
        index = self._vectors[key]
        if load and not index.is_open:
            index.open(self.store, repair=repair)
        return index

    # -- writing --------------------------------------------------------------------------------------------------
    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the index's write lock (one writer at a time; readers never write), or say who holds it."""
        if self.store.read_only:
            raise IndexReadOnlyError(f"the index at {self.folder} is read-only (its folder cannot be written): it "
                                     f"can be searched, not changed")
        with holding(self._lock, self.folder):
            yield

    @_reports_damage
    def add(self, paths: Sequence[Path | str] = (), *, method: str | None = None,
            progress: ProgressCallback | None = None, cancel: CancelFlag | None = None,
            keep: Callable[[str], bool] | None = None, extract: Extractor = extract_all) -> IndexReport:
        """Index files and folders (default: every root indexed before), re-reading only what changed.

        Files under a given folder that are no longer there are removed. With ``method`` other than the index's,
        all sentences are first re-embedded with it (the old vectors stay until the switch completes).
        Cancelling keeps everything written so far; the next ``add`` continues from there.

        For a shard of a collection (engine.cluster): ``keep`` says which of the files found are this index's
        (the others are left alone as if ignored), ``extract`` reads them elsewhere (a cluster's workers).
        """
        started = time.monotonic()
        missing = [p for p in paths if not os.path.lexists(p)]
        if missing:
            raise ConfigError(f"{readable(os.fspath(missing[0]))} does not exist; check the path"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        # the file checked first when due, and marked as written until the run ends (engine.store.health)
        with self._writing(), self.store.running(), one_blas_thread():  # engine/blas.py: the run needs the cores
            for leftover in (path for pattern in LEFTOVERS for path in remove_leftovers(self.folder, pattern)):
                log.info("removed %s, left by a run that was stopped while saving", leftover.name)
            self._build_word_index(progress, cancel)
            if method and method != self.method:
                reembed(self, method, progress, cancel)
            embedder = self.methods.embedder()
            if not self.methods.is_current(embedder):
                log.info("the index's %s vectors were made as %s, this quire makes %s: re-embedding them",
                         self.method, self.store.meta.get(Key.FINGERPRINT), context.fingerprint(embedder))
                reembed(self, self.method, progress, cancel)
            roots = [str(Path(os.path.abspath(p))) for p in paths] or self.store.documents.roots()
            if not roots:
                raise ConfigError("nothing to index: give a file or folder")
            self.store.documents.add_roots(roots)
            run = IndexingRun(self, embedder, progress, cancel, keep, extract)
            run.run(roots)  # files gone or changed: their old words leave the disk as the run ends (Store.running)
            return IndexReport(
                method=embedder.name, documents=run.documents, sentences=run.sentences, unchanged=run.unchanged,
                removed=run.removed, issues=tuple(run.issues), seconds=time.monotonic() - started,
                cancelled=run.cancelled,
            )

    @classmethod
    def rebuild(cls, folder: Path | str | None = None, paths: Sequence[Path | str] = (), *, method: str | None = None,
                config: IndexConfig | None = None, progress: ProgressCallback | None = None,
                cancel: CancelFlag | None = None) -> IndexReport:
        """Make a damaged index again: its database and graphs are deleted and the folders and files it held (read
        from it, as far as it can be read, or ``paths``) are indexed anew. Raises ConfigError when it is not known
        what to index (nothing could be read and no ``paths`` given)."""
        folder = Path(folder) if folder else default_index_dir()
        roots = [os.fspath(p) for p in paths] or health.salvage_roots(folder / DB_NAME) or []
        found = [r for r in roots if os.path.lexists(r)]
        for gone in sorted(set(roots) - set(found)):
            log.warning("%s, which the index held, no longer exists: not indexed again", readable(gone))
        if not found:
            raise ConfigError(f"could not read from the index at {folder} which folders it held; give them: "
                              f"`quire index --rebuild --db {folder} PATH...`")
        with holding(FileLock(str(folder / "write.lock"), mode=privacy.FILE_MODE), folder):
            health.discard(folder)
        with cls(folder, method=method, config=config) as index:
            return index.add(found, progress=progress, cancel=cancel)

    def _build_word_index(self, progress: ProgressCallback | None, cancel: CancelFlag | None) -> None:
        """Index the words of passages written before the word index existed (an index from an older quire); until
        then lexical search runs on FTS5 alone, slower on large indexes."""
        if self.store.words.ready():
            return

        def report(done: int, total: int) -> None:
            if progress:
                progress(Progress("preparing", done, total, 0, current="indexing the words of earlier passages",
                                  unit="passages"))

        log.info("building the word index of %s", self.folder)
        self.store.words.build(progress=report, cancel=cancel)

    @_reports_damage
    def remove(self, paths: Sequence[Path | str]) -> int:
        """Forget files, or everything under folders; returns the number of files removed."""
        with self._writing():
            targets = [str(Path(os.path.abspath(p))) for p in paths]
            doomed = sorted({d.path for t in targets for d in self.store.documents.listing(t)})
            removed = self.store.delete_paths(doomed)
            self.store.documents.remove_roots(targets)
            embedder = self.methods.embedder()
            index = self.vector_index(embedder)
            index.remove(removed)
            index.save(self.store.meta.generation())
            if self.store.needs_purge():  # the removed documents' words and disk space (engine.store.space)
                self.store.reclaim_space()
            return len(doomed)

    @_reports_damage
    def reembed(self, method: str, *, progress: ProgressCallback | None = None,
                cancel: CancelFlag | None = None) -> None:
        """Embed every sentence with ``method`` and make it the index's method once all are done (resumable)."""
        with self._writing():
            reembed(self, method, progress, cancel)


    # -- reading --------------------------------------------------------------------------------------------------
    @_reports_damage
    def search(self, query: str, *, k: int = 10, mode: Mode | str = Mode.HYBRID, method: str | None = None,
               include_weak: bool = False, explain: bool = True, rerank_facets: bool | None = None,
               exclude: Sequence[str] = (), within: Filters = Filters(),
               collection: CollectionStatistics | None = None, second_look: bool = True,
               correct: bool = True) -> SearchResponse:
        """Ranked documents for ``query``, each with its probability of answering it; the options are
        :meth:`engine.search.searcher.Searcher.search`'s, and ``collection``: this index is a shard of a collection
        with these statistics for the query (:meth:`statistics` summed over its shards)."""
        mode = Mode(mode)
        check_text(query)
        if method and method != self.method:
            raise MethodMismatchError(
                f"this index was built with the {self.method} method, not {method}; "
                f"run `quire index --method {method}` to re-embed it, or search without --method"
            )
        # every mode's confidence weighs the query's cosines (lexical mode's alone goes on without stale vectors)
        embedder = self.methods.embedder()
        current = self.methods.is_current(embedder)
        vectors = unavailable = None
        if mode is not Mode.LEXICAL:
            self.methods.check_current(embedder)
            with self._searcher_lock:
                try:
                    vectors = self.vector_index(embedder, repair=False)
                except GraphUnavailableError as e:  # ranked by words until an indexing run repairs it (0030)
                    unavailable, mode = e, Mode.LEXICAL
        # the static model's word space explains results and relates the query's words to others (0019)
        searcher = Searcher(self.store, vectors, embedder if current else None,
                            self.methods.calibration(embedder, collection) if current else None, facets=load_space(),
                            null_sample=self._null_sample(embedder) if current else None, collection=collection)
        response = searcher.search(query, k=k, mode=mode, include_weak=include_weak, explain=explain,
                                   rerank_facets=rerank_facets, exclude=exclude, within=within,
                                   second_look=second_look, correct=correct)
        return response if unavailable is None else replace(response, notes=(*response.notes, unavailable.note))

    @_reports_damage
    def statistics(self, query: str, mode: Mode | str = Mode.HYBRID) -> CollectionStatistics:
        """What this index adds to a collection's statistics for ``query`` searched in ``mode``
        (:class:`CollectionStatistics`): its words', and in hybrid mode those of the words related to any of them
        (which of them are key words is known once the shards' counts are summed: engine.search.related)."""
        check_text(query)
        _, terms, stems = query_stems(query)
        space = load_space() if Mode(mode) is Mode.HYBRID and terms else None
        near = related.related_words(space, terms, {}, key_words=len(terms)) if space is not None else {}
        words = self.store.words.statistics([*stems, *(s for s in near if s not in stems)])
        return CollectionStatistics(words, self.store.documents.indexed_count(), self.store.sentences.count())

    @_reports_damage
    def search_like(self, source: LikeSource | str | os.PathLike[str], *, k: int = 10,
                    mode: Mode | str = Mode.SEMANTIC, method: str | None = None, include_weak: bool = False,
                    explain: bool = True, rerank_facets: bool | None = None, within: Filters = Filters(),
                    second_look: bool = True) -> SearchResponse:
        """Other documents like an indexed document, one page of it or one sentence of it ("more like this").

        The query is the source's stored sentences (``engine.search.like``; a plain path means the whole document,
        :meth:`LikeSource.parse` reads ``FILE:PAGE`` and ``FILE#SENTENCE``), and the source and any identical copy
        of it are left out, so the answer is the other documents. Ranked by meaning unless ``mode`` says otherwise;
        the other arguments are :meth:`search`'s. Raises :class:`engine.errors.QueryError` when the path is not
        indexed or the page or sentence does not exist."""
        mode = Mode(mode)
        query = self.like_query(source if isinstance(source, LikeSource) else LikeSource(os.fspath(source)))
        return self.search(query.text, k=k, mode=mode, method=method, include_weak=include_weak, explain=explain,
                           rerank_facets=rerank_facets, exclude=query.exclude, within=within, correct=False,
                           second_look=second_look)

    @_reports_damage
    def content_hashes(self, paths: Sequence[str]) -> dict[str, str]:
        """The content hash of each indexed document among ``paths``: a collection's merge folds copies of one file
        that other shards hold, as one index folds those it holds."""
        records = (self.store.documents.get(path) for path in paths)
        return {r.path: r.hash for r in records if r is not None and r.hash}

    @_reports_damage
    def like_query(self, source: LikeSource) -> LikeQuery:
        """The query :meth:`search_like` asks for ``source`` (``engine.search.like``), for a collection's shard that
        holds the source to make and every shard to answer."""
        return like_query(self.store, source)

    def _null_sample(self, embedder: Embedder) -> np.ndarray | None:
        """Vectors of random sentences of the index, read once per state of the index: each query's similarity to
        them is its own null distribution (engine.search.relevance)."""
        key = (embedder.name, self.methods.state())
        if self._null is None or self._null[0] != key:
            ids = self.store.sentences.random_ids(NULL_SAMPLE)
            found, vectors = self.store.vectors.read(embedder.name, ids.tolist())
            self._null = (key, vectors if found.size >= 2 else None)
        return self._null[1]

    @_reports_damage
    def explain(self, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
        """``results`` of ``search(query, explain=False)`` with what ``explain=True`` adds (surrounding sentences, facet
        chips and evidence), for the app: it shows the ranking at once and explains the rows on screen afterwards.

        A result whose sentence is no longer in the index (its file changed since the search) comes back as it was,
        as does one that no search of this index made (no ``sentence_id``).
        """
        stored = self.store.sentences.by_ids([r.sentence_id for r in results if r.sentence_id is not None])
        rows = [stored.get(r.sentence_id) if r.sentence_id is not None else None for r in results]
        found = [i for i, row in enumerate(rows) if row is not None]
        self.store.serve_searches()  # read as searches read it, as the search that made the results did
        explained = explain_results(self.store, load_space(), query, [results[i] for i in found],
                                    [row for row in rows if row is not None])
        out = list(results)
        for i, result in zip(found, explained):
            out[i] = result
        return out

    @_reports_damage
    def status(self, *, files: bool = False, check: bool = False) -> IndexStatus:
        """Counts, roots and (optionally) every file's status and reason. Raises IndexDamagedError for damage found:
        in the tables and counts always, in every page of the file when it is small or with ``check``
        (engine.store.health)."""
        self.store.check(pages=check or self.store.small())
        states = self.store.documents.states()
        listed = tuple(
            FileStatus(d.path, d.status, d.reason, d.sentences, d.title, d.kind) for d in self.store.documents.listing()
        ) if files else ()
        return IndexStatus(
            folder=str(self.folder), method=self.store.meta.get(Key.METHOD),
            fingerprint=self.store.meta.get(Key.FINGERPRINT), documents=states.documents,
            indexed=states.indexed, skipped=states.skipped, failed=states.failed,
            sentences=self.store.sentences.count(),
            roots=tuple(self.store.documents.roots()), methods_embedded=self.methods.embedded(),
            bytes_on_disk=bytes_on_disk(self.folder), files=listed,
        )

def _derived_vectors(method: str, texts: Sequence[str], doc_sizes: np.ndarray) -> np.ndarray:
    """The vectors of a derived method (engine.embed.derived) for whole documents' sentences, as indexing made them."""
    return context.encode(embed.load(method), texts, doc_sizes)[0]
