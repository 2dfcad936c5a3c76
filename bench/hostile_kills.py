"""Killed runs and racing commands (issues 33 and 58): `quire index` killed with SIGKILL or SIGINT at points of its
run, then resumed, must end where an uninterrupted run ends (documents, sentences, the same search results) with no
`quire-reader-*` folder left in the temporary folder; two indexers on one index, searches and a status while one
indexes, and a remove during a run must each end in results or in one plain line."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import docgen
from hostile_verdicts import QUIRE, REPO, CaseResult, Ran, environment, judge, quire, timed

KILLS, RACES = "kills", "concurrency"
# Volumes of the toy corpus, each sentence marked with its volume so that no two documents tie: 24 volumes are
# about 10,000 sentences, a run of some seconds to kill at points of.
VOLUMES = 24
QUERIES = ("harbour and ships", "the war ended", "a river flows through the valley")
# Sentences embedded and committed per transaction: small, so that a kill falls between many commits.
BATCH = "200"
# How far through an uninterrupted run's wall time each kill comes (the first before anything is written).
POINTS = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)
QUICK_POINTS = (0.5,)


def kill_corpus(docs: Path, volumes: int) -> None:
    """Volumes of the toy corpus's sentences, each with a PDF and a DOCX, read in reader processes."""
    lines = docgen.TOY_CORPUS.read_text(encoding="utf-8").splitlines()
    for k in range(volumes):
        volume = docs / f"volume{k:02d}"
        volume.mkdir(parents=True)
        for n in range(0, len(lines), 10):
            (volume / f"part{n:04d}.txt").write_text("\n\n".join(f"In volume {k}, {s}" for s in lines[n:n + 10]))
        docgen.make_pdf(volume)
        docgen.make_docx(volume)


@dataclass(frozen=True)
class Held:
    """What an index holds as a user sees it: its counts and, per query, its results as a set."""

    documents: int
    sentences: int
    results: tuple[frozenset[tuple[str, float]], ...]


def held(db: Path, runs: list[Ran]) -> Held | None:
    """The index's counts and search results through the CLI (the runs added to ``runs``); None if unreadable."""
    status = quire("status", "--db", str(db), "--json")
    runs.append(status)
    found = []
    for query in QUERIES:
        search = quire("search", query, "--db", str(db), "--all", "-k", "1000", "--json", "--no-explain")
        runs.append(search)
        if search.returncode != 0:
            return None
        found.append(frozenset((r["path"], round(r["score"], 3)) for r in json.loads(search.stdout)["results"]))
    if status.returncode != 0:
        return None
    counts = json.loads(status.stdout)
    return Held(counts["indexed"], counts["sentences"], tuple(found))


def _differs(got: Held | None, expected: Held) -> str | None:
    if got is None:
        return "the index could not be read after the resume"
    if (got.documents, got.sentences) != (expected.documents, expected.sentences):
        return f"{got.documents} documents, {got.sentences} sentences; uninterrupted: " \
               f"{expected.documents}, {expected.sentences}"
    moved = [q for q, a, b in zip(QUERIES, got.results, expected.results) if a != b]
    return f"results differ from an uninterrupted run's for {moved}" if moved else None


