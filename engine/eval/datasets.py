"""Loaders for the benchmark formats: STS-B csv, the EvalRank toolkit's files, BEIR-layout retrieval collections.

Each loader returns a frozen dataclass and can subsample deterministically (``--quick`` runs for CI).
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

# Column layout of the STS Benchmark csv files: genre, file, year, id, score, sentence 1, sentence 2 (tab-separated).
_STS_SOURCE, _STS_SCORE, _STS_A, _STS_B = 1, 4, 5, 6
RETRIEVAL_COLLECTIONS = ("cranfield", "cisi", "medline", "npl", "lisa")


@dataclass(frozen=True)
class StsPairs:
    """Sentence pairs with gold similarity scores (0-5) and the source each pair was drawn from (``headlines``,
    ``answer-answer``, ...): STS-B mixes genres, and a bag-of-words model loses far more on some than on others."""

    first: tuple[str, ...]
    second: tuple[str, ...]
    gold: tuple[float, ...]
    source: tuple[str, ...]


@dataclass(frozen=True)
class EvalRankData:
    """The background pool and the positive pairs as indices into it (both directions are listed in the file)."""

    pool: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Collection:
    """A retrieval test collection: documents (id -> (title, text)), queries (id -> text), graded judgements."""

    name: str
    documents: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]

    def judged_queries(self) -> list[str]:
        """Queries with text and at least one relevant document, in file order: the ones that are scored."""
        return [q for q in self.queries if any(g > 0 for g in self.qrels.get(q, {}).values())]


def load_sts(path: Path, *, limit: int | None = None) -> StsPairs:
    """One STS-B split; ``limit`` keeps every n-th pair so a subsample still spans the score range."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) > _STS_B:
            rows.append((cells[_STS_A], cells[_STS_B], float(cells[_STS_SCORE]), cells[_STS_SOURCE]))
    if not rows:
        raise ValueError(f"{path}: no STS pairs found (expected tab-separated STS Benchmark rows)")
    if limit and len(rows) > limit:
        rows = rows[:: -(-len(rows) // limit)]
    first, second, gold, source = zip(*rows)
    return StsPairs(first, second, gold, source)


def load_evalrank(folder: Path, *, pairs_limit: int | None = None, pool_limit: int | None = None,
                  seed: int = 0) -> EvalRankData:
    """``pos_pair.txt`` (tab-separated) and ``background_sent.txt``; every pair sentence must be in the pool.

    A subsample keeps ``pairs_limit`` random pairs and a pool of their sentences plus random background sentences
    up to ``pool_limit``.
    """
    folder = Path(folder)
    pool = _lines(folder / "background_sent.txt")
    pairs = [tuple(line.split("\t")) for line in _lines(folder / "pos_pair.txt")]
    position = {s: i for i, s in enumerate(pool)}
    missing = [s for pair in pairs for s in pair if s not in position]
    if missing:
        raise ValueError(f"{folder}: {len(missing)} pair sentences are not in the background pool, e.g. {missing[0]!r}")
    rng = random.Random(seed)
    if pairs_limit and len(pairs) > pairs_limit:
        pairs = rng.sample(pairs, pairs_limit)
        needed = {s for pair in pairs for s in pair}
        others = [s for s in pool if s not in needed]
        extra = rng.sample(others, max(0, min(len(others), (pool_limit or len(pool)) - len(needed))))
        pool = sorted(needed) + extra
        position = {s: i for i, s in enumerate(pool)}
    return EvalRankData(tuple(pool), tuple((position[a], position[b]) for a, b in pairs))


def load_collection(folder: Path, *, queries_limit: int | None = None, distractors: int | None = None,
                    seed: int = 0) -> Collection:
    """A BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``).

    A subsample keeps the first ``queries_limit`` judged queries, every document judged for them, and
    ``distractors`` random other documents.
    """
    folder = Path(folder)
    documents = {}
    for record in _jsonl(folder / "corpus.jsonl"):
        documents[str(record["_id"])] = (record.get("title") or "", record.get("text") or "")
    queries = {str(r["_id"]): r["text"] for r in _jsonl(folder / "queries.jsonl")}
    qrels: dict[str, dict[str, float]] = {}
    for i, line in enumerate((folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()):
        cells = line.split("\t")
        if i == 0 and cells[0] == "query-id":
            continue
        if len(cells) >= 3 and cells[1] in documents:
            qrels.setdefault(cells[0], {})[cells[1]] = float(cells[2])
    collection = Collection(folder.name, documents, queries, qrels)
    if queries_limit is None:
        return collection
    kept = collection.judged_queries()[:queries_limit]
    judged = {d for q in kept for d in qrels[q]}
    others = sorted(set(documents) - judged)
    chosen = judged | set(random.Random(seed).sample(others, min(len(others), distractors or 0)))
    return Collection(
        folder.name, {d: documents[d] for d in documents if d in chosen}, {q: queries[q] for q in kept},
        {q: qrels[q] for q in kept},
    )


def _lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
