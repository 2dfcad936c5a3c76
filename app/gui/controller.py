"""The GUI thread's handle on the engine: queues indexing runs, tracks pause/cancel, routes queries and answers.

The window talks only to this object; it never sees an ``Index``. Pausing stops the current run (``cancel`` event)
and remembers its paths in the settings, so a restart can resume it; resuming simply calls ``Index.add`` again,
which skips every file already indexed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.gui import settings as S
from app.gui.index_process import CONTEXT, IndexProcess, IndexRequest
from app.gui.settings import Settings
from app.gui.workers import (
    ExplainRequest,
    ExplainWorker,
    FileQuery,
    FileReader,
    Generations,
    IndexWorker,
    PassageQuery,
    QueryRequest,
    SearchWorker,
    start_thread,
)
from engine import Filters

log = logging.getLogger(__name__)

# While a run writes, the footer's counts and the folder list are refreshed this often: searches find the new
# documents as soon as a batch is written, and "0 documents" beside them read as a fault (issue 34).
COUNTS_DURING_RUN_MS = 2000


class IndexState(str, Enum):
    """What the indexing side is doing."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSING = "pausing"
    PAUSED = "paused"
    CANCELLING = "cancelling"


class JobKind(str, Enum):
    """The two writes the indexing thread performs."""

    ADD = "add"
    REMOVE = "remove"


@dataclass(frozen=True)
class Job:
    """One queued write: index or forget ``paths``."""

    kind: JobKind
    paths: tuple[str, ...]


