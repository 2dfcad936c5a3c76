"""Standard output closed by its reader (``quire search ... | head -1``, ``grep -q``) is the end of the output.

The reader took what it wanted, so the program stops printing and ends normally (status 0) rather than raising
BrokenPipeError, printing a traceback or, in the app, opening an error box that nobody will see (issue 33, item 11).
"""

from __future__ import annotations

import os
import select
import sys


def end_output() -> None:
    """Point standard output at /dev/null: what is still buffered, and the interpreter's last flush at exit, go
    nowhere instead of raising BrokenPipeError again ("Exception ignored ... BrokenPipeError" at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (replaced, or closed): nothing to flush
        pass


def stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone: a BrokenPipeError may come from another pipe (a
    child process's), which is a real error. Where poll() is missing (Windows) a broken pipe is taken to be it."""
    if not hasattr(select, "poll"):
        return True
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def print_line(line: str) -> bool:
    """Print ``line`` and flush; False when the reader had closed standard output (this line and any after it go
    nowhere)."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        end_output()
        return False
    return True
