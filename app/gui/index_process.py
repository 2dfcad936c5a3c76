"""Indexing runs in a child process, never in a thread of the window's process.

Why a process: Python threads share one interpreter lock, and indexing holds it most of the time. Some of its C
calls hold it for long stretches: at 100k sentences, saving the HNSW graph kept it for more than half a second
(bench/gui_latency.py), and the window could not repaint or take a key for that long. In a process of its own the
indexer only competes for CPU, which the operating system shares out fairly. A reader or model that crashes also
takes down this process, not the window.

The child starts with the first run and serves every later one, so the engine and its model load once per session
rather than once per run (a file saved under a watched folder starts a run). This module is Qt-free: the child
imports it and the engine, never PySide6. Requests come through a pipe; for each, the child sends back
``("progress", Progress)`` at most ``PROGRESS_HZ`` times a second, then ``("done", IndexReport | None)`` or
``("error", message)``. ``None`` instead of a request ends the child.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.synchronize import Event

    from engine import IndexReport, Progress

log = logging.getLogger(__name__)

# ``spawn`` everywhere: forking a process that runs Qt threads is unsafe, and it is what macOS and Windows do anyway.
CONTEXT = multiprocessing.get_context("spawn")
# Progress messages per second at most: enough for a smooth bar, few enough that a run over thousands of small
# files does not flood the window's event queue.
PROGRESS_HZ = 20


@dataclass(frozen=True)
class IndexRequest:
    """One indexing run: files and folders, the embedding method and gitignore-style patterns to skip."""

    paths: tuple[str, ...]
    method: str
    ignore: tuple[str, ...]


@dataclass(frozen=True)
class RemoveRequest:
    """Forget files, or everything under folders."""

    paths: tuple[str, ...]


def serve(folder: str | None, cancel: Event, pipe: Connection) -> None:
    """The child's entry point: run each request from ``pipe`` on the index in ``folder`` (None: the default).

    ``cancel`` is a ``CONTEXT.Event``: set, the current run stops after the file in hand and keeps what it wrote.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    while True:
        try:
            request = pipe.recv()
        except EOFError:  # the window's process is gone
            return
        if request is None:
            return
        run(folder, request, cancel, pipe)


def run(folder: str | None, request: IndexRequest | RemoveRequest, cancel: Event, pipe: Connection) -> None:
    """Run one request and report back through ``pipe``."""
    from app.gui.errors import describe
    from engine import Cancelled, Index, IndexConfig, IndexReadOnlyError, is_collection

    last = 0.0

    def progress(p: Progress) -> None:
        nonlocal last
        now = time.monotonic()
        if p.phase == "done" or now - last >= 1.0 / PROGRESS_HZ:
            last = now
            pipe.send(("progress", p))

    try:
        if folder is not None and is_collection(Path(folder)):
            raise IndexReadOnlyError(f"{folder} is a sharded collection: the app searches it, `quire index --db` "
                                     f"changes it")
        if isinstance(request, RemoveRequest):
            with Index(folder, create=False) as index:
                index.remove(list(request.paths))
            pipe.send(("done", None))
        else:
            with Index(folder, method=request.method, config=IndexConfig(ignore=request.ignore)) as index:
                report = index.add(list(request.paths), method=request.method, progress=progress, cancel=cancel)
            pipe.send(("done", report))
    except Cancelled as e:  # raised while re-embedding with a new method
        log.info("indexing stopped: %s", e)
        pipe.send(("done", None))
    except Exception as e:  # noqa: BLE001 - every failure becomes a message in the window
        pipe.send(("error", describe(e)))


class IndexProcess:
    """The parent's handle on the child: starts it on first use (and again after a crash), runs requests one at a
    time, and ends it.

    Not a Qt object: the window ends the child with :meth:`stop` after its indexing thread has been joined, and an
    exit hook does it too, because Python waits at exit for child processes that are still running.
    """

    def __init__(self, folder: str | None, cancel: Event) -> None:
        """``cancel``: a ``CONTEXT.Event`` the window sets to stop a run."""
        self.folder, self.cancel = folder, cancel
        self._process: multiprocessing.process.BaseProcess | None = None
        self._pipe: Connection | None = None
        atexit.register(self.stop)

    def run(self, request: IndexRequest | RemoveRequest, progress: Callable[[Progress], None]) -> IndexReport | None:
        """Run ``request`` in the child, passing its progress on; returns its report (None after a remove).

        Raises :class:`ChildFailed` with a readable message when the run fails or the child dies.
        """
        try:
            pipe = self._child()
            pipe.send(request)
            kind, payload = pipe.recv()
            while kind == "progress":
                progress(payload)
                kind, payload = pipe.recv()
        except (EOFError, OSError) as e:  # the child died (a crash, or killed): the next run starts a new one
            assert self._process is not None  # started by _child
            self._process.join()
            raise ChildFailed(f"indexing stopped unexpectedly (its process exited with code {self._process.exitcode});"
                              " what was indexed until then is kept, and adding the folder again continues from "
                              "there") from e
        if kind == "error":
            raise ChildFailed(payload)
        return payload

    def _child(self) -> Connection:
        if self._process is None or not self._process.is_alive():
            self._pipe, theirs = CONTEXT.Pipe()
            # not a daemon: the engine starts reader processes of its own, which daemons may not
            self._process = CONTEXT.Process(target=serve, args=(self.folder, self.cancel, theirs), name="quire-indexer")
            self._process.start()
            theirs.close()
        assert self._pipe is not None  # made with the process
        return self._pipe

    def stop(self) -> None:
        """End the child once its current run is over (stopping that run is ``cancel``'s job)."""
        if self._process is not None and self._process.is_alive() and self._pipe is not None:
            try:
                self._pipe.send(None)
            except OSError:
                pass
            self._process.join(timeout=30)
            if self._process.is_alive():
                self._process.terminate()
        self._process = None


class ChildFailed(Exception):
    """An indexing run failed; the message says why in words a person can act on."""
