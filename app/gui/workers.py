"""The threads that drive the engine: one relays an indexing process, one answers queries (typed, or "more like this"
passage of a result), so a query never waits behind indexing; one explains the results on screen and one reads
files dropped for "more like this", so neither delays the next query.

Each worker holds its own :class:`engine.Index` (its own SQLite connection; WAL lets the readers see committed
batches while the indexing process writes). Requests go in and results come out through queued signals, so no
engine call runs on the GUI thread and no worker touches a widget (STYLE.md rule 17). Every query carries a
generation number: the workers skip requests that are already superseded and the GUI drops answers that arrive late.

The engine is imported here lazily, on the worker threads: loading it (document readers, numpy, ONNX Runtime) takes
longer than showing the window, and the window must take input at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.gui.errors import describe
from app.gui.index_process import ChildFailed, IndexProcess, IndexRequest, RemoveRequest
from engine import Filters

if TYPE_CHECKING:
    from engine import Searchable, SearchResponse, SearchResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueryRequest:
    """One search as the window asked for it; ``exclude``: a file left out of the results (the one dropped for
    "more like this": it is trivially most like itself); ``include_weak``: the person asked to see the matches below
    the index's relevance threshold too (flagged), as ``quire search --all`` does."""

    generation: int
    text: str
    mode: str  # an engine.Mode value
    k: int
    exclude: str | None = None
    include_weak: bool = False
    within: Filters = Filters()
    # the sentence model's second look (engine.search.secondlook): asked for once the first answer is on screen
    second_look: bool = False
    exact: bool = False  # search the text as typed, not its spelling correction


@dataclass(frozen=True)
class FileQuery:
    """"More like this" with a file: read it, then search with its sentences."""

    generation: int
    path: str
    mode: str
    k: int
    include_weak: bool = False
    within: Filters = Filters()
    second_look: bool = False


@dataclass(frozen=True)
class PassageQuery:
    """"More like this" with a result's passage: documents like sentence ``ordinal`` (0-based, as results carry it)
    of the indexed file ``path``, found by ``Index.search_like`` from the stored sentence; the file is left out."""

    generation: int
    path: str
    ordinal: int
    mode: str
    k: int
    include_weak: bool = False
    within: Filters = Filters()
    second_look: bool = False


@dataclass(frozen=True)
class ExplainRequest:
    """Explain ``results`` (rows ``rows`` of the list showing generation ``generation``'s answer to ``query``)."""

    generation: int
    query: str
    rows: tuple[int, ...]
    results: tuple[SearchResult, ...]


class _IndexReader(QObject):
    """A worker with its own lazily opened, read-only connection to the index, closed on its own thread."""

    def __init__(self, folder: Path | None, latest: Generations) -> None:
        super().__init__()
        self.folder, self.latest = folder, latest
        self._index: Searchable | None = None

    def _open(self) -> Searchable:
        # imported here, on the worker's thread, so the window can show before the engine loads; a sharded
        # collection's folder opens as its collection, searched on threads here
        from engine import open_index

        if self._index is None:
            self._index = open_index(self.folder)
        return self._index

    @Slot()
    def close(self) -> None:
        """Release the database (called on this thread before it quits)."""
        if self._index is not None:
            self._index.close()
            self._index = None


class SearchWorker(_IndexReader):
    """Answers queries and status requests on its own thread with a read-only view of the index."""

    ready = Signal(str)  # the index folder, once the engine has loaded
    answered = Signal(int, object, object)  # generation, SearchResponse, the request it answers
    failed = Signal(int, str)  # generation, readable message
    status_ready = Signal(object)  # IndexStatus, or None when nothing is indexed yet
    counted = Signal(object)  # IndexStatus without its files
    reloaded = Signal()

    @Slot()
    def load(self) -> None:
        """Import the engine and its default model on this thread, then say where the index is."""
        from engine import DEFAULT_METHOD, default_index_dir, load_embedder

        self.folder = self.folder or default_index_dir()
        load_embedder(DEFAULT_METHOD)
        self.ready.emit(str(self.folder))

    @Slot(object)
    def search(self, request: QueryRequest) -> None:
        """Run ``request`` unless a newer one was already submitted (typing faster than searches finish)."""
        # ranking only: facet chips and context cost more than the ranking itself, so the window asks for them
        # (ExplainWorker) for the rows on screen once the list is up
        self._answer(request, lambda index: index.search(
            request.text, k=request.k, mode=request.mode, include_weak=request.include_weak, explain=False,
            exclude=(request.exclude,) if request.exclude else (), within=request.within,
            second_look=request.second_look, correct=not request.exact))

    @Slot(object)
    def search_like(self, request: PassageQuery) -> None:
        """Documents like a result's passage (Ctrl+M), unless a newer query was already submitted."""
        from engine import LikeSource

        self._answer(request, lambda index: index.search_like(
            LikeSource(request.path, sentence=request.ordinal), k=request.k, mode=request.mode,
            include_weak=request.include_weak, explain=False, within=request.within,
            second_look=request.second_look))

    def _answer(self, request: QueryRequest | PassageQuery, ask: Callable[[Searchable], SearchResponse]) -> None:
        """Emit what ``ask`` returns for the index, or a readable message; nothing when the request is stale."""
        from engine import IndexNotFoundError, freeze_long_lived

        generation = request.generation
        if generation < self.latest.current:
            return

        try:
            response = ask(self._open())
        except IndexNotFoundError:
            self.failed.emit(generation, "nothing is indexed yet: drop a folder here or press Ctrl+O")
        except Exception as e:  # noqa: BLE001 - every failure becomes a message in the window
            self.failed.emit(generation, describe(e))
        else:
            self.answered.emit(generation, response, request)
            freeze_long_lived()  # the app keeps searching: what it holds out of full collections (engine/heap.py)

    @Slot(bool)
    def status(self, files: bool) -> None:
        """Emit the index's status (with every file when ``files``)."""
        from engine import IndexNotFoundError

        try:
            self.status_ready.emit(self._open().status(files=files))
        except IndexNotFoundError:
            self.status_ready.emit(None)
        except Exception as e:  # noqa: BLE001
            self.failed.emit(-1, describe(e))

    @Slot()
    def counts(self) -> None:
        """Emit the counts and folders of the index a run is writing: its status without the file list, which
        would read every document's row each time."""
        try:
            self.counted.emit(self._open().status())
        except Exception:  # the status after the run reports what is wrong; a refresh mid-run only skips a beat
            log.warning("could not read the index's counts during a run", exc_info=True)

    @Slot()
    def reload(self) -> None:
        """Reopen the index after a write run, so new vectors and removed files show up in searches.

        Reopening happens here, before the next run starts, because opening a graph that is behind the database
        catches it up and saves it, which must not race the indexer's own saves.
        """
        from engine import IndexNotFoundError, thaw

        if self._index is not None and self._index.is_current():
            self.reloaded.emit()  # the run changed no sentence: the graph already loaded is the index's
            return
        # the new connection opens before the old one closes: closing the last connection checkpoints the WAL,
        # which at the end of a run takes a fifth of a second with the interpreter lock held (the window froze)
        old, self._index = self._index, None
        try:
            self._open()
        except IndexNotFoundError:
            pass
        except Exception as e:  # noqa: BLE001
            self.failed.emit(-1, describe(e))
        if old is not None:
            old.close()
            thaw()  # the old index's objects in reference cycles can be collected; frozen again after 10 searches
        self.reloaded.emit()


