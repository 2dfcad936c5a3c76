"""The per-file time budget (engine.ingest.budget, docs/decisions/0012-reader-time-budget.md) in one process: a
read past it is stopped in whatever thread runs it, and an interruption never escapes into the code after a read."""

from __future__ import annotations

import threading
import time

import pytest

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.budget import within_budget
from engine.ingest.readers.base import Limits


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_read_past_its_budget_is_stopped_in_any_thread() -> None:
    errors: list[ReadError] = []

    def read() -> None:
        started = time.monotonic()
        with pytest.raises(ReadError) as caught:
            within_budget(Limits(read_seconds=0.2), False, lambda: _spin(30))
        assert time.monotonic() - started < 5
        errors.append(caught.value)

    reader = threading.Thread(target=read)  # the app indexes in a thread of its own, not the main one
    reader.start()
    reader.join()
    assert [(e.status, e.reason) for e in errors] == [(FileState.SKIPPED, "took longer than 0.2 s to read")]


def test_an_interruption_never_escapes_after_the_read() -> None:
    # Budgets that end as the body does: the interruption lands inside the body, while it stops, or not at all.
    outcomes = {"read": 0, "over": 0}
    for _ in range(2000):
        try:
            within_budget(Limits(read_seconds=0.0002), False, lambda: _spin(0.0002))
            outcomes["read"] += 1
        except ReadError:
            outcomes["over"] += 1
        _spin(0.0005)  # time for a stray interruption to land here
    assert sum(outcomes.values()) == 2000