class Corpus:
    """The kill corpus, an uninterrupted index of it and what that holds; each case indexes into a folder of its own
    with a temporary folder of its own."""

    def __init__(self, root: Path, volumes: int) -> None:
        self.root, self.docs = root, root / "docs"
        kill_corpus(self.docs, volumes)
        started = time.monotonic()
        clean = quire(*self.index_args(root / "clean"))
        self.seconds = time.monotonic() - started
        if clean.returncode != 0:
            raise RuntimeError(f"the uninterrupted run failed: {clean.said()}")
        expected = held(root / "clean", [])
        if expected is None:
            raise RuntimeError("the uninterrupted index cannot be searched")
        self.expected = expected

    def index_args(self, db: Path) -> tuple[str, ...]:
        """`quire index` of the corpus into ``db``, in reader processes and small commits."""
        return "index", str(self.docs), "--db", str(db), "--workers", "1", "--batch", BATCH

    def case(self, name: str) -> tuple[Path, dict[str, str]]:
        """A new case's index folder and environment (TMPDIR a folder of its own, to see what readers leave)."""
        tmp = self.root / name / "tmp"
        tmp.mkdir(parents=True)
        return self.root / name / "index", environment(TMPDIR=str(tmp))

    def start(self, db: Path, env: dict[str, str]) -> subprocess.Popen:
        """`quire index` of the corpus, started and left running."""
        return subprocess.Popen([*QUIRE, *self.index_args(db)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace")


def finished(process: subprocess.Popen, args: tuple[str, ...], started: float) -> Ran:
    """A started command waited for (killed past the time limit) as a run."""
    try:
        out, err = process.communicate(timeout=120)
        return Ran(args, process.returncode, out, err, time.monotonic() - started)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return Ran(args, -9, out, err, time.monotonic() - started, timed_out=True)


def killed_run(corpus: Corpus, db: Path, env: dict[str, str], sig: signal.Signals, point: float) -> Ran:
    """`quire index` sent ``sig`` ``point`` of the way through an uninterrupted run's time."""
    started = time.monotonic()
    process = corpus.start(db, env)
    time.sleep(corpus.seconds * point)
    process.send_signal(sig)
    return finished(process, corpus.index_args(db), started)


def _interrupted_badly(ran: Ran, sig: signal.Signals) -> str | None:
    """How a run sent SIGINT ended other than with Ctrl-C's exit status 130 and a line (or done before it came)."""
    if sig != signal.SIGINT or ran.returncode in (0, 130) and (ran.returncode == 0 or ran.stderr.strip()):
        return None
    return f"SIGINT gave exit status {ran.returncode}: {ran.said()!r}"


def kill_case(corpus: Corpus, sig: signal.Signals, points: tuple[float, ...], into: list[CaseResult]) -> None:
    """Kill a run at each of ``points`` in turn (the second killing the first's resume), then resume it to the end."""
    name = f"{sig.name} at {' then '.join(f'{p:.0%}' for p in points)}"
    with timed(KILLS, name, into) as verdict:
        db, env = corpus.case(name.replace(" ", "_").replace("%", ""))
        runs = [killed_run(corpus, db, env, sig, point) for point in points]
        time.sleep(0.5)  # the readers' end (the kernel's parent-death signal)
        runs.append(quire(*corpus.index_args(db), env=env))
        got = held(db, runs)
        left = sorted(p.name for p in Path(env["TMPDIR"]).glob("quire-reader-*"))
        wrong = next((w for w in (_interrupted_badly(r, sig) for r in runs[:len(points)]) if w), None) or (
            f"left in the temporary folder: {left}" if left else None) or _differs(got, corpus.expected)
        early = "the run had ended before the signal; " if runs[0].returncode == 0 else ""
        verdict(judge(runs, wrong, f"{early}resumed to {corpus.expected.documents} documents, "
                                   f"{corpus.expected.sentences} sentences, same results", sent=sig))


def run_kills(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """Each kill point with each signal, and two runs killed one after the other."""
    corpus = Corpus(root / "kills", 4 if quick else VOLUMES)
    for sig in (signal.SIGKILL,) if quick else (signal.SIGKILL, signal.SIGINT):
        for point in QUICK_POINTS if quick else POINTS:
            kill_case(corpus, sig, (point,), into)
    if not quick:
        for sig in (signal.SIGKILL, signal.SIGINT):
            kill_case(corpus, sig, (0.5, 0.3), into)


def _plain_refusal(ran: Ran, *allowed: str) -> str | None:
    """Why a command that ran beside another is wrong: exit 0, or exit 1 with one of the ``allowed`` messages."""
    if ran.returncode == 0 or ran.returncode == 1 and any(a in ran.stderr for a in allowed):
        return None
    return f"`{' '.join(ran.args[:2])}` exited {ran.returncode}: {ran.said()!r}"


BUSY = "another quire process is writing"


def two_indexers(corpus: Corpus, into: list[CaseResult]) -> None:
    """Two `quire index` on one new index at once: each indexes or is told another is writing; the index is whole."""
    with timed(RACES, "two quire index at once", into) as verdict:
        db, env = corpus.case("two_indexers")
        started = time.monotonic()
        processes = [corpus.start(db, env) for _ in range(2)]
        runs = [finished(p, corpus.index_args(db), started) for p in processes]
        wrong = next((w for w in (_plain_refusal(r, BUSY) for r in runs) if w), None)
        if any(r.returncode == 1 for r in runs):  # the refused one, run again as its user would
            runs.append(quire(*corpus.index_args(db), env=env))
        wrong = wrong or _differs(held(db, runs), corpus.expected)
        verdict(judge(runs, wrong, "; ".join(r.said()[:60] for r in runs[:2])))


def beside_a_run(corpus: Corpus, name: str, command: tuple[str, ...], into: list[CaseResult]) -> None:
    """``command`` (on the index, as a string ``DB`` in it) again and again while `quire index` makes the index:
    each answers or says in a line why not; the run's index is whole."""
    with timed(RACES, name, into) as verdict:
        db, env = corpus.case(name.replace(" ", "_"))
        started = time.monotonic()
        process = corpus.start(db, env)
        runs = []
        while process.poll() is None:
            runs.append(quire(*(str(db) if a == "DB" else a for a in command), env=env))
        runs.insert(0, finished(process, corpus.index_args(db), started))
        wrong = next((w for w in (_plain_refusal(r, "no index at", BUSY) for r in runs) if w), None)
        wrong = wrong or _differs(held(db, runs), corpus.expected)
        answered = sum(r.returncode == 0 for r in runs[1:])
        verdict(judge(runs, wrong, f"{len(runs) - 1} beside the run, {answered} answered, the rest refused plainly"))


def remove_during_index(corpus: Corpus, into: list[CaseResult]) -> None:
    """`quire remove` of a volume while the index is being made: refused plainly (or done); once the run has ended
    the same remove leaves the index without that volume, undamaged."""
    with timed(RACES, "remove during index", into) as verdict:
        db, env = corpus.case("remove_during_index")
        volume = corpus.docs / "volume00"
        started = time.monotonic()
        process = corpus.start(db, env)
        time.sleep(corpus.seconds / 2)
        runs = [quire("remove", str(volume), "--db", str(db), env=env)]
        runs.insert(0, finished(process, corpus.index_args(db), started))
        runs.append(quire("remove", str(volume), "--db", str(db), env=env))
        runs.append(quire("status", "--check", "--db", str(db), "--json", env=env))
        left = json.loads(runs[-1].stdout)["indexed"] if runs[-1].returncode == 0 else None
        volume_files = sum(1 for _ in volume.iterdir())
        wrong = _plain_refusal(runs[1], BUSY) or (
            None if left == corpus.expected.documents - volume_files
            else f"{left} documents after removing {volume_files} of {corpus.expected.documents}")
        verdict(judge(runs, wrong, f"during the run: {runs[1].said()[:70]!r}; after it: {left} documents left"))


def run_races(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """Two indexers; searches, a status and a remove beside a run."""
    corpus = Corpus(root / "races", 4 if quick else VOLUMES // 2)
    two_indexers(corpus, into)
    if quick:
        return
    beside_a_run(corpus, "search while indexing", ("search", QUERIES[0], "--db", "DB", "--json"), into)
    beside_a_run(corpus, "lexical search while indexing", ("search", QUERIES[1], "--db", "DB", "--mode", "lexical"),
                 into)
    beside_a_run(corpus, "status while indexing", ("status", "--db", "DB"), into)
    remove_during_index(corpus, into)