class Controller(QObject):
    """Owns the worker threads; every public method returns at once."""

    # to the workers (queued: they run on the workers' threads)
    _load = Signal()
    _search = Signal(object)
    _search_like = Signal(object)
    _refine = Signal(object)
    _refine_like = Signal(object)
    _status = Signal(bool)
    _counts = Signal()
    _reload = Signal()
    _add = Signal(object)
    _remove = Signal(object)
    _close = Signal()
    _query_file = Signal(object)
    _explain = Signal(object)
    # to the window
    ready = Signal(str)  # the engine has loaded; the index folder
    answered = Signal(int, object)  # generation, SearchResponse (only the latest generation)
    explained = Signal(int, object, object)  # generation, rows, results with chips and context
    query_failed = Signal(int, str)
    status_ready = Signal(object)  # IndexStatus or None
    counted = Signal(object)  # IndexStatus without its files, read while a run writes
    progress = Signal(object)  # engine.Progress
    run_finished = Signal(object)  # IndexReport or None
    state_changed = Signal(str)  # IndexState value
    error = Signal(str)

    def __init__(self, index_dir: Path | None, settings: Settings, parent: QObject | None = None) -> None:
        """``index_dir`` None: the engine's default (the platform's user data folder)."""
        super().__init__(parent)
        self.index_dir, self.settings = index_dir, settings
        self.generations = Generations()
        self._cancel = CONTEXT.Event()  # shared with the indexing process
        self._queue: list[Job] = []
        self._running: Job | None = None
        self.state = IndexState.PAUSED if settings.get(S.PENDING) else IndexState.IDLE
        self._searcher = SearchWorker(index_dir, self.generations)
        # the second look of each answer on a thread of its own, so the next keystroke's first answer never waits
        # behind it
        self._refiner = SearchWorker(index_dir, self.generations)
        self._process = IndexProcess(str(index_dir) if index_dir else None, self._cancel)
        self._indexer = IndexWorker(self._process)
        self._explainer = ExplainWorker(index_dir, self.generations)
        self._reader = FileReader(self.generations)
        self._load.connect(self._searcher.load)
        self._search.connect(self._searcher.search)
        self._search_like.connect(self._searcher.search_like)
        self._status.connect(self._searcher.status)
        self._counts.connect(self._searcher.counts)
        self._reload.connect(self._searcher.reload)
        self._close.connect(self._searcher.close)
        self._close.connect(self._refiner.close)
        self._refine.connect(self._refiner.search)
        self._refine_like.connect(self._refiner.search_like)
        self._reload.connect(self._refiner.reload)  # its reloaded signal is the searcher's to give
        self._refiner.answered.connect(self._on_answer)
        self._refiner.failed.connect(self._on_refine_failed)
        self._close.connect(self._explainer.close)
        self._explain.connect(self._explainer.explain)
        self._explainer.explained.connect(self._on_explained)
        self._query_file.connect(self._reader.query)
        self._reader.read.connect(self._searcher.search)  # straight to the search thread, no GUI round trip
        self._reader.failed.connect(self._on_query_failed)
        self._add.connect(self._indexer.add)
        self._remove.connect(self._indexer.remove)
        self._searcher.ready.connect(self._on_ready)
        self._searcher.answered.connect(self._on_answer)
        self._searcher.failed.connect(self._on_query_failed)
        self._searcher.status_ready.connect(self.status_ready)
        self._searcher.counted.connect(self.counted)
        self._searcher.reloaded.connect(self._on_reloaded)
        self._indexer.progress.connect(self.progress)
        self._indexer.progress.connect(self._count_from_now)
        self._indexer.finished.connect(self._on_run_finished)
        self._indexer.failed.connect(self.error)
        self._counts_timer = QTimer(self, interval=COUNTS_DURING_RUN_MS)
        self._counts_timer.timeout.connect(self._counts.emit)
        self._threads = [start_thread(self._searcher, "quire-search"), start_thread(self._refiner, "quire-refine"),
                         start_thread(self._indexer, "quire-index"),
                         start_thread(self._explainer, "quire-explain"), start_thread(self._reader, "quire-read")]

    def start(self) -> None:
        """Load the engine on the search thread, then report the index's status.

        Called once the window is on screen: the engine's import competes with the GUI thread for the GIL, so it
        waits until the window has painted and takes input.
        """
        self._load.emit()
        self.request_status(True)

    @Slot(str)
    def _on_ready(self, folder: str) -> None:
        self.index_dir = Path(folder)
        self.ready.emit(folder)

    # -- queries ----------------------------------------------------------------------------------------------
    def search(self, text: str, mode: str | None = None, *, include_weak: bool = False, k: int | None = None,
               within: Filters = Filters(), exact: bool = False, refined: bool = False) -> int:
        """Submit a query (``mode``: an ``engine.Mode`` value; ``include_weak``: list the documents that share nothing
        with the query too; ``k``: documents wanted, None for a page of the preference; ``within``: the filter row's
        folder, types and ages; ``exact``: as typed, not its spelling correction); returns its generation (older
        answers are dropped). The first answer comes from the first ranking and its second look follows, unless
        ``refined`` asks for the second look's answer alone (a further page of an answer on screen)."""
        generation = self.generations.next()
        mode = mode or self.settings.get(S.SEARCH_MODE)
        self._search.emit(QueryRequest(generation, text, mode, k or self.page_size, include_weak=include_weak,
                                       within=within, exact=exact, second_look=refined))
        return generation

    def search_file(self, path: str, mode: str | None = None, *, include_weak: bool = False,
                    k: int | None = None, within: Filters = Filters(), refined: bool = False) -> int:
        """"More like this" with a file: its sentences are the query (read on a worker); returns the generation."""
        generation = self.generations.next()
        mode = mode or self.settings.get(S.SEARCH_MODE)
        self._query_file.emit(FileQuery(generation, str(Path(path).resolve()), mode, k or self.page_size,
                                        include_weak=include_weak, within=within, second_look=refined))
        return generation

    def search_like(self, path: str, ordinal: int, mode: str | None = None, *, include_weak: bool = False,
                    k: int | None = None, within: Filters = Filters(), refined: bool = False) -> int:
        """"More like this" with a result's passage: documents like sentence ``ordinal`` of the indexed file
        ``path``, that file left out; returns the generation."""
        generation = self.generations.next()
        mode = mode or self.settings.get(S.SEARCH_MODE)
        self._search_like.emit(PassageQuery(generation, path, ordinal, mode, k or self.page_size,
                                            include_weak=include_weak, within=within, second_look=refined))
        return generation

    @property
    def page_size(self) -> int:
        """Documents a search asks for at first, and each further page adds."""
        return self.settings.get(S.RESULTS_K)

    def explain(self, generation: int, query: str, rows: list[int], results: list) -> None:
        """Ask for the chips and context of ``results`` (``rows`` of the answer ``generation``); they arrive through
        ``explained`` unless a newer query comes first."""
        if generation == self.generations.current and rows:
            self._explain.emit(ExplainRequest(generation, query, tuple(rows), tuple(results)))

    @Slot(int, object, object)
    def _on_explained(self, generation: int, rows, results) -> None:
        if generation == self.generations.current:
            self.explained.emit(generation, rows, results)

    def invalidate(self) -> None:
        """Drop any answer still in flight (the query was cleared)."""
        self.generations.next()

    def request_status(self, files: bool = True) -> None:
        """Ask for the index's status; it arrives through ``status_ready``."""
        self._status.emit(files)

    @Slot(int, object, object)
    def _on_answer(self, generation: int, response, request) -> None:
        if generation != self.generations.current:
            return
        self.answered.emit(generation, response)
        if not response.refined and not request.second_look:
            refined = replace(request, second_look=True)
            (self._refine_like if isinstance(request, PassageQuery) else self._refine).emit(refined)

    @Slot(int, str)
    def _on_refine_failed(self, generation: int, message: str) -> None:
        """The first answer stays on screen: the second look failing is worth a log line, not a message."""
        log.warning("the second look of query %d failed: %s", generation, message)

    @Slot(int, str)
    def _on_query_failed(self, generation: int, message: str) -> None:
        if generation == -1:
            self.error.emit(message)
        elif generation == self.generations.current:
            self.query_failed.emit(generation, message)

    # -- indexing ---------------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while a run (or the searcher's reload after it) is in progress."""
        return self._running is not None

    @property
    def pending(self) -> list[str]:
        """Paths of a paused or interrupted run."""
        return self.settings.get(S.PENDING)

    def index(self, paths: list[str] | tuple[str, ...]) -> None:
        """Queue an indexing run of files and folders; runs start one after another.

        While paused, the new paths join the paused run's, and indexing resumes with all of them.
        """
        resolved = [str(Path(p).resolve()) for p in paths]
        if self.state is IndexState.PAUSED and self._running is None:
            resolved = list(dict.fromkeys([*self.pending, *resolved]))
            self._set_state(IndexState.IDLE)
        self._enqueue(Job(JobKind.ADD, tuple(resolved)))

    def remove(self, paths: list[str]) -> None:
        """Forget folders or files (queued behind indexing, since both write)."""
        self._enqueue(Job(JobKind.REMOVE, tuple(paths)))

    def _enqueue(self, job: Job) -> None:
        if job.paths:
            self._queue.append(job)
        if self._running is None:
            self._start_next()

    def pause(self) -> None:
        """Stop the current run after the file in hand; ``resume`` continues it, even after a restart."""
        if self.state is IndexState.RUNNING:
            self._set_state(IndexState.PAUSING)
            self._cancel.set()

    def resume(self) -> None:
        """Continue a paused run."""
        if self.state is IndexState.PAUSED and self._running is None:
            self._queue.insert(0, Job(JobKind.ADD, tuple(self.pending)))
            self._start_next()

    def cancel(self) -> None:
        """Stop the current run and forget the queue; what was indexed so far stays searchable."""
        self._queue.clear()
        self.settings.set(S.PENDING, [])
        if self._running is not None:
            self._set_state(IndexState.CANCELLING)
            self._cancel.set()
        else:
            self._set_state(IndexState.IDLE)

    def _start_next(self) -> None:
        if not self._queue:
            self._running = None
            if self.state is not IndexState.PAUSED:
                self._set_state(IndexState.IDLE)
            return
        job = self._running = self._queue.pop(0)
        self._cancel.clear()
        self._set_state(IndexState.RUNNING)
        if job.kind is JobKind.REMOVE:
            self._remove.emit(job.paths)
            return
        self.settings.set(S.PENDING, list(job.paths))
        self._add.emit(IndexRequest(job.paths, self.settings.get(S.METHOD), self.settings.ignore_patterns()))

    @Slot(object)
    def _on_run_finished(self, report) -> None:
        if self.state is IndexState.PAUSING:
            self._queue.clear()
            self._set_state(IndexState.PAUSED)
        elif self._running is not None and self._running.kind is JobKind.ADD:
            self.settings.set(S.PENDING, [])  # finished, failed or cancelled: nothing to resume
        self.run_finished.emit(report)
        self._reload.emit()  # the next run starts once the searcher has let go of the old graph

    @Slot(object)
    def _count_from_now(self, _progress) -> None:
        """Refresh the counts (``counted``) every few seconds from a run's first report on: the index exists by then
        and its method is recorded, which the search thread's first opening would otherwise record itself. They are
        apart from the status after the run (``status_ready``), whose handler also settles what its message named."""
        if self.state is IndexState.RUNNING and not self._counts_timer.isActive():
            self._counts_timer.start()

    @Slot()
    def _on_reloaded(self) -> None:
        self._running = None
        if self.state is IndexState.CANCELLING:
            self._set_state(IndexState.IDLE)
        if self.state is not IndexState.PAUSED:
            self._start_next()
        self.request_status(True)

    def _set_state(self, state: IndexState) -> None:
        if state is not self.state:
            self.state = state
            if state is not IndexState.RUNNING:
                self._counts_timer.stop()
            self.state_changed.emit(state.value)

    # -- lifecycle --------------------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop indexing (keeping it resumable), close the index and join the threads."""
        if self._running is not None and self.state is IndexState.RUNNING:
            self._set_state(IndexState.PAUSING)  # PENDING keeps naming the run: the next launch offers to resume it
            self._cancel.set()
        self._close.emit()
        for thread in self._threads:
            thread.quit()
            thread.wait()
        self._process.stop()  # here, not on the indexing thread: its last queued events may never be handled
