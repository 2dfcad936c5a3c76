"""Replay relevance-gate rules offline on what the gate saw (issue 32): which new evidence tells the answerable
paraphrase queries the gate cuts from the off-topic queries it answers, without leaving classic queries unanswered?

Reads the dumps of ``bench/gate_features.py`` (the answerability collection of one STS-B split and the five classic
collections, searched through the product) and decides each query again under each rule. A rule changes only whether
a query is answered; what an answered query shows is the product's own list (documents above a quarter of the bar,
in fused order), so "answerable shown" is "answered, and the right document in that list", and a classic
collection's nDCG@10 changes only where a query's answer flips. Per document (the ``gate_features.TEXT_DOCS`` with
most evidence), over the sentences it may be shown by, the best of:

- ``bridges t``: the share of the query's IDF mass whose words are in the sentence or have a word there at static
  word cosine >= t (word bridges such as "austria -> vienna", as the facets' explanations find them);
- ``coverage``: the same with exact words only (stems), all the query's words rather than its 5 key words;
- ``alignment F`` / ``R``: greedy word alignment in the static model's word space, each word matched to its most
  similar word of the other text, SIF-weighted, recall (query side), precision (sentence side) and their harmonic
  mean F, as BERTScore does with contextual vectors (Zhang et al., "BERTScore: Evaluating Text Generation with
  BERT", ICLR 2020, Sec. 3, greedy matching with importance weighting).

Per query: ``breadth`` (documents at half the bar or more), ``absent`` (IDF share of the query's words the index does
not hold), ``typicality`` (the query's mean cosine to the index's sentences above the random-pair mean, in gate
units). A rule's score is ``max over documents (evidence + w x feature) + v x query feature``; a query is answered
when its score reaches ``bar``, or (where a rule keeps it) its best cosine stands 3 sd above its null.

    python bench/gate_replay.py [--split dev] [--work DIR]

On the dev split prints, for each rule family, the frontier of (answerable shown, off-topic "nothing") over a grid of
its constants with every classic collection under 2% of queries answered "nothing relevant", then the fixed rules;
on the test split only the fixed rules (nothing is tuned there). Writes bench/results/gate_replay.json
(``gate_replay_test.json`` for ``--split test``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from gate_features import load_dumps

from engine.eval import harness
from engine.eval.metrics import ndcg_at
from engine.eval.report import stamp
from engine.facets.service import load_space
from engine.facets.space import FacetSpace
from engine.text import terms as T

# Targets of issue 32 (percentages): answerable shown, off-topic answered "nothing relevant", and the most a classic
# collection may answer "nothing relevant".
TARGET_SHOWN, TARGET_NOTHING, CLASSIC_LIMIT = 98.0, 95.0, 2.0
# The null-margin rule the gate had until decision 0016 dropped it; "off" drops it.
NULL_MARGIN = 3.0
GRID_WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0)
GRID_BARS = tuple(round(b, 2) for b in np.arange(1.0, 3.201, 0.05))


@dataclass
class Query:
    """One query's features: evidence of its candidates, per-document features of the best few, query features."""

    collection: str
    kind: str  # answerable, offtopic, classic
    qid: str
    z: float  # best cosine's standing over the query's null, beyond the expected maximum (sd)
    evidence: np.ndarray  # of the documents with texts, most evidence first
    doc: dict[str, np.ndarray]  # feature -> one value per document of ``evidence``
    query: dict[str, float]
    shown: list[str]  # what an answered query shows (the product's list, or the one it would show)
    right: dict[str, float]
    best_evidence: float


def word_ids(space: FacetSpace, text: str) -> list[int]:
    """The distinct content words of a text in the static model's vocabulary."""
    return list(dict.fromkeys(t.id for t in space.tokens(text) if space.content[t.id]))


