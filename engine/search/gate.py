"""Whether a query is answered at all, which documents are too weak to show and the number on each card: the
relevance gate, one replaceable part of the search (:class:`Gate`).

Today's rule (:class:`RelevanceGate`) weighs each document's evidence on the relevance scale against a bar, moved by
how its words align with the query's, and scales every card by the first result's relevance
(engine.search.relevance; docs/decisions/0002-score-fusion-and-relevance-gate.md, 0003, 0016, 0023). Another rule
takes the same ranking and query and gives a :class:`Verdict` of the same shape: retrieval, fusion, the passages
and the presentation do not change with it. (A collection merges its shards' results by the same rule, from what
their explanations carry: engine.cluster.search.)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.embed.base import Embedder
from engine.facets.space import FacetSpace
from engine.search import alignment
from engine.search import relevance as rel
from engine.search.calibration import MIN_SENTENCES
from engine.search.candidates import Candidate, ranked_by
from engine.search.fusion import Ranking
from engine.search.passages import CandidateSentences
from engine.search.query import Query
from engine.search.results import Mode
from engine.search.statistics import CollectionStatistics
from engine.store.database import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Verdict:
    """What the gate decided of one query's ranking: whether the query is ``answered``; how many documents of the
    whole ranking are ``strong`` enough to show; and for each document of its head (by id) whether it is ``weak``,
    its card ``score`` (0-100, not rounded) and what the gate weighed of it, for its explanation
    (``contributions``)."""

    answered: bool
    strong: int
    weak: Mapping[int, bool]
    score: Mapping[int, float]
    contributions: Mapping[int, Mapping[str, float]]


class Gate(Protocol):
    """A relevance gate: one verdict per query."""

    def judge(self, ranking: Ranking, query: Query, candidates: CandidateSentences) -> Verdict:
        """The verdict on ``ranking`` for ``query``; ``candidates`` reads the sentences a document may be shown by,
        once per search."""
        ...


@dataclass(frozen=True)
class _Card:
    """The document whose number sets every card's scale, what the gate weighed of it and its fused score."""

    gated: float
    fused: float


