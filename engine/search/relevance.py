"""How much a document's evidence is worth: score fusion for the ranking, and an absolute scale for the gate and the
number a person reads.

Two scales, for two jobs (docs/decisions/0002-score-fusion-and-relevance-gate.md):

- **Ranking** fuses the two sides' *scores*, each normalised over the query's own candidates (best cosine min-max
  over the semantic candidates, BM25 over the best BM25), as a convex combination. Unlike rank fusion this keeps
  margins: a document whose BM25 stands far above the rest keeps that lead (Bruch et al., "An Analysis of Fusion
  Functions for Hybrid Retrieval", ACM TOIS 2023: a convex combination of normalised scores beats RRF when tuned).
- **Relevance** puts evidence on a scale that means the same in every query and index: the best sentence's cosine
  in units of the index's random-pair distribution (1.0 = the cosine random pairs exceed one time in a thousand),
  plus the BM25 as a share of what the query's most informative words could score. A query is answered when one of
  its best documents clears the bar once its best sentence's word alignment with the query is weighed in
  (``engine.search.alignment``; docs/decisions/0016-word-alignment-in-the-gate.md). A folder too small to calibrate
  uses its method's prior, measured on general text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.search.results import Mode

# Share of the fused score given to the semantic side in hybrid mode, whose score is a document's meaning (best
# sentence and centroid, engine.search.meaning): tuned with it on the five classic collections
# (docs/decisions/0015-document-meaning.md; the best sentence alone had 0.3, decision 0002).
SEMANTIC_SHARE = 0.5
# Evidence a document needs to answer a query, on the relevance scale (cosine units + LEXICAL_VOTE x BM25 share).
RELEVANT = 1.4
LEXICAL_VOTE = 2.1
# Lexical mode has no semantic side: a BM25 of 43% of what the query's key words could score (0.9 / LEXICAL_VOTE).
# At 1.4 it answered nothing to 3-23% of the classic collections' queries; 0.9 keeps 97% of off-topic queries
# unanswered and every classic collection under 2% (docs/decisions/0002-score-fusion-and-relevance-gate.md).
LEXICAL_RELEVANT = 0.9
# A passage can hardly be expected to hold more than this many of a long query's words: the lexical share is of
# the query's most informative words, so that a paragraph-long query is not judged by a bar no passage clears.
KEY_WORDS = 5
# The gate weighs a document's evidence + ALIGNMENT_WEIGHT x (F - ALIGNMENT_CENTRE), F its best sentence's word
# alignment with the query (engine.search.alignment): a sentence that shares one phrase with an unrelated query
# aligns at 0.3 or less and needs more evidence, a paraphrase whose words line up needs less; at the centre the bar is
# the evidence's alone (docs/decisions/0016-word-alignment-in-the-gate.md).
ALIGNMENT_WEIGHT = 1.5
ALIGNMENT_CENTRE = 0.4
# Lexical mode has no cosine and a lower bar: its centre sits lower, so that queries found by their words alone stay
# answered (decision 0016).
LEXICAL_ALIGNMENT_CENTRE = 1 / 3
# Documents, most evidence first, whose alignment the gate weighs: the answer is decided by the best few, and the
# replay that set ALIGNMENT_WEIGHT and ALIGNMENT_CENTRE weighed these ten (decision 0016).
ALIGNED_DOCS = 10
# Of an answered query, documents below this share of RELEVANT are too weak to show.
WEAK_SHARE = 0.25
# A folder too small to calibrate (engine.search.calibration.MIN_SENTENCES) is judged on its method's prior, with
# this share of the bar: its best sentence is the best of a few hundred chances at most, where the 1-in-1000 tail
# was set for indexes of thousands (docs/decisions/0003-a-prior-for-small-folders.md).
SMALL_FOLDER_SHARE = 0.5


@dataclass(frozen=True)
class Scale:
    """What a cosine and a BM25 score are worth for one query on one index.

    ``mean``/``tail``: random-pair cosine mean and the cosine random pairs exceed one time in a thousand (None when
    the index is too small to calibrate); ``lexical_bound``: the BM25 the query's KEY_WORDS most informative words
    could reach; ``null_mean``: the query's mean cosine to a sample of the index's sentences (None without vectors),
    which stands in for a calibration where there is none."""

    mean: float | None
    tail: float | None
    lexical_bound: float
    null_mean: float | None = None

    def evidence(self, cosine: np.ndarray, bm25: np.ndarray) -> np.ndarray:
        """Each document's evidence on the relevance scale (NaN cosine: not found semantically).

        Without a calibration (a folder too small to calibrate, for a method that ships no prior) chance cannot be
        told from a match: the best semantic document is taken as just relevant and the others in proportion to how
        far they stand above the query's null.
        """
        semantic = np.zeros_like(cosine)
        found = ~np.isnan(cosine)
        if self.mean is not None and self.tail is not None and self.tail > self.mean:
            semantic[found] = (cosine[found] - self.mean) / (self.tail - self.mean)
        elif found.any() and self.null_mean is not None:
            best = float(cosine[found].max())
            if best > self.null_mean:
                semantic[found] = RELEVANT * (cosine[found] - self.null_mean) / (best - self.null_mean)
        lexical = bm25 / self.lexical_bound if self.lexical_bound > 0 else np.zeros_like(bm25)
        return np.maximum(semantic, 0.0) + LEXICAL_VOTE * lexical


def lexical_bound(idf: dict[str, float]) -> float:
    """The BM25 a passage of average length scores holding each of the query's KEY_WORDS most informative words
    once (by BM25's formula that is the sum of their IDFs: ``idf`` must be the scorer's own, FTS5's)."""
    return sum(sorted(idf.values(), reverse=True)[:KEY_WORDS])


def fuse(cosine: np.ndarray, bm25: np.ndarray, semantic_share: float,
         scales: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Convex combination of the two sides' normalised scores (NaN cosine / zero BM25: not found by that side).

    Cosines are min-max normalised over the documents found semantically (a document the semantic side did not
    find scores 0 there), BM25 is divided by the query's best, so each side spans [0, 1] for every query.
    ``scales``: the (cosine, BM25) of the documents whose lowest and highest set those scales, where they are not
    these documents themselves (a filtered search: the documents a search without filters ranks, so that a filter
    leaves the order of what it lets through as it was; the others may fall outside [0, 1]).
    """
    scale_cosine, scale_bm25 = scales if scales is not None else (cosine, bm25)
    found = ~np.isnan(cosine)
    known = scale_cosine[~np.isnan(scale_cosine)]
    if known.size == 0:  # none of the scales' documents was found by meaning: these documents' own scale
        known = cosine[found]
    semantic = np.zeros_like(cosine)
    if found.any():
        low, high = float(known.min()), float(known.max())
        semantic[found] = (cosine[found] - low) / (high - low) if high > low else 1.0
    top = max(float(scale_bm25.max(initial=0.0)), float(bm25.max(initial=0.0)))
    lexical = bm25 / top if top > 0 else np.zeros_like(bm25)
    return semantic_share * semantic + (1.0 - semantic_share) * lexical


def semantic_share(mode: Mode) -> float:
    """The semantic side's share of the fused score in ``mode``."""
    return {Mode.SEMANTIC: 1.0, Mode.LEXICAL: 0.0, Mode.HYBRID: SEMANTIC_SHARE}[mode]


def bar(mode: Mode, *, small_folder: bool) -> float:
    """The evidence a document needs to answer a query in ``mode``: semantic mode is judged on both sides' evidence
    as hybrid is (it only ranks by meaning alone); lexical mode has no semantic side and a bar of its own."""
    value = LEXICAL_RELEVANT if mode is Mode.LEXICAL else RELEVANT
    return value * SMALL_FOLDER_SHARE if small_folder else value


def gated(evidence: float, alignment: float | None, mode: Mode) -> float:
    """What the gate weighs of a document in ``mode``: its evidence, moved by its best sentence's word ``alignment``
    with the query (F, 0-1) where that was weighed (None: not weighed, the evidence alone)."""
    if alignment is None:
        return evidence
    centre = LEXICAL_ALIGNMENT_CENTRE if mode is Mode.LEXICAL else ALIGNMENT_CENTRE
    return evidence + ALIGNMENT_WEIGHT * (alignment - centre)


def relevance(evidence: float, bar: float = RELEVANT) -> float:
    """The 0-100 number shown for evidence on the relevance scale: the ``bar`` a document must clear maps to 50,
    twice it to 75."""
    return 100.0 * (1.0 - 2.0 ** (-max(evidence, 0.0) / bar))
