"""Inputs that explode, indexed beside good files in a real indexing process (issue 33, item 3).

The corpus is made at test time, at full size where that is cheap (a sparse file, a zip whose headers lie) and
smaller where the real one is slow. One indexing run reads it in a child process, measured with ``wait4``: each
hostile file must be recorded with its reason, the run must stay within a time and memory bound (the real inputs
cost minutes and gigabytes before), and the good files must still be found.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine import Index
from tests import docgen

ROOT = Path(__file__).resolve().parent.parent
GOOD = {
    "good/keeper.txt": docgen.TEXT_SENTENCE,
    "good/kettles.txt": docgen.HTML_SENTENCE,
}
# A child that reads nothing but the good files peaks near 300 MB (the model and the readers); the lying zip alone
# used to take 2.37 GB.
PEAK_MB = 900
RUN_SECONDS = 90

# The child reports its own peak memory and that of its reader processes, which it has waited for.
_INDEX = """
import json, resource, sys
from pathlib import Path
from engine import Index, IndexConfig
with Index(Path(sys.argv[2]), config=IndexConfig(workers=int(sys.argv[3]))) as idx:
    report = idx.add([Path(sys.argv[1])]).to_json()
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"report": report, "peak_kb": peak}))
"""


@dataclass(frozen=True)
class Run:
    """One measured indexing run: its report, every file's record by name, wall seconds and peak memory (MB)."""

    db: Path
    report: dict
    files: dict[str, dict]
    seconds: float
    peak_mb: float


def index_measured(docs: Path, db: Path, workers: int = 0) -> Run:
    """Index ``docs`` into ``db`` in a child process; its peak memory is the largest of it and its readers."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _INDEX, str(docs), str(db), str(workers)], cwd=ROOT,
                          capture_output=True, text=True, timeout=RUN_SECONDS * 2)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    with Index(db) as idx:
        files = {Path(f["path"]).name: f for f in idx.status(files=True).files}
    return Run(db, result["report"], files, seconds, result["peak_kb"] / 1024)


def hostile_corpus(root: Path) -> Path:
    """Good files beside a sparse 2 GB file, a 1 MB DOCX whose zip headers lie about its 1 GB of text and "Go now."
    written 500,000 times (4 MB)."""
    for rel, text in GOOD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    hostile = root / "hostile"
    hostile.mkdir()
    with (hostile / "sparse.txt").open("wb") as handle:
        handle.truncate(2_000_000_000)
    docgen.make_lying_zip(hostile, "liar.docx", megabytes=1000)
    (hostile / "repeated.txt").write_text("Go now.\n" * 500_000)
    return root


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("hostile")
    return index_measured(hostile_corpus(root / "docs"), root / "index")


def test_run_is_bounded_in_time_and_memory(run: Run) -> None:
    assert run.seconds < RUN_SECONDS
    assert run.peak_mb < PEAK_MB, f"peak {run.peak_mb:.0f} MB"


@pytest.mark.parametrize("rel", GOOD)
def test_good_files_are_found(run: Run, rel: str) -> None:
    assert run.files[Path(rel).name]["status"] == "indexed"
    with Index(run.db) as idx:
        results = idx.search(GOOD[rel], k=1, explain=False).results
    assert Path(results[0].path).name == Path(rel).name


def test_a_sentence_repeated_is_one_sentence(run: Run) -> None:
    assert (run.files["repeated.txt"]["status"], run.files["repeated.txt"]["sentences"]) == ("indexed", 1)


@pytest.mark.parametrize(("name", "status", "reason"), [
    ("sparse.txt", "skipped", "too large: 2,000 MB over the 100 MB limit"),
    ("liar.docx", "skipped", "zip bomb? DOCX expands to more than"),
])
def test_hostile_file_is_recorded_with_its_reason(run: Run, name: str, status: str, reason: str) -> None:
    record = run.files[name]
    assert (record["status"], record["reason"][: len(reason)]) == (status, reason)
