"""Query latency of a variant of a few engine functions against the checkout's own, in one process, query by query.

``query_ab.py`` runs two engines in two processes, and two processes of the same code differ: an A/A run (this
checkout against its own commit) put one 1.1 ms per query ahead of the other, faster on 124 of 200 queries, which is
more than most single changes gain. Here one engine answers every query twice, once with the checkout's functions and
once with the variant's put in their place, the order alternating by query and round, so both share the process, its
memory and the machine's load. A variant is a Python file holding the other version of each function (old code kept
from ``git show``, or a trial); it is run with the target module's globals, so it may use that module's names.

Usage: python bench/tools/variant_ab.py --keep DIR --swap MODULE:ATTR=FILE:NAME [--swap ...] [--rounds 3] [--mode hybrid]
``ATTR`` and ``NAME`` may be dotted (``WordIndex.scores``). ``DIR`` holds an index kept by ``index_wiki.py --keep
DIR``; the queries are that benchmark's. Prints the two sides' p50 / p95 and the per-query difference; writes
bench/results/variant_ab.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.index_wiki import sample_queries  # noqa: E402
from engine import Index  # noqa: E402
from engine.heap import freeze_long_lived, keep_freed_memory  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "variant_ab.json"
QUERIES = 200


@dataclass(frozen=True)
class Swap:
    """One attribute of the engine and the variant's value for it."""

    spec: str
    owner: object
    attribute: str
    checkout: object
    variant: object


def _dotted(root: object, path: str) -> object:
    for part in path.split("."):
        root = root[part] if isinstance(root, dict) else getattr(root, part)
    return root


def parse_swap(spec: str) -> Swap:
    """``MODULE:ATTR=FILE:NAME``: the variant file run with the module's globals, its ``NAME`` put at ``ATTR``."""
    target, source = spec.split("=", 1)
    module_name, attribute = target.split(":", 1)
    file, name = source.rsplit(":", 1)
    module = importlib.import_module(module_name)
    owner_path, _, leaf = attribute.rpartition(".")
    owner = _dotted(module, owner_path) if owner_path else module
    scope = dict(vars(module))
    exec(compile(Path(file).read_text(encoding="utf-8"), file, "exec"), scope)  # noqa: S102 - a developer's own file
    return Swap(spec, owner, leaf, getattr(owner, leaf), _dotted(scope, name))


def use(swaps: list[Swap], variant: bool) -> None:
    for swap in swaps:
        setattr(swap.owner, swap.attribute, swap.variant if variant else swap.checkout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True, help="folder kept by index_wiki.py --keep")
    parser.add_argument("--swap", action="append", required=True, help="MODULE:ATTR=FILE:NAME (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    swaps = [parse_swap(spec) for spec in args.swap]
    keep_freed_memory()  # a process that keeps searching, tuned as the app tunes its own (engine/heap.py)
    idx = Index(args.keep / "index", create=False)
    queries = sample_queries(idx, QUERIES)
    times: dict[bool, list[list[float]]] = {False: [[] for _ in queries], True: [[] for _ in queries]}
    for query in queries[:10]:  # warm both: the graph's pages, compiled patterns, the word index's snapshot
        for variant in (False, True):
            use(swaps, variant)
            idx.search(query, k=10, mode=args.mode, explain=args.explain)
            freeze_long_lived()
    for round_ in range(args.rounds):
        for i, query in enumerate(queries):
            for variant in ((False, True) if (i + round_) % 2 else (True, False)):
                use(swaps, variant)
                started = time.perf_counter()
                idx.search(query, k=10, mode=args.mode, explain=args.explain)
                times[variant][i].append((time.perf_counter() - started) * 1000)
    use(swaps, False)
    checkout, variant = (np.array([np.median(t) for t in times[v]]) for v in (False, True))
    difference = variant - checkout
    rows = {"checkout": checkout, "variant": variant}
    print(f"{args.mode} queries, {'with' if args.explain else 'without'} explanations, {len(queries)} x {args.rounds}"
          " rounds in one process, ms")
    print(f"{'':12s}{'p50':>8s}{'p95':>8s}{'mean':>8s}")
    for label, values in rows.items():
        print(f"{label:12s}{np.percentile(values, 50):8.2f}{np.percentile(values, 95):8.2f}{values.mean():8.2f}")
    print(f"variant - checkout, per query: median {np.median(difference):+.2f} ms, mean {difference.mean():+.2f}; "
          f"the variant faster on {int((difference < 0).sum())} of {len(queries)}")
    result = {
        "swaps": args.swap, "mode": args.mode, "explain": args.explain, "rounds": args.rounds,
        "queries": len(queries), "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        **{label: {"p50_ms": round(float(np.percentile(v, 50)), 2), "p95_ms": round(float(np.percentile(v, 95)), 2),
                   "mean_ms": round(float(v.mean()), 2)} for label, v in rows.items()},
        "difference_median_ms": round(float(np.median(difference)), 2),
        "variant_faster": int((difference < 0).sum()),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
