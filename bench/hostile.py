"""Hostile inputs (issue 33): each case of the test suite's hostile corpus indexed on its own, beside one good file,
at the size that was measured when the issue was filed where that can run here, in a measured child process.

Prints a table (case, outcome, seconds, peak memory of the indexer and its readers) and writes
bench/results/hostile.json. Every limit is the default but the per-file time budget (``--read-seconds``, default 5):
at the default two minutes the PDF glyph bomb would grow its reader by 250 MB a second in pdfium until ended
(docs/decisions/0012-reader-time-budget.md).

    python bench/hostile.py [--read-seconds 5] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import docgen  # noqa: E402  (the test suite's document generators)
from measured import index_measured  # noqa: E402

from engine.eval.report import stamp  # noqa: E402
from engine.filestate import FileState  # noqa: E402

RESULTS = REPO / "bench" / "results" / "hostile.json"
# Good files beside each case, read with it in the reader processes asked for (--workers).
GOOD_FILES = 16


def run_case(case: docgen.HostileCase, root: Path, limits: dict, workers: int) -> dict:
    """Index the case beside good files in ``workers`` reader processes; its row of the table."""
    docs = root / case.name / "docs"
    docs.mkdir(parents=True)
    for n in range(GOOD_FILES):
        (docs / f"good{n}.txt").write_text(f"Good note {n}: {docgen.TEXT_SENTENCE}\n")
    path = case.make(docs, True)
    run = index_measured(docs, root / case.name / "index", limits, workers)
    record = run.files[case.name]
    good = sum(record.status == FileState.INDEXED for name, record in run.files.items() if name.startswith("good"))
    return {
        "case": case.name, "size_bytes": path.stat().st_size, "status": record.status,
        "reason": record.reason or "", "sentences": record.sentences, "good_files_indexed": good,
        "seconds": round(run.seconds, 1), "peak_mb": round(run.peak_mb),
    }


def outcome(row: dict) -> str:
    """"skipped: too large: ...", or "indexed: 1 sentences" for a file read whole."""
    return f"{row['status']}: {row['reason'] or str(row['sentences']) + ' sentences'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--read-seconds", type=float, default=5.0, help="per-file time budget (default 5)")
    parser.add_argument("--workers", type=int, default=1, help="reader processes (default 1)")
    args = parser.parse_args()
    limits = {"read_seconds": args.read_seconds}
    with tempfile.TemporaryDirectory(prefix="quire-hostile-") as folder:
        rows = [run_case(case, Path(folder), limits, args.workers) for case in docgen.HOSTILE]
    print(f"{'case':<14} {'MB':>8} {'outcome':<70} {'s':>6} {'peak MB':>8}")
    for row in rows:
        print(f"{row['case']:<14} {row['size_bytes'] / 1e6:>8.2f} {outcome(row)[:70]:<70} {row['seconds']:>6.1f} "
              f"{row['peak_mb']:>8}")
    RESULTS.write_text(json.dumps({**stamp(REPO), "limits": limits, "workers": args.workers, "cases": rows},
                                  indent=2) + "\n")


if __name__ == "__main__":
    main()
