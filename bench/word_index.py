"""What the word index (engine/store/postings.py, engine/store/bm25.py) costs to write and saves per query, on an
index kept by ``bench/index_wiki.py --keep DIR``.

1. Writing: the passages of the kept index (all, or the first N) are indexed again into a scratch database in
   batches the size an indexing run writes (passages of ``IndexConfig.batch_sentences`` sentences), merges
   included; CPU seconds per passage, and that cost for every passage of the index. Then the queries' words are
   ranked there with the segments as written and again after merging them into one, as a run that wrote much ends
   (``postings.compact``, forced here since a sample may be below its threshold): its CPU seconds and what it saves.
2. Querying: the 200 queries of bench/index_wiki.py, their words ranked (top 200 passages) from the kept index's
   word index and by FTS5's bm25(), the one the word index replaced: p50 / p95 ms each, and the share of FTS5's top
   10 passages the word index returns.

Usage: python bench/word_index.py --keep DIR [--passages N]
Prints a table and writes bench/results/word_index.json; every number is recomputed on each run.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sqlite_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_wiki import QUERIES, sample_queries

from engine import Index
from engine.config import IndexConfig
from engine.store import postings
from engine.store.bm25 import WordIndex
from engine.text import terms

RESULTS = Path(__file__).resolve().parent / "results" / "word_index.json"
CANDIDATES = 200
TOP = 10


def _percentiles(seconds: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(seconds, 50)) * 1e3, 2), "p95": round(float(np.percentile(seconds, 95)) * 1e3, 2)}


def _ranking_times(conn: sqlite3.Connection, stems: list[list[str]]) -> dict[str, float]:
    words = WordIndex()
    words.scores(conn, 0, stems[0], CANDIDATES)  # warm: the segment list is read once
    times = []
    for query in stems:
        started = time.perf_counter()
        words.scores(conn, 0, query, CANDIDATES)
        times.append(time.perf_counter() - started)
    return _percentiles(times)


def write_cost(index_db: Path, passages: int | None, stems: list[list[str]]) -> dict:
    """CPU seconds to write the word index of the first ``passages`` passages (None: all) in indexing-sized
    batches; ranking ``stems`` there before and after compacting it."""
    source = sqlite3.connect(f"file:{index_db}?mode=ro", uri=True)
    total = source.execute("SELECT count(*) FROM passages").fetchone()[0]
    sentences = source.execute("SELECT count(*) FROM sentences").fetchone()[0]
    batch = max(1, round(IndexConfig().batch_sentences * total / max(sentences, 1)))  # passages per indexing batch
    rows = source.execute(
        "SELECT p.id, p.doc_id, (SELECT group_concat(text, ' ') FROM sentences s WHERE s.passage_id = p.id) "
        "FROM passages p ORDER BY p.id LIMIT ?", [-1 if passages is None else passages]
    ).fetchall()
    with tempfile.TemporaryDirectory() as scratch:
        db = sqlite_utils.Database(Path(scratch) / "words.db")
        db.enable_wal()
        postings.create(db)
        started = time.process_time()
        for at in range(0, len(rows), batch):
            chunk = rows[at : at + batch]
            with db.conn:
                postings.add(db.conn, [r[0] for r in chunk], [r[1] for r in chunk], [r[2] or "" for r in chunk])
        cpu = time.process_time() - started
        stored = db.execute("SELECT count(*), coalesce(sum(postings), 0) FROM lexical_segments").fetchone()
        as_written = _ranking_times(db.conn, stems)
        compact_started = time.process_time()
        with db.conn:
            postings.compact(db.conn, force=True)
        compact_cpu = time.process_time() - compact_started
        compacted = _ranking_times(db.conn, stems)
    per_passage = cpu / max(len(rows), 1)
    return {"passages": len(rows), "batch_passages": batch, "cpu_seconds": round(cpu, 2),
            "compact_cpu_seconds": round(compact_cpu, 2),
            "ranking_ms": {f"{stored[0]} segments as written": as_written, "compacted into one": compacted},
            "cpu_us_per_passage": round(per_passage * 1e6, 1), "segments": stored[0], "postings": stored[1],
            "index_passages": total, "index_cpu_seconds_estimate": round(per_passage * total, 1)}


def query_words(index_dir: Path) -> list[list[terms.Term]]:
    """The benchmark queries' words."""
    with Index(index_dir, create=False) as idx:
        return [terms.query_terms(q) for q in sample_queries(idx, QUERIES)]


def query_cost(index_dir: Path, words: list[list[terms.Term]]) -> dict:
    """Latency of ranking the queries' words by the word index and by FTS5, and their agreement."""
    with Index(index_dir, create=False) as idx:
        store = idx.store
        if not store.words.ready():
            raise SystemExit("the kept index has no word index yet: run bench/index_wiki.py --queries-only on it first")
        ours, fts5, times = [], [], {"word index": [], "fts5": []}
        store.words.bm25([t.stem for t in words[0]], CANDIDATES)  # warm: the segment list is read once
        for query in words:
            started = time.perf_counter()
            ours.append(store.words.bm25([t.stem for t in query], CANDIDATES))
            times["word index"].append(time.perf_counter() - started)
            started = time.perf_counter()
            fts5.append(store.words.fts_bm25(terms.fts_expression([], query), CANDIDATES, parts=1))
            times["fts5"].append(time.perf_counter() - started)
    agreement = [len({r[0] for r in a[:TOP]} & {r[0] for r in b[:TOP]}) / len(b[:TOP]) for a, b in zip(ours, fts5) if b]
    return {
        "queries": len(words),
        "latency_ms": {k: _percentiles(v) for k, v in times.items()},
        "top10_same_as_fts5": round(float(np.mean(agreement)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="folder bench/index_wiki.py --keep made")
    parser.add_argument("--passages", type=int, default=None, help="passages written again (default: all)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    index_dir = args.keep / "index"
    words = query_words(index_dir)
    result = {"write": write_cost(index_dir / "index.db", args.passages, [[t.stem for t in q] for q in words]),
              "query": query_cost(index_dir, words)}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    w, q = result["write"], result["query"]
    rows = [
        ("passages written (batch)", f"{w['passages']:,} ({w['batch_passages']:,} per batch)"),
        ("CPU per passage, us", f"{w['cpu_us_per_passage']:.0f}"),
        *((f"ranking there, {name}: p50 / p95 ms", f"{d['p50']:.1f} / {d['p95']:.1f}") for name, d in w["ranking_ms"].items()),
        ("compacting into one segment, CPU s", f"{w['compact_cpu_seconds']:.2f} (writing: {w['cpu_seconds']:.2f})"),
        ("CPU for the whole index, s (estimate)", f"{w['index_cpu_seconds_estimate']:.0f} ({w['index_passages']:,} passages)"),
        *((f"kept index, {name}: p50 / p95 ms", f"{d['p50']:.1f} / {d['p95']:.1f}") for name, d in q["latency_ms"].items()),
        ("top 10 passages shared with FTS5", f"{q['top10_same_as_fts5']:.3f}"),
    ]
    width = max(len(name) for name, _ in rows)
    print("\n".join(f"{name:<{width}}  {value}" for name, value in rows))
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
