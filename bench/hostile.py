"""The hostile run of issues 33 and 58, replayed: hostile files, killed runs, racing commands, bad command lines,
damaged indexes, privacy and a full disk, each case through the real CLI in subprocesses (`quire index`, `search`,
`status`, `remove`, as a user types them) and judged ok, traceback, silent failure, undetected damage or crash
(bench/hostile_verdicts.py says how).

Prints one table (case class, cases, ok, tracebacks, silent, undetected, crashes, seconds), every case that is not
ok, and the hostile files' measured table (outcome, seconds, peak memory of the indexer and its readers, each case
beside 16 good files in a measured child process); writes bench/results/hostile.json. The hostile files are read
with a per-file time budget of ``--read-seconds`` (default 5): at the default two minutes the PDF glyph bomb would
grow its reader by 250 MB a second in pdfium until ended (docs/decisions/0012-reader-time-budget.md).

    python bench/hostile.py [--quick] [--classes files,kills,...] [--read-seconds 5] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import docgen  # noqa: E402  (the test suite's document generators)
import hostile_cmdlines  # noqa: E402
import hostile_damage  # noqa: E402
import hostile_files  # noqa: E402
import hostile_kills  # noqa: E402
import hostile_privacy  # noqa: E402
from hostile_verdicts import CaseResult, Outcome  # noqa: E402

from engine.eval.report import stamp  # noqa: E402

RESULTS = REPO / "bench" / "results" / "hostile.json"
# The hostile files of a quick run: the three of issue 58, each small.
QUICK_FILES = ("names.zip", "locked.docx", "pipe")


def files_class(root: Path, args: argparse.Namespace, into: list[CaseResult]) -> list[dict]:
    """Class 1: each hostile file measured on its own, then all together and misleading names through the CLI."""
    cases = tuple(c for c in docgen.HOSTILE if not args.quick or c.name in QUICK_FILES)
    rows = hostile_files.run_measured(root / "files", cases, {"read_seconds": args.read_seconds}, args.workers,
                                      not args.quick, into)
    hostile_files.run_together(root / "files", cases, into)
    hostile_files.run_names(root / "files", into)
    return rows


# Each class's name on the command line and its runner, in the table's order.
CLASSES: dict[str, Callable[[Path, bool, list[CaseResult]], None]] = {
    "kills": hostile_kills.run_kills,
    "concurrency": hostile_kills.run_races,
    "cmdlines": hostile_cmdlines.run_cmdlines,
    "damage": hostile_damage.run_damage,
    "privacy": hostile_privacy.run_privacy,
    "disk": hostile_privacy.run_full_disk,
}


def summary(results: list[CaseResult], seconds: dict[str, float]) -> list[dict]:
    """One row per case class: its cases, how many came to each outcome, its seconds."""
    rows = []
    for klass in dict.fromkeys(r.klass for r in results):
        mine = [r for r in results if r.klass == klass]
        rows.append({"class": klass, "cases": len(mine), **{o.value: sum(r.outcome is o for r in mine)
                                                             for o in Outcome}, "seconds": round(seconds[klass])})
    return rows


def print_tables(rows: list[dict], results: list[CaseResult], measured: list[dict]) -> None:
    """The summary table, the cases that are not ok, and the hostile files' measurements."""
    head = ("class", "cases", "ok", "tracebacks", "silent", "undetected", "crashes", "not run", "s")
    print(f"{head[0]:<20}" + "".join(f"{h:>11}" for h in head[1:]))
    for row in rows:
        print(f"{row['class']:<20}" + "".join(f"{row[k]:>11}" for k in ("cases", *(o.value for o in Outcome),
                                                                          "seconds")))
    for r in results:
        if r.outcome is not Outcome.OK:
            print(f"  {r.outcome.value}: [{r.klass}] {r.case}: {r.detail}")
    if measured:
        print(f"\n{'case':<14} {'MB':>8} {'outcome':<70} {'s':>6} {'peak MB':>8}")
        for row in measured:
            print(f"{row['case']:<14} {row['size_bytes'] / 1e6:>8.2f} {hostile_files.outcome(row)[:70]:<70} "
                  f"{row['seconds']:>6.1f} {row['peak_mb']:>8}")


def main() -> None:
    """Run the classes asked for, print the tables, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cases per class (a smoke test)")
    parser.add_argument("--classes", default=",".join(["files", *CLASSES]),
                        help=f"comma-separated, of: files,{','.join(CLASSES)} (default: all)")
    parser.add_argument("--read-seconds", type=float, default=5.0, help="hostile files' per-file budget (default 5)")
    parser.add_argument("--workers", type=int, default=1, help="hostile files' reader processes (default 1)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args()
    chosen = args.classes.split(",")
    unknown = set(chosen) - {"files", *CLASSES}
    if unknown:
        parser.error(f"unknown classes: {', '.join(sorted(unknown))}")
    results: list[CaseResult] = []
    measured: list[dict] = []
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="quire-hostile-") as folder:
        for name in chosen:
            started, before = time.monotonic(), len(results)
            if name == "files":
                measured = files_class(Path(folder), args, results)
            else:
                CLASSES[name](Path(folder) / name, args.quick, results)
            seconds.update({r.klass: time.monotonic() - started for r in results[before:]})
    rows = summary(results, seconds)
    print_tables(rows, results, measured)
    args.out.write_text(json.dumps({**stamp(REPO), "quick": args.quick, "read_seconds": args.read_seconds,
                                    "workers": args.workers, "classes": rows,
                                    "cases": [{**asdict(r), "outcome": r.outcome.value} for r in results],
                                    "hostile_files": measured}, indent=2) + "\n")


if __name__ == "__main__":
    main()
