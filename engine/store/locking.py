"""An index's write lock: one writer at a time, and a clear word when another process holds it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from engine.errors import QuireError

# Seconds a write waits for another process's write lock before saying so: a run holds it for minutes, so waiting
# longer only delays the message.
WRITE_LOCK_WAIT = 1


@contextmanager
def holding(lock: FileLock, folder: Path) -> Iterator[None]:
    """Hold an index's write lock, or say that another process holds it."""
    try:
        lock.acquire(timeout=WRITE_LOCK_WAIT)
    except Timeout as e:
        raise QuireError(f"another quire process is writing to {folder}; wait for it to finish") from e
    try:
        yield
    finally:
        lock.release()
