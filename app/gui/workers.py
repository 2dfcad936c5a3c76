"""The two threads that own the engine: one indexes, one answers queries, so a query never waits behind indexing.

Each worker holds its own :class:`engine.Index` (its own SQLite connection; WAL lets the reader see committed
batches while the writer works). Requests go in and results come out through queued signals, so no engine call
runs on the GUI thread and no worker touches a widget (STYLE.md rule 17). Every query carries a generation number:
the search worker skips requests that are already superseded and the GUI drops answers that arrive late.

The engine is imported here lazily, on the worker threads: loading it (document readers, numpy, hnswlib) takes
longer than showing the window, and the window must take input at once.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.gui.errors import describe

if TYPE_CHECKING:
    from engine import Index, Progress

log = logging.getLogger(__name__)

# Progress signals per second at most: enough for a smooth bar, few enough that a run over thousands of small
# files does not flood the GUI thread's event queue.
PROGRESS_HZ = 20


def open_index(folder: Path | None, **options) -> Index:
    """``engine.Index(folder, **options)``, imported here so the window can show before the engine loads."""
    from engine import Index

    return Index(folder, **options)


@dataclass(frozen=True)
class QueryRequest:
    """One search as the window asked for it."""

    generation: int
    text: str
    mode: str  # an engine.Mode value
    k: int


@dataclass(frozen=True)
class IndexRequest:
    """One indexing run: files and folders, the embedding method and gitignore-style patterns to skip."""

    paths: tuple[str, ...]
    method: str
    ignore: tuple[str, ...]


class SearchWorker(QObject):
    """Answers queries and status requests on its own thread with a read-only view of the index."""

    ready = Signal(str)  # the index folder, once the engine has loaded
    answered = Signal(int, object)  # generation, SearchResponse
    failed = Signal(int, str)  # generation, readable message
    status_ready = Signal(object)  # IndexStatus, or None when nothing is indexed yet
    reloaded = Signal()

    def __init__(self, folder: Path | None, latest: Generations) -> None:
        super().__init__()
        self.folder, self.latest = folder, latest
        self._index: Index | None = None

    @Slot()
    def load(self) -> None:
        """Import the engine and its default model on this thread, then say where the index is."""
        from engine import embed
        from engine.config import default_index_dir

        self.folder = self.folder or default_index_dir()
        embed.load(embed.DEFAULT_METHOD)
        self.ready.emit(str(self.folder))

    def _open(self) -> Index:
        if self._index is None:
            self._index = open_index(self.folder, create=False)
        return self._index

    @Slot(object)
    def search(self, request: QueryRequest) -> None:
        """Run ``request`` unless a newer one was already submitted (typing faster than searches finish)."""
        from engine.errors import IndexNotFoundError

        if request.generation < self.latest.current:
            return
        try:
            response = self._open().search(request.text, k=request.k, mode=request.mode)
        except IndexNotFoundError:
            self.failed.emit(request.generation, "nothing is indexed yet: drop a folder here or press Ctrl+O")
        except Exception as e:  # noqa: BLE001 - every failure becomes a message in the window
            self.failed.emit(request.generation, describe(e))
        else:
            self.answered.emit(request.generation, response)

    @Slot(bool)
    def status(self, files: bool) -> None:
        """Emit the index's status (with every file when ``files``)."""
        from engine.errors import IndexNotFoundError

        try:
            self.status_ready.emit(self._open().status(files=files))
        except IndexNotFoundError:
            self.status_ready.emit(None)
        except Exception as e:  # noqa: BLE001
            self.failed.emit(-1, describe(e))

    @Slot()
    def reload(self) -> None:
        """Reopen the index after a write run, so new vectors and removed files show up in searches.

        Reopening happens here, before the next run starts, because opening a graph that is behind the database
        catches it up and saves it, which must not race the indexer's own saves.
        """
        from engine.errors import IndexNotFoundError

        self.close()
        try:
            self._open()
        except IndexNotFoundError:
            pass
        except Exception as e:  # noqa: BLE001
            self.failed.emit(-1, describe(e))
        self.reloaded.emit()

    @Slot()
    def close(self) -> None:
        """Release the database (called on this thread before it quits)."""
        if self._index is not None:
            self._index.close()
            self._index = None


class IndexWorker(QObject):
    """Runs ``Index.add``/``Index.remove`` on its own thread; ``cancel`` stops a run between files."""

    progress = Signal(object)  # engine.Progress
    finished = Signal(object)  # engine.IndexReport, or None after a remove / an error
    failed = Signal(str)

    def __init__(self, folder: Path | None, cancel: threading.Event) -> None:
        super().__init__()
        self.folder, self.cancel = folder, cancel
        self._last = 0.0

    def _report(self, p: Progress) -> None:
        now = time.monotonic()
        if p.phase == "done" or now - self._last >= 1.0 / PROGRESS_HZ:
            self._last = now
            self.progress.emit(p)

    @Slot(object)
    def add(self, request: IndexRequest) -> None:
        """Index ``request.paths``; a cancelled run reports ``cancelled`` and keeps everything written so far."""
        from engine import IndexConfig
        from engine.errors import Cancelled

        try:
            with open_index(self.folder, method=request.method, config=IndexConfig(ignore=request.ignore)) as index:
                report = index.add(list(request.paths), method=request.method, progress=self._report,
                                   cancel=self.cancel)
        except Cancelled as e:  # raised while re-embedding with a new method
            log.info("indexing stopped: %s", e)
            self.finished.emit(None)
        except Exception as e:  # noqa: BLE001
            self.failed.emit(describe(e))
            self.finished.emit(None)
        else:
            self.finished.emit(report)

    @Slot(object)
    def remove(self, paths: tuple[str, ...]) -> None:
        """Forget files or folders."""
        try:
            with open_index(self.folder, create=False) as index:
                index.remove(list(paths))
        except Exception as e:  # noqa: BLE001
            self.failed.emit(describe(e))
        self.finished.emit(None)


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
