"""What a search returns: plain frozen dataclasses that the CLI turns into JSON and the app into rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum

from engine.facets.results import Facet, FacetExplanation
from engine.search.confidence import Strength


class Answer(str, Enum):
    """What a search found, as a whole: a strong or a possible answer, only the closest passages (none is likely),
    or nothing that shares meaning or words with the query (docs/decisions/0040-calibrated-confidence.md)."""

    STRONG = "strong"
    POSSIBLE = "possible"
    CLOSEST = "closest"
    NOTHING = "nothing"


class Mode(str, Enum):
    """How documents are ranked."""

    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    LEXICAL = "lexical"


@dataclass(frozen=True)
class MatchedTerm:
    """A query word found in the document; ``idf`` says how rare (informative) it is in this index; ``written``: the
    document's word where it holds the query's only through another word of its stem ("Medical" for "medication":
    both are "medic" to the index), None where it holds the word as typed."""

    word: str
    stem: str
    idf: float
    written: str | None = None

    @property
    def said(self) -> str:
        """The word as an explanation names it: "medication (as Medical)" where the document holds another form."""
        return self.word if self.written is None else f"{self.word} (as {self.written})"


def named(terms: Sequence[MatchedTerm], most: int = 8) -> str:
    """The words an explanation names, in the query's order: "blood, tests, cholesterol"; of more than ``most`` (a
    passage or a file searched with, "more like this"), the ``most`` most informative and how many others, where a
    new user read a list of 18 ("Dear, Okafor, Please, ...")."""
    if len(terms) <= most:
        return ", ".join(t.said for t in terms)
    kept = set(sorted(range(len(terms)), key=lambda i: -terms[i].idf)[:most])
    return ", ".join(t.said for i, t in enumerate(terms) if i in kept) + f" and {len(terms) - most} more"


@dataclass(frozen=True)
class Explanation:
    """Why a result is where it is: each ranking's evidence and how the two were fused.

    ``semantic_rank``/``lexical_rank`` are 1-based places in each ranking (None: not retrieved by it);
    ``fusion`` names the rule and its parameters, ``contributions`` the points each ranking added.
    """

    cosine: float | None
    cosine_percentile: float | None
    bm25: float | None
    matched_terms: tuple[MatchedTerm, ...]
    term_coverage: float
    semantic_rank: int | None
    lexical_rank: int | None
    fusion: str
    contributions: dict[str, float]
    boilerplate: bool = False
    facets: FacetExplanation | None = None
    # what the confidence model read (engine.search.features), by name: the window's "Details" and the fit's data
    confidence_features: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Highlight:
    """A span of the passage to emphasise, with the query word it answers and a weight in [0, 1]."""

    start: int
    end: int
    term: str
    weight: float = 1.0


@dataclass(frozen=True)
class SearchResult:
    """One document, represented by its best sentence.

    ``confidence`` is the estimated probability that the document answers the query (learned and calibrated:
    engine.search.confidence), never above the result's before it, ``strength`` its word ("strong", "possible",
    "unlikely") and ``score`` the number shown, the confidence in percent; ``weak``: the confidence is "unlikely".
    ``similarity`` is the cosine between the query and the best sentence (None where the method has no vectors for
    it). ``start``/``end`` are character offsets of the sentence in the document's text.
    ``sentence_id``: the sentence's id in the index that found it (ids are never reused, so it names this sentence
    for as long as it is indexed); None in a result not made by a search.
    """

    path: str
    title: str
    score: float
    similarity: float | None
    sentence: str
    start: int
    end: int
    page: int | None
    ordinal: int
    context_before: tuple[str, ...]
    context_after: tuple[str, ...]
    highlights: tuple[Highlight, ...]
    explanation: Explanation
    weak: bool
    duplicates: tuple[str, ...] = ()
    facets: tuple[Facet, ...] = ()
    sentence_id: int | None = None
    confidence: float = 0.0
    strength: Strength = Strength.UNLIKELY
    related: bool = True  # shares a word or meaning with the query (False: listed only with include_weak)
    byline: str = ""  # who wrote the document and when (an e-mail's sender and date), under its title on a card

    def to_json(self) -> dict:
        """The documented JSON shape of `quire search --json` (see README)."""
        data = asdict(self)
        data["context"] = {"before": list(self.context_before), "after": list(self.context_after)}
        # the sentence id is the index's own (each shard of a collection numbers its sentences), not for output
        del data["context_before"], data["context_after"], data["sentence_id"]
        return data


@dataclass(frozen=True)
class SearchResponse:
    """Results for one query. ``answer`` says what was found as a whole (a strong or possible answer, only the
    closest passages, or nothing that shares meaning or words with the query), ``confidence`` the probability that
    the first result answers, ``nothing_relevant`` that no result is at least possible; ``refined``: the second
    look re-read the first results (engine.search.secondlook). ``corrected_from``: the query as typed, where it
    found no strong match and these are the results of its spelling correction (``query``). ``missing``: the
    query's words that no passage of the index holds (counted where words are ranked: hybrid and lexical), which is
    often why nothing relevant was found and what a person would change first. ``did_you_mean``: the query with
    those words spelt as close words the index holds (engine.search.spelling), when there are such words.

    ``found``: how many documents the search found that it would show with a larger ``k`` (those of the ranking that
    share something with the query; every one with ``include_weak``), so a list can say "1-10 of 37"; files with the same content
    count once each here but are shown once. ``found_at_least``: a ranking stopped at its depth (``CANDIDATES``
    sentences or passages), so more documents may qualify and ``found`` is a lower bound."""

    query: str
    mode: Mode
    method: str
    results: tuple[SearchResult, ...]
    nothing_relevant: bool
    weak_hidden: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    missing: tuple[str, ...] = field(default_factory=tuple)
    found: int = 0
    found_at_least: bool = False
    did_you_mean: str | None = None
    answer: Answer = Answer.NOTHING
    confidence: float = 0.0
    refined: bool = False
    corrected_from: str | None = None

    def to_json(self) -> dict:
        """JSON for the CLI and benchmarks."""
        return {
            "query": self.query,
            "mode": self.mode.value,
            "method": self.method,
            "answer": self.answer.value,
            "confidence": round(self.confidence, 4),
            "refined": self.refined,
            "corrected_from": self.corrected_from,
            "nothing_relevant": self.nothing_relevant,
            "weak_hidden": self.weak_hidden,
            "found": self.found,
            "found_at_least": self.found_at_least,
            "missing": list(self.missing),
            "did_you_mean": self.did_you_mean,
            "seconds": round(self.seconds, 4),
            "notes": list(self.notes),
            "results": [r.to_json() for r in self.results],
        }
