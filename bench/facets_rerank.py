"""Does facet re-ranking help retrieval? nDCG@10 and Recall@100 with ``engine/facets/rerank.py`` off and on.

Each retrieval collection is indexed with `quire index` (``engine/eval/product.py``); every judged query is then
searched in-process through ``Index.search`` (hybrid, k = 100, weak results kept, no explanations: the ranking the
product benchmark reads), once without re-ranking and once per re-ranker setting: the facet ranking's vote
(``rerank.WEIGHT``) and, at the shipped vote, short queries without borrowed words (``extract.SHORT_QUERY_WORDS =
0``). The settings are module values the engine reads at each call.

    nice -n 10 python bench/facets_rerank.py [--collections cranfield,npl] [--work DIR] [--quick]

Prints a table and writes bench/results/facet_rerank.json. ``rerank.ENABLED`` may be True only if the shipped
setting improves the mean nDCG@10 here.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from engine import Index
from engine.eval import harness, product
from engine.eval.datasets import Collection
from engine.facets import extract, rerank

log = logging.getLogger("facets_rerank")

WEIGHTS = (0.25, 0.5, 1.0)


@contextmanager
def setting(weight: float, borrow: bool) -> Iterator[None]:
    """The re-ranker's vote and query borrowing set for the duration, restored after."""
    saved = rerank.WEIGHT, extract.SHORT_QUERY_WORDS
    rerank.WEIGHT, extract.SHORT_QUERY_WORDS = weight, saved[1] if borrow else 0
    try:
        yield
    finally:
        rerank.WEIGHT, extract.SHORT_QUERY_WORDS = saved


def rankings(index: Index, collection: Collection, files: product.Files, rerank_facets: bool,
             mode: str = "hybrid") -> tuple[dict, float]:
    """Doc-id ranking of every judged query, and the mean seconds per query."""
    out: dict[str, list[str]] = {}
    started = time.perf_counter()
    queries = collection.judged_queries()
    for q in queries:
        response = index.search(collection.queries[q], k=product.DEPTH, mode=mode, include_weak=True, explain=False,
                                rerank_facets=rerank_facets)
        ranking = [files.ids[str(Path(p).resolve())] for r in response.results for p in (r.path, *r.duplicates)]
        out[q] = ranking[: product.DEPTH]
    return out, (time.perf_counter() - started) / max(len(queries), 1)


def measure(collection: Collection, work: Path, timeout: float) -> dict:
    """nDCG@10 / Recall@100 (x100) and ms per query of every setting on one collection."""
    files = product.write_files(collection, work / collection.name / "docs")
    built = product.build(files, work / collection.name / "index-static", "static", timeout=timeout)
    runs = [("off", None, True, False)] + [(f"on w={w}", w, True, True) for w in WEIGHTS]
    runs.append((f"on w={rerank.WEIGHT}, no borrowing", rerank.WEIGHT, False, True))
    out = {}
    with Index(built.db, create=False) as index:
        index.search(collection.queries[collection.judged_queries()[0]], explain=False)  # load model and graph
        for name, weight, borrow, flag in runs:
            with setting(weight if weight is not None else rerank.WEIGHT, borrow):
                ranked, seconds = rankings(index, collection, files, flag)
            ndcg, recall = harness.score(collection, ranked)
            out[name] = {"ndcg10": round(100 * ndcg, 2), "recall100": round(100 * recall, 2),
                         "ms_per_query": round(1000 * seconds, 1)}
            log.info("%s %s: %s", collection.name, name, out[name])
    return out


def main() -> None:
    args, per = harness.measure_collections(__doc__.splitlines()[0], "facet_rerank.json", measure)
    settings = list(next(iter(per.values())))
    mean = {s: {m: round(float(np.mean([per[c][s][m] for c in per])), 2) for m in ("ndcg10", "recall100")}
            for s in settings}
    shipped = f"on w={rerank.WEIGHT}"
    result = {"quick": args.quick, "depth": rerank.DEPTH, "rrf_k": rerank.RRF_K, "shipped_weight": rerank.WEIGHT,
              "short_query_words": extract.SHORT_QUERY_WORDS, "enabled_by_default": rerank.ENABLED,
              "per_collection": per, "mean": mean,
              "shipped_gain_ndcg10": round(mean[shipped]["ndcg10"] - mean["off"]["ndcg10"], 2)}
    names = list(per)
    print(f"nDCG@10 x100, hybrid, facet re-ranking of the top {rerank.DEPTH} (mean Recall@100 in the last column)")
    print(f"{'setting':28} " + " ".join(f"{n:>9}" for n in names) + f" {'mean':>7} {'R@100':>7}")
    for s in settings:
        print(f"{s:28} " + " ".join(f"{per[n][s]['ndcg10']:9.2f}" for n in names)
              + f" {mean[s]['ndcg10']:7.2f} {mean[s]['recall100']:7.2f}")
    print(f"shipped setting ({shipped}) minus off: {result['shipped_gain_ndcg10']:+.2f} mean nDCG@10; "
          f"enabled by default: {rerank.ENABLED}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
