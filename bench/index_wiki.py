"""Index the Wikipedia corpus end to end and measure what issue 2 sets targets for.

Each article of the WikiExtractor files (``<doc id= url= title=>`` ... ``</doc>``) is written as a ``.txt`` file into
a scratch folder first, so the measurement covers the whole path a user's folder takes: walk, read, split, embed,
write SQLite + FTS5, code the vectors, calibrate; the indexing CPU time is split by stage (:class:`StageClock`).
Then 200 queries (sentences drawn from the index, cut to their first words) measure latency, and the vector search's
recall@10 is checked against exact search over the stored vectors.

Usage: python bench/index_wiki.py [--files N] [--corpus DIR] [--method static] [--facets] [--keep DIR]
       python bench/index_wiki.py --keep DIR --queries-only   (latency and recall again on an index kept before)
Prints a table and writes bench/results/index_wiki.json; every number is recomputed on each run (with
--queries-only, the indexing numbers are left out rather than copied).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import logging
import platform
import re
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import numpy as np

from engine import Index, IndexConfig, embed
from engine.embed.static import StaticEmbedder
from engine.embed.wordtok import WordTokenizer
from engine.heap import freeze_long_lived, keep_freed_memory
from engine.store import postings
from engine.store.database import Store
from engine.store.openings import Openings
from engine.store.scansettings import CODE_CANDIDATES, EXACT_BELOW
from engine.store.signcodes import BITS

log = logging.getLogger("bench.index_wiki")

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpora" / "enwiki"
RESULTS = Path(__file__).resolve().parent / "results" / "index_wiki.json"
QUERIES = 200
RECALL_K = 10
QUERY_WORDS = 8
_DOC = re.compile(r'<doc id="(\d+)"[^>]*title="([^"]*)">\n(.*?)</doc>', re.DOTALL)
TARGETS = {"sentences_per_second": 5000, "query_p95_ms": 30, "first_p95_ms": 40, "refined_p95_ms": 200,
           "recall_at_10": 0.95, "peak_rss_gb": 6}


def write_articles(corpus: Path, files: int | None, folder: Path) -> tuple[int, int]:
    """Write each article of the first ``files`` gz files as one text file; returns (articles, bytes)."""
    sources = sorted(corpus.rglob("wiki_*.gz"))[:files]
    if not sources:
        raise SystemExit(f"no wiki_*.gz files under {corpus}")
    articles = size = 0
    for source in sources:
        sub = folder / source.parent.name / source.stem
        sub.mkdir(parents=True)
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            for doc_id, _title, body in _DOC.findall(handle.read()):
                data = body.strip().encode("utf-8")
                (sub / f"{doc_id}.txt").write_bytes(data)
                articles += 1
                size += len(data)
    return articles, size


def peak_rss_gb() -> float:
    """Peak resident memory of this process and its (reader) children, in GB (Linux reports kB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1e6


def cpu_seconds() -> float:
    """CPU time of this process and its finished (reader) children: on a shared machine, wall time measures the
    neighbours too, CPU time only the work."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + child_cpu_seconds()


def child_cpu_seconds() -> float:
    """CPU time of the finished (reader) child processes (the engine waits for them to exit)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


class StageClock:
    """CPU seconds of indexing's stages while the clock is used as a context manager (around ``Index.add`` on the
    calling thread), each counted on the thread that runs it (``time.thread_time``).

    The indexer's own thread is timed whole and its stages by wrapping the engine functions that do them (nested
    rows are parts of the row above). The vectors' codes are made on a thread of their own (VectorIndex.add_later):
    what is left of the process's CPU time once the indexer's thread is taken out (with the reader pool's two I/O
    threads, a small part). Reading, splitting, tokenising and the facets run in the reader processes
    (engine.indexing.prepare), which the caller counts as child CPU time; ``--facets`` (stored, off by default) tells
    their part.
    """

    INDEXER = "indexer thread"
    STAGES = (
        ("  database writes", Store, "write_documents"),
        ("    of which the word index", postings, "add"),
        # the readers tokenise the documents they read; this is what is left to the indexer
        ("  tokenising (static)", WordTokenizer, "encode"),
        ("  embedding (static)", StaticEmbedder, "embed_ids"),
        ("  storing facets", Store, "add_facets"),
    )

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._originals: list[tuple[object, str, object]] = []

    def __enter__(self) -> Self:
        self._started = time.thread_time()
        for label, owner, name in self.STAGES:
            original = owner.__dict__[name]
            self._originals.append((owner, name, original))
            setattr(owner, name, self._timed(label, original))
        return self

    def __exit__(self, *exc) -> None:
        self.seconds[self.INDEXER] = time.thread_time() - self._started
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)

    def by_stage(self, cpu: float, readers: float) -> dict[str, float]:
        """Every stage's CPU seconds, given the run's process + children CPU time and the readers' part of it."""
        indexer = self.seconds[self.INDEXER]
        stages = {"reading, splitting, tokenising, facets (reader processes)": readers,
                  "vector codes and saves (their thread; the rest)": cpu - readers - indexer, self.INDEXER: indexer}
        for label, _, _ in self.STAGES:
            stages[label] = self.seconds.get(label, 0.0)
        return stages

    def _timed(self, label: str, function):
        def timed(*args, **kwargs):
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.thread_time() - started
        return timed


