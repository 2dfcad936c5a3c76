"""Judged queries for fitting and judging the confidence model (engine.search.confidence), split in two: the model
is fitted on the training split and reported once on the held-out one.

Sources, each a kind of folder a person has (docs/decisions/0040-calibrated-confidence.md):

- ``sts``: the relevance benchmark's STS-B paraphrase sets (engine.eval.answerability): dev to fit, test held out.
- ``evalrank``: the same construction on EvalRank's positive pairs (STS 2012-2016, SICK, Wikipedia and literary
  paraphrases) that share no sentence with STS-B dev or test, split in halves by pair; background sentences are the
  other documents.
- the five classic collections (``cranfield`` ...), their judged queries split in halves by id: multi-sentence
  documents with many relevant documents per query.
- ``small``: folders of 1 to 40 documents drawn from one EvalRank half, each with one paraphrase query and two
  off-topic ones, where the extremes of a few hundred chances are unlike a large collection's.

Every source also gets off-topic queries that nothing in it answers: for the sentence sources the classic
collections' queries, for a classic collection those of other fields (not CISI's for LISA or LISA's for CISI, both
library science), all drawn from the same split.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from engine.eval import answerability as ans
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, Collection, StsPairs, load_collection, load_sts

# Off-topic queries per sentence source, and per classic collection.
SENTENCE_OFFTOPIC = 200
CLASSIC_OFFTOPIC = 60
# EvalRank background sentences kept as distractor documents of each half.
DISTRACTORS = 4000
# The small folders' sizes, and how many folders of each size per split.
SMALL_SIZES = (1, 3, 7, 15, 40)
SMALL_FOLDERS = 40
# Off-topic queries of each small folder.
SMALL_OFFTOPIC = 2
LIBRARY_SCIENCE = frozenset({"cisi", "lisa"})


class Split(str, Enum):
    """Which half a query belongs to."""

    TRAIN = "train"
    TEST = "test"


@dataclass(frozen=True)
class JudgedSet:
    """One folder of documents (id -> (title, text)) with judged queries (id -> text): ``relevant`` maps each query
    to its relevant documents and their grades (empty: an off-topic query). ``index`` names the folder's index where
    two sets share one (a classic collection's halves)."""

    name: str
    source: str
    split: Split
    documents: dict[str, tuple[str, str]]
    queries: dict[str, str]
    relevant: dict[str, dict[str, float]]
    index: str

    def collection(self) -> Collection:
        """The documents in the form engine.eval.product writes as files."""
        return Collection(self.index, self.documents, {}, {})


def half(key: str, salt: str) -> Split:
    """A stable split of ``key``: the parity of a hash, so adding queries never moves one."""
    digest = int(hashlib.sha1(f"{salt}:{key}".encode()).hexdigest(), 16)
    return Split.TRAIN if digest % 2 == 0 else Split.TEST


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def classic_queries(data: Path) -> dict[str, tuple[str, Split]]:
    """Every judged query of the classic collections (``collection:id`` -> text, split)."""
    out = {}
    for name in RETRIEVAL_COLLECTIONS:
        collection = load_collection(data / "retrieval" / name)
        out.update({f"{name}:{q}": (collection.queries[q], half(f"{name}:{q}", "classic"))
                    for q in collection.judged_queries()})
    return out


def offtopic(data: Path, split: Split, count: int, *, not_of: frozenset[str] = frozenset(), seed: str = ""
             ) -> dict[str, str]:
    """A seeded sample of ``count`` classic queries of ``split``, none of a collection in ``not_of``."""
    pool = sorted((key, text) for key, (text, s) in classic_queries(data).items()
                  if s is split and key.split(":")[0] not in not_of)
    return dict(random.Random(f"{seed}:{split.value}").sample(pool, min(count, len(pool))))


def _from_answers(name: str, source: str, split: Split, answers: ans.AnswerSet, off: dict[str, str]) -> JudgedSet:
    queries = {**answers.answerable, **{f"off:{q}": t for q, t in off.items()}}
    relevant: dict[str, dict[str, float]] = {q: {d: 1.0} for q, d in answers.answers.items()}
    relevant.update({f"off:{q}": {} for q in off})
    return JudgedSet(name, source, split, {d: ("", t) for d, t in answers.documents.items()}, queries, relevant, name)


def sts_set(data: Path, split: Split) -> JudgedSet:
    """The relevance benchmark's own set: STS-B dev for training, test held out."""
    pairs = load_sts(data / "sts" / f"sts-{'dev' if split is Split.TRAIN else 'test'}.csv")
    off = offtopic(data, split, SENTENCE_OFFTOPIC, seed="sts")
    return _from_answers(f"sts-{split.value}", "sts", split, ans.select(pairs, {}), off)


def _evalrank_pairs(data: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """EvalRank's positive pairs once each, and its background sentences, without any sentence of STS-B dev or test."""
    banned: set[str] = set()
    for name in ("dev", "test"):
        pairs = load_sts(data / "sts" / f"sts-{name}.csv")
        banned |= {_normal(s) for s in pairs.first + pairs.second}
    seen: set[tuple[str, str]] = set()
    kept = []
    for line in (data / "evalrank" / "pos_pair.txt").read_text(encoding="utf-8").splitlines():
        first, second = line.split("\t")
        key = (min(_normal(first), _normal(second)), max(_normal(first), _normal(second)))
        if key not in seen and not {_normal(first), _normal(second)} & banned:
            seen.add(key)
            kept.append((first, second))
    background = [s for s in (data / "evalrank" / "background_sent.txt").read_text(encoding="utf-8").splitlines()
                  if s and _normal(s) not in banned]
    return kept, background


def evalrank_set(data: Path, split: Split) -> JudgedSet:
    """One half of EvalRank's pairs as a paraphrase set, with background sentences as more documents."""
    pairs, background = _evalrank_pairs(data)
    mine = [p for p in pairs if half(min(_normal(p[0]), _normal(p[1])), "evalrank") is split]
    taken = {_normal(s) for p in pairs for s in p}  # either half's sentences: the other half's stay out
    others = [s for s in background if _normal(s) not in taken]
    distractors = random.Random(split.value).sample(others, min(DISTRACTORS, len(others)))
    # the distractors as pairs of gold 0, which select() keeps as documents
    firsts = tuple(a for a, _ in mine) + tuple(distractors[0::2])
    seconds = tuple(b for _, b in mine) + tuple(distractors[1::2])[: len(distractors[0::2])]
    firsts = firsts[: len(seconds)]
    gold = (5.0,) * len(mine) + (0.0,) * (len(seconds) - len(mine))
    answers = ans.select(StsPairs(firsts, seconds, gold, ("evalrank",) * len(seconds)), {})
    off = offtopic(data, split, SENTENCE_OFFTOPIC, seed="evalrank")
    return _from_answers(f"evalrank-{split.value}", "evalrank", split, answers, off)


def classic_set(data: Path, name: str, split: Split) -> JudgedSet:
    """One half of a classic collection's judged queries (relevant: grade above 0), with other fields' queries."""
    collection = load_collection(data / "retrieval" / name)
    queries = {q: collection.queries[q] for q in collection.judged_queries() if half(f"{name}:{q}", "classic") is split}
    relevant = {q: {d: g for d, g in collection.qrels[q].items() if g > 0} for q in queries}
    field = LIBRARY_SCIENCE if name in LIBRARY_SCIENCE else frozenset({name})
    off = offtopic(data, split, CLASSIC_OFFTOPIC, not_of=field, seed=name)
    queries.update({f"off:{q}": t for q, t in off.items()})
    relevant.update({f"off:{q}": {} for q in off})
    return JudgedSet(f"{name}-{split.value}", name, split, dict(collection.documents), queries, relevant, name)


def small_sets(data: Path, split: Split, *, sizes: tuple[int, ...] = SMALL_SIZES, folders: int = SMALL_FOLDERS
               ) -> Iterator[JudgedSet]:
    """Small folders drawn from one EvalRank half: one answer among distractor sentences, its paraphrase query, and
    off-topic queries that are other sentences of the half (short, everyday, about anything else)."""
    source = evalrank_set(data, split)
    rng = random.Random(f"small:{split.value}")
    answerable = [q for q, r in source.relevant.items() if r]
    answers = {next(iter(source.relevant[q])) for q in answerable}
    distractors = sorted(d for d in source.documents if d not in answers)
    for size in sizes:
        for n in range(folders):
            query = rng.choice(answerable)
            answer = next(iter(source.relevant[query]))
            chosen = [answer, *rng.sample(distractors, size - 1)]
            strangers = rng.sample([d for d in distractors if d not in chosen], SMALL_OFFTOPIC)
            queries = {query: source.queries[query], **{f"off:{d}": source.documents[d][1] for d in strangers}}
            relevant = {query: {answer: 1.0}, **{f"off:{d}": {} for d in strangers}}
            name = f"small{size}-{split.value}-{n}"
            yield JudgedSet(name, "small", split, {d: source.documents[d] for d in chosen}, queries, relevant, name)


def judged_sets(data: Path, split: Split) -> Iterator[JudgedSet]:
    """Every source's set of ``split``."""
    yield sts_set(data, split)
    yield evalrank_set(data, split)
    for name in RETRIEVAL_COLLECTIONS:
        yield classic_set(data, name, split)
    yield from small_sets(data, split)
