"""A time and memory budget per file, so that one pathological file cannot hang indexing or exhaust memory
(docs/decisions/0012-reader-time-budget.md).

When a file's time is spent, :class:`OverBudget` is raised in the thread reading it (:func:`within_budget`), at the
next Python instruction: enough for parsers written in Python (a cubic regex, a loop over two million glyphs). A
parser stuck in C code never reaches one, so in a reader process, which the indexer can replace, a watchdog ends the
whole process a grace period later, or as soon as the process holds more memory than the budget allows (pdfium grew
by 250 MB a second on a 4 KB PDF). Before ending it, the watchdog writes why to the file :func:`last_words_to` named,
where the pool reads it (``engine.ingest.pool``). In the indexer's own process (the files of runs of a few files
whose reader is in Python: ``Reader.isolate``) only the interruption is open.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import megabytes

# After the budget, how long a reader process has to give up by itself before it is ended: Python code reaches its
# next instruction in microseconds, so anything still running after this is in C code that will not stop.
GRACE_SECONDS = 1.0
# How often a reader process's memory is looked at while it reads: reading /proc/self/statm costs microseconds.
MEMORY_CHECK_SECONDS = 0.25
# Exit status of a reader process ended by its watchdog.
OVER_BUDGET_EXIT = 70
T = TypeVar("T")
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class OverBudget(BaseException):
    """Raised in the reading thread when its file's budget is spent; :func:`within_budget` turns it into a ReadError.

    A BaseException, like KeyboardInterrupt, so that the readers' ``except Exception`` (which turns a parser's failure
    into "corrupt <format>") lets it through.
    """


def over_budget_reason(seconds: float) -> str:
    """The reason recorded for a file that ran out of time."""
    return f"took longer than {seconds:g} s to read"


def over_memory_reason(limit: int) -> str:
    """The reason recorded for a file whose reader process outgrew its memory."""
    return f"needed more than {megabytes(limit)} MB of memory to read"


@dataclass
class _Watch:
    """A file being read in ``thread``: its deadline and, where the process may be ended (``kill``), the resident
    memory it may reach; ``what``: the file, as the last words name it."""

    thread: int
    what: str
    seconds: float
    deadline: float
    kill: bool
    memory: int
    raised: bool = False


class _Watchdog:
    """One thread per process that watches every read under a budget.

    A timer thread per file cost 460 us a file, as much as reading a small one; registering with this thread costs a
    lock and a dictionary entry, and it is woken only when a read is due sooner than it planned to wake.
    """

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.watches: dict[int, _Watch] = {}
        self.wakes_at = math.inf
        self.thread: threading.Thread | None = None
        self.last_words: Path | None = None

    def start(self, limits: Limits, kill: bool, what: str) -> None:
        seconds = limits.read_seconds
        watch = _Watch(threading.get_ident(), what, seconds, time.monotonic() + seconds, kill,
                       limits.max_reader_bytes)
        with self.changed:
            self.watches[watch.thread] = watch
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="quire-read-budget", daemon=True)
                self.thread.start()
            elif watch.deadline < self.wakes_at:
                self.changed.notify()

    def stop(self) -> None:
        with self.changed:
            watch = self.watches.pop(threading.get_ident(), None)  # None: gone already, when stopping was retried
            if watch is not None and watch.raised:
                # raised but perhaps not yet delivered: it must not escape into the caller's next file
                _async_raise(watch.thread, None)

    def _run(self) -> None:
        with self.changed:
            while True:
                now = time.monotonic()
                rss = _resident_bytes() if any(w.kill for w in self.watches.values()) else 0
                for watch in self.watches.values():
                    if watch.kill and rss > watch.memory:
                        self._end(watch, over_memory_reason(watch.memory))
                    if watch.kill and now >= watch.deadline + GRACE_SECONDS:
                        self._end(watch, over_budget_reason(watch.seconds))
                    if not watch.raised and now >= watch.deadline:
                        watch.raised = True
                        _async_raise(watch.thread, OverBudget)
                due = [w.deadline + GRACE_SECONDS if w.raised else w.deadline for w in self.watches.values()
                       if w.kill or not w.raised]
                if rss:
                    due.append(now + MEMORY_CHECK_SECONDS)
                self.wakes_at = min(due, default=math.inf)
                self.changed.wait(None if self.wakes_at == math.inf else self.wakes_at - now)

    def _end(self, watch: _Watch, reason: str) -> None:
        if self.last_words is not None:
            try:
                self.last_words.write_text(json.dumps({"path": watch.what, "reason": reason}), encoding="utf-8")
            except OSError:  # a cancelled run removed its folder and reads no last words: the process ends all the same
                pass
        os._exit(OVER_BUDGET_EXIT)


_WATCHDOG = _Watchdog()


# CPython's way to raise in another thread; the exception is passed by address so that None can stand for NULL, which
# clears one not yet delivered.
_SET_ASYNC_EXC = ctypes.pythonapi.PyThreadState_SetAsyncExc
_SET_ASYNC_EXC.argtypes = (ctypes.c_ulong, ctypes.c_void_p)


def _async_raise(thread: int, exception: type[BaseException] | None) -> None:
    _SET_ASYNC_EXC(thread, None if exception is None else id(exception))


def _resident_bytes() -> int:
    """This process's resident memory, from /proc (0 where there is none: memory is then not watched)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0


def last_words_to(path: Path | None) -> None:
    """Have this process's watchdog write which file it ends the process over, and why, to ``path`` before it does
    (None: nowhere); :func:`last_words` reads them."""
    _WATCHDOG.last_words = path


def last_words(path: Path) -> tuple[str, str] | None:
    """(file, reason) a watchdog wrote to ``path`` before ending its process, or None if it wrote nothing there."""
    try:
        said = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return said["path"], said["reason"]


def deadline() -> float | None:
    """When (``time.monotonic``) the budget of the file this thread reads ends, or None when it reads none under a
    budget: a reader that runs a program of its own (Tesseract) ends it before then, rather than being ended."""
    watch = _WATCHDOG.watches.get(threading.get_ident())
    return watch.deadline if watch is not None else None


def within_budget(limits: Limits, kill: bool, read: Callable[[], T], what: str = "") -> T:
    """``read()`` within ``limits.read_seconds``, or ReadError("took longer than N s to read"). With ``kill`` (only in
    a reader process) the process ends with :data:`OVER_BUDGET_EXIT` if ``read`` has not stopped ``GRACE_SECONDS``
    later, or once the process's resident memory passes ``limits.max_reader_bytes``; its last words name ``what``.

    A function rather than a context manager: an interruption lands at a call or a backward jump, and here every such
    point from the start of the watch to its end is inside a ``try`` that takes it. Around a ``with`` body the one
    raised at the deadline could also land in the context manager's own ``__exit__``, before its handler, and escape
    into the code after the read (a race tests/test_read_budget.py found under load).
    """
    over = False
    try:
        try:
            _WATCHDOG.start(limits, kill, what)
            result = read()
        except OverBudget:
            over = True
    finally:
        while True:  # the one OverBudget may also arrive while the watch stops, after the read ended in time
            try:
                _WATCHDOG.stop()
                break
            except OverBudget:
                continue
    if over:
        raise ReadError(over_budget_reason(limits.read_seconds), status=FileState.SKIPPED)
    return result
