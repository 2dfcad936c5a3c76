"""Does the relevance gate answer what it can and say "nothing relevant" to what it cannot?

The collection is built from STS-B: one sentence of each near-paraphrase pair (gold >= 4) is a document and the other
its query, kept only where at most half of the pair's content words (those of either sentence) are in both, so that
finding the document takes meaning and not word matching; both sentences of unrelated pairs (gold <= 1) are more documents. Off-topic
queries come from the classic retrieval collections (aeronautics, medicine, library science): nothing in a collection
of captions, headlines and forum answers answers them. Scores compare what `quire search` lists (each result with its confidence)
with the ungated ranking (``--all``) of the same index.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import BenchmarkError
from engine.eval.confidence_fit import ReliabilityBin, reliability
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, Collection, StsPairs
from engine.eval.product import Built, Files, run_cli
from engine.search.confidence import POSSIBLE
from engine.text.terms import STOPWORDS, fold, query_terms

log = logging.getLogger(__name__)

# STS-B's 4 is "mostly equivalent, some unimportant details differ": a person asking one would take the other.
GOLD_ANSWERABLE = 4.0
# STS-B's 1 is "not equivalent, but on the same topic": the most a distractor may share with its partner.
GOLD_DISTRACTOR = 1.0
# A query sharing more of its content words with its document tests word matching, which lexical search already does.
MAX_SHARED = 0.5
# With one content word, "shares at most half" means "shares none", and a one-word query is a keyword lookup.
MIN_CONTENT_WORDS = 2
# A person reads the first screen of results.
K = 10
# Off-topic queries drawn from each retrieval collection (medline has 30, lisa 35: those give all they have).
OFFTOPIC_PER_COLLECTION = 40


@dataclass(frozen=True)
class AnswerSet:
    """The benchmark's documents (doc id -> sentence) and queries: ``answerable`` (query id -> text) each with its one
    right document in ``answers`` (query id -> doc id), and ``offtopic`` (query id ``collection:id`` -> text)."""

    documents: dict[str, str]
    answerable: dict[str, str]
    answers: dict[str, str]
    offtopic: dict[str, str]

    def queries(self) -> dict[str, str]:
        """Every query, answerable ones first."""
        return {**self.answerable, **self.offtopic}

    def collection(self) -> Collection:
        """The same as a retrieval collection (untitled documents), the form :func:`product.write_files` takes."""
        return Collection("answerability", {d: ("", text) for d, text in self.documents.items()}, self.queries(),
                          {q: {d: 1.0} for q, d in self.answers.items()})


def content_stems(text: str) -> frozenset[str]:
    """A text's content words as lexical search sees them: the stems of :func:`query_terms`, stop words left out
    (query_terms keeps them when a text has nothing else)."""
    return frozenset(t.stem for t in query_terms(text) if fold(t.word) not in STOPWORDS)


def shared(query: str, document: str) -> float:
    """The share of the pair's content words that both sentences have (Jaccard; 0 when neither has any).

    Symmetric in the two sentences, so which side becomes the query does not change what is kept; on STS-B dev it
    keeps about 90 queries where the share of the query's words keeps 38, too few to tell a 2-point difference."""
    stems, other = content_stems(query), content_stems(document)
    return len(stems & other) / len(stems | other) if stems | other else 0.0


def _key(text: str) -> str:
    """What makes two sentences the same document: STS-B repeats sentences with other case or spacing."""
    return " ".join(text.lower().split())


def select(pairs: StsPairs, offtopic: Mapping[str, str]) -> AnswerSet:
    """Documents and answerable queries from ``pairs`` (the rules are in the module docstring), with ``offtopic``.

    The first sentence of a pair is the document, the second the query. A document that appears twice (as another
    pair's document or as a distractor) is written once; a pair is skipped where its document appears more than once
    or its query is itself a document, since its right answer would not be one file.
    """
    candidates = [i for i, (document, query, gold) in enumerate(zip(pairs.first, pairs.second, pairs.gold))
                  if gold >= GOLD_ANSWERABLE and len(content_stems(query)) >= MIN_CONTENT_WORDS
                  and shared(query, document) <= MAX_SHARED]
    distractors = [s for i, gold in enumerate(pairs.gold) if gold <= GOLD_DISTRACTOR
                   for s in (pairs.first[i], pairs.second[i])]
    counts = Counter(_key(s) for s in [pairs.first[i] for i in candidates] + distractors)
    doc_of: dict[str, str] = {}
    documents: dict[str, str] = {}
    for text in [pairs.first[i] for i in candidates] + distractors:
        if _key(text) not in doc_of:
            doc_of[_key(text)] = doc_id = f"d{len(documents):05d}"
            documents[doc_id] = text
    answerable: dict[str, str] = {}
    answers: dict[str, str] = {}
    for i in candidates:
        document, query = pairs.first[i], pairs.second[i]
        if counts[_key(document)] > 1 or _key(query) in doc_of:
            log.info("pair %d skipped: its document or query is not a unique file", i)
            continue
        answerable[f"q{i:05d}"] = query
        answers[f"q{i:05d}"] = doc_of[_key(document)]
    # a skipped pair's document stays: it is one more distractor
    return AnswerSet(documents, answerable, answers, dict(offtopic))


