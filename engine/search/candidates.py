"""The documents a query's rankings found, each with the evidence gathered for it while ranking (:class:`Candidate`),
and the small rules that evidence follows: a sentence's semantic hit, a repeated sentence counted as boilerplate,
a document's best passages by BM25."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.search.results import Mode
from engine.store.sentences import SentenceRow

log = logging.getLogger(__name__)

# A sentence repeated in this many documents (or in 5% of a small collection, at least 3) is boilerplate:
# headers, footers, licence blocks. It still matches, at half weight, so a real hit elsewhere ranks first.
BOILERPLATE_DOCS = 5
BOILERPLATE_MIN_DOCS = 3
BOILERPLATE_SHARE = 0.05
BOILERPLATE_PENALTY = 0.5
# Passages of a document, after its best by BM25, whose sentences it may also be shown by: the sentence that
# answers best is not always in the passage with most query words (a FAQ's "second edition" against its "-i
# activates in-place editing").
MORE_PASSAGES = 2


@dataclass
class Candidate:
    """Evidence gathered for one document while ranking."""

    doc_id: int
    sem_sentence: int | None = None
    sem_cosine: float = -1.0
    sem_score: float = -1.0
    sem_row: SentenceRow | None = None
    repeated: list[int] = field(default_factory=list)  # its sentences among the semantic hits that are boilerplate
    # the semantic side's ranking score: best sentence and centroid over all its sentences (engine.search.meaning);
    # NaN: not weighed by meaning
    meaning: float = math.nan
    # a short line's vector is its section's (engine.embed.context): the sentences it was pooled with, to show instead
    span_rows: list[SentenceRow] = field(default_factory=list)
    boilerplate: bool = False
    lex_passage: int | None = None
    lex_more: list[int] = field(default_factory=list)  # the document's next best passages (MORE_PASSAGES)
    lex_score: float = 0.0
    # hybrid mode: the BM25 of its best passage counting the words related to the query's too (engine.search.related),
    # which the word side ranks by; 0 in other modes and where no related word is in its passages
    lex_related: float = 0.0
    sem_rank: int | None = None
    lex_rank: int | None = None
    fused: float = 0.0  # the ranking score: the two sides' normalised scores combined (engine.search.relevance)
    evidence: float = 0.0  # on the relevance scale, the same for every query and index
    # found within the CANDIDATES a search without filters reads: a filtered search normalises over these, so that
    # a filter leaves the order of what it lets through as it was (docs/decisions/0011-filtered-search-depth.md)
    unfiltered: bool = False


@dataclass(frozen=True)
class SemanticHit:
    """A sentence the semantic side found: its document, its score (cosine, or the mean over the query's sentences)
    and whether it is boilerplate."""

    sentence: int
    doc_id: int
    score: float
    boilerplate: bool


# each document's best passages by BM25: (passage id, score), best first
BestPassages = dict[int, list[tuple[int, float]]]


def candidate(docs: dict[int, Candidate], doc_id: int, unfiltered: bool = False) -> Candidate:
    """The evidence gathered so far for ``doc_id``, new if none (``setdefault`` would build one per hit);
    ``unfiltered``: it is found by what a search without filters reads."""
    doc = docs.get(doc_id)
    if doc is None:
        doc = docs[doc_id] = Candidate(doc_id)
    doc.unfiltered = doc.unfiltered or unfiltered
    return doc


def add_hit(doc: Candidate, hit: SemanticHit) -> None:
    """Count a semantic hit for its document: boilerplate is remembered, the best (penalised) hit kept."""
    penalised = hit.score * (BOILERPLATE_PENALTY if hit.boilerplate else 1.0)
    if hit.boilerplate:
        doc.repeated.append(hit.sentence)
    if penalised > doc.sem_score:
        doc.sem_score, doc.sem_cosine, doc.sem_sentence, doc.boilerplate = (penalised, hit.score, hit.sentence,
                                                                             hit.boilerplate)


def best_passages(ranked: Sequence[tuple[int, int, float]]) -> BestPassages:
    """Each document's best passages among ``ranked`` (passage id, document id, BM25; best first)."""
    best: BestPassages = {}
    for passage_id, doc_id, score in ranked:
        kept = best.setdefault(doc_id, [])
        if len(kept) <= MORE_PASSAGES:
            kept.append((passage_id, score))
    return best


def set_passages(doc: Candidate, passages: list[tuple[int, float]]) -> None:
    """Give ``doc`` its best passages by BM25 (passage id, score; best first)."""
    (doc.lex_passage, doc.lex_score), doc.lex_more = passages[0], [p for p, _ in passages[1:]]


def is_boilerplate(copies: int, documents: int) -> bool:
    """Whether a sentence found in ``copies`` of the index's ``documents`` is boilerplate."""
    return copies >= BOILERPLATE_DOCS or (copies >= BOILERPLATE_MIN_DOCS and copies / documents >= BOILERPLATE_SHARE)


def ranked_by(mode: Mode, docs: Sequence[Candidate]) -> list[Candidate]:
    """The documents ``mode`` ranks: in semantic or lexical mode those that side found."""
    if mode is Mode.SEMANTIC:
        return [d for d in docs if d.sem_sentence is not None]
    if mode is Mode.LEXICAL:
        return [d for d in docs if d.lex_passage is not None]
    return list(docs)


def word_side_score(doc: Candidate) -> float:
    """What the word side ranks ``doc`` by: its best BM25, or in hybrid mode that counting related words."""
    return max(doc.lex_score if doc.lex_passage is not None else 0.0, doc.lex_related)


def semantic_side_score(doc: Candidate) -> float:
    """What the semantic side ranks ``doc`` by: its meaning, or where that was not weighed its best hit (NaN: not
    found by meaning)."""
    if not math.isnan(doc.meaning):
        return doc.meaning
    return doc.sem_score if doc.sem_sentence is not None else math.nan
