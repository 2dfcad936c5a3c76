"""Replay hybrid fusion rules offline on what the searcher fused (issue 32, item 3: query-aware fusion).

Reads the dumps of ``bench/gate_features.py`` (the answerability collection of STS-B dev and the five classic
collections searched through the product, hybrid, static): every candidate document's meaning score (what the
semantic side ranks by), BM25 of its best passage and evidence. Each rule fuses them again; the gate's answer and the
weak floor do not depend on the fusion, so a query shows the documents above the floor in the rule's order, and
the product's own rule reproduces the product's figures exactly (checked before anything else is printed).

    python bench/fusion_replay.py [--work DIR]

Prints, per rule: STS-B dev shown@10 / top-1 / ungated@10, and the classic collections' nDCG@10 (each and mean), as
bench/answerability.py and bench/run.py measure them. Writes bench/results/fusion_replay.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from gate_features import load_dumps

from engine.eval import harness
from engine.eval.datasets import RETRIEVAL_COLLECTIONS
from engine.eval.metrics import ndcg_at
from engine.eval.report import stamp
from engine.search import relevance as rel


@dataclass(frozen=True)
class Candidates:
    """One query's candidates as the searcher fused them."""

    ids: list[str]
    meaning: np.ndarray  # NaN: not found by meaning
    bm25: np.ndarray  # 0: not found by words
    evidence: np.ndarray
    fused: np.ndarray  # the product's fused score, NaN where it set none
    lexical_bound: float


Rule = Callable[[Candidates], np.ndarray]


def _column(rows: list[list], i: int, missing: float) -> np.ndarray:
    return np.array([missing if r[i] is None else r[i] for r in rows], dtype=float)


def candidates(q: dict) -> Candidates:
    """A query's candidates from its dump row (gate_features.dump_query's column order)."""
    rows = q["docs"]
    ranked_by = 7 if rows and len(rows[0]) > 7 else 3  # the BM25 the word side ranked by (related words counted)
    return Candidates([r[0] for r in rows], _column(rows, 6, np.nan), _column(rows, ranked_by, 0.0),
                      _column(rows, 4, 0.0), _column(rows, 5, np.nan), q["scale"]["lexical_bound"])


def min_max(meaning: np.ndarray) -> np.ndarray:
    """The semantic side as engine.search.relevance.fuse scales it."""
    found = ~np.isnan(meaning)
    out = np.zeros_like(meaning)
    if found.any():
        low, high = meaning[found].min(), meaning[found].max()
        out[found] = (meaning[found] - low) / (high - low) if high > low else 1.0
    return out


def standardised(values: np.ndarray, found: np.ndarray) -> np.ndarray:
    """z-scores over the documents a side found (its margin over the query's own distribution); the others get that
    side's lowest."""
    out = np.zeros_like(values)
    if found.sum() >= 2 and values[found].std() > 0:
        out[found] = (values[found] - values[found].mean()) / values[found].std()
        out[~found] = out[found].min()
    return out


def shipped(c: Candidates) -> np.ndarray:
    return rel.fuse(c.meaning, c.bm25, rel.SEMANTIC_SHARE)


def lexical_by_bound(share_of_bound: float) -> Rule:
    """BM25 divided by the larger of the query's best and a share of the gate's lexical bound: a lexical side whose
    best match holds few of the query's key words counts for less."""
    def rule(c: Candidates) -> np.ndarray:
        top = max(float(c.bm25.max()), share_of_bound * c.lexical_bound)
        lexical = c.bm25 / top if top > 0 else np.zeros_like(c.bm25)
        return rel.SEMANTIC_SHARE * min_max(c.meaning) + (1 - rel.SEMANTIC_SHARE) * lexical
    return rule


def lexical_weight_by_strength(full_at: float, power: float) -> Rule:
    """The lexical side's weight, 0.5 x min(1, best BM25 / (full_at x bound)) ^ power: less where no document holds
    the query's key words."""
    def rule(c: Candidates) -> np.ndarray:
        strength = float(c.bm25.max()) / (full_at * c.lexical_bound) if c.lexical_bound > 0 else 0.0
        weight = 0.5 * min(1.0, strength) ** power
        top = float(c.bm25.max())
        return (1 - weight) * min_max(c.meaning) + weight * (c.bm25 / top if top > 0 else 0.0)
    return rule