def alignment(space: FacetSpace, query: list[int], sentence: list[int]) -> tuple[float, float, float]:
    """SIF-weighted greedy alignment of two word lists: (recall, precision, F)."""
    if not query or not sentence:
        return 0.0, 0.0, 0.0
    sims = np.clip(space.unit[query] @ space.unit[sentence].T, 0.0, 1.0)
    wq, ws = space.sif[query], space.sif[sentence]
    recall = float(wq @ sims.max(axis=1) / wq.sum()) if wq.sum() > 0 else 0.0
    precision = float(ws @ sims.max(axis=0) / ws.sum()) if ws.sum() > 0 else 0.0
    return recall, precision, (2 * recall * precision / (recall + precision) if recall + precision else 0.0)


def bridged(space: FacetSpace, idf: dict[str, float], words: dict[str, str], sentence: str,
            sentence_ids: list[int]) -> dict[str, float]:
    """Each query stem's best similarity to the sentence: 1 where the sentence holds it, else its word's best static
    cosine to a content word of the sentence (0 for a word the model does not know)."""
    found = T.stems_found([sentence], frozenset(idf))[0]
    out = {}
    for stem in idf:
        if stem in found:
            out[stem] = 1.0
            continue
        token = space.tokenizer.id_of(T.fold(words.get(stem, stem)))
        known = token >= 0 and token < space.content.size and space.content[token] and sentence_ids
        out[stem] = float((space.unit[sentence_ids] @ space.unit[token]).max()) if known else 0.0
    return out


def share(idf: dict[str, float], sims: dict[str, float], at: float) -> float:
    total = sum(idf.values())
    return sum(idf[s] for s, v in sims.items() if v >= at) / total if total else 0.0


def features(space: FacetSpace, name: str, data: dict) -> list[Query]:
    """Every query of one dump, with its features."""
    bar = data["bar"]
    out = []
    # a word absent from the index has the largest IDF there is, log(2n + 1): the largest IDF any query met
    absent_idf = max((max(q["idf"].values()) for q in data["queries"].values() if q["idf"]), default=0.0)
    for qid, q in data["queries"].items():
        scale, idf, docs = q["scale"], q["idf"], q["docs"]
        best = max((d[2] for d in docs if d[2] is not None), default=None)
        z = -math.inf
        if best is not None and scale["null_std"] and scale["null_size"] >= 2:
            z = (best - scale["null_mean"]) / scale["null_std"] - math.sqrt(2 * math.log(scale["null_size"]))
        evidence_of = {d[0]: d[4] for d in docs}
        query_ids = word_ids(space, q["text"])
        per_doc: dict[str, list[float]] = {k: [] for k in ("F", "R", "bridges 0.5", "bridges 0.4", "coverage")}
        kept = sorted(q["texts"], key=lambda d: -evidence_of[d])
        for doc in kept:
            texts = q["texts"][doc]
            rows = []
            for sentence in dict.fromkeys(texts["semantic"] + texts["lexical"]):
                ids = word_ids(space, sentence)
                recall, _, f = alignment(space, query_ids, ids)
                sims = bridged(space, idf, q["words"], sentence, ids)
                rows.append((f, recall, share(idf, sims, 0.5), share(idf, sims, 0.4), share(idf, sims, 1.0)))
            best_rows = np.max(np.array(rows), axis=0) if rows else np.zeros(5)
            for key, value in zip(per_doc, best_rows.tolist()):
                per_doc[key].append(value)
        unit = scale["tail"] - scale["mean"] if scale["tail"] is not None else 0.0
        total_idf = sum(idf.values())
        query = {
            "breadth": float(sum(d[4] >= bar / 2 for d in docs)),
            "absent": sum(v for v in idf.values() if v >= absent_idf - 1e-6) / total_idf if total_idf else 0.0,
            "typicality": max((scale["null_mean"] - scale["mean"]) / unit, 0.0) if unit > 0 else 0.0,
        }
        kind = q["kind"]
        # the list an answered query shows: the product's when it was answered, else the one it would show
        shown = q["shown"] if not q["nothing_relevant"] else would_show(q, data["floor_share"] * bar, data["depth"])
        out.append(Query(name, kind, qid, z, np.array([evidence_of[d] for d in kept]),
                         {k: np.array(v) for k, v in per_doc.items()}, query, shown, q["right"],
                         max(evidence_of.values(), default=0.0)))
    return out


