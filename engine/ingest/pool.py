"""Read files in worker processes: parsing runs beside embedding, and a reader that crashes takes only its worker.

PDF and Office parsers are C code fed with untrusted files; a segfault in one of them must cost one file, not the
whole indexing run. Workers are started with ``spawn`` so that they work the same under a Qt application (where
forking a process with threads is unsafe) and on every platform.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing.spawn import get_executable
from pathlib import Path
from typing import Protocol

from filelock import FileLock, Timeout

from engine.errors import CancelFlag, ReadError, ReaderStartError
from engine.filestate import FileState
from engine.ingest.budget import last_words, last_words_to, within_budget
from engine.ingest.extract import Extracted, extract
from engine.ingest.readers import isolated
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import short_cause
from engine.text.paths import readable

log = logging.getLogger(__name__)

# Files in flight: about a batch's files, so that workers keep reading while the consumer embeds and writes a batch;
# bounded by bytes so that results of huge files do not pile up in memory (always at least one task per worker).
# Measurements: docs/decisions/0008-reader-pool-sizes.md.
IN_FLIGHT_PER_WORKER = 64
IN_FLIGHT_BYTES = 64 << 20
# Files per task: a worker gets its next task only once the executor's manager thread, which needs the GIL, has
# taken the last result, so with one file per task workers sat idle half the time. A few files keep them reading
# (docs/decisions/0008-reader-pool-sizes.md).
TASK_FILES = 8
TASK_BYTES = 1 << 20
# Unless told how many reader processes to use, a run whose files the time budget can stop in any process (plain
# text) add up to less than this is read in the indexer's own process: below it, starting and feeding a reader
# process costs more CPU and wall time than it saves; the other files are read in a reader process all the same
# (docs/decisions/0008-reader-pool-sizes.md).
IN_PROCESS_BYTES = 4 << 20
# How often a reader process checks that the indexer that started it still runs (see _die_with_parent).
PARENT_CHECK_SECONDS = 0.5
# How long a new reader process may take to start and answer (spawn imports the indexer's main module first).
READER_START_SECONDS = 120
# How often a run waiting on its reader processes checks whether it was asked to stop: a PDF of a few hundred pages
# keeps a reader busy for seconds, and a pause in the window waited for it (issue 57).
CANCEL_CHECK_SECONDS = 0.2
# prctl(2) option: a signal the kernel sends this process when its parent ends.
_PR_SET_PDEATHSIG = 1
# A reader process's last words, in the run's folder, are in the file of this name and its pid.
_LAST_WORDS = "last-words-"
# A run's reader processes keep their temporary files (a compressed file unpacked, an archive's member) and last words
# in a folder of the run's own, named with this prefix, which the run removes after them: a reader ended mid-file
# cannot remove what it made. The run holds the lock file in it, so that a later run can tell the folder of an
# indexer that was killed (its lock is free) and remove it.
SCRATCH_PREFIX = "quire-reader-"
_SCRATCH_LOCK = "in-use.lock"
# A reader folder is made under this prefix, locked, then renamed to SCRATCH_PREFIX; one left under it younger
# than the grace period is left alone, as its run may not have taken its lock yet.
_STARTING_PREFIX = "quire-starting-"
_SCRATCH_GRACE_SECONDS = 60


def default_workers() -> int:
    """All cores but one: the main process embeds and writes while workers parse."""
    return max(1, (os.cpu_count() or 2) - 1)


Job = tuple[str, str | None]  # (path, hash recorded for it, if any)
Reader = Callable[[str, Limits, str | None], Extracted]
# Work on a task's outcomes as a whole, in the reader process (``engine.indexing.prepare``).
Prepare = Callable[[list[Extracted]], list[Extracted]]


class Extractor(Protocol):
    """What reads an indexing run's files: :func:`extract_all` here, or a cluster's workers (engine.cluster)."""

    def __call__(self, jobs: list[Job], limits: Limits, workers: int | None, *,
                 prepare: Prepare | None = None, cancel: CancelFlag | None = None) -> Iterator[Extracted]:
        """Yield the outcome of every job, in any order; ``prepare`` runs on each task's outcomes; ``workers``: the
        reader processes asked for (None: the extractor chooses); ``cancel`` set, stop soon, even while files are
        still being read."""


class _Window:
    """Tasks submitted and not yet taken, in submission order, with their files' count and bytes."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.tasks: dict[Future, tuple[list[Job], int]] = {}
        self.files = 0
        self.bytes = 0

    def has_room(self) -> bool:
        if len(self.tasks) < self.workers:
            return True
        return self.files < self.workers * IN_FLIGHT_PER_WORKER and self.bytes < IN_FLIGHT_BYTES

    def next_task(self, pending: list[Job]) -> tuple[list[Job], int]:
        """Jobs taken from the end of ``pending`` for one task, and their bytes: up to TASK_FILES and TASK_BYTES,
        fewer when few are left, so that every worker gets some."""
        most = max(1, min(TASK_FILES, len(pending) // (2 * self.workers)))
        task: list[Job] = []
        size = 0
        while pending and len(task) < most and (not task or size < TASK_BYTES):
            job = pending.pop()
            task.append(job)
            size += _size(job[0])
        return task, size

    def put(self, future: Future, task: list[Job], size: int) -> None:
        self.tasks[future] = (task, size)
        self.files += len(task)
        self.bytes += size

    def take(self, future: Future) -> None:
        task, size = self.tasks.pop(future)
        self.files -= len(task)
        self.bytes -= size


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # the reader reports why


def _die_with_parent(parent: int) -> None:
    """Initializer of a reader process: end it when the indexer that started it is gone. An indexer killed with
    SIGKILL cannot end its readers, which read on for minutes (and kept the resource tracker alive).

    On Linux the kernel sends SIGKILL, which works even while a parser holds the GIL (it follows the thread that
    started the reader: the one iterating :func:`extract_all`, which outlives its pool); elsewhere, and should the
    parent have ended before that was set, a thread checks the parent's pid (an orphan is adopted by another).
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            log.debug("prctl unavailable; watching the parent's pid only", exc_info=True)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="quire-parent-watch", daemon=True).start()


def _start_reader(parent: int, folder: str) -> None:
    """Initializer of a reader process: it ends with its parent, makes its temporary files in the run's ``folder``,
    and its watchdog writes which file it ended it over, and why, to a file of its own there
    (``engine.ingest.budget``)."""
    _die_with_parent(parent)
    tempfile.tempdir = folder
    last_words_to(Path(folder) / f"{_LAST_WORDS}{os.getpid()}")


@contextmanager
def _scratch() -> Iterator[str]:
    """A new folder for a run's reader processes (SCRATCH_PREFIX), removed with whatever they left in it.

    It is made under a name of its own and locked before it takes its SCRATCH_PREFIX name, so a folder of that name
    whose lock is free is always a killed indexer's, however new: the next run removes it at once (with a grace
    period for new folders, an immediate resume left 13 of 24 killed runs' folders behind).
    """
    made = tempfile.mkdtemp(prefix=_STARTING_PREFIX)
    lock = FileLock(os.path.join(made, _SCRATCH_LOCK))
    lock.acquire()
    folder = made
    try:
        folder = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
        os.replace(made, folder)  # over the empty folder just made: the name is this run's alone
        yield folder
    finally:
        lock.release()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(made, ignore_errors=True)


def sweep_scratch() -> None:
    """Remove the reader folders (SCRATCH_PREFIX) that indexers killed before they could remove them left in the
    temporary folder: those whose lock no process holds."""
    try:
        found = [Path(entry.path) for entry in os.scandir(tempfile.gettempdir())
                 if entry.name.startswith((SCRATCH_PREFIX, _STARTING_PREFIX)) and entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for folder in found:
        try:
            starting = folder.name.startswith(_STARTING_PREFIX)
            if (starting and time.time() - folder.stat().st_mtime < _SCRATCH_GRACE_SECONDS
                    or not (folder / _SCRATCH_LOCK).exists()):
                continue  # being made (its lock may not be taken yet), or not one of ours
            lock = FileLock(str(folder / _SCRATCH_LOCK), timeout=0)
            lock.acquire()
        except (OSError, Timeout):
            continue  # in use by a running indexer, or another user's
        try:
            log.info("removing %s, left by an indexer that was killed", folder)
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            lock.release()


def _readers(workers: int, folder: str) -> ProcessPoolExecutor:
    """A pool of ``workers`` reader processes, started with ``spawn``, that end with this process and leave their
    last words in ``folder``; raises ReaderStartError when none can be started.

    One process is asked for its pid before any file is handed out: a process that cannot start (an interpreter this
    account may not run, a limit on processes) dies as a reader crashing on a file does, and every file was recorded
    as one its reader crashed on, or the run ended with no word of why.
    """
    executor: ProcessPoolExecutor | None = None
    try:
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start_reader, initargs=(os.getpid(), folder))
        executor.submit(os.getpid).result(timeout=READER_START_SECONDS)
        return executor
    except (BrokenProcessPool, OSError, TimeoutError) as e:
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        raise _cannot_start(short_cause(e) if not isinstance(e, BrokenProcessPool) else "ended as it started") from e


def _check_interpreter() -> None:
    """Raise ReaderStartError when the interpreter that reader processes run cannot be started at all: found before
    any process pool exists, whose resource tracker would fail the same way and fill the output with its noise."""
    try:
        done = subprocess.run([get_executable(), "-I", "-S", "-c", "pass"], capture_output=True,
                              timeout=READER_START_SECONDS, check=False)
    except OSError as e:
        raise _cannot_start(e.strerror or short_cause(e)) from e
    except subprocess.TimeoutExpired as e:
        raise _cannot_start(f"did not finish in {READER_START_SECONDS} s") from e
    if done.returncode != 0:
        raise _cannot_start(f"exited with status {done.returncode}")


def _cannot_start(why: str) -> ReaderStartError:
    interpreter = readable(os.fsdecode(get_executable()))
    return ReaderStartError(f"cannot start a reader process ({interpreter}: {why}); index with `--workers 0` to "
                            f"read every file in this process")


def _ended_over(folder: str) -> dict[str, str]:
    """The files reader processes of ``folder`` were ended over, and why, from their last words (taken away)."""
    ended = {}
    for path in Path(folder).glob(f"{_LAST_WORDS}*"):
        said = last_words(path)
        if said is not None:
            ended[said[0]] = said[1]
        path.unlink(missing_ok=True)
    return ended


def read_task(reader: Reader, task: list[Job], limits: Limits, prepare: Prepare | None,
               kill: bool) -> list[Extracted]:
    """Read a task's files, each within the time and memory budget; ``kill``: this is a reader process, which may be
    ended when a file will not stop or takes too much memory (``engine.ingest.budget``)."""
    return _prepared([_read_within(reader, path, limits, known, kill) for path, known in task], prepare)


def _prepared(outcomes: list[Extracted], prepare: Prepare | None) -> list[Extracted]:
    if prepare is None:
        return outcomes
    try:
        return prepare(outcomes)
    except Exception:  # the documents were read: a failure to prepare them must not lose them or stop the run
        log.exception("preparing %d documents failed; the indexer does their part itself", len(outcomes))
        return outcomes


def _read_within(reader: Reader, path: str, limits: Limits, known: str | None, kill: bool) -> Extracted:
    try:
        return within_budget(limits, kill, lambda: reader(path, limits, known), path)
    except ReadError as e:  # only the budget raises: a reader records a bad file's reason in its outcome
        return _declined(path, e.status, e.reason)


def _declined(path: str, status: FileState, reason: str) -> Extracted:
    """The outcome for a file the pool gave up on; its size and time are kept, so that an unchanged file is not read
    again by the next run."""
    try:
        st = os.stat(path)
    except OSError:
        return Extracted(path, 0, 0.0, "", status=status, reason=reason)
    return Extracted(path, st.st_size, st.st_mtime, "", status=status, reason=reason)


def extract_all(jobs: list[Job], limits: Limits, workers: int | None, reader: Reader = extract,
                prepare: Prepare | None = None, cancel: CancelFlag | None = None) -> Iterator[Extracted]:
    """Extract (path, known hash) jobs, yielding outcomes as they complete (not in input order); ``prepare`` runs on
    each task's outcomes before they are handed back. ``workers``: reader processes; 0 reads every file here; None
    (the default setting) chooses: all cores but one, or none for a run of little plain text (IN_PROCESS_BYTES).

    Stops submitting when the consumer stops iterating, and within CANCEL_CHECK_SECONDS of ``cancel`` being set while
    it waits on reader processes: what is in flight is read in vain.
    """
    sweep_scratch()
    if workers == 0:
        yield from _here(jobs, limits, reader, prepare)
        return
    if workers is not None:
        yield from _pooled(jobs, limits, workers, reader, prepare, cancel)
        return
    here: list[Job] = []
    apart: list[Job] = []
    for job in jobs:
        (apart if isolated(Path(job[0])) else here).append(job)
    if not _little_text(here, limits):
        yield from _pooled(jobs, limits, default_workers(), reader, prepare, cancel)
        return
    # Little plain text: it is read here, the other files (a parser in C, which only ending its process stops, or
    # whose memory only a reader process's watchdog bounds) in reader processes. Those are prepared here, where the
    # model is loaded already, rather than loading it in the reader process.
    yield from _here(here, limits, reader, prepare)
    for outcome in _pooled(apart, limits, min(default_workers(), len(apart)), reader, None, cancel) if apart else ():
        yield from _prepared([outcome], prepare)  # one at a time: the run can be cancelled between them


def _little_text(jobs: list[Job], limits: Limits) -> bool:
    """Whether the readers of ``jobs`` would read less than IN_PROCESS_BYTES (a file over the size limit is declined
    unread); counting stops there, so that a large run costs few calls to stat."""
    total = 0
    for path, _ in jobs:
        size = _size(path)
        total += size if size <= limits.max_file_bytes else 0
        if total >= IN_PROCESS_BYTES:
            return False
    return True


def _here(jobs: list[Job], limits: Limits, reader: Reader, prepare: Prepare | None) -> Iterator[Extracted]:
    """Read ``jobs`` in this process, a task at a time; the time budget interrupts a reader, but cannot end one in C."""
    for start in range(0, len(jobs), TASK_FILES):
        yield from read_task(reader, jobs[start : start + TASK_FILES], limits, prepare, False)


def _pooled(jobs: list[Job], limits: Limits, workers: int, reader: Reader,
            prepare: Prepare | None, cancel: CancelFlag | None) -> Iterator[Extracted]:
    """Read ``jobs`` in ``workers`` reader processes, replaced when one crashes or is ended by its watchdog."""
    pending = list(reversed(jobs))
    _check_interpreter()
    with _scratch() as folder:
        yield from _pooled_in(folder, pending, limits, workers, reader, prepare, cancel)


def _pooled_in(folder: str, pending: list[Job], limits: Limits, workers: int, reader: Reader,
               prepare: Prepare | None, cancel: CancelFlag | None) -> Iterator[Extracted]:
    while pending:
        executor = _readers(workers, folder)
        window = _Window(workers)
        try:
            while pending or window.tasks:
                while pending and window.has_room():
                    task, size = window.next_task(pending)
                    window.put(executor.submit(read_task, reader, task, limits, prepare, True), task, size)
                done, _ = wait(window.tasks, timeout=CANCEL_CHECK_SECONDS, return_when=FIRST_COMPLETED)
                if cancel is not None and cancel.is_set():
                    return  # the readers' tasks are cancelled or left to end on their own, below
                for future in done:
                    outcomes = future.result()  # raises while the task is still in the window, if its worker died
                    window.take(future)
                    yield from outcomes
            # all read: wait for the workers to exit, so that none outlives the run (and their CPU time is counted
            # where the operating system counts finished children)
            executor.shutdown(wait=True)
        except BrokenProcessPool:
            executor.shutdown(wait=False, cancel_futures=True)
            yield from _after_crash(window, pending, limits, reader, prepare, folder)
        finally:
            executor.shutdown(wait=False, cancel_futures=True)


def _after_crash(window: _Window, pending: list[Job], limits: Limits, reader: Reader, prepare: Prepare | None,
                 folder: str) -> Iterator[Extracted]:
    """A worker died (segfault, out of memory, or ended by its watchdog) reading one of the files it had been handed.

    Workers take tasks in submission order, and only the first ``workers + 1`` unfinished ones (those in the
    workers' hands and the one queued beside them) can have been started. A watchdog that ended its process named
    the file in its last words: that file is recorded with its reason (too slow, too much memory), once, and the other
    suspects go back to the queue for the next pool. Otherwise (a crash) each suspect is retried alone, and the one
    that kills its worker again is recorded as failed. The later tasks were never read; their files go back to the
    queue.
    """
    unfinished: list[list[Job]] = []
    for future, (task, _) in window.tasks.items():
        if future.done() and not future.cancelled() and future.exception() is None:
            yield from future.result()
        else:
            unfinished.append(task)
    suspects = [job for task in unfinished[: window.workers + 1] for job in task]
    later = [job for task in unfinished[window.workers + 1 :] for job in task]
    ended = _ended_over(folder)
    innocent = [job for job in suspects if job[0] not in ended]
    for path, _ in suspects:
        if path in ended:
            yield _ended(path, ended[path])
    if len(innocent) < len(suspects):
        pending.extend(reversed(innocent + later))
        return
    log.warning("a reader process crashed; retrying %d files one at a time", len(suspects))
    pending.extend(reversed(later))
    yield from _one_at_a_time(suspects, limits, reader, prepare, folder)


def _one_at_a_time(jobs: list[Job], limits: Limits, reader: Reader, prepare: Prepare | None,
                   folder: str) -> Iterator[Extracted]:
    """Read each file as a task of its own in one reader process, so that a file that ends it is known; the process
    is replaced only then (a process per file cost a second and more each, 24 s for the 16 files beside a glyph
    bomb)."""
    single: ProcessPoolExecutor | None = None
    try:
        for path, known in jobs:
            if single is None:
                single = _readers(1, folder)
            try:
                outcome = single.submit(read_task, reader, [(path, known)], limits, prepare, True).result()[0]
            except BrokenProcessPool:
                single.shutdown(wait=False, cancel_futures=True)
                single = None
                outcome = _ended(path, _ended_over(folder).get(path))
            yield outcome
    finally:
        if single is not None:
            single.shutdown(wait=True)


def _ended(path: str, why: str | None) -> Extracted:
    """The outcome for a file whose reader process ended while reading it; ``why``: what its watchdog said."""
    if why:
        log.error("reading %s was stopped: %s", path, why)
        return _declined(path, FileState.SKIPPED, why)
    log.error("reader crashed on %s", path)
    return Extracted(path, 0, 0.0, "", status=FileState.FAILED, reason="the reader crashed on this file")