def lexical_by_coverage(share_of_bound: float) -> Rule:
    """BM25 / best, times min(1, BM25 / (share x bound))^0.5: a lexical match holding few of the query's key words
    keeps less of its side's weight."""
    def rule(c: Candidates) -> np.ndarray:
        top = float(c.bm25.max())
        lexical = c.bm25 / top if top > 0 else np.zeros_like(c.bm25)
        held = np.minimum(1.0, c.bm25 / (share_of_bound * c.lexical_bound)) if c.lexical_bound > 0 else 0.0 * c.bm25
        return rel.SEMANTIC_SHARE * min_max(c.meaning) + (1 - rel.SEMANTIC_SHARE) * lexical * np.sqrt(held)
    return rule


def z_scores(semantic_share: float) -> Rule:
    """Both sides as z-scores over the documents each found: a side whose best stands far above the rest weighs more
    for that query."""
    def rule(c: Candidates) -> np.ndarray:
        found = ~np.isnan(c.meaning)
        return (semantic_share * standardised(np.nan_to_num(c.meaning), found)
                + (1 - semantic_share) * standardised(c.bm25, c.bm25 > 0))
    return rule


RULES: tuple[tuple[str, Rule], ...] = (
    ("shipped: min-max meaning + BM25 / best, share 0.5", shipped),
    *((f"BM25 / max(best, {s:g} x bound)", lexical_by_bound(s)) for s in (0.5, 0.75, 1.0)),
    *((f"lexical weight 0.5 x min(1, best / ({f:g} x bound))^{p:g}", lexical_weight_by_strength(f, p))
      for f in (0.6, 0.8, 1.0) for p in (0.5, 1.0)),
    *((f"BM25 / best x min(1, BM25 / ({s:g} x bound))^0.5", lexical_by_coverage(s)) for s in (0.25, 0.5, 0.75, 1.0)),
    *((f"z-scores of both sides, semantic share {s:g}", z_scores(s)) for s in (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)),
)


def measure(rule: Rule, dumps: dict[str, dict]) -> dict:
    """STS-B shown@10 / top-1 / ungated@10 and each classic collection's nDCG@10 (x100) under ``rule``."""
    out: dict = {}
    for name, data in dumps.items():
        floor = data["floor_share"] * data["bar"]
        shown10, top1, ungated10, ndcg = [], [], [], []
        for q in data["queries"].values():
            c = candidates(q)
            fused = rule(c) if c.ids else np.array([])
            order = sorted(range(len(c.ids)), key=lambda i: (-fused[i], c.ids[i]))
            ranked = [c.ids[i] for i in order]
            shown = [] if q["nothing_relevant"] else [c.ids[i] for i in order if c.evidence[i] >= floor][:data["depth"]]
            if q["kind"] == "classic":
                ndcg.append(ndcg_at(shown, q["right"], 10))
            elif q["kind"] == "answerable":
                right = next(iter(q["right"]))
                shown10.append(right in shown[:10])
                top1.append(shown[:1] == [right])
                ungated10.append(right in ranked[:10])
        if ndcg:
            out[name] = round(100 * float(np.mean(ndcg)), 2)
        else:
            out["sts_dev"] = {"shown@10": round(100 * float(np.mean(shown10)), 1),
                              "top1": round(100 * float(np.mean(top1)), 1),
                              "ungated@10": round(100 * float(np.mean(ungated10)), 1)}
    out["classic_mean"] = round(float(np.mean([out[c] for c in RETRIEVAL_COLLECTIONS])), 2)
    return out


def reproduces_the_product(dumps: dict[str, dict]) -> bool:
    """The shipped rule gives every candidate the fused score the searcher gave it."""
    for data in dumps.values():
        for q in data["queries"].values():
            c = candidates(q)
            if c.ids and not np.allclose(shipped(c), c.fused, atol=1e-5, equal_nan=True):
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=harness.REPO / "bench" / "results" / "tmp" / "gate",
                        help="the folder bench/gate_features.py wrote its dumps to")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    dumps = load_dumps(args.work)
    if not reproduces_the_product(dumps):
        raise SystemExit("the dumps were not fused as this checkout fuses: run bench/gate_features.py again")
    print("| rule | STS-B dev shown@10 / top-1 / ungated@10 | " + " | ".join(RETRIEVAL_COLLECTIONS)
          + " | classic mean |\n|---|---|" + "---|" * (len(RETRIEVAL_COLLECTIONS) + 1))
    result: dict = {"stamp": stamp(harness.REPO), "rules": []}
    for name, rule in RULES:
        m = measure(rule, dumps)
        sts = m["sts_dev"]
        print(f"| {name} | {sts['shown@10']:.1f} / {sts['top1']:.1f} / {sts['ungated@10']:.1f} | "
              + " | ".join(f"{m[c]:.2f}" for c in RETRIEVAL_COLLECTIONS) + f" | {m['classic_mean']:.2f} |")
        result["rules"].append({"rule": name, **m})
    out = args.out or harness.default_results_dir() / "fusion_replay.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