def would_show(q: dict, floor: float, depth: int) -> list[str]:
    """The documents an answered query shows: above the floor, in fused order."""
    docs = sorted(q["docs"], key=lambda d: -d[5])
    return [d[0] for d in docs if d[4] >= floor][:depth]


@dataclass(frozen=True)
class Rule:
    """Answer a query when max(evidence + weight x doc feature) + query weight x query feature >= bar (or, with a
    margin, when its best cosine stands that many sd above its null)."""

    name: str
    doc_feature: str | None = None
    weight: float = 0.0
    query_feature: str | None = None
    query_weight: float = 0.0
    bar: float = 1.4
    margin: float | None = NULL_MARGIN

    def answered(self, q: Query) -> bool:
        score = q.best_evidence
        if self.doc_feature is not None and q.evidence.size:
            score = max(score, float((q.evidence + self.weight * q.doc[self.doc_feature]).max()))
        if self.query_feature is not None:
            score += self.query_weight * q.query[self.query_feature]
        return score >= self.bar - 1e-9 or (self.margin is not None and q.z >= self.margin)

    def constants(self) -> str:
        parts = [f"w {self.weight:g}"] if self.doc_feature else []
        if self.query_feature:  # a family of one weight calls it w
            parts.append(f"{'v' if self.doc_feature else 'w'} {abs(self.query_weight):g}")
        return ", ".join([*parts, f"bar {self.bar:g}", f"margin {'off' if self.margin is None else f'{self.margin:g}'}"])


def measure(rule: Rule, queries: list[Query]) -> dict:
    """Answerable shown, off-topic nothing, classic nothing per collection (percentages), classic mean nDCG@10."""
    answered = [rule.answered(q) for q in queries]
    ans = [a and next(iter(q.right)) in q.shown for q, a in zip(queries, answered) if q.kind == "answerable"]
    off = [not a for q, a in zip(queries, answered) if q.kind == "offtopic"]
    nothing: dict[str, list[bool]] = {}
    ndcg: dict[str, list[float]] = {}
    for q, a in zip(queries, answered):
        if q.kind == "classic":
            nothing.setdefault(q.collection, []).append(not a)
            ndcg.setdefault(q.collection, []).append(ndcg_at(q.shown if a else [], q.right, 10))
    def pct(flags: list[bool], digits: int = 2) -> float | None:
        return round(100 * sum(flags) / len(flags), digits) if flags else None

    # the answerability benchmark's rounding (engine.eval.answerability.score)
    return {"answerable_shown": pct(ans, 1), "offtopic_nothing": pct(off, 1),
            "classic_nothing": {c: pct(f) for c, f in nothing.items()},
            "classic_worst_nothing": max((pct(f) for f in nothing.values()), default=None),
            "classic_ndcg10": round(100 * float(np.mean([np.mean(v) for v in ndcg.values()])), 2) if ndcg else None}


# Rule families replayed over the grid: (name, document feature, query feature, sign of the query feature's weight).
# The last family fixes the alignment at its best weight and adds the query's typicality at 5 and 10 times the grid's.
FAMILIES: tuple[tuple[str, str | None, str | None, float], ...] = (
    ("evidence alone", None, None, 0.0),
    *((f"evidence + w x {f}", f, None, 0.0) for f in ("bridges 0.5", "bridges 0.4", "coverage", "R", "F")),
    ("evidence + w x log2(1 + breadth)", None, "breadth", 1.0),
    ("evidence - w x absent share", None, "absent", -1.0),
    ("evidence + 1.5 F + v x typicality", "F", "typicality", 1.0),
)


