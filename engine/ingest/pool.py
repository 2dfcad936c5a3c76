"""Read files in worker processes: parsing runs beside embedding, and a reader that crashes takes only its worker.

PDF and Office parsers are C code fed with untrusted files; a segfault in one of them must cost one file, not the
whole indexing run. Workers are started with ``spawn`` so that they work the same under a Qt application (where
forking a process with threads is unsafe) and on every platform.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from engine.ingest.extract import Extracted, extract
from engine.ingest.readers.base import Limits

log = logging.getLogger(__name__)

# Files in flight per worker: enough to keep workers busy, few enough to bound memory held in results.
_IN_FLIGHT_PER_WORKER = 4
# Below this many files, the start-up cost of worker processes (about half a second) is not worth it.
MIN_FILES_FOR_POOL = 16


def default_workers() -> int:
    """All cores but one: the main process embeds and writes while workers parse."""
    return max(1, (os.cpu_count() or 2) - 1)


def _in_process(jobs: Iterable[tuple[str, str | None]], limits: Limits) -> Iterator[Extracted]:
    for path, known in jobs:
        yield extract(path, limits, known)


def extract_all(jobs: list[tuple[str, str | None]], limits: Limits, workers: int) -> Iterator[Extracted]:
    """Extract (path, known hash) jobs, yielding outcomes as they complete (not in input order).

    Stops submitting when the consumer stops iterating (cancellation): at most a few files are read in vain.
    """
    if workers <= 0 or len(jobs) < MIN_FILES_FOR_POOL:
        yield from _in_process(jobs, limits)
        return
    pending = list(reversed(jobs))
    while pending:
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        in_flight: dict[Future, str] = {}
        try:
            while pending or in_flight:
                while pending and len(in_flight) < workers * _IN_FLIGHT_PER_WORKER:
                    path, known = pending.pop()
                    in_flight[executor.submit(extract, path, limits, known)] = path
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    path = in_flight.pop(future)
                    yield future.result()
            # all read: wait for the workers to exit, so that none outlives the run (and their CPU time is counted
            # where the operating system counts finished children)
            executor.shutdown(wait=True)
        except BrokenProcessPool:
            # a worker died (segfault, out of memory) reading one of the in-flight files: we cannot tell which,
            # so each is retried alone, and the one that kills its worker again is recorded as failed
            suspects = list(in_flight.values())
            log.warning("a reader process crashed; retrying %d files one at a time", len(suspects))
            executor.shutdown(wait=False, cancel_futures=True)
            for path in suspects:
                yield _isolated(path, limits)
            continue
        finally:
            executor.shutdown(wait=False, cancel_futures=True)


def _isolated(path: str, limits: Limits) -> Extracted:
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as single:
        try:
            return single.submit(extract, path, limits, None).result()
        except BrokenProcessPool:
            log.error("reader crashed on %s", path)
            return Extracted(path, 0, 0.0, "", status="failed", reason="the reader crashed on this file")
