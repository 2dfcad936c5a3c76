"""bench/hostile.py cannot rot: its quick run of one class (the issue's bad command lines) goes through the real
CLI, judges every case and writes its results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_quick_hostile_run_judges_the_issues_command_lines(tmp_path: Path) -> None:
    out = tmp_path / "hostile.json"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "hostile.py"), "--quick", "--classes", "cmdlines",
                           "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "bad command lines" in done.stdout
    results = json.loads(out.read_text())
    (row,) = results["classes"]
    assert row["class"] == "bad command lines" and row["cases"] == 8
    assert [c for c in results["cases"] if c["outcome"] != "ok"] == []