def sample_queries(idx: Index, n: int) -> list[str]:
    """Sentences of the index cut to their first words: realistic length, with a known neighbourhood."""
    ids = idx.store.sentences.random_ids(4 * n, seed=7)
    rows = idx.store.sentences.by_ids(ids.tolist())
    texts = [" ".join(rows[int(i)].text.split()[:QUERY_WORDS]) for i in ids if int(i) in rows]
    return [t for t in texts if len(t.split()) >= 4][:n]


def latency(idx: Index, queries: list[str], mode: str, explain: bool = True, second_look: bool = True
            ) -> dict[str, float]:
    # a process that keeps searching, tuned as the app and `quire search --queries` tune theirs (engine/heap.py)
    keep_freed_memory()
    # warm: the vectors and models are loaded once, as in the app
    idx.search(queries[0], mode=mode, explain=explain, second_look=second_look)
    times, cpu = [], []
    for q in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        idx.search(q, k=10, mode=mode, explain=explain, second_look=second_look)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        freeze_long_lived()
    return {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95)),
            "mean_ms": float(np.mean(times)), "cpu_p50_ms": float(np.percentile(cpu, 50)),
            "cpu_p95_ms": float(np.percentile(cpu, 95))}


@contextlib.contextmanager
def openings_read_at_query_time() -> Iterator[None]:
    """The second look as it was before the indexer stored openings: every query reads its documents' openings."""
    stored = Openings.vectors
    Openings.vectors = lambda self, doc_ids: {}  # type: ignore[method-assign]
    try:
        yield
    finally:
        Openings.vectors = stored  # type: ignore[method-assign]


