"""Reader processes end with the indexer that started them (issue 33, item 8): killed with SIGKILL, it cannot end
them itself, and they read on for minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc")

REPO = Path(__file__).resolve().parent.parent

# An indexer's reading loop whose readers take a minute a file; it prints the pids of the readers and of the
# resource tracker beside them once they are reading.
INDEXER = """
import multiprocessing, sys, time
from engine.filestate import FileState
from engine.ingest.extract import Extracted
from engine.ingest.pool import extract_all
from engine.ingest.readers.base import Limits

def slow(path, limits, known):
    time.sleep(60)
    return Extracted(path, 0, 0.0, "", status=FileState.SKIPPED, reason="slow")

if __name__ == "__main__":
    jobs = [(f"/nowhere/{n}.txt", None) for n in range(40)]
    outcomes = extract_all(jobs, Limits(), 2, reader=slow)
    import threading
    def report():
        while len(multiprocessing.active_children()) < 2:
            time.sleep(0.05)
        time.sleep(1)  # the readers have run their initializer and taken a task
        from multiprocessing import resource_tracker
        pids = [p.pid for p in multiprocessing.active_children()] + [resource_tracker._resource_tracker._pid]
        print(" ".join(str(pid) for pid in pids if pid), flush=True)
    threading.Thread(target=report, daemon=True).start()
    next(outcomes)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a parent that does not reap it counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_readers_die_when_the_indexer_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "indexer.py"
    script.write_text(INDEXER, encoding="utf-8")
    indexer = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = indexer.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) >= 3, (line, indexer.stderr.read() if indexer.poll() is not None else "")
        assert all(_alive(p) for p in pids)
        indexer.send_signal(signal.SIGKILL)
        indexer.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)]  # readers and tracker were alive 240 s later
    finally:
        if indexer.poll() is None:
            indexer.kill()
