"""Reader processes end with the indexer that started them (issue 33, item 8): killed with SIGKILL, it cannot end
them itself, and they read on for minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from clock import wait_until
from processes import alive, ended

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and /proc")]

REPO = Path(__file__).resolve().parent.parent

# An indexer's reading loop whose readers take a minute a file; it prints the pids of the readers and of the
# resource tracker beside them once they are reading.
INDEXER = """
import multiprocessing, os, sys, time
from engine.ingest.extract import Extracted
from engine.ingest.pool import extract_all
from engine.ingest.readers.base import Limits

def slow(path, limits, known):
    open(sys.argv[1] + "/" + str(os.getpid()), "w").close()  # reading: the reader's initializer has run
    time.sleep(60)
    return Extracted(path, 0, 0.0, "", status=FileState.SKIPPED, reason="slow")

if __name__ == "__main__":
    jobs = [(f"/nowhere/{n}.txt", None) for n in range(40)]
    outcomes = extract_all(jobs, Limits(), 2, reader=slow)
    import threading
    def report():
        while len(os.listdir(sys.argv[1])) < 2:  # both readers have taken a task
            time.sleep(0.05)
        from multiprocessing import resource_tracker
        pids = [p.pid for p in multiprocessing.active_children()] + [resource_tracker._resource_tracker._pid]
        print(" ".join(str(pid) for pid in pids if pid), flush=True)
    threading.Thread(target=report, daemon=True).start()
    next(outcomes)
"""


def test_readers_die_when_the_indexer_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "indexer.py"
    script.write_text(INDEXER, encoding="utf-8")
    reading = tmp_path / "reading"
    reading.mkdir()
    indexer = subprocess.Popen([sys.executable, str(script), str(reading)], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = indexer.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) >= 3, (line, indexer.stderr.read() if indexer.poll() is not None else "")
        assert all(map(alive, pids))
        indexer.send_signal(signal.SIGKILL)
        indexer.wait(timeout=30)
        assert wait_until(partial(ended, pids), timeout=60), [p for p in pids if alive(p)]  # alive 240 s later
    finally:
        if indexer.poll() is None:
            indexer.kill()
