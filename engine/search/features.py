"""What the confidence model (engine.search.confidence) reads of each document: a few numbers that mean the same
in a folder of seven files and in a corpus of millions of sentences (docs/decisions/0040-calibrated-confidence.md).

- ``z``: its cosine with the query in units of the query's own null, the cosines of a thousand random sentences of
  the index (mean and spread), so that a query whose words are close to everything is not taken for a match;
  ``z_margin``, ``z_gap`` and ``z_ref``: how far it stands above the tenth document of the first screen and above
  the best other one, and where that tenth stands, since a document that stands out is likelier the answer (another
  document shown by the same sentence, a copy in another format, is no other answer: it does not count against it);
- ``coverage``: the share of the query's word weight (IDF) its candidate sentences hold; ``lexical``: found by its
  words at all; ``missing_word``: some word of the query is in no passage (a typo, or a subject the folder lacks);
- ``fused_share`` and ``log_rank``: its place in the first ranking; ``log_sentences``: the size of the index, since
  the best of millions of chances scores higher by chance than the best of a few;
- the second look's (engine.search.secondlook): the sentence model's cosines with its opening and its shown
  sentence, their best, its gap over the best other document's, the tenth best and the first three's mean.

Features are computed over the first screen (``SCREEN`` documents of the first ranking), whatever ``k`` a search
asks for, so that a document's confidence does not depend on how many results were asked for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.search.calibration import Calibration
from engine.search.passages import ChosenPassage
from engine.search.secondlook import Look

# The documents rank-relative features are measured against: a first screen of results.
SCREEN = 10
FIRST = ("z", "z_margin", "z_gap", "z_ref", "coverage", "lexical", "missing_word", "fused_share", "log_rank",
         "log_sentences")
SECOND = ("m_opening", "m_sentence", "m_best", "m_gap", "m_ref", "m_top3", "m_square")
REFINED = FIRST + SECOND


@dataclass(frozen=True)
class QueryContext:
    """What the features need of the query and the index: the query's null (the mean and spread of its cosines with
    random sentences of the index; None without vectors), the index's sentences, and whether a query word is in no
    passage."""

    null_mean: float | None
    null_spread: float | None
    sentences: int
    missing_word: bool
    # where the index is smaller than a null sample, the null is the folder's own sentences, relevant ones included:
    # chance is then read of random pairs' cosines (the model's prior for small folders: engine.search.calibration)
    chance: Calibration | None = None


@dataclass(frozen=True)
class Evidence:
    """What one document brings to its features: its cosine in units of the query's null (0: none known), the share
    of the query's word weight it holds, whether its words were found, its first ranking's fused score, and the
    sentence it is shown by ("": unknown, unlike every other)."""

    z: float
    coverage: float
    lexical: bool
    fused: float
    sentence: str = ""
    chance: float = 0.0  # the share of random pairs less similar (0: no ``QueryContext.chance``)


def cosine_of(passage: ChosenPassage, cosines: Mapping[int, float] | None = None) -> float | None:
    """A document's cosine with the query: its best semantic hit's, or its shown sentence's (from ``cosines`` by
    sentence id where the passage carries none) if that is higher or the only one (None: neither is known)."""
    doc = passage.doc
    shown = passage.similarity if passage.similarity is not None or cosines is None else cosines.get(passage.best.id)
    known = [c for c in (doc.sem_cosine if doc.sem_sentence is not None else None, shown) if c is not None]
    return max(known) if known else None


def z_of(cosine: float | None, context: QueryContext) -> float:
    """A cosine in units of the query's null (0: no cosine, or no null)."""
    if cosine is None or context.null_mean is None or not context.null_spread:
        return 0.0
    return (cosine - context.null_mean) / context.null_spread


def evidence_of(passage: ChosenPassage, context: QueryContext, cosines: Mapping[int, float] | None = None
                ) -> Evidence:
    """The evidence of the document ``passage`` shows; ``cosines``: shown sentences' cosines by id, for passages
    chosen without the query's vectors (lexical mode)."""
    cosine = cosine_of(passage, cosines)
    chance = context.chance.percentile(cosine) if context.chance is not None and cosine is not None else 0.0
    return Evidence(z_of(cosine, context), passage.coverage, passage.doc.lex_passage is not None, passage.doc.fused,
                    " ".join(passage.best.text.split()).casefold(), chance)


def first_features(evidence: Sequence[Evidence], context: QueryContext) -> np.ndarray:
    """The FIRST features of documents with ``evidence`` (in the first ranking's order), one row each."""
    n = len(evidence)
    if n == 0:
        return np.zeros((0, len(FIRST)))
    z = np.array([e.z for e in evidence])
    z_ref = float(np.sort(z[:SCREEN])[0])
    keys = _keys(evidence)
    fused = np.array([e.fused for e in evidence])
    top = float(fused[:SCREEN].max()) if fused[:SCREEN].max() > 0 else 1.0
    rows = np.zeros((n, len(FIRST)))
    rows[:, 0] = z
    rows[:, 1] = z - z_ref
    rows[:, 2] = z - _best_other(z, keys, SCREEN)
    rows[:, 3] = z_ref
    rows[:, 4] = [e.coverage for e in evidence]
    rows[:, 5] = [e.lexical for e in evidence]
    rows[:, 6] = context.missing_word
    rows[:, 7] = fused / top
    rows[:, 8] = np.log1p(np.arange(n))
    rows[:, 9] = math.log10(max(context.sentences, 1))
    return rows


def refined_features(first: np.ndarray, looks: Sequence[Look], evidence: Sequence[Evidence] = ()) -> np.ndarray:
    """The REFINED features of the first ``len(looks)`` rows of ``first``, with the second look's cosines
    (``evidence``: the documents' evidence, whose sentences tell copies apart; empty: every document distinct)."""
    n = len(looks)
    opening = np.array([look.opening for look in looks])
    sentence = np.array([look.sentence for look in looks])
    best = np.maximum(opening, sentence)
    ranked = np.sort(best)[::-1]
    second = np.zeros((n, len(SECOND)))
    if n:
        second[:, 0], second[:, 1], second[:, 2] = opening, sentence, best
        second[:, 3] = best - _best_other(best, _keys(evidence[:n]) if evidence else list(range(n)), n)
        second[:, 4] = ranked[min(SCREEN, n) - 1]
        second[:, 5] = ranked[:3].mean()
        second[:, 6] = best ** 2
    return np.hstack([first[:n], second])


def _keys(evidence: Sequence[Evidence]) -> list[object]:
    """What tells documents apart for a gap: the sentence each is shown by, or its place where that is unknown."""
    return [e.sentence or i for i, e in enumerate(evidence)]


def _best_other(values: np.ndarray, keys: Sequence[object], screen: int) -> np.ndarray:
    """For each value, the best of the first ``screen`` values held by a document shown by another sentence
    (``keys``); with no such document, 0 (for a cosine in null units, and for the sentence model's, chance's)."""
    screen = min(screen, len(values))
    others = np.zeros(len(values))
    for i, key in enumerate(keys):
        rivals = [values[j] for j in range(screen) if j != i and keys[j] != key]
        others[i] = max(rivals) if rivals else 0.0
    return others
