"""A sharded collection on a local Ray cluster: indexing throughput, query latency and per-shard memory for 1, 2 and
4 shards of the same Wikipedia articles (issue 37).

Each article of the first ``--files`` WikiExtractor files is written as a text file (bench/index_wiki.py), the
folder is indexed into a collection of each shard count on a local cluster of ``--cpus`` CPUs (writer actors, read
tasks: engine.cluster.remote), and ``--queries`` queries (the first words of sentences drawn from the articles) are
asked in hybrid mode through the cluster's reader actors and, for comparison, through threads in this process.
A baseline comes first: one shard indexed without a cluster (this process and its reader processes). Per-shard memory is the peak RSS of a fresh process that opens one shard and answers one query of each mode (its
graph and word index loaded), and its size on disk.

Usage: python bench/shards.py [--files 10] [--shards 1,2,4] [--cpus N] [--queries 100] [--corpus DIR]
Prints a table and writes bench/results/shards.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ray  # noqa: E402

from bench.index_wiki import DEFAULT_CORPUS, write_articles  # noqa: E402
from engine import Index, IndexConfig, Mode  # noqa: E402
from engine.cluster import remote  # noqa: E402
from engine.cluster.collection import Collection  # noqa: E402
from engine.cluster.indexing import index_collection  # noqa: E402
from engine.heap import freeze_long_lived, keep_freed_memory  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "shards.json"
QUERY_WORDS = 8


@ray.remote(max_calls=1)  # a fresh worker process per call: its peak RSS is this shard's alone
def shard_memory(folder: str, query: str) -> tuple[float, float]:
    """Peak RSS in MB of a Ray worker before it opens the shard (Ray, numpy and quire imported), and after it opened
    it and answered ``query`` in every mode (the model, the graph and the word index loaded)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    with Index(folder, create=False) as index:
        for mode in Mode:
            index.search(query, mode=mode, explain=False)
    return before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def draw_queries(docs: Path, count: int, seed: int = 0) -> list[str]:
    """The first QUERY_WORDS words of ``count`` sentences drawn from the articles."""
    rng = random.Random(seed)
    files = sorted(docs.rglob("*.txt"))
    queries: list[str] = []
    while len(queries) < count:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", rng.choice(files).read_text(encoding="utf-8"))
                     if len(s.split()) >= QUERY_WORDS]
        if sentences:
            queries.append(" ".join(rng.choice(sentences).split()[:QUERY_WORDS]))
    return queries


def latency(collection: Collection, queries: list[str]) -> dict[str, float]:
    # a process that keeps searching, tuned as the app tunes its own (engine/heap.py); Ray readers tune theirs
    keep_freed_memory()
    collection.search(queries[0], explain=False)  # warm: graphs loaded
    times = []
    for query in queries:
        started = time.perf_counter()
        collection.search(query, k=10, mode=Mode.HYBRID, explain=False)
        times.append(1000 * (time.perf_counter() - started))
        freeze_long_lived()
    return {"p50_ms": round(float(np.percentile(times, 50)), 1), "p95_ms": round(float(np.percentile(times, 95)), 1)}


def run_one(docs: Path, folder: Path, shards: int, queries: list[str], cluster: str | None) -> dict:
    """Index into ``shards`` shards on the local cluster (``cluster`` None: in this process, with its reader
    processes, as `quire index` without --cluster) and measure."""
    started = time.perf_counter()
    report = index_collection(folder, [docs], shards, config=IndexConfig(), cluster=cluster)
    seconds = time.perf_counter() - started
    on_cluster = None
    if cluster is not None:
        with Collection(folder, cluster=cluster) as collection:
            on_cluster = latency(collection, queries)
    with Collection(folder) as collection:
        on_threads = latency(collection, queries)
    shard_folders = [folder / f"shard-{i:03d}" for i in range(shards)]
    memory = ray.get([shard_memory.remote(str(f), queries[0]) for f in shard_folders])
    disk = [sum(p.stat().st_size for p in f.iterdir() if p.is_file()) / 1e6 for f in shard_folders]
    return {
        "shards": shards, "indexed_on": "local cluster" if cluster else "this process", "documents": report.documents, "sentences": report.sentences,
        "index_seconds": round(seconds, 1), "sentences_per_second": round(report.sentences / seconds),
        "query_cluster": on_cluster, "query_threads": on_threads,
        "worker_rss_before_mb": [round(m[0]) for m in memory], "shard_peak_rss_mb": [round(m[1]) for m in memory],
        "shard_disk_mb": [round(d, 1) for d in disk],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10, help="WikiExtractor files to index (about 7.7k sentences each)")
    parser.add_argument("--shards", default="1,2,4", help="shard counts, comma-separated")
    parser.add_argument("--cpus", type=int, default=os.cpu_count(), help="CPUs of the local cluster")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    counts = [int(n) for n in args.shards.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="quire-shards-") as scratch:
        docs = Path(scratch) / "docs"
        articles, size = write_articles(args.corpus, args.files, docs)
        queries = draw_queries(docs, args.queries)
        remote.connect("local", cpus=args.cpus)
        try:
            runs = [(1, None)] + [(n, "local") for n in counts]  # first the baseline: no cluster
            for shards, cluster in runs:
                rows.append(run_one(docs, Path(scratch) / f"shards-{shards}-{cluster}", shards, queries, cluster))
                print(json.dumps(rows[-1]), flush=True)
        finally:
            ray.shutdown()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    result = {
        "corpus": f"enwiki, first {args.files} files: {articles} articles, {size / 1e6:.1f} MB of text",
        "cluster_cpus": args.cpus, "queries": len(queries), "mode": "hybrid, k=10, explain off",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "ray": ray.__version__,
                    "load_average_at_end": [round(x, 1) for x in os.getloadavg()]},
        "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": rows,
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"\n{'shards':>6} {'on':>13} {'sent/s':>8} {'index s':>8} {'p50 ray':>8} {'p95 ray':>8} {'p50 thr':>8} {'p95 thr':>8}"
          f"  per-shard worker RSS MB before -> peak / disk MB")
    for r in rows:
        ray_ms = r["query_cluster"] or {"p50_ms": "-", "p95_ms": "-"}
        print(f"{r['shards']:>6} {r['indexed_on']:>13} {r['sentences_per_second']:>8} {r['index_seconds']:>8} "
              f"{ray_ms['p50_ms']:>8} {ray_ms['p95_ms']:>8} "
              f"{r['query_threads']['p50_ms']:>8} {r['query_threads']['p95_ms']:>8}  "
              f"{r['worker_rss_before_mb']} -> {r['shard_peak_rss_mb']} / {r['shard_disk_mb']}")
    print(f"written: {RESULTS.relative_to(Path(__file__).resolve().parents[1])}")


if __name__ == "__main__":
    main()
