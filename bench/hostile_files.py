"""Hostile files (issues 33 and 58): each case of the test suite's hostile corpus (``docgen.HOSTILE``: a zip with
an empty member name and escaping ones, an encrypted Office file, a named pipe, a sparse 2 GB file, zip bombs, a
PDF glyph bomb...) indexed on its own beside good files in a measured child process; then all of them in one folder
through `quire index` and `quire status`; then names that could mislead when printed."""

from __future__ import annotations

import json
from pathlib import Path

import docgen
from hostile_verdicts import CaseResult, Outcome, judge, quire, timed
from measured import index_measured

from engine.filestate import FileState

KLASS = "hostile files"
# Good files beside each case, read with it in the reader processes asked for (--workers).
GOOD_FILES = 16
# A newline would print one name as two lines; U+202E shows "invoice<RLO>gpj.txt" as "invoicetxt.jpg".
MISLEADING_NAMES = ("two\nlines.txt", "invoice\u202egpj.txt")
# Cases whose record needs the small limits a test passes (a time budget, a sentence cap), which the CLI does not
# take: they are measured on their own only.
NEEDS_LIMITS = {"glyphs.pdf", "many.txt"}


def good_files(docs: Path) -> None:
    """The good files each case sits beside."""
    docs.mkdir(parents=True)
    for n in range(GOOD_FILES):
        (docs / f"good{n}.txt").write_text(f"Good note {n}: {docgen.TEXT_SENTENCE}\n")


def measured_case(case: docgen.HostileCase, root: Path, limits: dict, workers: int, full: bool) -> dict:
    """Index the case beside good files in ``workers`` reader processes; its row of the measured table."""
    docs = root / case.name / "docs"
    good_files(docs)
    path = case.make(docs, full)
    size = path.stat().st_size if path.is_file() else 0
    run = index_measured(docs, root / case.name / "index", limits, workers)
    record = run.files[case.name]
    good = sum(record.status == FileState.INDEXED for name, record in run.files.items() if name.startswith("good"))
    return {
        "case": case.name, "size_bytes": size, "status": record.status, "reason": record.reason or "",
        "sentences": record.sentences, "good_files_indexed": good, "seconds": round(run.seconds, 1),
        "peak_mb": round(run.peak_mb),
    }


def _wrong_record(case: docgen.HostileCase, status: str, reason: str, good: int) -> str | None:
    if status != case.status or not reason.startswith(case.reason):
        return f"recorded {status}: {reason!r}, expected {case.status}: {case.reason!r}"
    if good != GOOD_FILES:
        return f"only {good} of {GOOD_FILES} good files indexed beside it"
    return None


def outcome(row: dict) -> str:
    """"skipped: too large: ...", or "indexed: 1 sentences" for a file read whole."""
    return f"{row['status']}: {row['reason'] or str(row['sentences']) + ' sentences'}"


def run_measured(root: Path, cases: tuple[docgen.HostileCase, ...], limits: dict, workers: int, full: bool,
                 into: list[CaseResult]) -> list[dict]:
    """Each case on its own (the measured table's rows), its verdict added to ``into``."""
    rows = []
    for case in cases:
        with timed(KLASS, case.name, into) as verdict:
            try:
                row = measured_case(case, root, limits, workers, full)
            except RuntimeError as e:  # the indexing child failed
                verdict((Outcome.TRACEBACK if "Traceback" in str(e) else Outcome.SILENT, str(e)[-200:]))
                continue
            rows.append(row)
            wrong = _wrong_record(case, row["status"], row["reason"], row["good_files_indexed"])
            verdict((Outcome.SILENT, wrong) if wrong else (Outcome.OK, outcome(row)))
    return rows


def run_together(root: Path, cases: tuple[docgen.HostileCase, ...], into: list[CaseResult]) -> None:
    """Every small case in one folder beside the good files, through the CLI: the run ends with each recorded."""
    docs, db = root / "together" / "docs", root / "together" / "index"
    good_files(docs)
    cases = tuple(case for case in cases if case.name not in NEEDS_LIMITS)
    for case in cases:
        case.make(docs, False)
    with timed(KLASS, "all in one folder", into) as verdict:
        ran = [quire("index", str(docs), "--db", str(db), "--json"), quire("status", "--files", "--db", str(db),
                                                                            "--json")]
        records = {Path(f["path"]).name: f for f in json.loads(ran[1].stdout or "{}").get("files", [])}
        wrong = next((w for w in (_wrong_record(case, records.get(case.name, {}).get("status", "missing"),
                                                records.get(case.name, {}).get("reason") or "", GOOD_FILES)
                                  for case in cases) if w), None)
        good = sum(records.get(f"good{n}.txt", {}).get("status") == "indexed" for n in range(GOOD_FILES))
        wrong = wrong or (None if good == GOOD_FILES else f"{good} of {GOOD_FILES} good files indexed")
        verdict(judge(ran, wrong, f"{len(cases)} hostile files recorded, {good} good files indexed"))


def run_names(root: Path, into: list[CaseResult]) -> None:
    """Names with a newline and a bidirectional override: indexed, and printed escaped by status and search."""
    docs, db = root / "names" / "docs", root / "names" / "index"
    docs.mkdir(parents=True)
    for n, name in enumerate(MISLEADING_NAMES):
        (docs / name).write_text(f"Owl number {n} hunts over the fields at night.\n")
    with timed(KLASS, "misleading names", into) as verdict:
        ran = [quire("index", str(docs), "--db", str(db)), quire("status", "--files", "--db", str(db)),
               quire("search", "owl hunting at night", "--db", str(db))]
        printed = ran[1].stdout + ran[2].stdout
        raw = [name for name in MISLEADING_NAMES if name in printed or "\u202e" in printed]
        listed = sum(line.startswith("  indexed ") for line in ran[1].stdout.splitlines())
        wrong = (f"printed raw: {raw!r}" if raw else None) or (
            None if listed == len(MISLEADING_NAMES) else f"status lists {listed} indexed lines")
        verdict(judge(ran, wrong, "indexed and printed escaped (one line each, no raw control characters)"))
