"""Bad command lines (issues 33 and 58): the issue's list (`quire index ""`, `--max-size nan`, `--workers -1`, a
`--queries` line of 100,000 nested `[`, `--like f.md#-1`, an endless `--queries /dev/zero`...) and a batch of wrong
options, values and inputs to every command. Each must be refused before any work in a plain line (or answered,
where the input is odd rather than wrong), never a traceback, never an exit 0 that took a wrong value."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import docgen
from hostile_verdicts import QUIRE, REPO, CaseResult, Outcome, Ran, environment, judge, quire, timed

KLASS = "bad command lines"
# Seconds an endless --queries file is read for, and the growth of the reader's peak memory allowed in them.
ENDLESS_SECONDS = 3
ENDLESS_GROWTH_KB = 20_000


class Want(str, Enum):
    """What a command line must come to."""

    REFUSED = "refused"  # a non-zero exit and a line saying why
    EITHER = "either"  # answered or refused, as long as it says something


@dataclass(frozen=True)
class Line:
    """A command line (``DB``: a sound index, ``NEW``: a folder no index is in yet, ``DOCS``, ``FILE``: an indexed
    Markdown file, ``MISSING``: a path that does not exist, ``Q:name``: a queries file of that name) and what it
    must come to; ``words``: what its output must say."""

    args: tuple[str, ...]
    want: Want = Want.REFUSED
    words: str = ""


def _r(*args: str, words: str = "") -> Line:
    return Line(args, Want.REFUSED, words)


def _e(*args: str) -> Line:
    return Line(args, Want.EITHER)


# The issue's own cases first (item 8): each was a traceback or a wrong or missing message.
ISSUE = (
    _r("index", "", words="a path is empty"),
    _r("remove", "", "--db", "DB", words="a path is empty"),
    _r("index", "DOCS", "--db", "NEW", "--max-size", "nan", words="nan is not a size"),
    _r("index", "DOCS", "--db", "NEW", "--max-size", "inf", words="inf is not a size"),
    _r("index", "DOCS", "--db", "NEW", "--max-size", "-1", words="-1 is not a size"),
    _r("index", "DOCS", "--db", "NEW", "--workers", "-1", words="-1 is not in the range"),
    Line(("search", "--queries", "Q:nested", "--db", "DB"), Want.REFUSED, "nests too deeply"),
    _r("search", "--like", "FILE#-1", "--db", "DB", words="sentence -1 does not exist"),
)
BAD_NUMBERS = ("abc", "", "1.5", "0x10", "-5", "1e3")
BAD_DATES = ("yesterday", "2024-13-45", "-5d", "5x", "", "99999999999y", "2024-02-30")
QUERIES = {  # name -> the file's text
    "nested": "[" * 100_000 + "\n",
    "not_json": "this is not JSON\n",
    "array": '["orion"]\n',
    "number": "42\n",
    "no_text": '{"id": 1}\n',
    "text_number": '{"id": 1, "text": 5}\n',
    "empty_text": '{"id": 1, "text": ""}\n',
    "deep_id": '{"id": ' + "[" * 50_000 + "]" * 50_000 + ', "text": "stars"}\n',
    "long_line": '{"id": 1, "text": "' + "word " * 400_000 + '"}\n',
    "nul": '{"id": 1, "text": "star\\u0000s"}\n',
    "bom": '\ufeff{"id": 1, "text": "stars"}\n',
    "long_query": '{"id": 1, "text": "' + "star " * 20_000 + '"}\n',
}
GENERATED = (
    *(_r("index", "DOCS", "--db", "NEW", "--max-size", v) for v in ("abc", "", "-0.5", "1e400")),
    *(_r("index", "DOCS", "--db", "NEW", "--workers", v) for v in BAD_NUMBERS[:-2]),
    *(_r("index", "DOCS", "--db", "NEW", "--batch", v) for v in ("0", "-1", "abc", "")),
    *(_r("index", "DOCS", "--db", "NEW", "--shards", v) for v in ("0", "-1", "abc")),
    _r("index", "DOCS", "--db", "NEW", "--method", "bogus"),
    _r("index", "DOCS", "--db", "NEW", "--method", ""),
    _e("index", "DOCS", "--db", "NEW", "--ocr-lang", ""),
    _e("index", "DOCS", "--db", "NEW", "--ocr-lang", "../../etc/passwd"),
    _r("index", "MISSING", "--db", "NEW", words="does not exist"),
    _r("index", "DOCS", "--db", ""),
    _r("index", "DOCS", "--db", "/dev/null"),
    _r("index", "DOCS", "--db", "FILE"),
    _r("index", "DOCS", "--db", "NEW", "--frobnicate"),
    _r("index", "DOCS", "--db", "NEW", "--max-size"),
    _e("index", "/dev/zero", "--db", "NEW"),
    _e("index", "DOCS", "--db", "NEW", "--ignore", ""),
    _e("index", "DOCS", "--db", "NEW", "--ignore", "[unclosed"),
    _r("index", "--rebuild", "--db", "NEW"),
    _r("index", "--db", "NEW"),
    _r("search", "", "--db", "DB"),
    _r("search", "   ", "--db", "DB"),
    _r("search", "--db", "DB"),
    _r("search", "stars", "--queries", "Q:empty_text", "--db", "DB"),
    _r("search", "stars", "--like", "FILE", "--db", "DB"),
    *(_r("search", "stars", "-k", v, "--db", "DB") for v in ("0", "-1", "abc", "", "1.5")),
    _e("search", "stars", "-k", "99999999999999999999", "--db", "DB"),
    _r("search", "stars", "--mode", "bogus", "--db", "DB"),
    _r("search", "stars", "--mode", "", "--db", "DB"),
    _r("search", "stars", "--method", "bogus", "--db", "DB"),
    _r("search", "stars", "--method", "sbert", "--db", "DB"),
    _r("search", "--like", "MISSING", "--db", "DB"),
    _r("search", "--like", "", "--db", "DB"),
    _r("search", "--like", "DOCS", "--db", "DB"),
    *(_r("search", "--like", f"FILE{suffix}", "--db", "DB") for suffix in ("#99999", ":0", ":-1", ":99999")),
    _e("search", "--like", "FILE#abc", "--db", "DB"),
    _e("search", "stars", "--in", "MISSING", "--db", "DB"),
    _e("search", "stars", "--in", "", "--db", "DB"),
    _e("search", "stars", "--type", "", "--db", "DB"),
    _e("search", "stars", "--type", ".", "--db", "DB"),
    *(_r("search", "stars", "--since", v, "--db", "DB") for v in BAD_DATES),
    *(_r("search", "stars", "--before", v, "--db", "DB") for v in BAD_DATES[:4]),
    _e("search", "stars", "--since", "2025-01-01", "--before", "2024-01-01", "--db", "DB"),
    _r("search", "--queries", "MISSING", "--db", "DB"),
    _r("search", "--queries", "DOCS", "--db", "DB"),
    _e("search", "--queries", "/dev/null", "--db", "DB"),
    *(_e("search", "--queries", f"Q:{name}", "--db", "DB") for name in QUERIES if name != "nested"),
    _r("search", "stars", "--db", "MISSING", words="no index at"),
    _r("search", "stars", "--db", ""),
    _r("search", "stars", "--db", "FILE"),
    _r("search", "stars", "--db", "DB", "--frobnicate"),
    _r("search", "stars", "--db", "DB", "-k"),
    _e("search", "star " * 20_000, "--db", "DB"),
    *(_e("search", q, "--db", "DB", "--mode", "lexical") for q in ('"', "AND", "*", "NEAR(", "a OR OR b", "-x")),
    _r("status", "--db", "MISSING", words="no index at"),
    _r("status", "--db", "FILE"),
    _r("status", "--db", "DB", "--frobnicate"),
    _r("status", "extra", "--db", "DB"),
    _r("remove", "--db", "DB"),
    _e("remove", "MISSING", "--db", "DB"),
    _r("remove", "DOCS", "--db", "MISSING"),
    _r("embed", "--method", "bogus", "--input", "FILE", "--output", "NEW"),
    _r("embed", "--input", "MISSING", "--output", "NEW"),
    _r("embed", "--input", "FILE", "--output", "DOCS"),
    _r("embed"),
    _r("eval", "--data", "MISSING", "--methods", "bogus"),
    _r("bogus"),
    _r("--debuq", "status"),
    _r("index", "DOCS", "--db", "NEW", "--json", "--json", "--max-size", "nan"),
)


# A placeholder is a whole argument, or one followed by a --like suffix or (Q) a queries file's name.
_PLACEHOLDER = re.compile(r"^(?P<name>DB|NEW|DOCS|FILE|MISSING|Q)(?P<rest>(?:[#:].*)?)$", re.DOTALL)


def _filled(path: Path, rest: str) -> str:
    return str(path / f"{rest[1:]}.jsonl") if path.name == "queries" else f"{path}{rest}"


@dataclass(frozen=True)
class Places:
    """The paths the placeholders of a line stand for."""

    db: Path
    docs: Path
    file: Path
    root: Path

    def args(self, line: Line, n: int) -> tuple[tuple[str, ...], Path]:
        """The line's arguments with its placeholders filled in, and its NEW folder (one of its own)."""
        new = self.root / f"new{n}"
        named = {"DB": self.db, "NEW": new, "DOCS": self.docs, "FILE": self.file, "MISSING": self.root / "missing",
                 "Q": self.root / "queries"}
        filled = tuple(_PLACEHOLDER.sub(lambda m: _filled(named[m["name"]], m["rest"]), a) for a in line.args)
        return filled, new