def exact_top_k(idx: Index, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, cosines) of each query's exact top ``k`` over the stored vectors, read in batches so that a full-size
    index is never in memory twice (the vectors are already in memory)."""
    best_ids = np.zeros((len(query_vectors), 0), np.int64)
    best_sims = np.zeros((len(query_vectors), 0), np.float32)
    for ids, matrix in idx.store.vectors.batches(idx.method):
        sims = np.concatenate([best_sims, query_vectors @ matrix.T], axis=1)
        pool = np.concatenate([best_ids, np.broadcast_to(ids, (len(query_vectors), ids.size))], axis=1)
        top = np.argpartition(-sims, min(k, sims.shape[1]) - 1, axis=1)[:, :k]
        best_ids, best_sims = np.take_along_axis(pool, top, 1), np.take_along_axis(sims, top, 1)
    return best_ids, best_sims


def recall_at_k(idx: Index, queries: list[str], k: int) -> tuple[float, float]:
    """Share of the exact top-k (brute force over the stored vectors) that the code scan returns: by sentence id,
    and counting a returned sentence as right when it is as similar to the query as the exact k-th one.

    The second is how ann-benchmarks counts (with its 1e-3 slack, here also covering float16 storage): Wikipedia
    repeats sentences, and when more copies tie at the k-th place than fit, any of them is a right answer that the
    count by id calls a miss.
    """
    embedder = embed.load(idx.method)
    vectors = idx.vector_index(embedder)
    query_vectors = embedder.encode(queries)
    exact_ids, exact_sims = exact_top_k(idx, query_vectors, k)
    by_id = by_similarity = 0
    for vector, ids, sims in zip(query_vectors, exact_ids, exact_sims):
        found, _ = vectors.search(vector, k)
        by_id += len(set(ids.tolist()) & set(found.tolist()))
        _, stored = idx.store.vectors.read(idx.method, found.tolist())
        by_similarity += int(np.sum(stored @ vector >= sims.min() - 1e-3)) if stored.size else 0
    return by_id / (k * len(queries)), by_similarity / (k * len(queries))


def lexical_agreement(idx: Index, queries: list[str], k: int) -> float:
    """Share of FTS5's BM25 top-k documents that lexical search (the word index) returns. The two differ only where
    the word index's tokenizer (engine.text.terms) splits or stems a word otherwise than FTS5's."""
    def top(query: str) -> set[str]:
        return {r.path for r in idx.search(query, k=k, mode="lexical", explain=False).results}

    ours = [top(q) for q in queries]
    idx.store.words.ready = lambda: False  # the searcher falls back to FTS5 alone
    try:
        fts5 = [top(q) for q in queries]
    finally:
        del idx.store.words.ready
    return float(np.mean([len(p & e) / len(e) for p, e in zip(ours, fts5) if e]))


def index_and_measure(args: argparse.Namespace, scratch: Path) -> dict:
    """Write the articles, index them, then measure the index."""
    docs, index_dir = scratch / "articles", scratch / "index"
    for stale in (docs, index_dir):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    articles, text_bytes = write_articles(args.corpus, args.files, docs)
    log.info("wrote %d articles (%.1f MB) in %.1f s", articles, text_bytes / 1e6, time.perf_counter() - started)
    config = IndexConfig(workers=args.workers, facets=args.facets)
    phases: dict[str, float] = {}  # when each phase was first reported
    with Index(index_dir, method=args.method, config=config) as idx:
        started, cpu_started, readers_started = time.perf_counter(), cpu_seconds(), child_cpu_seconds()
        with StageClock() as clock:
            report = idx.add([docs], method=args.method,
                             progress=lambda p: phases.setdefault(p.phase, time.perf_counter()))
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
        stages = clock.by_stage(cpu, child_cpu_seconds() - readers_started)
        sentences = idx.status().sentences
    result = {
        "files": args.files, "articles": articles, "text_mb": round(text_bytes / 1e6, 1), "method": args.method,
        "wall_seconds": round(wall, 2), "sentences_per_second": round(sentences / wall, 1),
        "cpu_seconds": round(cpu, 2), "sentences_per_cpu_second": round(sentences / cpu, 1),
        "mb_per_second": round(text_bytes / 1e6 / wall, 2), "peak_rss_gb": round(peak_rss_gb(), 3),
        "facets": args.facets, "skipped": len(report.issues),
        # the last phase: the documents' openings read for the second look (engine.indexing.openings)
        "openings_wall_seconds": round(phases["done"] - phases.get("openings", phases["done"]), 1),
        "cpu_seconds_by_stage": {k: round(v, 1) for k, v in stages.items() if v > 0},
    }
    return {**result, **measure_queries(index_dir)}


def measure_queries(index_dir: Path) -> dict:
    """Latency of each mode and the vector search's recall on an index; its size and counts."""
    with Index(index_dir, create=False) as idx:
        built = None
        if not idx.store.words.ready():  # an index made before the word index: the next run builds it
            started = time.perf_counter()
            idx.add()
            built = round(time.perf_counter() - started, 1)
        status = idx.status()
        queries = sample_queries(idx, QUERIES)
        lat = {mode: latency(idx, queries, mode) for mode in ("hybrid", "semantic", "lexical")}
        # the ranking alone, as the window asks for it: its first results (no second look) at once, then the refined
        # ones (the second look), which `quire search --queries --no-explain` returns
        lat["hybrid_first"] = latency(idx, queries, "hybrid", explain=False, second_look=False)
        lat["hybrid_refined"] = latency(idx, queries, "hybrid", explain=False)
        with openings_read_at_query_time():  # beside it, the diagnostic: no stored opening
            lat["hybrid_refined_openings_read_now"] = latency(idx, queries, "hybrid", explain=False)
        recall, recall_ties = recall_at_k(idx, queries, RECALL_K)
        agreement = lexical_agreement(idx, queries, RECALL_K)
        method = idx.method
    return {
        "method": method, "documents": status.indexed, "sentences": status.sentences,
        "index_mb": round(folder_bytes(index_dir) / 1e6, 1), "queries": len(queries),
        "latency": {m: {k: round(v, 2) for k, v in d.items()} for m, d in lat.items()},
        "recall_at_10": round(recall, 4), "recall_at_10_ties": round(recall_ties, 4),
        "lexical_top10_same_as_fts5": round(agreement, 4),
        **({"word_index_build_seconds": built} if built is not None else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=None, help="first N gz files (default: all)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--method", default="static")
    parser.add_argument("--workers", type=int, default=None, help="reader processes (default: the engine's)")
    parser.add_argument("--facets", action="store_true", help="store facets while indexing, as IndexConfig(facets=True) "
                        "does (measures their cost; off by default, docs/decisions/0014)")
    parser.add_argument("--keep", type=Path, default=None, help="put the articles and index here and keep them")
    parser.add_argument("--queries-only", action="store_true",
                        help="measure queries and recall on the index kept in --keep, without indexing again")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.queries_only and args.keep is None:
        parser.error("--queries-only needs --keep DIR, the folder of an index kept by an earlier run")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="quire-wiki-"))
    try:
        result = measure_queries(scratch / "index") if args.queries_only else index_and_measure(args, scratch)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    result.update({
        "vectors": {"code_bits": BITS, "codes_from": EXACT_BELOW, "code_candidates": CODE_CANDIDATES},
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "targets": TARGETS,
    })
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    indexing = [
        ("articles", f"{result['articles']:,}"),
        ("wall time (s)", f"{result['wall_seconds']:.1f}"),
        ("sentences/s (target >= 5000)", f"{result['sentences_per_second']:,.0f}"),
        ("CPU s / sentences per CPU s", f"{result['cpu_seconds']:.1f} / {result['sentences_per_cpu_second']:,.0f}"),
        ("peak RSS GB (target < 6)", f"{result['peak_rss_gb']:.2f}"),
        ("of the wall time: openings read (s)", f"{result['openings_wall_seconds']:.1f}"),
        *((f"  CPU s: {stage}", f"{seconds:.1f} ({100 * seconds / result['cpu_seconds']:.0f}%)")
          for stage, seconds in result["cpu_seconds_by_stage"].items()),
    ] if "wall_seconds" in result else [("indexing", "not measured (--queries-only)")]
    rows = [
        *indexing,
        ("documents / sentences", f"{result['documents']:,} / {result['sentences']:,}"),
        ("database + index MB", f"{result['index_mb']:.1f}"),
        *((f"{m} query p50 / p95 ms (CPU)", f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f} ({d['cpu_p50_ms']:.1f} / "
           f"{d['cpu_p95_ms']:.1f})") for m, d in result["latency"].items()),
        ("vector search recall@10 by id / with ties (target >= 0.95)",
         f"{result['recall_at_10']:.3f} / {result['recall_at_10_ties']:.3f}"),
        ("lexical top 10: share of FTS5 BM25's", f"{result['lexical_top10_same_as_fts5']:.3f}"),
        *([("word index built for an older index (s)", f"{result['word_index_build_seconds']:.1f}")]
          if "word_index_build_seconds" in result else []),
    ]
    width = max(len(name) for name, _ in rows)
    print("\n".join(f"{name:<{width}}  {value}" for name, value in rows))
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
