"""Fit the confidence model on judged queries of the training splits and report it once on the held-out splits.

Every judged set (engine/eval/judged.py: STS-B and EvalRank paraphrase sets, the five classic collections' halves,
small generated folders, each with off-topic queries) is written as files, indexed and searched in this process
through ``engine.Index`` with the default settings (hybrid, second look on), asking for every document of the first
``DEPTH`` with what the confidence model reads of each (``explanation.confidence_features``). Then, on the training
split only: the re-ordering weights of the second look (by the mean nDCG@10 over the sources), the L2 strength of
each stage's logistic model (by leave-one-source-out log-loss) and the models themselves. The held-out split is read
once, with the fitted models, as a person sees them: the cards in the re-ordered order, each number never above the
one before. Writes ``resources/confidence/<method>.json`` (with ``--write``) and
``bench/results/confidence_fit.json`` (reliability tables, ECE, top-1, shown@10, off-topic strength, nDCG per set).

Run: ``python bench/fit_confidence.py [--data DIR] [--work DIR] [--write]``. The searches take about 30 minutes on a
2-core machine; ``--work`` keeps the indexes and the dumped features, so a second run only refits.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from engine import Index
from engine.eval import confidence_fit as fit
from engine.eval.harness import REPO, default_data_dir, default_results_dir
from engine.eval.judged import JudgedSet, Split, judged_sets
from engine.eval.metrics import ndcg_at
from engine.eval.product import write_files
from engine.eval.report import stamp
from engine.search import features as F
from engine.search import gate
from engine.search.confidence import POSSIBLE, STRONG, ConfidenceModel, ConfidenceModels, model_path

log = logging.getLogger("bench.fit_confidence")

# Documents read per query: the second look's 20 and the first screen's 10 beyond them.
DEPTH = 30
SECOND = 20
# The cards a calibration is judged on: a first screen.
CARDS = 10
# What the query's own words say (whether a passage holds them): the refined stage leaves them out, for the second
# look reads the meaning itself. Out of sample they add nothing to it (leave-one-source-out log-loss 0.1490 with and
# without) and, since the training sources' paraphrases mostly share a word with their answers, they teach it that a
# document sharing none is no answer (docs/decisions/0040-calibrated-confidence.md).
WORD_OVERLAP = ("lexical", "coverage", "missing_word")
# The re-ordering weights tried (opening, sentence).
OPENING_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
SENTENCE_GRID = (0.0, 0.25, 0.5, 1.0)


@dataclass
class Asked:
    """One judged query's dumped answer: each result's features (REFINED names for the first SECOND, FIRST beyond),
    document and grade (0: not relevant), with the query's relevant documents' grades (for nDCG)."""

    set_name: str
    source: str
    split: str
    query: str
    offtopic: bool
    refined: np.ndarray
    first: np.ndarray
    grades: np.ndarray
    docs: tuple[str, ...]
    relevance: dict[str, float]

    def to_json(self) -> dict:
        """The dump's form on disk."""
        return {**asdict(self), "refined": self.refined.tolist(), "first": self.first.tolist(),
                "grades": self.grades.tolist()}

    @staticmethod
    def from_json(data: dict) -> Asked:
        """A dumped answer read back."""
        return Asked(**{**data, "refined": np.array(data["refined"]).reshape(-1, len(F.REFINED)),
                        "first": np.array(data["first"]).reshape(-1, len(F.FIRST)), "grades": np.array(data["grades"]),
                        "docs": tuple(data["docs"])})

    def ndcg(self, order: np.ndarray) -> float:
        """nDCG@10 of the results in ``order``."""
        return ndcg_at([self.docs[i] for i in order], self.relevance, 10)


def dump(judged: JudgedSet, work: Path) -> list[Asked]:
    """Index ``judged``'s documents (once per index name) and search each of its queries."""
    cache = work / "dumps" / f"{judged.name}.json"
    if cache.exists():
        return [Asked.from_json(item) for item in json.loads(cache.read_text(encoding="utf-8"))]
    files = write_files(judged.collection(), work / "docs" / judged.index)
    out = []
    with Index(work / "indexes" / judged.index) as index:
        if index.status().documents < len(files.ids):
            index.add([files.folder])
        for qid, text in judged.queries.items():
            response = index.search(text, k=DEPTH, include_weak=True, explain=False, correct=False)
            grades, docs, refined, first = [], [], [], []
            for result in response.results:
                doc = files.ids.get(str(Path(result.path).resolve()))
                copies = [files.ids.get(str(Path(p).resolve())) for p in result.duplicates]
                # a copy of a relevant document is the relevant document
                docs.append(max([doc, *copies], key=lambda d: judged.relevant[qid].get(d, 0.0)))
                grades.append(judged.relevant[qid].get(docs[-1], 0.0))
                values = result.explanation.confidence_features
                (refined if "m_best" in values else first).append([values[n] for n in (
                    F.REFINED if "m_best" in values else F.FIRST)])
            out.append(Asked(judged.name, judged.source, judged.split.value, qid, not judged.relevant[qid],
                             np.array(refined).reshape(-1, len(F.REFINED)), np.array(first).reshape(-1, len(F.FIRST)),
                             np.array(grades), tuple(docs), dict(judged.relevant[qid])))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([a.to_json() for a in out]), encoding="utf-8")
    return out


