"""One ranking from a collection's shards: each shard ranks with the collection's statistics and returns its
documents with their raw scores, and the merge fuses, gates and scores them as one index holding the collection
would (:mod:`engine.search.relevance`).

Why this is exact for words and close for meaning: a shard's BM25 scores use the collection's passage count,
document frequencies and mean length (:class:`engine.search.statistics.CollectionStatistics`), so every passage
scores what it scores in one index and the lexical ranking is the same. Cosines need no statistics (one model), but
fusion min-max normalises them over the query's candidates, and the merged candidates are each shard's best rather
than the collection's best: the normalisation, and a sentence's count of copies in other shards (boilerplate), may
differ slightly from one index's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from engine.search import relevance as rel
from engine.search.calibration import MIN_SENTENCES
from engine.search.results import Mode, SearchResponse, SearchResult
from engine.store.filters import NOTHING_PASSES


def shard_depth(k: int) -> int:
    """Documents each shard returns for a merged page of ``k``: as many as one index weighs for it (3k + 10)."""
    return 3 * k + 10


def merge(query: str, mode: Mode, k: int, include_weak: bool, responses: Sequence[SearchResponse],
          sentences: int, hashes: Mapping[str, str]) -> SearchResponse:
    """Fuse the shards' ``responses`` (searched with ``include_weak`` and the collection's statistics) into the
    collection's ``k`` best; ``sentences``: the collection's, which size the relevance bar; ``hashes``: the content
    hash of each result's document, by path, which folds copies of one file held by different shards."""
    pool = [r for response in responses for r in response.results]
    cosines = np.array([r.explanation.contributions.get("semantic", math.nan) for r in pool], dtype=np.float64)
    bm25 = np.array([r.explanation.bm25 or 0.0 for r in pool], dtype=np.float64)
    # what each shard's word side ranked by: its BM25, or in hybrid mode that counting related words
    ranking_bm25 = np.array([r.explanation.contributions.get("words", r.explanation.bm25 or 0.0) for r in pool],
                            dtype=np.float64)
    evidence = np.array([r.explanation.contributions["evidence"] for r in pool], dtype=np.float64)
    # what the gate weighed of each document: its evidence, and its word alignment where its shard weighed that
    gated = [rel.gated(r.explanation.contributions["evidence"], r.explanation.contributions.get("alignment"), mode)
             for r in pool]
    fused = rel.fuse(cosines, ranking_bm25, rel.semantic_share(mode)).tolist() if pool else []
    # ties by path: document ids differ between layouts, paths do not
    order = sorted(range(len(pool)), key=lambda i: (-fused[i], pool[i].path))
    bar = rel.bar(mode, small_folder=sentences < MIN_SENTENCES)
    floor = rel.WEAK_SHARE * rel.bar(mode, small_folder=False)
    # each shard's gate weighed its best documents with the collection's statistics, and the collection's best
    # documents are among their shards' best: a shard's answer is the collection's
    answered = any(not r.nothing_relevant for r in responses)
    sem_rank = _ranks(pool, -np.nan_to_num(cosines, nan=-np.inf), ~np.isnan(cosines))
    lex_rank = _ranks(pool, -bm25, np.array([r.explanation.bm25 is not None for r in pool], dtype=bool))
    top = order[0] if order else None
    scale = rel.relevance(gated[top], bar) / fused[top] if top is not None and fused[top] > 0 else 0.0
    ranked: list[SearchResult] = []
    for i in order:
        result = pool[i]
        why = replace(result.explanation, semantic_rank=sem_rank[i], lexical_rank=lex_rank[i],
                      contributions={**result.explanation.contributions, "fused": round(fused[i], 6)})
        weak = not answered or float(evidence[i]) < floor
        ranked.append(replace(result, score=round(scale * fused[i], 1), weak=weak, explanation=why))
    ranked = _fold_copies(ranked, hashes)
    strong = [r for r in ranked if not r.weak]
    shown = ranked[:k] if include_weak else strong[:k]
    weak_hidden = 0 if include_weak else _weak_before(ranked, k)
    missing = set.intersection(*(set(r.missing) for r in responses)) if responses else set()
    return SearchResponse(
        query=query, mode=mode, method=responses[0].method if responses else "",
        results=tuple(shown), nothing_relevant=not strong, weak_hidden=weak_hidden,
        notes=_notes(responses),
        missing=tuple(w for w in responses[0].missing if w in missing) if responses else (),
        found=max(len(ranked) if include_weak else len(strong), len(shown)),
        found_at_least=any(r.found_at_least or r.found > len(r.results) for r in responses),
        did_you_mean=next((r.did_you_mean for r in responses if r.did_you_mean), None) if missing else None,
    )


def _notes(responses: Sequence[SearchResponse]) -> tuple[str, ...]:
    """The shards' notes, each once; that no document passes the filters is the collection's only if no shard has one
    that does."""
    notes = dict.fromkeys(n for r in responses for n in r.notes)
    if not all(NOTHING_PASSES in r.notes for r in responses):
        notes.pop(NOTHING_PASSES, None)
    return tuple(notes)


def _ranks(pool: Sequence[SearchResult], keys: np.ndarray, found: np.ndarray) -> list[int | None]:
    """1-based places by ascending ``keys`` among the ``found`` documents of the merged pool (None: not found)."""
    places: list[int | None] = [None] * len(pool)
    for place, i in enumerate(sorted(np.flatnonzero(found).tolist(), key=lambda i: (keys[i], pool[i].path)), 1):
        places[i] = place
    return places


def _fold_copies(ranked: Sequence[SearchResult], hashes: Mapping[str, str]) -> list[SearchResult]:
    """The ranking with each document whose content an earlier one has folded into that one's ``duplicates``."""
    out: list[SearchResult] = []
    first: dict[str, int] = {}
    for result in ranked:
        content = hashes.get(result.path)
        if content is not None and content in first:
            kept = out[first[content]]
            out[first[content]] = replace(kept, duplicates=(*kept.duplicates, result.path, *result.duplicates))
            continue
        if content is not None:
            first[content] = len(out)
        out.append(result)
    return out


def _weak_before(ranked: Sequence[SearchResult], k: int) -> int:
    """Weak documents ranked above the k-th strong one: those one index weighs, and hides, before it has k."""
    weak = strong = 0
    for result in ranked:
        if strong >= k:
            break
        weak += result.weak
        strong += not result.weak
    return weak
