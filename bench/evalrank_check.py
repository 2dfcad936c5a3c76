"""Why quire's EvalRank differs from the anchor in NOTES.md: the exact definition beside the toolkit's own code.

The paper (Wang et al., 2022, Sec. 4.2) ranks the positive c_y among the background scores S(c_x, c_j), j != x.
quire computes every score, the positive's included, from one matrix product and counts the pool sentences other
than the query that score strictly higher (engine.eval.intrinsic.evalrank_ranks).

The released toolkit (src/s_evaluation.py, ``eval_for_ranking``) instead takes the positive's score from a separate
1 x d by d x 1 product and counts background scores above it, where the background still holds the query and the
positive themselves. The query's own score (1.0) plays the part of the "1 +"; but the positive's own background
score comes from a different BLAS call, so in float32 it lands a hair above its separately computed twin in a large
share of pairs and the positive is counted as outranking itself. This script emulates that code
pair by pair next to the exact ranks, so the gap to NOTES.md's anchor (all-MiniLM-L6-v2: 75.02 / 59.55 / 88.84)
is measured, not guessed.

Run: ``nice -n 10 .venv/bin/python bench/evalrank_check.py --methods sbert,static``.
Writes bench/results/evalrank_check.json; every number is recomputed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import embed  # noqa: E402
from engine.eval.datasets import load_evalrank  # noqa: E402
from engine.eval.harness import default_data_dir  # noqa: E402
from engine.eval.intrinsic import evalrank_ranks, unit_rows  # noqa: E402
from engine.eval.metrics import hits_at, mrr  # noqa: E402

OUT = ROOT / "bench" / "results" / "evalrank_check.json"


def toolkit_ranks(vectors: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Ranks as the toolkit's loop computes them, one pair at a time, with its separate positive score."""
    centred = vectors - vectors.mean(axis=0, keepdims=True)
    pool = (centred / np.linalg.norm(centred, axis=1)[:, None]).astype(np.float32)
    ranks = np.empty(len(pairs), dtype=np.int64)
    for i, (x, y) in enumerate(pairs):
        query = pool[[x]]
        positive = np.dot(query, pool[[y]].T).squeeze()
        background = np.sort(np.squeeze(np.dot(pool, query.T)))  # ascending
        ranks[i] = max(len(background) - np.searchsorted(background, positive, side="right"), 1)
    return ranks


def scores(ranks: np.ndarray) -> dict[str, float]:
    return {"mrr": round(100 * mrr(ranks), 2), "hits1": round(100 * hits_at(ranks, 1), 2),
            "hits3": round(100 * hits_at(ranks, 3), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="sbert,static", help="comma-separated quire embedding methods")
    parser.add_argument("--data", type=Path, default=default_data_dir())
    args = parser.parse_args()
    data = load_evalrank(args.data / "evalrank")
    pairs = np.asarray(data.pairs, dtype=np.int64)
    # one entry per method, replaced by each run, so a run of one method keeps the others' latest numbers
    kept = json.loads(OUT.read_text())["methods"] if OUT.exists() else {}
    results = {"pairs": len(pairs), "pool": len(data.pool), "methods": kept}
    print(f"{'method':<8} {'exact MRR/H@1/H@3':<24} {'toolkit code MRR/H@1/H@3':<26} "
          f"{'ranks moved':>11} {'encode s':>9}")
    for name in filter(None, args.methods.split(",")):
        started = time.perf_counter()
        vectors = embed.load(name).encode(list(data.pool))
        encode_s = time.perf_counter() - started
        exact, toolkit = evalrank_ranks(vectors, pairs), toolkit_ranks(unit_rows(vectors), pairs)
        row = {"exact": scores(exact), "toolkit_code": scores(toolkit),
               "pairs_ranked_lower_by_toolkit": int((toolkit > exact).sum()), "encode_seconds": round(encode_s, 1),
               "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        results["methods"][name] = row
        fmt = lambda s: f"{s['mrr']:.2f} / {s['hits1']:.2f} / {s['hits3']:.2f}"  # noqa: E731
        print(f"{name:<8} {fmt(row['exact']):<24} {fmt(row['toolkit_code']):<26} "
              f"{row['pairs_ranked_lower_by_toolkit']:>11,} {encode_s:>9.1f}")
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
