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

from engine.search import features, gate, secondlook
from engine.search import relevance as rel
from engine.search.confidence import ConfidenceModels, Strength, strength
from engine.search.results import Answer, Mode, SearchResponse, SearchResult
from engine.search.secondlook import Look
from engine.store.filters import NOTHING_PASSES
from engine.text import terms as T


def shard_depth(k: int) -> int:
    """Documents each shard returns for a merged page of ``k``: as many as one index weighs for it (3k + 10)."""
    return 3 * k + 10


def merge(query: str, mode: Mode, k: int, include_weak: bool, responses: Sequence[SearchResponse],
          sentences: int, hashes: Mapping[str, str], models: ConfidenceModels) -> SearchResponse:
    """Fuse the shards' ``responses`` (searched with ``include_weak`` and the collection's statistics) into the
    collection's ``k`` best, each judged by the confidence ``models`` over the merged ranking as one index would
    judge it (engine.search.gate.score: the features that compare a document with the others are measured again
    among the collection's first documents, from what each shard's result carries); ``sentences``: the
    collection's; ``hashes``: the content hash of each result's document, by path, which folds copies of one file
    held by different shards."""
    pool = [r for response in responses for r in response.results]
    cosines = np.array([r.explanation.contributions.get("semantic", math.nan) for r in pool], dtype=np.float64)
    bm25 = np.array([r.explanation.bm25 or 0.0 for r in pool], dtype=np.float64)
    # what each shard's word side ranked by: its BM25, or in hybrid mode that counting related words
    ranking_bm25 = np.array([r.explanation.contributions.get("words", r.explanation.bm25 or 0.0) for r in pool],
                            dtype=np.float64)
    fused = rel.fuse(cosines, ranking_bm25, rel.semantic_share(mode)).tolist() if pool else []
    # ties by path: document ids differ between layouts, paths do not
    order = sorted(range(len(pool)), key=lambda i: (-fused[i], pool[i].path))
    sem_rank = _ranks(pool, -np.nan_to_num(cosines, nan=-np.inf), ~np.isnan(cosines))
    lex_rank = _ranks(pool, -bm25, np.array([r.explanation.bm25 is not None for r in pool], dtype=bool))
    ranked = _fold_copies([replace(pool[i], explanation=replace(
        pool[i].explanation, semantic_rank=sem_rank[i], lexical_rank=lex_rank[i],
        contributions={**pool[i].explanation.contributions, "fused": round(fused[i], 6)})) for i in order], hashes)
    missing = set.intersection(*(set(r.missing) for r in responses)) if responses else set()
    judged = _judged(query, ranked[: max(k, secondlook.DOCUMENTS)], mode, sentences, bool(missing), models)
    shown = [r for r in judged if include_weak or r.related][:k]
    answer = gate.answer([(r.related, r.strength) for r in judged])
    unrelated = sum(not r.related for r in judged)
    return SearchResponse(
        query=query, mode=mode, method=responses[0].method if responses else "",
        results=tuple(shown), nothing_relevant=answer in (Answer.CLOSEST, Answer.NOTHING),
        weak_hidden=0 if include_weak else unrelated, notes=_notes(responses),
        missing=tuple(w for w in responses[0].missing if w in missing) if responses else (),
        found=max(len(ranked) - (0 if include_weak else unrelated), len(shown)),
        found_at_least=any(r.found_at_least or r.found > len(r.results) for r in responses),
        did_you_mean=next((r.did_you_mean for r in responses if r.did_you_mean), None) if missing else None,
        answer=answer,
        confidence=next((r.confidence for r in judged if r.related), 0.0),
        refined=any(r.refined for r in responses),
    )


def _judged(query: str, ranked: Sequence[SearchResult], mode: Mode, sentences: int, missing_word: bool,
            models: ConfidenceModels) -> list[SearchResult]:
    """The merged ranking's first documents with their confidence, in the order the second look shows them."""
    context = features.QueryContext(None, None, sentences, missing_word)
    relatable = not T.stop_words_only(query)
    carried = [r.explanation.confidence_features for r in ranked]
    evidence = [features.Evidence(c.get("z", 0.0), r.explanation.term_coverage, r.explanation.bm25 is not None,
                                  r.explanation.contributions["fused"], " ".join(r.sentence.split()).casefold())
                for r, c in zip(ranked, carried)]
    looked = [c for c in carried[: secondlook.DOCUMENTS] if "m_opening" in c]
    looks = [Look(c["m_opening"], c["m_sentence"]) for c in looked] if len(looked) == min(
        len(ranked), secondlook.DOCUMENTS) else None
    scored = gate.score(evidence, context, models, looks, reorder=mode is not Mode.LEXICAL)
    out = []
    for i, p in zip(scored.order, scored.probability):
        r, level = ranked[i], strength(p)
        related = r.related or gate.related(evidence[i], p, relatable)
        why = replace(r.explanation, confidence_features={n: round(v, 6) for n, v in scored.features[i].items()})
        out.append(replace(r, score=gate.card_score(p), confidence=round(p, 4), strength=level, related=related,
                           weak=level is Strength.UNLIKELY, explanation=why))
    return out


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
