"""Time in tests, kept from making them flaky on a loaded machine (issue 59): a test waits for the condition it needs
rather than sleeping a guessed while, and bounds work in CPU seconds, which waiting for a busy core does not stretch.
A wall-clock limit left in a test is at least five times what the operation takes on a quiet machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
# How often a condition is looked at: often enough not to add to a test's time, rarely enough to leave the core to
# the process being waited for.
POLL_SECONDS = 0.02


def wait_until(condition: Callable[[], object], timeout: float) -> bool:
    """Wait until ``condition()`` is true or ``timeout`` seconds have passed; whether it became true. The timeout
    only ends a wait that would otherwise hang: give it many times what the wait takes, and assert on the result."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return bool(condition())
        time.sleep(POLL_SECONDS)
    return True


def cpu_seconds(work: Callable[[], T]) -> tuple[T, float]:
    """What ``work()`` returns, and the CPU seconds this process spent on it (every thread's)."""
    started = time.process_time()
    result = work()
    return result, time.process_time() - started