class ExplainWorker(_IndexReader):
    """Fills in facet chips, facet evidence and surrounding sentences for results already on screen.

    Its own thread and index connection, so that explaining one answer never delays the search for the next
    keystroke; requests for answers that are no longer shown are skipped.
    """

    explained = Signal(int, object, object)  # generation, rows, explained results

    @Slot(object)
    def explain(self, request: ExplainRequest) -> None:
        """Explain ``request.results`` unless a newer query was submitted meanwhile."""
        if request.generation < self.latest.current:
            return
        try:
            explained = self._open().explain(request.query, request.results)
        except Exception:  # the ranking is shown already; chips are a bonus that may be missing
            log.warning("could not explain results for %r", request.query[:80], exc_info=True)
        else:
            self.explained.emit(request.generation, request.rows, tuple(explained))


class FileReader(QObject):
    """Reads a dropped file into a query ("more like this" with a file), then hands it to the search worker."""

    read = Signal(object)  # QueryRequest
    failed = Signal(int, str)  # generation, readable message

    def __init__(self, latest: Generations) -> None:
        super().__init__()
        self.latest = latest

    @Slot(object)
    def query(self, request: FileQuery) -> None:
        """Read ``request.path`` with the engine's readers; skipped when a newer query came first."""
        if request.generation < self.latest.current:
            return
        from engine import ReadError, query_from_file

        name = Path(request.path).name
        try:
            text = query_from_file(Path(request.path))
        except ReadError as e:
            self.failed.emit(request.generation, f"cannot search for documents like {name}: {e.reason}")
        except Exception as e:  # noqa: BLE001
            self.failed.emit(request.generation, describe(e))
        else:
            self.read.emit(QueryRequest(request.generation, text, request.mode, request.k, exclude=request.path,
                                        include_weak=request.include_weak, within=request.within,
                                        second_look=request.second_look))


class IndexWorker(QObject):
    """Runs ``Index.add``/``Index.remove`` in the indexing process (:mod:`app.gui.index_process`) and relays its
    messages as signals; this thread only waits on the pipe, so it holds the interpreter lock for moments."""

    progress = Signal(object)  # engine.Progress
    finished = Signal(object)  # engine.IndexReport, or None after a remove / an error
    failed = Signal(str)

    def __init__(self, process: IndexProcess) -> None:
        super().__init__()
        self.process = process

    @Slot(object)
    def add(self, request: IndexRequest) -> None:
        """Index ``request.paths``; a cancelled run reports ``cancelled`` and keeps everything written so far."""
        self._run(request)

    @Slot(object)
    def remove(self, paths: tuple[str, ...]) -> None:
        """Forget files or folders."""
        self._run(RemoveRequest(paths))

    def _run(self, request: IndexRequest | RemoveRequest) -> None:
        report = None
        try:
            report = self.process.run(request, self.progress.emit)
        except ChildFailed as e:
            self.failed.emit(str(e))
        self.finished.emit(report)


class Generations:
    """A counter shared by the GUI thread (which increments it) and the search thread (which reads it).

    Reading or replacing an int attribute is atomic in CPython, so no lock is needed.
    """

    def __init__(self) -> None:
        self.current = 0

    def next(self) -> int:
        """A new, higher generation (called on the GUI thread only)."""
        self.current += 1
        return self.current


def start_thread(worker: QObject, name: str) -> QThread:
    """Move ``worker`` to a new started thread that deletes it when the thread ends."""
    thread = QThread()
    thread.setObjectName(name)
    worker.moveToThread(thread)
    thread.finished.connect(worker.deleteLater)
    thread.start()
    return thread