def reordered(asked: Asked, opening: float, sentence: float) -> np.ndarray:
    """The result indices in the order the second look with these weights shows them."""
    r = asked.refined
    score = r[:, F.REFINED.index("fused_share")] + opening * r[:, F.REFINED.index("m_opening")] + sentence * r[
        :, F.REFINED.index("m_sentence")]
    head = sorted(range(len(r)), key=lambda i: (-round(float(score[i]), 9), i))
    return np.array(head + list(range(len(r), len(r) + len(asked.first))), dtype=np.int64)


def mean_ndcg(asked: Sequence[Asked], opening: float, sentence: float) -> float:
    """The mean over sources of their mean nDCG@10 on answerable queries."""
    by_source: dict[str, list[float]] = {}
    for a in asked:
        if not a.offtopic:
            order = reordered(a, opening, sentence)
            by_source.setdefault(a.source, []).append(a.ndcg(order))
    return float(np.mean([np.mean(v) for v in by_source.values()]))


def training_rows(asked: Sequence[Asked], refined: bool) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Each stage's rows: the refined features of the second look's documents, or the first features of all."""
    xs, ys, sources, queries = [], [], [], []
    for a in asked:
        x = a.refined if refined else np.vstack([a.refined[:, : len(F.FIRST)], a.first])
        xs.append(x)
        ys.append((a.grades[: len(x)] > 0).astype(float))
        sources += [a.source] * len(x)
        queries += [f"{a.set_name}/{a.query}"] * len(x)
    return np.vstack(xs), np.concatenate(ys), sources, queries


def fit_stage(asked: Sequence[Asked], refined: bool) -> tuple[ConfidenceModel, dict]:
    """One stage's model: its L2 strength, then its features chosen by leave-one-source-out log-loss."""
    x, y, sources, queries = training_rows(asked, refined)
    names = F.REFINED if refined else F.FIRST
    if refined:
        candidates = [n for n in names if n not in WORD_OVERLAP]
        x, names = x[:, [names.index(n) for n in candidates]], tuple(candidates)
    l2, losses = fit.choose_l2(x, y, sources, queries, names)
    kept, steps = fit.select_features(x, y, sources, queries, names, l2)
    columns = [names.index(n) for n in kept]
    model = fit.fit_logistic(x[:, columns], y, fit.balanced_weights(sources, queries), kept, l2=l2)
    return model, {"l2_losses": losses, "l2": l2, "eliminated": steps, "kept": list(kept)}