def family_rules(family: tuple[str, str | None, str | None, float]) -> list[Rule]:
    """Every rule of a family over the grid of its weight, the bar and the null margin (on, off)."""
    name, doc_feature, query_feature, sign = family
    rules = []
    for w in (0.0,) if doc_feature is None and query_feature is None else GRID_WEIGHTS:
        for bar in GRID_BARS:
            for margin in (NULL_MARGIN, None):
                if doc_feature and query_feature:
                    rules += [Rule(name, doc_feature, 1.5, query_feature, v, bar, margin) for v in (5 * w, 10 * w)]
                elif doc_feature:
                    rules.append(Rule(name, doc_feature, w, bar=bar, margin=margin))
                else:
                    rules.append(Rule(name, query_feature=query_feature, query_weight=sign * w, bar=bar, margin=margin))
    return rules


def frontier(results: list[tuple[Rule, dict]]) -> list[tuple[Rule, dict]]:
    """The (answerable shown, off-topic nothing) Pareto points among rules with every classic collection under the
    limit, most answerable first; of rules that tie, the one with the lowest bar."""
    fine = [(r, m) for r, m in results if m["classic_worst_nothing"] is not None and m["classic_worst_nothing"] < CLASSIC_LIMIT]
    points: dict[tuple[float, float], tuple[Rule, dict]] = {}
    for r, m in fine:
        key = (m["answerable_shown"], m["offtopic_nothing"])
        points.setdefault(key, (r, m))
    keep = [p for p in points if not any(o != p and o[0] >= p[0] and o[1] >= p[1] for o in points)]
    return [points[p] for p in sorted(keep, reverse=True)]


FIXED = (
    Rule("shipped: evidence >= 1.4, or best cosine 3 sd above the query's null"),
    Rule("evidence >= 1.4 (null margin off)", margin=None),
    Rule("evidence + 1.5 x (F - 0.4) >= 1.4, margin off", "F", 1.5, bar=2.0, margin=None),
    Rule("evidence + 1.5 x (F - 0.4) >= 1.4, margin 3", "F", 1.5, bar=2.0),
    Rule("evidence + 1.5 x F + 15 x typicality >= 2.05, margin off", "F", 1.5, "typicality", 15.0, bar=2.05,
         margin=None),
)


def row(rule: Rule, m: dict, family: str) -> str:
    both = m["answerable_shown"] >= TARGET_SHOWN and m["offtopic_nothing"] >= TARGET_NOTHING
    return (f"| {family} | {rule.constants()} | {m['answerable_shown']:.1f} | {m['offtopic_nothing']:.1f} | "
            f"{m['classic_worst_nothing']:.2f} | {m['classic_ndcg10']:.2f} | {'yes' if both else 'no'} |")


def main() -> None:
    """Load the dumps, replay, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--work", type=Path, default=harness.REPO / "bench" / "results" / "tmp" / "gate",
                        help="the folder bench/gate_features.py wrote its dumps to")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    space = load_space()
    if space is None:
        raise SystemExit("the static model is missing: the alignment features need its word vectors")
    queries: list[Query] = []
    for name, dump in load_dumps(args.work, args.split).items():
        queries += features(space, name, dump)
    for q in queries:
        q.query["breadth"] = math.log2(1.0 + q.query["breadth"])
    header = ("| rule | constants | answerable shown | off-topic nothing | classic worst nothing | classic nDCG@10 | "
              "both targets |\n|---|---|---|---|---|---|---|")
    result: dict = {"stamp": stamp(harness.REPO), "split": args.split, "families": {}, "fixed": []}
    if args.split == "dev":
        print(f"Frontier per family (every classic collection under {CLASSIC_LIMIT:g}% answered nothing)\n\n{header}")
        for family in FAMILIES:
            points = frontier([(r, measure(r, queries)) for r in family_rules(family)])
            result["families"][family[0]] = [{"rule": r.constants(), **m} for r, m in points]
            for r, m in points:
                print(row(r, m, family[0]))
    print(f"\nFixed rules, {args.split} split\n\n{header}")
    for rule in FIXED:
        m = measure(rule, queries)
        result["fixed"].append({"rule": rule.name, "constants": rule.constants(), **m})
        print(row(rule, m, rule.name))
    out = args.out or harness.default_results_dir() / f"gate_replay{'' if args.split == 'dev' else '_test'}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
