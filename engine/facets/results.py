"""What facets say about a result: the chips and the facet-level evidence, as frozen dataclasses that search results
carry (``engine.search.results``) and the CLI and app present."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Facet:
    """One facet of the result's sentence, shown as a chip: its nearest vocabulary words (``label`` is the first),
    its share of the sentence's weighted words, and the query facet it best meets (cosine; None without a query
    facet)."""

    label: str
    words: tuple[str, ...]
    weight: float
    match: float | None = None
    query_label: str | None = None


@dataclass(frozen=True)
class FacetMatch:
    """A query facet and the passage facet nearest to it."""

    query: str
    document: str
    cosine: float


@dataclass(frozen=True)
class WordCoverage:
    """How well the passage's facets cover one query word (Eq. 7's max cosine), and the word's SIF weight."""

    word: str
    coverage: float
    weight: float
    facet: str | None


@dataclass(frozen=True)
class WordImportance:
    """A passage word's importance (Eq. 6, scaled so the top word is 1) at its character span in the sentence."""

    word: str
    start: int
    end: int
    weight: float


@dataclass(frozen=True)
class Bridge:
    """A query word and a passage word whose vectors' product carries ``share`` of the static cosine."""

    query_word: str
    passage_word: str
    share: float


@dataclass(frozen=True)
class FacetExplanation:
    """Facet-level evidence for one result (see ``engine.facets.explain``).

    ``coverage`` is the SIF-weighted mean of the query words' coverage; ``static_cosine`` is the cosine of the static
    sentence vectors that ``bridges`` split into word pairs; ``set_distance`` is SC of Eq. 5 (lower = closer).
    """

    matches: tuple[FacetMatch, ...]
    coverage: float
    words: tuple[WordCoverage, ...]
    importance: tuple[WordImportance, ...]
    bridges: tuple[Bridge, ...]
    static_cosine: float
    set_distance: float | None