def shown_cards(asked: Asked, models: ConfidenceModels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first CARDS cards (re-ordered, numbers never rising): their probabilities, grades, and whether each is
    listed by default (shares something with the query: engine.search.gate.related)."""
    p = np.concatenate([models.refined.probability(asked.refined, F.REFINED),
                        models.first.probability(asked.first, F.FIRST)])
    order = reordered(asked, models.opening, models.sentence)[:CARDS]
    shown = np.minimum.accumulate(p[order])
    rows = np.vstack([asked.refined[:, : len(F.FIRST)], asked.first])[order]
    evidence = [F.Evidence(row[F.FIRST.index("z")], row[F.FIRST.index("coverage")], bool(row[F.FIRST.index("lexical")]),
                           0.0) for row in rows]
    listed = np.array([gate.related(e, float(q)) for e, q in zip(evidence, shown)], dtype=bool)
    return shown, asked.grades[order], listed


def report(asked: Sequence[Asked], models: ConfidenceModels) -> dict:
    """Calibration and retrieval of one set as shown."""
    cards = [shown_cards(a, models) for a in asked]
    p = np.concatenate([c[0] for c in cards]) if cards else np.zeros(0)
    y = np.concatenate([c[1] > 0 for c in cards]).astype(float) if cards else np.zeros(0)
    listed = np.concatenate([c[2] for c in cards]) if cards else np.zeros(0, dtype=bool)
    ece, table = fit.reliability(p, y)
    ece_listed, table_listed = fit.reliability(p[listed], y[listed])
    answerable = [(a, c) for a, c in zip(asked, cards) if not a.offtopic]
    off = [c for a, c in zip(asked, cards) if a.offtopic]
    best_off = np.array([c[0][0] if len(c[0]) else 0.0 for c in off])
    return {
        "queries": len(asked), "answerable": len(answerable), "offtopic": len(off), "cards": int(len(p)),
        "ece": round(ece, 4), "reliability": [asdict(b) for b in table],
        "listed_cards": int(listed.sum()), "ece_listed": round(ece_listed, 4),
        "reliability_listed": [asdict(b) for b in table_listed],
        "top1": _pct([len(c[1]) > 0 and c[1][0] > 0 for _, c in answerable]),
        "shown_at_10": _pct([bool((c[1] > 0).any()) for _, c in answerable]),
        "ndcg_at_10": round(100 * float(np.mean([a.ndcg(reordered(a, models.opening, models.sentence))
                                                 for a, _ in answerable])), 2) if answerable else None,
        "first_ranking_ndcg_at_10": round(100 * float(np.mean([a.ndcg(np.arange(len(a.docs)))
                                                               for a, _ in answerable])), 2) if answerable else None,
        "offtopic_no_strong": _pct(best_off < STRONG) if len(off) else None,
        "offtopic_best_under_30": _pct(best_off < POSSIBLE) if len(off) else None,
        "offtopic_best_median": round(100 * float(np.median(best_off)), 1) if len(off) else None,
        "answerable_first_at_least_possible": _pct([len(c[0]) > 0 and c[0][0] >= POSSIBLE and c[1][0] > 0
                                                    for _, c in answerable]),
    }


def _pct(flags: Iterable[bool]) -> float:
    values = list(flags)
    return round(100 * sum(values) / len(values), 1) if values else float("nan")


def groups(asked: Sequence[Asked]) -> dict[str, list[Asked]]:
    """The held-out sets as reported: each sentence source, each classic collection, and the small folders by size."""
    out: dict[str, list[Asked]] = {}
    for a in asked:
        name = a.set_name.split("-")[0] if a.source != "small" else f"small ({a.set_name.split('-')[0][5:]} files)"
        out.setdefault(name, []).append(a)
    return out


def main(argv: list[str] | None = None) -> int:
    """Dump, fit, report; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="the benchmarks folder (default: ../shared/...)")
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "results" / "tmp" / "confidence")
    parser.add_argument("--method", default="static")
    parser.add_argument("--write", action="store_true", help="write resources/confidence/<method>.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    data = args.data or default_data_dir()
    started = time.perf_counter()
    dumped = {split: [a for s in judged_sets(data, split) for a in dump(s, args.work)] for split in Split}
    train, test = dumped[Split.TRAIN], dumped[Split.TEST]
    grid = {(o, s): mean_ndcg(train, o, s) for o in OPENING_GRID for s in SENTENCE_GRID}
    opening, sentence = max(grid, key=lambda w: (round(grid[w], 6), -w[0] - w[1]))
    first, first_choice = fit_stage(train, refined=False)
    refined, refined_choice = fit_stage(train, refined=True)
    models = ConfidenceModels(first, refined, opening, sentence)
    held_out = {name: report(sets, models) for name, sets in groups(test).items()}
    result = {
        "stamp": stamp(REPO), "method": args.method, "seconds": round(time.perf_counter() - started, 1),
        "ranking": {"opening": opening, "sentence": sentence, "train_mean_ndcg": round(100 * grid[(opening, sentence)], 2),
                    "first_ranking_train_mean_ndcg": round(100 * grid[(0.0, 0.0)], 2)},
        "choice": {"first": first_choice, "refined": refined_choice},
        "training": {name: report(sets, models) for name, sets in groups(train).items()},
        "held_out": held_out, "models": models.to_json(),
    }
    out = default_results_dir() / "confidence_fit.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print_table(held_out, opening, sentence)
    if args.write:
        path = model_path(args.method)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**models.to_json(), "fitted": result["stamp"]["date"],
                                    "command": "python bench/fit_confidence.py --write"}, indent=1) + "\n",
                        encoding="utf-8")
        print(f"wrote {path}")
    return 0


def print_table(held_out: dict[str, dict], opening: float, sentence: float) -> None:
    """The held-out figures, one line per set."""
    print(f"second look re-orders by fused share + {opening} x opening + {sentence} x sentence")
    columns = ("ece", "ece_listed", "top1", "shown_at_10", "ndcg_at_10", "first_ranking_ndcg_at_10", "offtopic_no_strong",
               "offtopic_best_under_30", "answerable_first_at_least_possible")
    print(f"{'held-out set':22s} " + " ".join(f"{c[:14]:>14s}" for c in columns))
    for name, row in held_out.items():
        print(f"{name:22s} " + " ".join(f"{'' if row[c] is None else row[c]:>14}" for c in columns))


if __name__ == "__main__":
    sys.exit(main())
