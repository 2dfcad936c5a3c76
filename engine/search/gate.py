"""Whether a query is answered at all, and which documents are too weak to show: the relevance gate
(engine.search.relevance; docs/decisions/0002-score-fusion-and-relevance-gate.md, 0016, 0023)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from engine.embed.base import Embedder
from engine.facets.space import FacetSpace
from engine.search import alignment
from engine.search import relevance as rel
from engine.search.candidates import Candidate
from engine.search.passages import PassageChooser
from engine.search.results import Mode
from engine.search.statistics import CollectionStatistics
from engine.store.sentences import SentenceRow

log = logging.getLogger(__name__)


class RelevanceGate:
    """The relevance gate of one index (``space``: the static model's word space, where the gate aligns words)."""

    def __init__(self, space: FacetSpace | None, embedder: Embedder | None, collection: CollectionStatistics | None,
                 passages: PassageChooser) -> None:
        self.space, self.embedder, self.collection, self.passages = space, embedder, collection, passages

    def _deciding(self, query: str, docs: dict[int, Candidate], mode: Mode, small_folder: bool, bar: float,
                candidates: dict[int, list[SentenceRow]], card: Candidate | None) -> list[Candidate]:
        """The documents the relevance gate answers a query by: the ALIGNED_DOCS with most evidence, each with its best
        candidate sentence's word alignment with the query, where the static model's word space is loaded and the
        gate has no better view of meaning (docs/decisions/0016-word-alignment-in-the-gate.md): in lexical mode, which
        has no cosine at all, and on an index ranked by that static model, whose sentence vectors pool the same word
        vectors. Otherwise every document, by its evidence alone: sbert's cosine already answers the paraphrases
        static words cannot bridge (with the alignment, 100% shown fell to 97.9), and a folder too small to calibrate
        has half the bar, set on evidence alone, where the long sentences of a few files align with a paraphrase at
        0.3 or less. ``candidates`` gains the sentences read.

        Where one of them clears ``bar`` however badly its words might align, the query is answered whatever the
        others' alignment, and only ``card``'s is weighed (the document whose number sets the cards' scale, if it is
        among them): aligning is a tenth of a whole-corpus query's time
        (docs/decisions/0023-alignment-when-it-decides.md).
        A shard of a collection aligns them all, for the collection's first result may be another of its documents."""
        space = self.space
        static = (self.embedder is not None and space is not None
                  and self.embedder.fingerprint == space.embedder.fingerprint)
        if space is None or small_folder or not (mode is Mode.LEXICAL or static):
            return list(docs.values())
        best = sorted(docs.values(), key=lambda d: (-d.evidence, d.doc_id))[: rel.ALIGNED_DOCS]
        aligned = best
        if self.collection is None and _clears_bar_unaligned(best, mode, bar):
            aligned = [d for d in best if d is card]
        candidates.update(self.passages.candidate_sentences([d for d in aligned if d.doc_id not in candidates]))
        rows = [row for d in aligned for row in candidates[d.doc_id]]
        scores = alignment.alignment_f(space, query, [row.text for row in rows]).tolist()
        at = 0
        for d in aligned:
            mine = scores[at : at + len(candidates[d.doc_id])]
            at += len(mine)
            d.alignment = max(mine, default=0.0)
        return best


def _clears_bar_unaligned(docs: Sequence[Candidate], mode: Mode, bar: float) -> bool:
    """Whether one of ``docs`` clears ``bar`` on its evidence however badly its best sentence's words align with the
    query (alignment 0): the gate then answers whatever any document's alignment is."""
    return any(rel.gated(d.evidence, 0.0, mode) >= bar for d in docs)
