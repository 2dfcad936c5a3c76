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
from engine.embed.centre import CentredEmbedder, centre_rows, collection_mean, wants_centring
from engine.errors import (
    CancelFlag,
    Cancelled,
    ConfigError,
    GraphUnavailableError,
    IndexNotFoundError,
    IndexReadOnlyError,
    MethodMismatchError,
)
from engine.facets.service import load_space
from engine.filestate import FileState
from engine.indexing.run import IndexingRun, Progress, ProgressCallback
from engine.ingest.extract import sentence_hash
from engine.ingest.pool import Extractor, extract_all
from engine.locations import default_index_dir
from engine.reports import FileStatus, IndexReport, IndexStatus
from engine.search import related
from engine.search.calibration import Calibration, calibrate, prior
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
from engine.store.vectorrows import DerivedVectors
from engine.store.vectors import LEFTOVERS, VectorIndex
from engine.text.paths import readable

log = logging.getLogger(__name__)

# Recalibrate the "nothing relevant" threshold when the index grew or shrank by this share since last time.
RECALIBRATE_CHANGE = 0.1
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
        for name in embed.derived():  # stored by no index: computed from the text when read
            # a vector draws on at most MAX_SPAN sentences, its own included (engine.embed.context)
            self.store.derive(name, DerivedVectors(functools.partial(_derived_vectors, name), context.MAX_SPAN - 1))
        self._lock = FileLock(str(self.folder / "write.lock"), mode=privacy.FILE_MODE)
        stored = self.store.get_meta("method")
        if stored is None and self.store.read_only:
            self.store.close()
            raise IndexNotFoundError(f"the index at {self.folder} holds nothing yet and its folder is read-only; "
                                     f"index into a folder you can write to")
        if stored is None:
            name = method or embed.DEFAULT_METHOD
            embedder = embed.load(name)
            with self.store.transaction():
                self._record_method(embedder)
        self._vectors: dict[str, VectorIndex] = {}
        self._null: tuple[tuple, np.ndarray | None] | None = None  # (state it was read in, the sample)
        self._searcher_lock = threading.Lock()
        with reporting_damage(self.store.path):
            self._opened = self._state()

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
        return self._state() == self._opened

    def _state(self) -> tuple:
        return tuple(self.store.get_meta(key) for key in ("generation", "method", "fingerprint"))

    # -- method ---------------------------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        """The embedding method searches use."""
        return str(self.store.get_meta("method"))

    def _record_method(self, embedder: Embedder) -> None:
        self.store.set_meta("method", embedder.name)
        self.store.set_meta("fingerprint", context.fingerprint(embedder))
        self.store.set_meta("dim", embedder.dim)
        self.store.set_meta(f"fingerprint:{embedder.name}", context.fingerprint(embedder))

    def _embedder(self, method: str | None = None) -> Embedder:
        embedder = embed.load(method or self.method)
        mean = self.store.get_meta(_centre_key(embedder.name)) if wants_centring(embedder) else None
        return embedder if mean is None else CentredEmbedder(embedder, np.asarray(mean, dtype=np.float32))

    def centre_first_batch(self, embedder: Embedder, vectors: np.ndarray) -> tuple[Embedder, np.ndarray]:
        """For a method whose vectors are centred on their collection (engine.embed.centre), fix this index's centre
        from the first batch it embeds and centre that batch; the embedder returned centres the batches after it."""
        if not wants_centring(embedder) or isinstance(embedder, CentredEmbedder) or not len(vectors):
            return embedder, vectors
        stored = self.store.get_meta(_centre_key(embedder.name))
        if stored is not None:  # fixed since this embedder was loaded (a re-embedding before the run): keep it
            mean = np.asarray(stored, dtype=np.float32)
        else:
            mean = collection_mean(vectors)
            with self.store.transaction():
                self.store.set_meta(_centre_key(embedder.name), mean.tolist())
        return CentredEmbedder(embedder, mean), centre_rows(vectors, mean)

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

    def _check_current(self, embedder: Embedder) -> None:
        if context.fingerprint(embedder) != self.store.get_meta("fingerprint"):
            raise MethodMismatchError(
                f"the index's {self.method} vectors were made by another version of the model or of quire "
                f"({self.store.get_meta('fingerprint')}, this one makes {context.fingerprint(embedder)}); "
                f"run `quire index --method {self.method}` to re-embed"
            )

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
                self._reembed(method, progress, cancel)
            embedder = self._embedder()
            if context.fingerprint(embedder) != self.store.get_meta("fingerprint"):
                log.info("the index's %s vectors were made as %s, this quire makes %s: re-embedding them",
                         self.method, self.store.get_meta("fingerprint"), context.fingerprint(embedder))
                self._reembed(self.method, progress, cancel)
            roots = [str(Path(os.path.abspath(p))) for p in paths] or self.store.roots()
            if not roots:
                raise ConfigError("nothing to index: give a file or folder")
            self.store.add_roots(roots)
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
        if self.store.word_index_ready():
            return

        def report(done: int, total: int) -> None:
            if progress:
                progress(Progress("preparing", done, total, 0, current="indexing the words of earlier passages",
                                  unit="passages"))

        log.info("building the word index of %s", self.folder)
        self.store.build_word_index(progress=report, cancel=cancel)

    @_reports_damage
    def remove(self, paths: Sequence[Path | str]) -> int:
        """Forget files, or everything under folders; returns the number of files removed."""
        with self._writing():
            targets = [str(Path(os.path.abspath(p))) for p in paths]
            doomed = sorted({d.path for t in targets for d in self.store.documents(t)})
            removed = self.store.delete_paths(doomed)
            self.store.remove_roots(targets)
            embedder = self._embedder()
            index = self.vector_index(embedder)
            index.remove(removed)
            index.save(int(self.store.get_meta("generation", 0)))
            if self.store.needs_purge():  # the removed documents' words and disk space (engine.store.space)
                self.store.reclaim_space()
            return len(doomed)

    @_reports_damage
    def reembed(self, method: str, *, progress: ProgressCallback | None = None,
                cancel: CancelFlag | None = None) -> None:
        """Embed every sentence with ``method`` and make it the index's method once all are done (resumable)."""
        with self._writing():
            self._reembed(method, progress, cancel)

    def _reembed(self, method: str, progress: ProgressCallback | None, cancel: CancelFlag | None) -> None:
        """:meth:`reembed` under the write lock."""
        embedder = self._embedder(method)
        if context.fingerprint(embedder) != self.store.get_meta(f"fingerprint:{method}"):
            # vectors of an older model version, or made under another rule (engine.embed.context), are useless
            self.store.drop_vectors(method)
            with self.store.transaction():
                self.store.set_meta(f"fingerprint:{method}", context.fingerprint(embedder))
                self.store.set_meta(_centre_key(method), None)  # the next first batch sets it again
            embedder = self._embedder(method)
        total = self.store.sentence_count()
        done = 0 if self.store.derives(method) else len(self.store.vector_ids(method))
        # whole documents at a time: a short line is embedded with its neighbours (engine.embed.context)
        for part in self.store.iter_documents(self.config.batch_sentences, without_vectors_for=method):
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"re-embedding with {method} paused at {done:,} of {total:,} sentences")
            vectors, made = context.encode(embedder, part.texts, part.doc_sizes)
            embedder, vectors = self.centre_first_batch(embedder, vectors)
            # a short line carries its source's hash (_carrying_hashes); the hash it may carry already is
            # replaced by its own text's first. Before the vectors: a batch stopped in between is done again.
            own, short = part.hashes.copy(), np.flatnonzero(context.is_short(made.words))
            own[short] = [sentence_hash(part.texts[i]) for i in short.tolist()]
            carried = own[made.sources()]
            changed = carried != part.hashes
            if changed.any():
                self.store.set_sentence_hashes(part.ids[changed], carried[changed])
            self.store.add_vectors(method, part.ids[part.missing], vectors[part.missing])
            done += int(part.missing.sum())
            if progress:
                progress(Progress("embedding", done, total, done, current=f"re-embedding with {method}",
                                  unit="sentences"))
        with self.store.transaction():
            self._record_method(embedder)
            self.store.set_meta("generation", int(self.store.get_meta("generation", 0)) + 1)
        self.vector_index(embedder).save(int(self.store.get_meta("generation", 0)))
        self.calibrate(embedder, force=True)

    def calibrate(self, embedder: Embedder, *, force: bool = False) -> None:
        """Measure the random-pair cosine distribution of ``embedder``'s vectors again when the index has changed by
        RECALIBRATE_CHANGE since the last time (or with ``force``)."""
        count = self.store.sentence_count()
        previous = self.store.get_meta(f"calibration:{embedder.name}")
        last = previous.get("sentences", 0) if previous else 0
        if not force and previous and abs(count - last) <= RECALIBRATE_CHANGE * max(last, 1):
            return
        graph = self.vector_index(embedder, load=False)
        # vectors a run holds already (the static ones would otherwise be computed again from the text)
        cal = calibrate(self.store, embedder.name, read=graph.vectors if graph.is_open else None)
        with self.store.transaction():
            self.store.set_meta(f"calibration:{embedder.name}", {**cal.to_meta(), "sentences": count} if cal else None)

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
        embedder = self._embedder()
        current = context.fingerprint(embedder) == self.store.get_meta("fingerprint")
        vectors = unavailable = None
        if mode is not Mode.LEXICAL:
            self._check_current(embedder)
            with self._searcher_lock:
                try:
                    vectors = self.vector_index(embedder, repair=False)
                except GraphUnavailableError as e:  # ranked by words until an indexing run repairs it (0030)
                    unavailable, mode = e, Mode.LEXICAL
        # the static model's word space explains results and relates the query's words to others (0019)
        searcher = Searcher(self.store, vectors, embedder if current else None,
                            self._calibration(embedder, collection) if current else None, facets=load_space(),
                            null_sample=self._null_sample(embedder) if current else None, collection=collection)
        response = searcher.search(query, k=k, mode=mode, include_weak=include_weak, explain=explain,
                                   rerank_facets=rerank_facets, exclude=exclude, within=within,
                                   second_look=second_look, correct=correct)
        return response if unavailable is None else replace(response, notes=(*response.notes, unavailable.note))

    def _calibration(self, embedder: Embedder, collection: CollectionStatistics | None) -> Calibration | None:
        """The query scale's: a shard's collection's (its own sample is a part of it), the index's, or the prior."""
        if collection is not None:
            return collection.calibration
        stored = self.store.get_meta(f"calibration:{embedder.name}")
        own = Calibration.from_meta({k: v for k, v in stored.items() if k != "sentences"} if stored else None)
        return own if own is not None else prior(context.fingerprint(embedder))

    @_reports_damage
    def statistics(self, query: str, mode: Mode | str = Mode.HYBRID) -> CollectionStatistics:
        """What this index adds to a collection's statistics for ``query`` searched in ``mode``
        (:class:`CollectionStatistics`): its words', and in hybrid mode those of the words related to any of them
        (which of them are key words is known once the shards' counts are summed: engine.search.related)."""
        check_text(query)
        _, terms, stems = query_stems(query)
        space = load_space() if Mode(mode) is Mode.HYBRID and terms else None
        near = related.related_words(space, terms, {}, key_words=len(terms)) if space is not None else {}
        words = self.store.word_statistics([*stems, *(s for s in near if s not in stems)])
        return CollectionStatistics(words, self.store.indexed_count(), self.store.sentence_count())

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
        records = (self.store.document(path) for path in paths)
        return {r.path: r.hash for r in records if r is not None and r.hash}

    @_reports_damage
    def like_query(self, source: LikeSource) -> LikeQuery:
        """The query :meth:`search_like` asks for ``source`` (``engine.search.like``), for a collection's shard that
        holds the source to make and every shard to answer."""
        return like_query(self.store, source)

    def _null_sample(self, embedder: Embedder) -> np.ndarray | None:
        """Vectors of random sentences of the index, read once per state of the index: each query's similarity to
        them is its own null distribution (engine.search.relevance)."""
        key = (embedder.name, self._state())
        if self._null is None or self._null[0] != key:
            ids = self.store.random_sentence_ids(NULL_SAMPLE)
            found, vectors = self.store.vectors(embedder.name, ids.tolist())
            self._null = (key, vectors if found.size >= 2 else None)
        return self._null[1]

    @_reports_damage
    def explain(self, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
        """``results`` of ``search(query, explain=False)`` with what ``explain=True`` adds (surrounding sentences, facet
        chips and evidence), for the app: it shows the ranking at once and explains the rows on screen afterwards.

        A result whose sentence is no longer in the index (its file changed since the search) comes back as it was,
        as does one that no search of this index made (no ``sentence_id``).
        """
        stored = self.store.sentences_by_id([r.sentence_id for r in results if r.sentence_id is not None])
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
        stats = self.store.stats()
        listed = tuple(
            FileStatus(d.path, d.status, d.reason, d.sentences, d.title, d.kind) for d in self.store.documents()
        ) if files else ()
        return IndexStatus(
            folder=str(self.folder), method=self.store.get_meta("method"),
            fingerprint=self.store.get_meta("fingerprint"), documents=stats["documents"],
            indexed=stats[FileState.INDEXED.value], skipped=stats[FileState.SKIPPED.value],
            failed=stats[FileState.FAILED.value], sentences=stats["sentences"],
            roots=tuple(self.store.roots()), methods_embedded=self._methods_embedded(),
            bytes_on_disk=bytes_on_disk(self.folder), files=listed,
        )

    def _methods_embedded(self) -> tuple[str, ...]:
        """Methods with stored vectors, and the derived methods the index was embedded with (their vectors are
        computed from the text)."""
        stored = [t[len("vectors_"):] for t in self.store.vector_tables()]
        derived = [m for m in embed.derived() if self.store.get_meta(f"fingerprint:{m}") is not None]
        return tuple(sorted({*stored, *derived}))


def _derived_vectors(method: str, texts: Sequence[str], doc_sizes: np.ndarray) -> np.ndarray:
    """The vectors of a derived method (engine.embed.derived) for whole documents' sentences, as indexing made them."""
    return context.encode(embed.load(method), texts, doc_sizes)[0]


def _centre_key(method: str) -> str:
    return f"centre:{method}"
