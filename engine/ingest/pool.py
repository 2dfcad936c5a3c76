"""Read files in worker processes: parsing runs beside embedding, and a reader that crashes takes only its worker.

PDF and Office parsers are C code fed with untrusted files; a segfault in one of them must cost one file, not the
whole indexing run. Workers are started with ``spawn`` so that they work the same under a Qt application (where
forking a process with threads is unsafe) and on every platform.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from engine.ingest.extract import Extracted, extract
from engine.ingest.readers.base import Limits

log = logging.getLogger(__name__)

# Files in flight. The consumer stops taking results while it embeds and writes a batch (8,192 sentences, about a
# second), and workers only read what was submitted before it stopped: with 4 files per worker, indexing 462k
# Wikipedia sentences on 2 cores left the main thread waiting on the reader for 42% of the run (py-spy) and the
# reader process busy a quarter of the time. So the window holds about a batch's files, and is bounded by their
# bytes so that results of huge files do not pile up in memory (always at least one file per worker).
IN_FLIGHT_PER_WORKER = 64
IN_FLIGHT_BYTES = 64 << 20
# Below this many files, the start-up cost of worker processes (about half a second) is not worth it.
MIN_FILES_FOR_POOL = 16


def default_workers() -> int:
    """All cores but one: the main process embeds and writes while workers parse."""
    return max(1, (os.cpu_count() or 2) - 1)


Job = tuple[str, str | None]  # (path, hash recorded for it, if any)
Reader = Callable[[str, Limits, str | None], Extracted]


class _Window:
    """Jobs submitted and not yet taken, in submission order, with their bytes; whether another may go."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.jobs: dict[Future, tuple[Job, int]] = {}
        self.bytes = 0

    def has_room(self) -> bool:
        if len(self.jobs) < self.workers:
            return True
        return len(self.jobs) < self.workers * IN_FLIGHT_PER_WORKER and self.bytes < IN_FLIGHT_BYTES

    def put(self, future: Future, job: Job) -> None:
        try:
            size = os.path.getsize(job[0])
        except OSError:
            size = 0  # the reader reports why
        self.jobs[future] = (job, size)
        self.bytes += size

    def take(self, future: Future) -> Job:
        job, size = self.jobs.pop(future)
        self.bytes -= size
        return job


def extract_all(jobs: list[Job], limits: Limits, workers: int, reader: Reader = extract) -> Iterator[Extracted]:
    """Extract (path, known hash) jobs, yielding outcomes as they complete (not in input order).

    Stops submitting when the consumer stops iterating (cancellation): what is in flight is read in vain.
    """
    if workers <= 0 or len(jobs) < MIN_FILES_FOR_POOL:
        for path, known in jobs:
            yield reader(path, limits, known)
        return
    pending = list(reversed(jobs))
    while pending:
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        window = _Window(workers)
        try:
            while pending or window.jobs:
                while pending and window.has_room():
                    job = pending.pop()
                    window.put(executor.submit(reader, job[0], limits, job[1]), job)
                done, _ = wait(window.jobs, return_when=FIRST_COMPLETED)
                for future in done:
                    outcome = future.result()  # raises while the job is still in the window, if its worker died
                    window.take(future)
                    yield outcome
            # all read: wait for the workers to exit, so that none outlives the run (and their CPU time is counted
            # where the operating system counts finished children)
            executor.shutdown(wait=True)
        except BrokenProcessPool:
            executor.shutdown(wait=False, cancel_futures=True)
            yield from _after_crash(window, pending, limits, reader)
        finally:
            executor.shutdown(wait=False, cancel_futures=True)


def _after_crash(window: _Window, pending: list[Job], limits: Limits, reader: Reader) -> Iterator[Extracted]:
    """A worker died (segfault, out of memory) reading one of the files it had been handed.

    Workers take files in submission order, and only the first ``workers + 1`` unfinished ones (those in the
    workers' hands and the one queued beside them) can have been started: each of those is retried alone, and the
    one that kills its worker again is recorded as failed. The later ones were never read; they go back to the
    queue for the next pool.
    """
    unfinished: list[Job] = []
    for future, (job, _) in window.jobs.items():
        if future.done() and not future.cancelled() and future.exception() is None:
            yield future.result()
        else:
            unfinished.append(job)
    suspects = unfinished[: window.workers + 1]
    log.warning("a reader process crashed; retrying %d files one at a time", len(suspects))
    pending.extend(reversed(unfinished[len(suspects) :]))
    for path, known in suspects:
        yield _isolated(path, limits, known, reader)


def _isolated(path: str, limits: Limits, known: str | None, reader: Reader) -> Extracted:
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as single:
        try:
            return single.submit(reader, path, limits, known).result()
        except BrokenProcessPool:
            log.error("reader crashed on %s", path)
            return Extracted(path, 0, 0.0, "", status="failed", reason="the reader crashed on this file")
