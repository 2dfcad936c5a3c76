"""Choose the hybrid fusion constants (RRF k, semantic weight) in engine/search/searcher.py on the retrieval collections.

Each collection is indexed with `quire index`. For each query the searcher's own two candidate rankings (semantic
and lexical, ``searcher.CANDIDATES`` deep) are taken in-process from ``Searcher._rank``/``_fuse``
(private on purpose: building 100 full results with explanations per query would cost a second, and fusion never
looks at them). Reciprocal rank fusion is recomputed here for each grid point as ``Searcher._fuse`` does it, and a
check row compares the fusion with the engine's current constants against the engine's own hybrid ranking.

    python bench/tune_fusion.py --methods static,sbert [--quick] [--work DIR]

Prints a table per method and writes bench/results/fusion.json.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from engine.eval import harness, product  # noqa: E402
from engine.eval.datasets import Collection  # noqa: E402
from engine.search import searcher  # noqa: E402

log = logging.getLogger("tune_fusion")

RRF_KS = (1, 2, 5, 10, 20, 40, 60, 100)
# Only the ratio of the two weights changes an RRF ranking, so the lexical weight stays 1.
SEMANTIC_WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def rrf(semantic: list[str], lexical: list[str], k: float, w_sem: float, w_lex: float = 1.0) -> list[str]:
    """Documents by w / (k + rank) summed over the rankings that hold them (``Searcher._fuse``)."""
    points: dict[str, float] = {}
    for weight, ranking in ((w_sem, semantic), (w_lex, lexical)):
        for rank, doc in enumerate(ranking, 1):
            points[doc] = points.get(doc, 0.0) + weight / (k + rank)
    order = {doc: i for i, doc in enumerate(dict.fromkeys(semantic + lexical))}
    return sorted(points, key=lambda d: (-points[d], order[d]))


def rankings_for(method: str, collection: Collection, work: Path, timeout: float) -> dict[str, dict[str, list[str]]]:
    """Semantic, lexical and (engine-fused) hybrid doc-id rankings of every judged query."""
    from engine import Index
    from engine.search.results import Mode

    files = product.write_files(collection, work / collection.name / "docs")
    built = product.build(files, work / collection.name / f"index-{method}", method, timeout=timeout)
    out: dict[str, dict[str, list[str]]] = {"semantic": {}, "lexical": {}, "hybrid": {}}
    with Index(built.db, create=False) as index:
        embedder = index._embedder()
        search = searcher.Searcher(index.store, index.vector_index(embedder), embedder, None)
        for q in collection.judged_queries():
            docs = search._rank(collection.queries[q], Mode.HYBRID, [])[0]
            for mode in (Mode.SEMANTIC, Mode.LEXICAL, Mode.HYBRID):
                ranked = search._fuse(docs, mode)
                paths = index.store.documents_by_id([d.doc_id for d in ranked])
                out[mode.value][q] = [files.ids[str(Path(paths[d.doc_id]["path"]).resolve())] for d in ranked]
    return out


def tune(method: str, bench: harness.Benchmarks, work: Path, timeout: float) -> dict:
    """Mean nDCG@10 and Recall@100 over the collections for each grid point, plus the engine's own hybrid ranking."""
    runs = {c.name: rankings_for(method, c, work, timeout) for c in bench.collections}
    by_name = {c.name: c for c in bench.collections}

    def mean_scores(fused: dict[str, dict[str, list[str]]]) -> tuple[float, float, dict[str, float]]:
        scores = {name: harness.score(by_name[name], rankings) for name, rankings in fused.items()}
        per = {name: round(100 * s[0], 2) for name, s in scores.items()}
        return (round(100 * float(np.mean([s[0] for s in scores.values()])), 2),
                round(100 * float(np.mean([s[1] for s in scores.values()])), 2), per)

    grid = []
    for k in RRF_KS:
        for w in SEMANTIC_WEIGHTS:
            fused = {name: {q: rrf(r["semantic"][q], r["lexical"][q], k, w) for q in r["semantic"]}
                     for name, r in runs.items()}
            ndcg, recall, per = mean_scores(fused)
            grid.append({"k": k, "semantic_weight": w, "ndcg10": ndcg, "recall100": recall, "per_collection": per})
    engine_hybrid = mean_scores({name: r["hybrid"] for name, r in runs.items()})
    single = {mode: mean_scores({name: r[mode] for name, r in runs.items()})[:2] for mode in ("semantic", "lexical")}
    current = next(g for g in grid if g["k"] == searcher.RRF_K
                   and g["semantic_weight"] == searcher.SEMANTIC_WEIGHT / searcher.LEXICAL_WEIGHT)
    best = max(grid, key=lambda g: (g["ndcg10"], g["recall100"]))
    return {"method": method, "grid": grid, "best": best, "current": current, "semantic": single["semantic"],
            "lexical": single["lexical"], "engine_hybrid": {"ndcg10": engine_hybrid[0], "recall100": engine_hybrid[1],
                                                             "per_collection": engine_hybrid[2]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="static", help="comma-separated methods")
    harness.collection_options(parser, "fusion.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    bench = harness.benchmarks_from(args)
    results = []
    with tempfile.TemporaryDirectory(prefix="quire-fusion-") as tmp:
        work = args.work or Path(tmp)
        for method in args.methods.split(","):
            found = tune(method, bench, work / method, args.timeout)
            results.append(found)
            print(f"\n{method}: semantic {found['semantic']}, lexical {found['lexical']} (nDCG@10, Recall@100)")
            print(f"engine hybrid (k={searcher.RRF_K}, w_sem={searcher.SEMANTIC_WEIGHT}): {found['engine_hybrid']}")
            print(f"offline fusion, same constants: {found['current']}")
            print(f"best: {found['best']}")
            print("k \\ w_sem " + " ".join(f"{w:>6}" for w in SEMANTIC_WEIGHTS))
            for k in RRF_KS:
                row = [g["ndcg10"] for g in found["grid"] if g["k"] == k]
                print(f"{k:>9} " + " ".join(f"{v:6.2f}" for v in row))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"quick": args.quick, "results": results}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
