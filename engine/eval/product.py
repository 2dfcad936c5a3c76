"""Retrieval through the real product: documents written as files, `quire index` and `quire search --queries` run as
subprocesses, their JSON read back. The benchmark thereby measures what a user gets (readers, sentence splitting,
storage, HNSW, FTS5, fusion, the relevance gate that cuts weak results), not a side path; the ungated ranking
(``--all``) is read as well, as a diagnostic.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from engine.errors import BenchmarkError
from engine.eval.datasets import Collection

log = logging.getLogger(__name__)

# The CLI, run with the interpreter that runs the benchmark (the same virtual environment and checkout).
QUIRE = (sys.executable, "-m", "app.cli")
# Result lines fetched per query: Recall@100 needs 100 documents.
DEPTH = 100
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class CliRun:
    """One finished `quire` subprocess: its stdout, wall time and peak resident memory (None where unknown)."""

    stdout: str
    seconds: float
    peak_rss_bytes: int | None


@dataclass(frozen=True)
class Files:
    """A collection written as one text file per document; ``ids`` maps each file's absolute path to its doc id."""

    folder: Path
    ids: dict[str, str]


@dataclass(frozen=True)
class Built:
    """An index built by `quire index`, with what the build cost."""

    db: Path
    method: str
    sentences: int
    documents: int
    index_seconds: float
    peak_rss_bytes: int | None
    bytes_on_disk: int


def run_cli(args: Sequence[str], *, timeout: float) -> CliRun:
    """Run ``quire ARGS``; raise :class:`BenchmarkError` with the end of stderr if it fails or runs past ``timeout``.

    The child is reaped with ``os.wait4`` so that its own peak RSS is known (``RUSAGE_CHILDREN`` would mix all
    children of the benchmark together).
    """
    command = [*QUIRE, *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        rss = None
        if hasattr(os, "wait4"):
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux
                    break
                if time.perf_counter() - started > timeout:
                    proc.kill()
                    proc.wait()
                    raise BenchmarkError(f"`quire {' '.join(args[:1])}` ran past {timeout:.0f} s and was stopped")
                time.sleep(_POLL_SECONDS)
        else:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired as e:
                proc.kill()
                raise BenchmarkError(f"`quire {' '.join(args[:1])}` ran past {timeout:.0f} s and was stopped") from e
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8"), err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        raise BenchmarkError(f"`quire {args[0]}` exited with status {proc.returncode}: {tail}")
    return CliRun(stdout, seconds, rss)


def write_files(collection: Collection, folder: Path) -> Files:
    """One ``.txt`` per document (title, blank line, text), named by position since ids may not be file names."""
    folder.mkdir(parents=True, exist_ok=True)
    ids: dict[str, str] = {}
    for n, (doc_id, (title, text)) in enumerate(collection.documents.items()):
        path = folder / f"doc{n:06d}.txt"
        path.write_text(f"{title}\n\n{text}\n" if title.strip() else f"{text}\n", encoding="utf-8")
        ids[str(path.resolve())] = doc_id
    return Files(folder.resolve(), ids)


def build(files: Files, db: Path, method: str, *, timeout: float) -> Built:
    """`quire index FOLDER --db DB --method METHOD --json` on a fresh index folder."""
    run = run_cli(["index", str(files.folder), "--db", str(db), "--method", method, "--json"], timeout=timeout)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    if report["documents"] < len(files.ids):
        log.warning("%s: %d of %d documents indexed; skipped: %s", db.name, report["documents"], len(files.ids),
                    report["skipped"][:3])
    size = sum(f.stat().st_size for f in db.rglob("*") if f.is_file())
    return Built(db, report["method"], report["sentences"], report["documents"], float(report["seconds"]),
                 run.peak_rss_bytes, size)


class Gate(str, Enum):
    """Which of a query's results a benchmark search reads."""

    SHOWN = "shown"  # what `quire search` shows a person: what shares nothing with the query left out, "nothing relevant" when none is left
    ALL = "all"  # `--all`: weak results kept and flagged, the whole ranking (a diagnostic of the ranking alone)


@dataclass(frozen=True)
class Answers:
    """What one `quire search --queries` run returned: ranked doc ids per query (a result's duplicates, having the
    same content, follow it), and the queries it answered with no result at all ("nothing relevant found", or an
    error line for a query the engine refused)."""

    rankings: dict[str, list[str]]
    nothing_relevant: frozenset[str]


def search(built: Built, files: Files, queries: dict[str, str], mode: str, *, timeout: float,
           gate: Gate = Gate.SHOWN, depth: int = DEPTH) -> Answers:
    """One `quire search --queries FILE -k DEPTH --no-explain --json` run over ``queries`` (explanations left out: a
    ranking metric reads none of them). ``gate`` SHOWN reads what a user is shown (the relevance gate's weak results
    cut); ALL adds ``--all`` for the ungated ranking."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False) as handle:
        for qid, text in queries.items():
            handle.write(json.dumps({"id": qid, "text": text}) + "\n")
        path = Path(handle.name)
    flags = ["--all"] if gate is Gate.ALL else []
    try:
        run = run_cli(["search", "--queries", str(path), "--db", str(built.db), "--mode", mode, "-k", str(depth),
                       *flags, "--no-explain", "--json"], timeout=timeout)
    finally:
        path.unlink()
    rankings = {str(item["id"]): _ranking(item, files)[:depth]
                for item in map(json.loads, filter(str.strip, run.stdout.splitlines()))}
    missing = set(queries) - set(rankings)
    if missing:
        raise BenchmarkError(f"`quire search --queries` returned no line for {len(missing)} queries")
    return Answers(rankings, frozenset(q for q, ranking in rankings.items() if not ranking))


def _ranking(item: dict, files: Files) -> list[str]:
    """The doc ids of one query's JSON line, each result followed by its duplicates."""
    if "error" in item:
        log.warning("query %s: %s", item["id"], item["error"])
    ranking: list[str] = []
    for result in item["results"]:
        for p in (result["path"], *result.get("duplicates", ())):
            doc = files.ids.get(str(Path(p).resolve()))
            if doc is None:
                raise BenchmarkError(f"search returned {p}, which is not a file of this collection")
            ranking.append(doc)
    return ranking


def latencies(built: Built, queries: Sequence[str], mode: str, *, k: int = 10) -> np.ndarray:
    """Seconds per interactive query (k results, weak ones cut) through the facade the CLI and app call,
    after one warm-up query that loads the model and the vector graph."""
    from engine import Index

    with Index(built.db, create=False) as index:
        index.search(queries[0], k=k, mode=mode)
        out = np.empty(len(queries))
        for i, query in enumerate(queries):
            started = time.perf_counter()
            index.search(query, k=k, mode=mode)
            out[i] = time.perf_counter() - started
    return out