def places(root: Path) -> Places:
    """A small indexed corpus with a Markdown file, and the queries files."""
    docs, db = root / "docs", root / "index"
    docgen.write_toy_corpus(docs, lines=100)
    md = docgen.make_md(docs)
    (root / "queries").mkdir()
    for name, text in QUERIES.items():
        (root / "queries" / f"{name}.jsonl").write_text(text, encoding="utf-8")
    done = quire("index", str(docs), "--db", str(db), "--workers", "0")
    if done.returncode != 0:
        raise RuntimeError(f"indexing the command lines' corpus failed: {done.said()}")
    return Places(db, docs, md, root)


def _wrong(line: Line, ran: Ran, new: Path) -> str | None:
    said = ran.said()
    if line.want is Want.REFUSED and ran.returncode == 0:
        return f"accepted with exit 0: {said!r}"
    if ran.returncode != 0 and not ran.stderr.strip():
        return f"exit {ran.returncode} with nothing on stderr"
    if line.words and line.words not in ran.stderr + ran.stdout:
        return f"said {said!r}, not {line.words!r}"
    if line.want is Want.REFUSED and line.args[0] == "index" and new.exists():
        return "refused after making an index folder: not validated before any work"
    return None


def run_line(line: Line, at: Places, n: int, into: list[CaseResult]) -> None:
    """One command line's case."""
    args, new = at.args(line, n)
    name = " ".join(a if len(a) < 24 else a[:21] + "..." for a in line.args) or "(nothing)"
    with timed(KLASS, name, into) as verdict:
        ran = quire(*args)
        verdict(judge([ran], _wrong(line, ran, new), f"{ran.returncode}: {ran.said()[:90]}"))