def load_offtopic(retrieval: Path, *, per_collection: int = OFFTOPIC_PER_COLLECTION, seed: int = 0,
                  collections: Sequence[str] = RETRIEVAL_COLLECTIONS) -> dict[str, str]:
    """A seeded sample of each collection's ``queries.jsonl`` (ids ``collection:id``, in file order)."""
    out: dict[str, str] = {}
    for name in collections:
        path = Path(retrieval) / name / "queries.jsonl"
        if not path.is_file():
            raise BenchmarkError(f"{path} not found: give --data a folder with retrieval/<collection>/queries.jsonl")
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        kept = sorted(random.Random(f"{seed}:{name}").sample(range(len(records)), min(per_collection, len(records))))
        out.update({f"{name}:{records[i]['_id']}": records[i]["text"] for i in kept})
    return out


@dataclass(frozen=True)
class Hit:
    """One result line of `quire search`: the document, its confidence (0-1) and strength ("strong", "possible",
    "unlikely"), its cosine (None where the mode gives none)."""

    doc: str
    confidence: float
    strength: str
    similarity: float | None


def search(built: Built, files: Files, queries: Mapping[str, str], mode: str, *, gated: bool, timeout: float,
           k: int = K) -> dict[str, tuple[Hit, ...]]:
    """One `quire search --queries FILE -k K --no-explain --json` run, with ``--all`` unless ``gated``: each query's
    results in order, a result's duplicates (same content) following it; an error line counts as no results."""
    path = built.db.parent / f"queries-{mode}-{'gated' if gated else 'all'}.jsonl"
    path.write_text("".join(json.dumps({"id": q, "text": t}) + "\n" for q, t in queries.items()), encoding="utf-8")
    run = run_cli(["search", "--queries", str(path), "--db", str(built.db), "--mode", mode, "-k", str(k),
                   *([] if gated else ["--all"]), "--no-explain", "--json"], timeout=timeout)
    out: dict[str, tuple[Hit, ...]] = {}
    for item in map(json.loads, filter(str.strip, run.stdout.splitlines())):
        if "error" in item:
            log.warning("query %s: %s", item["id"], item["error"])
        hits = []
        for result in item["results"]:
            for p in (result["path"], *result.get("duplicates", ())):
                doc = files.ids.get(str(Path(p).resolve()))
                if doc is None:
                    raise BenchmarkError(f"search returned {p}, which is not a file of this collection")
                hits.append(Hit(doc, float(result["confidence"]), str(result["strength"]), result.get("similarity")))
        out[str(item["id"])] = tuple(hits[:k])
    missing = set(queries) - set(out)
    if missing:
        raise BenchmarkError(f"`quire search --queries` returned no line for {len(missing)} queries")
    return out


def shown(hits: Sequence[Hit], k: int = K) -> list[str]:
    """The documents a person sees: the first ``k`` results `quire search` lists (those that share something with
    the query; an uncertain one is shown, labelled)."""
    return [h.doc for h in hits][:k]


@dataclass(frozen=True)
class Scores:
    """Percentages over the answerable queries (``shown_*`` read what `quire search` lists, ``ungated_*`` the
    ``--all`` ranking; ``cut_by_gate``: the right document in the ungated top k but not listed;
    ``answerable_nothing``: nothing listed at all; ``first_at_least_possible``: the right document first and labelled
    at least "possible") and over the off-topic queries (``offtopic_no_strong``: no result labelled strong, what
    should happen, per collection in ``offtopic_no_strong_by_collection``; ``offtopic_best_under_30``: the best card
    reads under 30; ``offtopic_best_card_median`` / ``_p95``: its number; ``offtopic_nothing``: nothing listed at
    all). ``ece`` and ``reliability``: the calibration of the first k cards' confidence over all queries."""

    shown_at_k: float
    shown_top1: float
    ungated_at_k: float
    ungated_top1: float
    cut_by_gate: float
    answerable_nothing: float
    first_at_least_possible: float
    offtopic_no_strong: float
    offtopic_best_under_30: float
    offtopic_best_card_median: float
    offtopic_best_card_p95: float
    offtopic_nothing: float
    offtopic_no_strong_by_collection: dict[str, float]
    ece: float
    reliability: tuple[ReliabilityBin, ...]


