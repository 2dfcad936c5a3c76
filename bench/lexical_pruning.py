"""What the two-phase lexical search costs in ranking quality: nDCG@10 with and without it, on the five collections.

``searcher.LEXICAL_SCAN_PASSAGES`` switches FTS5-only scoring to two phases once a query's words are in more passages
than that (the rarest words choose the candidates; see engine/search/searcher.py). The collections are small, so at
the shipped limit they never reach it; this script lowers the limit until most queries do, and compares lexical and
hybrid nDCG@10 and ms per query against the exact ranking (limit off). Each collection is indexed with
`quire index`, then searched in-process like bench/facets_rerank.py.

    nice -n 10 python bench/lexical_pruning.py [--collections cranfield,npl] [--quick]

Prints a table and writes bench/results/lexical_pruning.json.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from facets_rerank import rankings  # noqa: E402

from engine import Index  # noqa: E402
from engine.eval import harness, product  # noqa: E402
from engine.eval.datasets import Collection  # noqa: E402
from engine.search import searcher  # noqa: E402

log = logging.getLogger("lexical_pruning")
LIMITS = (None, 2000, 500, 100)


def measure(collection: Collection, work: Path, timeout: float) -> dict:
    """nDCG@10 and ms per query, lexical and hybrid, at every limit (None: FTS5 scores every match)."""
    files = product.write_files(collection, work / collection.name / "docs")
    built = product.build(files, work / collection.name / "index-static", "static", timeout=timeout)
    shipped, out = searcher.LEXICAL_SCAN_PASSAGES, {}
    with Index(built.db, create=False) as index:
        index.search(collection.queries[collection.judged_queries()[0]], explain=False)  # load model and graph
        try:
            for limit in LIMITS:
                searcher.LEXICAL_SCAN_PASSAGES = float("inf") if limit is None else limit
                for mode in ("lexical", "hybrid"):
                    ranked, seconds = rankings(index, collection, files, False, mode)
                    ndcg, _ = harness.score(collection, ranked)
                    out[f"{mode} limit={limit or 'off'}"] = {"ndcg10": round(100 * ndcg, 2),
                                                           "ms_per_query": round(1000 * seconds, 1)}
        finally:
            searcher.LEXICAL_SCAN_PASSAGES = shipped
    log.info("%s: %s", collection.name, out)
    return out


def main() -> None:
    args, per = harness.measure_collections(__doc__.splitlines()[0], "lexical_pruning.json", measure)
    settings = list(next(iter(per.values())))
    mean = {s: round(float(np.mean([per[c][s]["ndcg10"] for c in per])), 2) for s in settings}
    names = list(per)
    print(f"nDCG@10 x100 (ms per query), shipped limit {searcher.LEXICAL_SCAN_PASSAGES:,} passages")
    print(f"{'setting':22} " + " ".join(f"{n:>15}" for n in names) + f" {'mean':>7}")
    for s in settings:
        cells = " ".join(f"{per[n][s]['ndcg10']:7.2f} ({per[n][s]['ms_per_query']:5.1f})" for n in names)
        print(f"{s:22} {cells} {mean[s]:7.2f}")
    result = {"quick": args.quick, "shipped_limit": searcher.LEXICAL_SCAN_PASSAGES, "per_collection": per,
              "mean_ndcg10": mean}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