def _peak_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))


def endless_queries(at: Places, into: list[CaseResult]) -> None:
    """`--queries /dev/zero`: the first line's error at once, then skipping in flat memory until stopped."""
    with timed(KLASS, "search --queries /dev/zero", into) as verdict:
        process = subprocess.Popen([*QUIRE, "search", "--queries", "/dev/zero", "--db", str(at.db)], cwd=REPO,
                                   env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ready, _, _ = select.select([process.stdout], [], [], 60)
            first = process.stdout.readline() if ready else ""
            peaks = [_peak_kb(process.pid)]
            time.sleep(ENDLESS_SECONDS)
            peaks.append(_peak_kb(process.pid))
        finally:
            process.kill()
            process.wait()
        error = json.loads(first).get("error", "") if first.startswith("{") else ""
        wrong = (None if "longer than" in error else f"first line: {first[:80]!r}") or (
            None if peaks[1] - peaks[0] < ENDLESS_GROWTH_KB else f"peak memory grew {peaks[1] - peaks[0]:,} kB "
                                                                 f"in {ENDLESS_SECONDS} s")
        verdict((Outcome.SILENT, wrong) if wrong else (Outcome.OK, f"{error}; peak memory flat ({peaks[1]:,} kB)"))


def piped_queries(at: Places, into: list[CaseResult]) -> None:
    """`--queries FIFO` with one line written and the pipe held open: answered before the pipe ends."""
    with timed(KLASS, "search --queries FIFO", into) as verdict:
        fifo = at.root / "queries" / "fifo"
        os.mkfifo(fifo)
        process = subprocess.Popen([*QUIRE, "search", "--queries", str(fifo), "--db", str(at.db), "--no-explain"],
                                   cwd=REPO, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        release = threading.Event()

        def write() -> None:
            with fifo.open("w") as writer:
                writer.write(json.dumps({"id": "first", "text": "the war ended"}) + "\n")
                writer.flush()
                release.wait(90)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            ready, _, _ = select.select([process.stdout], [], [], 60)
            answer = process.stdout.readline() if ready else ""
        finally:
            release.set()
            writer.join(10)
            out, err = process.communicate(timeout=60)
        ran = Ran(("search", "--queries", "FIFO"), process.returncode, answer + out, err, 0)
        wrong = None if answer.startswith('{"id": "first"') else "no answer while the pipe stayed open"
        verdict(judge([ran], wrong, "answered while the pipe was still open"))


def run_cmdlines(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """Every line (the issue's alone when quick), then the endless and the piped queries."""
    at = places(root / "cmdlines")
    for n, line in enumerate(ISSUE if quick else ISSUE + GENERATED):
        run_line(line, at, n, into)
    if not quick:
        endless_queries(at, into)
        piped_queries(at, into)
