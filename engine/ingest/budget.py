"""A time budget per file, so that one pathological file cannot hang indexing (docs/decisions/0012-reader-time-budget.md).

When a file's budget is spent, :class:`OverBudget` is raised in the thread reading it, at the next Python
instruction: enough for parsers written in Python (a cubic regex, a loop over two million glyphs). A parser stuck in
C code never reaches one, so in a reader process, which the indexer can replace, a watchdog ends the whole process a
grace period later; the pool then reads that process's files again one at a time and records the one that ran out
of time (``engine.ingest.pool``). In the indexer's own process (runs of a few files) only the first way is open.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from engine.errors import ReadError

# After the budget, how long a reader process has to give up by itself before it is ended: Python code reaches its
# next instruction in microseconds, so anything still running after this is in C code that will not stop.
GRACE_SECONDS = 1.0
# Exit status of a reader process ended by its watchdog.
OVER_BUDGET_EXIT = 70


class OverBudget(BaseException):
    """Raised in the reading thread when its file's budget is spent; :func:`time_budget` turns it into a ReadError.

    A BaseException, like KeyboardInterrupt, so that the readers' ``except Exception`` (which turns a parser's failure
    into "corrupt <format>") lets it through.
    """


def over_budget_reason(seconds: float) -> str:
    """The reason recorded for a file that ran out of time."""
    return f"took longer than {seconds:g} s to read"


class _Watch:
    """Raises :class:`OverBudget` in ``thread`` after ``seconds``, and ends the process ``GRACE_SECONDS`` later if
    ``kill``; :meth:`stop` before either happens cancels both."""

    def __init__(self, seconds: float, kill: bool) -> None:
        self.thread = threading.get_ident()
        self.lock = threading.Lock()
        self.done = self.raised = False
        self.timers = [threading.Timer(seconds, self._interrupt)]
        if kill:
            self.timers.append(threading.Timer(seconds + GRACE_SECONDS, self._kill))
        for timer in self.timers:
            timer.daemon = True
            timer.start()

    def _interrupt(self) -> None:
        with self.lock:
            if not self.done:
                self.raised = True
                _async_raise(self.thread, OverBudget)

    def _kill(self) -> None:
        with self.lock:
            if not self.done:
                os._exit(OVER_BUDGET_EXIT)

    def stop(self) -> None:
        with self.lock:
            self.done = True
            if self.raised:  # raised but perhaps not yet delivered: it must not escape into the caller's next file
                _async_raise(self.thread, None)
        for timer in self.timers:
            timer.cancel()


# CPython's way to raise in another thread; the exception is passed by address so that None can stand for NULL, which
# clears one not yet delivered.
_SET_ASYNC_EXC = ctypes.pythonapi.PyThreadState_SetAsyncExc
_SET_ASYNC_EXC.argtypes = (ctypes.c_ulong, ctypes.c_void_p)


def _async_raise(thread: int, exception: type[BaseException] | None) -> None:
    _SET_ASYNC_EXC(thread, None if exception is None else id(exception))


@contextmanager
def time_budget(seconds: float, *, kill: bool) -> Iterator[None]:
    """Run the body within ``seconds``, or raise ReadError("took longer than N s to read"); with ``kill`` (only in a
    reader process) the process ends with :data:`OVER_BUDGET_EXIT` if the body has not stopped ``GRACE_SECONDS``
    later."""
    watch = _Watch(seconds, kill)
    over = False
    try:
        yield
    except OverBudget:
        over = True
    finally:
        # The one OverBudget may also arrive while the watch stops, after the body ended in time: it is dropped.
        while True:
            try:
                watch.stop()
                break
            except OverBudget:
                continue
    if over:
        raise ReadError(over_budget_reason(seconds), status="skipped")
