"""Reader processes: how many files they may run ahead, and what a reader that crashes costs."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from engine.filestate import FileState
from engine.ingest import pool
from engine.ingest.extract import Extracted, extract
from engine.ingest.readers.base import Limits


def crashing_reader(path: str, limits: Limits, known: str | None) -> Extracted:
    """The real reader, except that a file named crash*.txt kills its process (as a segfault in a parser would).

    Module-level, so that the spawned reader processes can import it."""
    if Path(path).name.startswith("crash"):
        os.kill(os.getpid(), signal.SIGKILL)
    return extract(path, limits, known)


def stuck_reader(path: str, limits: Limits, known: str | None) -> Extracted:
    """The real reader, except that a file named stuck* sleeps for an hour in C (``time.sleep``), where the time
    budget's interruption never lands, as a parser stuck in C code would; each start is noted in ``starts`` beside it.

    Module-level, so that the spawned reader processes can import it."""
    if Path(path).name.startswith("stuck"):
        with open(Path(path).with_name("starts"), "a", encoding="utf-8") as starts:
            starts.write(f"{os.getpid()}\n")
        time.sleep(3600)
    return extract(path, limits, known)


def _extract_in_thread(jobs: list[pool.Job], limits: Limits, workers: int, seconds: float) -> dict[str, Extracted]:
    """Every job's outcome by file name, read by :func:`pool.extract_all` on a thread given ``seconds`` to finish (a
    reader stuck in this process would hold the test for an hour)."""
    outcomes: dict[str, Extracted] = {}

    def run() -> None:
        outcomes.update((Path(o.path).name, o) for o in pool.extract_all(jobs, limits, workers, reader=stuck_reader))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "still reading"
    return outcomes


def _files(folder: Path, n: int, bad: int) -> list[str]:
    paths = []
    for i in range(n):
        path = folder / (f"crash{i:02}.txt" if i == bad else f"doc{i:02}.txt")
        path.write_text(f"Document number {i} talks about things. It has a second sentence too.\n")
        paths.append(str(path))
    return paths


def test_the_window_runs_ahead_by_files_and_bytes_but_keeps_each_worker_busy(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "IN_FLIGHT_PER_WORKER", 3)
    monkeypatch.setattr(pool, "IN_FLIGHT_BYTES", 1000)
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_bytes(b"x" * 10)
    big.write_bytes(b"x" * 5000)

    window = pool._Window(workers=2)
    futures = [Future() for _ in range(7)]
    window.put(futures[0], [(str(big), None)], 5000)
    assert window.has_room()  # over the bytes, but the second worker has nothing yet
    window.put(futures[1], [(str(small), None)], 10)
    assert not window.has_room()  # both workers busy and the bytes spent
    window.take(futures[0])
    window.put(futures[2], [(str(small), None)] * 4, 40)
    assert window.has_room()
    window.put(futures[3], [(str(small), None)], 10)
    assert not window.has_room()  # 3 files per worker
    window.take(futures[1])
    assert window.has_room() and (window.files, window.bytes) == (5, 50)


def test_tasks_hold_several_files_but_leave_work_for_every_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "TASK_FILES", 4)
    monkeypatch.setattr(pool, "TASK_BYTES", 100)
    paths = []
    for i, size in enumerate([10, 10, 90, 10, 10, 10, 10, 10, 10, 10]):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_bytes(b"x" * size)
    pending = [(str(p), None) for p in reversed(paths)]  # taken from the end
    window = pool._Window(workers=1)
    task, size = window.next_task(pending)
    assert [Path(p).name for p, _ in task] == ["0.txt", "1.txt", "2.txt"] and size == 110  # bytes reached
    task, _ = window.next_task(pending)
    assert len(task) == 3  # 7 left: at most half of them in one task, so that another gets some
    assert len(window.next_task(pending)[0]) == 2
    assert len(window.next_task(pending)[0]) == 1 and len(window.next_task(pending)[0]) == 1 and not pending


def test_a_reader_that_crashes_costs_its_file_and_only_the_files_it_may_have_started(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(pool, "TASK_FILES", 2)
    paths = _files(tmp_path, 40, bad=5)
    with caplog.at_level(logging.WARNING, logger="engine.ingest.pool"):
        outcomes = list(pool.extract_all([(p, None) for p in paths], Limits(), workers=1, reader=crashing_reader))

    assert sorted(o.path for o in outcomes) == sorted(paths)  # every file once
    failed = [o for o in outcomes if o.status != FileState.INDEXED]
    assert [(Path(o.path).name, o.status, o.reason) for o in failed] == [
        ("crash05.txt", FileState.FAILED, "the reader crashed on this file")
    ]
    assert all(o.document is not None and o.document.sentences for o in outcomes if o.status == FileState.INDEXED)
    # the files queued behind the crash were never read: they go to a new pool, not one process each
    retried = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    # two tasks of two files: the one that crashed and the one queued behind it
    assert retried == ["a reader process crashed; retrying 4 files one at a time"]


def test_a_small_run_reads_a_pdf_in_a_reader_process_which_is_ended_when_stuck_in_c(tmp_path):
    # Less plain text than IN_PROCESS_BYTES: the text files are read in this process, the PDF in a reader process
    # (in this one, a parser stuck in C code would never see its budget's interruption)
    paths = _files(tmp_path, 3, bad=-1)
    stuck = tmp_path / "stuck.pdf"
    stuck.write_bytes(b"%PDF-1.4 whose parser never returns")
    jobs = [(p, None) for p in [*paths, str(stuck)]]
    outcomes = _extract_in_thread(jobs, Limits(read_seconds=1), workers=None, seconds=30)
    stuck = outcomes["stuck.pdf"]
    assert (stuck.status, stuck.reason) == (FileState.SKIPPED, "took longer than 1 s to read")
    assert [outcomes[Path(p).name].status for p in paths] == [FileState.INDEXED] * 3


def test_a_file_past_its_budget_is_charged_it_once(tmp_path):
    # Its reader process is ended a grace period after the budget; the watchdog's last words name the file, which is
    # recorded, not read again alone in a fresh process to find it (twice the budget, and a third process started)
    paths = _files(tmp_path, 20, bad=-1)
    stuck = tmp_path / "stuck.pdf"
    stuck.write_bytes(b"%PDF-1.4 whose parser never returns")
    outcomes = _extract_in_thread([(p, None) for p in [*paths, str(stuck)]], Limits(read_seconds=5), workers=1,
                                  seconds=120)
    assert (outcomes["stuck.pdf"].status, outcomes["stuck.pdf"].reason) == ("skipped", "took longer than 5 s to read")
    assert [outcomes[Path(p).name].status for p in paths] == ["indexed"] * 20
    assert len((tmp_path / "starts").read_text().split()) == 1  # its reading began once, in one process


def test_a_small_run_prepares_every_document_in_the_indexer_where_its_model_is_loaded(tmp_path):
    from tests import docgen

    paths = [*_files(tmp_path, 2, bad=-1), str(docgen.make_pdf(tmp_path))]
    prepared: list[tuple[str, int]] = []

    def prepare(outcomes: list[Extracted]) -> list[Extracted]:  # a closure: it could not be sent to a reader
        prepared.extend((Path(o.path).name, os.getpid()) for o in outcomes)
        return outcomes

    outcomes = list(pool.extract_all([(p, None) for p in paths], Limits(), workers=None, prepare=prepare))
    assert sorted(o.status for o in outcomes) == [FileState.INDEXED] * 3
    assert sorted(prepared) == sorted((Path(p).name, os.getpid()) for p in paths)


def noting_reader(path: str, limits: Limits, known: str | None) -> Extracted:
    """The real reader, noting the process that read each file in ``readers`` beside it.

    Module-level, so that the spawned reader processes can import it."""
    with open(Path(path).with_name("readers"), "a", encoding="utf-8") as readers:
        readers.write(f"{os.getpid()}\n")
    return extract(path, limits, known)


def _readers_of(folder: Path, files: int, workers: int | None) -> set[int]:
    paths = _files(folder, files, bad=-1)
    outcomes = list(pool.extract_all([(p, None) for p in paths], Limits(), workers, reader=noting_reader))
    assert [o.status for o in outcomes] == [FileState.INDEXED] * files
    return {int(pid) for pid in (folder / "readers").read_text().split()}


def test_plain_text_is_read_in_reader_processes_only_when_there_is_enough_of_it(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 68 * 10)  # ten of _files' first files, 68 bytes each
    for folder in ("few", "enough", "asked", "none"):
        (tmp_path / folder).mkdir()
    assert _readers_of(tmp_path / "few", 9, None) == {os.getpid()}
    assert os.getpid() not in _readers_of(tmp_path / "enough", 10, None)
    # reader processes asked for are started however little there is to read, and none when none are asked for
    assert os.getpid() not in _readers_of(tmp_path / "asked", 2, 1)
    assert _readers_of(tmp_path / "none", 10, 0) == {os.getpid()}


def test_a_cancelled_run_stops_waiting_on_a_reader_that_is_still_reading(tmp_path):
    # a pause in the window waited as long as the slowest file in a reader's hands (a big PDF: seconds, issue 57)
    paths = _files(tmp_path, 3, bad=-1)
    stuck = tmp_path / "stuck.txt"
    stuck.write_text("A file whose reader takes far longer than a pause may.\n", encoding="utf-8")
    cancel = threading.Event()
    asked: list[float] = []

    def pause_once_it_reads() -> None:
        while not (tmp_path / "starts").exists():
            time.sleep(0.02)
        asked.append(time.monotonic())
        cancel.set()

    threading.Thread(target=pause_once_it_reads, daemon=True).start()
    budget = 3.0  # the stuck reader's process is ended by its watchdog after this, so none outlives the test
    jobs = [(str(stuck), None), *((p, None) for p in paths)]
    outcomes = list(pool.extract_all(jobs, Limits(read_seconds=budget), workers=1, reader=stuck_reader, cancel=cancel))
    stopped = time.monotonic() - asked[0]
    assert outcomes == []  # the stuck file's task holds a file besides it; the other task waits behind it
    assert stopped < pool.CANCEL_CHECK_SECONDS + 1.0, stopped  # not the budget the reader would take
