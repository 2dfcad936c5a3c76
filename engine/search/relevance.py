"""How much a document's evidence is worth: score fusion for the ranking, and an absolute scale for choosing the
sentence a document is shown by.

- **Ranking** fuses the two sides' *scores*, each normalised over the query's own candidates (best cosine min-max
  over the semantic candidates, BM25 over the best BM25), as a convex combination. Unlike rank fusion this keeps
  margins: a document whose BM25 stands far above the rest keeps that lead (Bruch et al., "An Analysis of Fusion
  Functions for Hybrid Retrieval", ACM TOIS 2023: a convex combination of normalised scores beats RRF when tuned;
  docs/decisions/0002-score-fusion-and-relevance-gate.md).
- **Evidence** puts a cosine and a BM25 on one scale that means the same in every query and index: the cosine in
  units of the index's random-pair distribution (1.0 = the cosine random pairs exceed one time in a thousand), plus
  the BM25 as a share of what the query's most informative words could score. It decides between a document's
  sentences (engine.search.passages); whether a document answers is the confidence model's
  (engine.search.confidence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.search.results import Mode

# Share of the fused score given to the semantic side in hybrid mode, whose score is a document's meaning (best
# sentence and centroid, engine.search.meaning): tuned with it on the five classic collections
# (docs/decisions/0015-document-meaning.md; the best sentence alone had 0.3, decision 0002).
SEMANTIC_SHARE = 0.5
# What the relevance scale counts a document's words as worth against its meaning: a BM25 of the query's key words'
# bound is worth 2.1 units of cosine (docs/decisions/0002-score-fusion-and-relevance-gate.md).
LEXICAL_VOTE = 2.1
# Where an index is too small to calibrate and its method ships no prior, the best semantic document is taken to
# stand this far up the scale, the others in proportion to how far they stand above the query's null.
UNCALIBRATED_BEST = 1.4
# A passage can hardly be expected to hold more than this many of a long query's words: the lexical share is of
# the query's most informative words, so that a paragraph-long query is not judged by a bound no passage reaches.
KEY_WORDS = 5


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
    null_spread: float | None = None  # the standard deviation of those cosines

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
                semantic[found] = UNCALIBRATED_BEST * (cosine[found] - self.null_mean) / (best - self.null_mean)
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
