"""A full disk (issue 58, item 10): one line saying so and what was kept, not a traceback from write_documents; once
space is freed the same command goes on and indexes everything. The disk is a real tmpfs of a few MB, mounted for
the test (root only)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
WORDS = ("alpha river stone cloud ember north violet anchor meadow quartz").split()
FILES = 200


def quire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here ({mounted.stderr.decode().strip()})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_full_disk_is_one_line_and_the_next_run_goes_on(tmp_path: Path, small_disk: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    rng = random.Random(7)
    for n in range(FILES):  # words of their own, so that the index outgrows the disk
        (docs / f"d{n:03d}.txt").write_text(
            " ".join(f"{rng.choice(WORDS)}{rng.randrange(100_000)}" for _ in range(800)) + ".\n", encoding="utf-8")
    db = small_disk / "index"
    done = quire("index", str(docs), "--db", str(db), "--workers", "0")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: the disk holding the index at {db} is full (database or disk is full); everything indexed before "
        f"is kept: free some space and run `quire index` again to go on from there"]
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)  # space freed
    again = quire("index", "--db", str(db), "--workers", "0", "--json")
    assert again.returncode == 0, again.stderr
    status = json.loads(quire("status", "--check", "--db", str(db), "--json").stdout)
    assert status["indexed"] == FILES and status["failed"] == 0