class RelevanceGate:
    """Today's rule, on one index: evidence against a bar, with word alignment where the static model's word space
    (``space``) is loaded; ``collection``: the index is a shard of a collection, sized by the collection's
    sentences (a folder too small to calibrate has a bar of its own)."""

    def __init__(self, store: Store, space: FacetSpace | None, embedder: Embedder | None,
                 collection: CollectionStatistics | None) -> None:
        self.store, self.space, self.embedder, self.collection = store, space, embedder, collection

    def judge(self, ranking: Ranking, query: Query, candidates: CandidateSentences) -> Verdict:
        """The verdict on ``ranking``: answered when a document the gate decides by clears the bar, a document weak
        far below it, and each card scaled so that the first result shows its relevance."""
        mode = query.mode
        small = (self.collection.sentences if self.collection else self.store.sentence_count()) < MIN_SENTENCES
        bar = rel.bar(mode, small_folder=small)
        aligned: dict[int, float] = {}  # the documents' word alignments, as they are weighed
        top = ranking.ranked[0] if ranking.ranked else None  # the first result; a filtered search's is set below
        unfiltered_top = top if ranking.reference is None else None
        deciding = self._deciding(query, ranking.docs.values(), small, bar, candidates, unfiltered_top, aligned)
        answered = any(rel.gated(d.evidence, aligned.get(d.doc_id), mode) >= bar for d in deciding)
        # a small folder's lower bar is for its best document, the best of few chances; the others are weighed as
        # anywhere (docs/decisions/0003-a-prior-for-small-folders.md)
        floor = rel.WEAK_SHARE * rel.bar(mode, small_folder=False)
        beside = deciding  # those the gate weighed with the first result
        if ranking.reference is not None and top is not None:
            # each card reads what it reads without the filters: the first result without them sets the numbers
            # (decision 0002, "Card score"), its word alignment weighed where the gate weighs it there
            top = max([top, *ranked_by(mode, ranking.reference)], key=lambda d: (d.fused, -d.doc_id))
            beside = self._deciding(query, ranking.reference, small, bar, candidates, top, aligned)
        card = None if top is None else _Card(
            rel.gated(top.evidence, aligned.get(top.doc_id) if any(d is top for d in beside) else None, mode),
            top.fused)
        strong = sum(d.evidence >= floor for d in ranking.ranked) if answered else 0
        head = ranking.head
        return Verdict(
            answered=answered, strong=strong,
            # weak: the query found nothing relevant at all, or this document's evidence is far below what that takes
            weak={d.doc_id: not answered or d.evidence < floor for d in head},
            score=_card_scores(head, card, bar),
            contributions={d.doc_id: {"alignment": round(aligned[d.doc_id], 4)} for d in head if d.doc_id in aligned},
        )

    def _deciding(self, query: Query, docs: Iterable[Candidate], small_folder: bool, bar: float,
                  candidates: CandidateSentences, card: Candidate | None, aligned: dict[int, float]
                  ) -> list[Candidate]:
        """The documents the gate answers a query by: the ALIGNED_DOCS with most evidence, each with its best
        candidate sentence's word alignment with the query (set in ``aligned``), where the static model's word space
        is loaded and the gate has no better view of meaning (docs/decisions/0016-word-alignment-in-the-gate.md): in
        lexical mode, which has no cosine at all, and on an index ranked by that static model, whose sentence vectors
        pool the same word vectors. Otherwise every document, by its evidence alone: sbert's cosine already answers
        the paraphrases static words cannot bridge, and a folder too small to calibrate has half the bar, set on
        evidence alone, where the long sentences of a few files align with a paraphrase at 0.3 or less.

        Where one of them clears ``bar`` however badly its words might align, the query is answered whatever the
        others' alignment, and only ``card``'s is weighed (the document whose number sets the cards' scale, if it is
        among them): aligning is a tenth of a whole-corpus query's time
        (docs/decisions/0023-alignment-when-it-decides.md).
        A shard of a collection aligns them all, for the collection's first result may be another of its documents."""
        space, mode = self.space, query.mode
        static = (self.embedder is not None and space is not None
                  and self.embedder.fingerprint == space.embedder.fingerprint)
        if space is None or small_folder or not (mode is Mode.LEXICAL or static):
            return list(docs)
        best = sorted(docs, key=lambda d: (-d.evidence, d.doc_id))[: rel.ALIGNED_DOCS]
        weighed = best
        if self.collection is None and _clears_bar_unaligned(best, mode, bar):
            weighed = [d for d in best if d is card]
        candidates.read(weighed)
        rows = [row for d in weighed for row in candidates[d.doc_id]]
        scores = alignment.alignment_f(space, query.text, [row.text for row in rows]).tolist()
        at = 0
        for d in weighed:
            mine = scores[at : at + len(candidates[d.doc_id])]
            at += len(mine)
            aligned[d.doc_id] = max(mine, default=0.0)
        return best


def _card_scores(head: Sequence[Candidate], card: _Card | None, bar: float) -> dict[int, float]:
    """Each card's number: its fused score scaled so that the first result shows its relevance (0-100)."""
    if card is None or not card.fused > 0:
        return {d.doc_id: 0.0 for d in head}
    relevance = rel.relevance(card.gated, bar)
    # at least 0: a filtered search's deeper documents may fall below the scales the fusion keeps (0011)
    return {d.doc_id: max(0.0, relevance * d.fused / card.fused) for d in head}


def _clears_bar_unaligned(docs: Sequence[Candidate], mode: Mode, bar: float) -> bool:
    """Whether one of ``docs`` clears ``bar`` on its evidence however badly its best sentence's words align with the
    query (alignment 0): the gate then answers whatever any document's alignment is."""
    return any(rel.gated(d.evidence, 0.0, mode) >= bar for d in docs)