def score(answers: AnswerSet, gated: Mapping[str, Sequence[Hit]], ungated: Mapping[str, Sequence[Hit]], *,
          k: int = K) -> Scores:
    """Scores of one mode from its listed and ``--all`` results (query id -> hits in rank order)."""
    if not answers.answerable or not answers.offtopic:
        raise BenchmarkError("the benchmark needs answerable and off-topic queries; check the data and the rules")
    cards = [(h.confidence, h.doc == answers.answers.get(q)) for q in answers.queries() for h in gated[q][:k]]
    error, table = reliability(np.array([c for c, _ in cards]), np.array([float(y) for _, y in cards]))
    return Scores(**_answerable_scores(answers, gated, ungated, k), **_offtopic_scores(answers, gated, k),
                  ece=round(error, 4), reliability=tuple(table))


def _percent(flags: Sequence[bool]) -> float:
    return round(100 * sum(flags) / len(flags), 1)


def _answerable_scores(answers: AnswerSet, gated: Mapping[str, Sequence[Hit]], ungated: Mapping[str, Sequence[Hit]],
                       k: int) -> dict[str, Any]:
    """The answerable queries' share of right documents shown, first, and in the ungated ranking."""
    right, asked = answers.answers, answers.answerable
    seen = {q: shown(gated[q], k) for q in asked}
    ranked = {q: [h.doc for h in ungated[q]][:k] for q in asked}
    return {
        "shown_at_k": _percent([right[q] in seen[q] for q in asked]),
        "shown_top1": _percent([seen[q][:1] == [right[q]] for q in asked]),
        "ungated_at_k": _percent([right[q] in ranked[q] for q in asked]),
        "ungated_top1": _percent([ranked[q][:1] == [right[q]] for q in asked]),
        "cut_by_gate": _percent([right[q] in ranked[q] and right[q] not in seen[q] for q in asked]),
        "answerable_nothing": _percent([not seen[q] for q in asked]),
        "first_at_least_possible": _percent([seen[q][:1] == [right[q]] and gated[q][0].strength != "unlikely"
                                             for q in asked]),
    }


def _offtopic_scores(answers: AnswerSet, gated: Mapping[str, Sequence[Hit]], k: int) -> dict[str, Any]:
    """The off-topic queries' share with no strong result, their best cards, and the share with none by collection."""
    best_off = np.array([gated[q][0].confidence if gated[q] else 0.0 for q in answers.offtopic])
    no_strong = {q: all(h.strength != "strong" for h in gated[q][:k]) for q in answers.offtopic}
    by_collection: dict[str, list[bool]] = {}
    for q in answers.offtopic:
        by_collection.setdefault(q.split(":", 1)[0], []).append(no_strong[q])
    return {
        "offtopic_no_strong": _percent(list(no_strong.values())),
        "offtopic_best_under_30": _percent((best_off < POSSIBLE).tolist()),
        "offtopic_best_card_median": round(100 * float(np.median(best_off)), 1),
        "offtopic_best_card_p95": round(100 * float(np.percentile(best_off, 95)), 1),
        "offtopic_nothing": _percent([not seen for seen in (shown(gated[q], k) for q in answers.offtopic)]),
        "offtopic_no_strong_by_collection": {name: _percent(flags) for name, flags in by_collection.items()},
    }


def separation(answers: AnswerSet, ungated: Mapping[str, Sequence[Hit]]) -> float | None:
    """How well the cosine alone could gate, whatever the threshold: the percentage of (answerable, off-topic) query
    pairs in which the answerable query's right document has a higher similarity than the off-topic query's best
    result (ties count half; a right document missing from the ungated results counts as lower). None where the
    mode reports no similarities (lexical)."""
    def best(hits: Sequence[Hit]) -> float | None:
        values = [h.similarity for h in hits if h.similarity is not None]
        return max(values) if values else None

    right = [next((h.similarity for h in ungated[q] if h.doc == answers.answers[q]), None) for q in answers.answerable]
    off = [best(ungated[q]) for q in answers.offtopic]
    if all(v is None for v in right + off):
        return None
    low = float("-inf")
    right_values = [low if v is None else v for v in right]
    off_values = [low if v is None else v for v in off]
    wins = sum((r > o) + 0.5 * (r == o) for r in right_values for o in off_values)
    return round(100 * wins / (len(right_values) * len(off_values)), 1)
