"""How much a document's evidence is worth: score fusion for the ranking, and an absolute scale for the gate and the
number a person reads.

Two scales, for two jobs (docs/decisions/0002-score-fusion-and-relevance-gate.md):

- **Ranking** fuses the two sides' *scores*, each normalised over the query's own candidates (best cosine min-max
  over the semantic candidates, BM25 over the best BM25), as a convex combination. Unlike rank fusion this keeps
  margins: a document whose BM25 stands far above the rest keeps that lead (Bruch et al., "An Analysis of Fusion
  Functions for Hybrid Retrieval", ACM TOIS 2023: a convex combination of normalised scores beats RRF when tuned).
- **Relevance** puts evidence on a scale that means the same in every query and index: the best sentence's cosine
  in units of the index's random-pair distribution (1.0 = the cosine random pairs exceed one time in a thousand),
  plus the BM25 as a share of what the query's most informative words could score. A query is answered when some
  document clears RELEVANT, or when its best cosine stands far above the query's own similarity to the index (a
  query-specific null). A folder too small to calibrate uses its method's prior, measured on general text.
"""

from __future__ import annotations

import math
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
# Standard deviations by which the best cosine must exceed the query's similarity to the index, beyond the
# expected maximum of that many samples (sqrt(2 ln n)).
QUERY_NULL_MARGIN = 3.0
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
    could reach; ``null_mean``/``null_std``/``null_size``: the query's cosines to a sample of the index's sentences
    and how many sentences the index holds (None without vectors)."""

    mean: float | None
    tail: float | None
    lexical_bound: float
    null_mean: float | None = None
    null_std: float | None = None
    null_size: int = 0

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

    def stands_out(self, best_cosine: float | None) -> bool:
        """Whether the best cosine is far above the query's similarity to the rest of the index."""
        if best_cosine is None or self.null_mean is None or not self.null_std or self.null_size < 2:
            return False
        expected_max = math.sqrt(2.0 * math.log(self.null_size))
        return (best_cosine - self.null_mean) / self.null_std - expected_max >= QUERY_NULL_MARGIN


def lexical_bound(idf: dict[str, float]) -> float:
    """The BM25 a passage of average length scores holding each of the query's KEY_WORDS most informative words
    once (by BM25's formula that is the sum of their IDFs: ``idf`` must be the scorer's own, FTS5's)."""
    return sum(sorted(idf.values(), reverse=True)[:KEY_WORDS])


def fuse(cosine: np.ndarray, bm25: np.ndarray, semantic_share: float) -> np.ndarray:
    """Convex combination of the two sides' normalised scores (NaN cosine / zero BM25: not found by that side).

    Cosines are min-max normalised over the documents found semantically (a document the semantic side did not
    find scores 0 there), BM25 is divided by the query's best, so each side spans [0, 1] for every query.
    """
    found = ~np.isnan(cosine)
    semantic = np.zeros_like(cosine)
    if found.any():
        low, high = float(cosine[found].min()), float(cosine[found].max())
        semantic[found] = (cosine[found] - low) / (high - low) if high > low else 1.0
    top = float(bm25.max()) if bm25.size else 0.0
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


def relevance(evidence: float, bar: float = RELEVANT) -> float:
    """The 0-100 number shown for evidence on the relevance scale: the ``bar`` a document must clear maps to 50,
    twice it to 75."""
    return 100.0 * (1.0 - 2.0 ** (-max(evidence, 0.0) / bar))
