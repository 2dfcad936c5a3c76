"""Query latency of this checkout against an earlier commit, side by side on one kept index.

Whole-benchmark runs one after the other (``index_wiki.py --queries-only``) move by several milliseconds with the
machine's load, more than most changes to a query's path gain or lose. Here both engines stay open, each in a process
of its own importing the engine from its own source tree (the commit from a temporary git worktree), and each query
is asked of both in turn, the order alternating by query and round. Each query's median over the rounds is compared,
so the load at any moment falls on both. From the second round on, a query finds what its first asking left in each
engine's caches (compiled patterns, the file's mapped pages), as a person's new queries do not: ``--rounds 1``
compares first askings alone.

An engine whose index format differs (one from before a schema change) opens an index of its own: ``--base-index
BASE_DIR``, kept by that commit's own ``index_wiki.py --keep BASE_DIR`` from the same corpus, so that both hold the
same sentences and the queries drawn from this checkout's index are real sentences of both. Whatever that commit
imports must be importable here (PYTHONPATH).

Usage: python bench/tools/query_ab.py --keep DIR --base COMMIT [--base-index BASE_DIR] [--rounds 6] [--mode hybrid]
[--explain]

``DIR`` holds an index kept by ``index_wiki.py --keep DIR``; the queries are that benchmark's. Prints a table and
writes bench/results/query_ab.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.index_wiki import sample_queries  # noqa: E402
from engine import Index  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "query_ab.json"
QUERIES = 200

# Run in each engine's process: the engine imported from the tree given, then one query per line of stdin, answered
# with its wall and CPU milliseconds. The process is tuned as a searching entry point tunes its own (engine/heap.py;
# an engine from before issue 59 tuned itself on every search as well, which freezes after 5 searches instead of 10,
# both within the warm-up).
_WORKER = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import engine
assert engine.__file__.startswith(sys.argv[1]), engine.__file__
try:
    from engine.heap import freeze_long_lived, keep_freed_memory
except ImportError:  # an engine from before engine/heap.py
    freeze_long_lived = keep_freed_memory = lambda: None
keep_freed_memory()
idx = engine.Index(Path(sys.argv[2]), create=False)
mode, explain = sys.argv[3], sys.argv[4] == "1"
print("ready", flush=True)
for line in sys.stdin:
    query = json.loads(line)
    wall, cpu = time.perf_counter(), time.process_time()
    idx.search(query, k=10, mode=mode, explain=explain)
    print((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, flush=True)
    freeze_long_lived()
"""


class Engine:
    """One engine's process."""

    def __init__(self, tree: Path, index: Path, mode: str, explain: bool, workdir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tree), str(index), mode, "1" if explain else "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=workdir)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        if self.stdout.readline().strip() != "ready":
            raise SystemExit(f"the engine in {tree} did not open {index}")

    def ask(self, query: str) -> tuple[float, float]:
        self.stdin.write(json.dumps(query) + "\n")
        self.stdin.flush()
        wall, cpu = self.stdout.readline().split()
        return float(wall), float(cpu)

    def close(self) -> None:
        self.stdin.close()
        self.process.wait()


def measure(engines: list[Engine], queries: list[str], rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """(wall, CPU) ms of every query on every engine: arrays (engines, queries, rounds)."""
    for engine in engines:
        for query in queries[:10]:  # warm, and past the tenth search's collection (engine/heap.py)
            engine.ask(query)
    wall = np.zeros((len(engines), len(queries), rounds))
    cpu = np.zeros_like(wall)
    for r in range(rounds):
        for i, query in enumerate(queries):
            order = range(len(engines)) if (i + r) % 2 == 0 else reversed(range(len(engines)))
            for j in order:
                wall[j, i, r], cpu[j, i, r] = engines[j].ask(query)
    return wall, cpu


def summary(wall: np.ndarray, cpu: np.ndarray) -> dict[str, float]:
    """One engine's figures: percentiles of each query's median over the rounds, and of every single run."""
    median, cpu_median = np.median(wall, axis=1), np.median(cpu, axis=1)
    return {"p50_ms": float(np.percentile(median, 50)), "p95_ms": float(np.percentile(median, 95)),
            "every_run_p50_ms": float(np.percentile(wall, 50)), "every_run_p95_ms": float(np.percentile(wall, 95)),
            "cpu_p50_ms": float(np.percentile(cpu_median, 50))}


def compare(wall: np.ndarray, cpu: np.ndarray) -> dict[str, float]:
    """The second engine against the first, query by query (negative: the second is faster)."""
    difference = np.median(wall[1], axis=1) - np.median(wall[0], axis=1)
    cpu_difference = np.median(cpu[1], axis=1) - np.median(cpu[0], axis=1)
    return {"median_ms": float(np.median(difference)), "mean_ms": float(difference.mean()),
            "faster_queries": int((difference < 0).sum()), "cpu_median_ms": float(np.median(cpu_difference)),
            "cpu_less_queries": int((cpu_difference < 0).sum())}


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True, help="the folder index_wiki.py --keep DIR kept")
    parser.add_argument("--base", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--base-index", type=Path, default=None,
                        help="the folder the base commit's own index_wiki.py --keep kept (default: --keep's)")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "lexical"])
    parser.add_argument("--explain", action="store_true", help="with explanations (as the app shows results)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    index = args.keep / "index"
    base_index = (args.base_index or args.keep) / "index"
    with Index(index, create=False) as idx:
        queries = sample_queries(idx, QUERIES)
    base = _git("rev-parse", "--short", args.base)
    head = _git("rev-parse", "--short", "HEAD") + ("+changes" if _git("status", "--porcelain", "--", "engine") else "")
    with tempfile.TemporaryDirectory(prefix="quire-ab-") as scratch:
        tree = Path(scratch) / "base"
        _git("worktree", "add", "--detach", str(tree), base)
        try:
            engines = [Engine(t, i, args.mode, args.explain, Path(scratch))
                       for t, i in ((tree, base_index), (ROOT, index))]
            started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            wall, cpu = measure(engines, queries, args.rounds)
            for engine in engines:
                engine.close()
        finally:
            _git("worktree", "remove", "--force", str(tree))
    result = {"base": base, "head": head, "own_indexes": args.base_index is not None, "started": started,
              "mode": args.mode, "explain": args.explain, "queries": len(queries), "rounds": args.rounds,
              "machine": platform.processor() or platform.machine(),
              base: summary(wall[0], cpu[0]), head: summary(wall[1], cpu[1]), "difference": compare(wall, cpu)}
    print(f"{args.mode} queries, {'with' if args.explain else 'without'} explanations, {len(queries)} x "
          f"{args.rounds} rounds, ms")
    print(f"{'':16} {'p50':>7} {'p95':>7} {'every run p50 / p95':>20} {'CPU p50':>8}")
    for name in (base, head):
        s = result[name]
        print(f"{name:16} {s['p50_ms']:7.1f} {s['p95_ms']:7.1f} {s['every_run_p50_ms']:11.1f} / "
              f"{s['every_run_p95_ms']:5.1f} {s['cpu_p50_ms']:8.1f}")
    d = result["difference"]
    print(f"{head} - {base}, per query: median {d['median_ms']:+.2f} ms (CPU {d['cpu_median_ms']:+.2f}), "
          f"faster on {d['faster_queries']} of {len(queries)}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
