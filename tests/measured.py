"""An indexing run in a child process, measured: wall time and the peak memory of the indexer and its readers.

Used by the hostile-corpus test and by ``bench/hostile.py``, so that both measure the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from engine import Index
from engine.reports import FileStatus

ROOT = Path(__file__).resolve().parent.parent

# The child reports its own peak memory and that of its reader processes, which it has waited for.
_INDEX = """
import json, resource, sys
from pathlib import Path
from engine import Index, IndexConfig
from engine.ingest.readers.base import Limits
config = IndexConfig(limits=Limits(**json.loads(sys.argv[4])), workers=json.loads(sys.argv[3]))
with Index(Path(sys.argv[2]), config=config) as idx:
    report = idx.add([Path(sys.argv[1])]).to_json()
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"report": report, "peak_kb": peak}))
"""


@dataclass(frozen=True)
class Run:
    """One measured indexing run: its report, every file's record by name, wall seconds and peak memory (MB)."""

    db: Path
    report: dict
    files: dict[str, FileStatus]
    seconds: float
    peak_mb: float


def index_measured(docs: Path, db: Path, limits: dict, workers: int | None, timeout: float = 600) -> Run:
    """Index ``docs`` into ``db`` in a child process with ``limits`` (Limits fields) and ``workers`` reader
    processes (None: the indexer's choice); its peak memory is the largest of it and its readers. Raises RuntimeError
    if the child fails."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _INDEX, str(docs), str(db), json.dumps(workers), json.dumps(limits)],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"indexing {docs} failed: {done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    with Index(db) as idx:
        files = {Path(f.path).name: f for f in idx.status(files=True).files}
    return Run(db, result["report"], files, seconds, result["peak_kb"] / 1024)
