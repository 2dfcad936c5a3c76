"""The verdict on a query's documents: each one's probability of answering it (learned: engine.search.confidence),
the word for it, the ranking after the second look, and the answer as a whole (docs/decisions/0040-calibrated-
confidence.md).

Nothing the ranking found is hidden for being uncertain: an uncertain result is shown and labelled so. Hidden are
only the documents that share nothing with the query, neither one of its words nor a meaning closer than chance
gives (:func:`related`); a query none of whose documents does is answered "nothing relevant".
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.search import features as F
from engine.search.confidence import ConfidenceModels, Strength, strength
from engine.search.passages import ChosenPassage
from engine.search.results import Answer
from engine.search.secondlook import Look

log = logging.getLogger(__name__)

# A cosine this many standard deviations above the query's own null (its cosines with random sentences of the index)
# is one a random sentence reaches about one time in a thousand: the document shares meaning with the query.
RELATED_Z = 3.09
# A document the confidence model gives at least this chance of answering is listed, labelled unlikely, whatever its
# cosine: in a folder of a few files the query's null is those files' own sentences, which no cosine stands far above
# (docs/decisions/0040-calibrated-confidence.md).
LISTED = 0.1
# Where the query's null is the folder itself (QueryContext.chance, under a thousand sentences), a cosine that one
# random pair in a hundred reaches: at most ten of the folder's sentences reach it by chance.
RELATED_CHANCE = 0.99


@dataclass(frozen=True)
class Judged:
    """One document as the verdict sees it: its passage, its probability of answering as shown (never above the one
    before it: the numbers follow the cards' order), the word for it, whether it shares anything with the query, and
    the features the probability was read from (by name), the second look's cosines among them where it looked."""

    passage: ChosenPassage
    probability: float
    strength: Strength
    related: bool
    features: Mapping[str, float]
    look: Look | None


@dataclass(frozen=True)
class Verdict:
    """The documents in the order they are shown (after the second look, where it looked), and the answer."""

    order: tuple[Judged, ...]
    answer: Answer

    @property
    def confidence(self) -> float:
        """The probability that the first shown document answers the query (0 when none is shown)."""
        return next((j.probability for j in self.order if j.related), 0.0)


@dataclass(frozen=True)
class Scored:
    """Documents' probabilities as the confidence models read them: the order they are shown in (indices into the
    documents given), each one's probability as shown in that order (never above the one before), and the features
    read of each (by name, in the given order)."""

    order: tuple[int, ...]
    probability: tuple[float, ...]
    features: tuple[Mapping[str, float], ...]


def score(evidence: Sequence[F.Evidence], context: F.QueryContext, models: ConfidenceModels,
          looks: Sequence[Look] | None, *, reorder: bool) -> Scored:
    """The probabilities of documents with ``evidence`` (in the first ranking's order); ``looks``: the second look's
    cosines of the first of them (None: no second look), which re-order those it read where ``reorder`` (not in
    lexical mode, which ranks by words alone)."""
    first = F.first_features(evidence, context)
    probability = models.first.probability(first, F.FIRST)
    rows = [dict(zip(F.FIRST, row.tolist())) for row in first]
    order = list(range(len(evidence)))
    if looks:
        refined = F.refined_features(first, looks, evidence)
        probability[: len(looks)] = models.refined.probability(refined, F.REFINED)
        rows[: len(looks)] = [dict(zip(F.REFINED, row.tolist())) for row in refined]
        if reorder:
            order = _reordered(first, looks, models) + order[len(looks):]
    shown = np.minimum.accumulate(probability[order]) if order else np.zeros(0)
    return Scored(tuple(order), tuple(shown.tolist()), tuple(rows))


def related(evidence: F.Evidence, probability: float, relatable: bool = True) -> bool:
    """Whether a document shares something with the query: one of its words, a meaning closer than chance gives
    (RELATED_Z, or RELATED_CHANCE in a folder smaller than the null sample), or enough for the confidence model to
    give it a chance (LISTED). A query of stop words alone
    (``relatable`` False) shares nothing with any: every passage holds "the" (docs/decisions/0017-stop-words-alone.md)."""
    return relatable and (evidence.coverage > 0 or evidence.z >= RELATED_Z
                      or evidence.chance >= RELATED_CHANCE or probability >= LISTED)


def judge(passages: Sequence[ChosenPassage], context: F.QueryContext, models: ConfidenceModels,
          looks: Sequence[Look] | None, *, reorder: bool, cosines: Mapping[int, float] | None = None,
          relatable: bool = True) -> Verdict:
    """The verdict on ``passages`` (distinct documents in the first ranking's order), scored by :func:`score`;
    ``cosines``: the shown sentences' cosines where the passages carry none (lexical mode), by sentence id;
    ``relatable``: see :func:`related`."""
    evidence = [F.evidence_of(p, context, cosines) for p in passages]
    scored = score(evidence, context, models, looks, reorder=reorder)
    judged = []
    for i, shown in zip(scored.order, scored.probability):
        look = looks[i] if looks and i < len(looks) else None
        judged.append(Judged(passages[i], shown, strength(shown), related(evidence[i], shown, relatable),
                             scored.features[i], look))
    return Verdict(tuple(judged), answer([(j.related, j.strength) for j in judged]))


def _reordered(first: np.ndarray, looks: Sequence[Look], models: ConfidenceModels) -> list[int]:
    """The indices of the documents the second look read, best first by the refined ranking score (ties: the first
    ranking's order)."""
    share = first[: len(looks), F.FIRST.index("fused_share")]
    score = share + models.opening * np.array([lk.opening for lk in looks]) + models.sentence * np.array(
        [lk.sentence for lk in looks])
    return sorted(range(len(looks)), key=lambda i: (-round(float(score[i]), 9), i))


def answer(pairs: Sequence[tuple[bool, Strength]]) -> Answer:
    """The answer as a whole, from the shown documents' (related, strength) in order: the first related one's
    strength; nothing when none is related."""
    best = next((s for related, s in pairs if related), None)
    if best is None:
        return Answer.NOTHING
    return {Strength.STRONG: Answer.STRONG, Strength.POSSIBLE: Answer.POSSIBLE}.get(best, Answer.CLOSEST)


def card_score(probability: float) -> float:
    """The number on a card: the probability in percent, to a tenth."""
    return round(100.0 * probability, 1) if not math.isnan(probability) else 0.0
