"""One ranking from the two sides': each document's meaning weighed by all its sentences, the two sides' scores
normalised over the query's candidates and combined, and every document's evidence put on the relevance scale
(engine.search.relevance; docs/decisions/0002-score-fusion-and-relevance-gate.md)."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.search import meaning
from engine.search import relevance as rel
from engine.search.candidates import BOILERPLATE_PENALTY, Candidate, ranked_by, semantic_side_score, word_side_score
from engine.search.results import Mode
from engine.search.similarity import SentenceVectors
from engine.store.database import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ranking:
    """A query's documents in ranking order (``ranked``), every candidate the filters let through by id (``docs``,
    ranked or not: semantic and lexical mode rank only what their side found), and in a filtered search the
    documents a search without filters reads (``reference``; None: no filters). Only the first ``depth`` documents
    may be shown (:attr:`head`); the others count towards how many qualify."""

    ranked: tuple[Candidate, ...]
    docs: Mapping[int, Candidate]
    reference: tuple[Candidate, ...] | None
    depth: int

    @property
    def head(self) -> tuple[Candidate, ...]:
        """The documents that may be shown."""
        return self.ranked[: self.depth]


def fuse(docs: Mapping[int, Candidate], mode: Mode, scale: rel.Scale, reference: Sequence[Candidate] | None = None
         ) -> list[Candidate]:
    """The documents in ranking order, each with its fused score; in semantic or lexical mode only the documents
    that side found, in that side's order. Every document's evidence is set, from all the query's evidence.
    ``reference``: the documents whose scores set the two sides' scales (None: ``docs`` themselves)."""
    by_sem = sorted((d for d in docs.values() if not math.isnan(semantic_side_score(d))),
                    key=lambda d: -semantic_side_score(d))
    by_lex = sorted((d for d in docs.values() if d.lex_passage is not None), key=lambda d: -d.lex_score)
    for rank, d in enumerate(by_sem, 1):
        d.sem_rank = rank
    for rank, d in enumerate(by_lex, 1):
        d.lex_rank = rank
    pool = ranked_by(mode, list(docs.values()))
    # the reference's documents a filter leaves out are weighed too: the first of them may set the card scores
    outside = [d for d in reference if d.doc_id not in docs] if reference is not None else []
    everything = list(docs.values()) + outside
    evidence = scale.evidence(_cosines(everything), _bm25s(everything))
    for d, e in zip(everything, evidence.tolist()):
        d.evidence = e
    if not pool:
        return []
    # ranked by the document's meaning (its best sentence boilerplate-penalised), judged by the best cosine
    # itself (the scale knows no penalty)
    scales = ranked_by(mode, reference) if reference is not None else pool
    weighed = pool + ranked_by(mode, outside)
    fused = rel.fuse(_semantic_side_scores(weighed), _word_side_scores(weighed), rel.semantic_share(mode),
                     (_semantic_side_scores(scales), _word_side_scores(scales)))
    for d, f in zip(weighed, fused.tolist()):
        d.fused = f
    return sorted(pool, key=lambda d: (-d.fused, d.doc_id))


def weigh_meaning(store: Store, vectors: SentenceVectors, docs: dict[int, Candidate], mode: Mode,
                   query_vectors: np.ndarray | None) -> None:
    """Set the meaning of the documents ``mode`` ranks by it: in hybrid mode every candidate, in semantic mode
    those found by meaning (engine.search.meaning)."""
    if query_vectors is None or mode is Mode.LEXICAL:
        return
    pool = [d for d in docs.values() if mode is Mode.HYBRID or d.sem_sentence is not None]
    spans = store.sentences.spans([d.doc_id for d in pool])
    ids, found = vectors.vectors(meaning.sentences_to_score(spans))
    scores = meaning.document_meaning(query_vectors.mean(axis=0), ids, found, spans,
                                      {sid for d in pool for sid in d.repeated}, BOILERPLATE_PENALTY)
    for d in pool:
        if d.doc_id in scores:
            best, centroid = scores[d.doc_id]
            d.meaning = max(best, d.sem_score) + meaning.CENTROID_WEIGHT * centroid


def _cosines(docs: Sequence[Candidate]) -> np.ndarray:
    """Each document's best cosine (NaN: not found by meaning)."""
    return np.array([d.sem_cosine if d.sem_sentence is not None else np.nan for d in docs])


def _semantic_side_scores(docs: Sequence[Candidate]) -> np.ndarray:
    return np.array([semantic_side_score(d) for d in docs])


def _bm25s(docs: Sequence[Candidate]) -> np.ndarray:
    """Each document's best BM25 (0: not found by its words)."""
    return np.array([d.lex_score if d.lex_passage is not None else 0.0 for d in docs])


def _word_side_scores(docs: Sequence[Candidate]) -> np.ndarray:
    return np.array([word_side_score(d) for d in docs])
