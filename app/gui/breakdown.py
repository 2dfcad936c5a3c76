"""Why a result was found, said plainly first ("Found by meaning and by 2 of your 3 words: river, otters"), with the
ranking's numbers below it under "Details" for those who want them.

Qt-free: the preview pane renders what these functions return.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine import Explanation, Mode, SearchResult


def query_words(query: str) -> tuple[str, ...]:
    """The query's content words as the ranking counts them (stop words left out unless there are no others)."""
    from engine import query_terms  # loaded by now: a query was answered

    return tuple(t.word for t in query_terms(query))


def _words_counted(matched: Sequence[object], asked: Sequence[str] | None) -> str:
    """"2 of your 3 words", "your words"; ``asked`` None: the query was a passage or a file ("more like this"), whose
    words nobody typed."""
    if asked is None:
        return f"{len(matched)} word{'s' if len(matched) != 1 else ''} of the passage you searched with"
    if len(matched) >= len(asked):
        return f"your word{'s' if len(matched) != 1 else ''}"
    return f"{len(matched)} of your {len(asked)} words"


def headline(e: Explanation, asked: Sequence[str] | None, mode: Mode | None) -> str:
    """The first sentence of the breakdown: by meaning, by words or both, and which words.

    The words are those of the document's best passages, of which the one shown is where it matches best: the
    headline says the document holds them, since the passage on screen may hold fewer.

    ``asked``: the query's content words (:func:`query_words`), None when the query was a passage or a file;
    ``mode``: the search's, which says what ranked the results (semantic mode looks up the words too, but only to
    judge whether anything is relevant); None: the ranks alone tell.
    """
    from engine import named  # loaded by now: a query was answered

    matched = e.matched_terms
    # Mode is a str enum: compared by value, the engine's module need not load on the GUI thread for this
    by_meaning = e.semantic_rank is not None and mode != "lexical"
    by_words = e.lexical_rank is not None and mode != "semantic"
    if not matched:
        nothing = "no word of the passage you searched with" if asked is None else "no word of your query"
        return f"Found by meaning only: {nothing} is in this passage."
    counted, listed = _words_counted(matched, asked), named(e.matched_terms)
    if by_meaning and by_words:
        return f"Found by meaning and by {counted}, which this document holds: {listed}."
    if by_meaning:  # the words are there, but the ranking did not count them
        return f"Found by meaning; this document also holds {counted}: {listed}."
    return f"Found by {counted}, which this document holds: {listed}."


def share_of_pairs(percentile: float) -> str:
    """A cosine's percentile among the index's random sentence pairs, in words that still differ near the top, where
    most results are: "93%", "99.7%", "99.99% or more" (the calibration's finest quantile). Rounded down, so that
    no result reads "100%"."""
    if percentile >= 0.9999:
        return "99.99% or more"  # "closer than more than 99.99%" read badly
    if percentile >= 0.99:
        return f"{math.floor(percentile * 1000) / 10:.1f}%"
    return f"{math.floor(percentile * 100)}%"


def notes(result: SearchResult) -> list[str]:
    """Plain sentences after the headline: how close in meaning, and why a result may count for less."""
    e = result.explanation
    out = []
    if e.cosine_percentile is not None:
        out.append(f"In meaning this passage is closer to your query than {share_of_pairs(e.cosine_percentile)} of "
                   "the sentence pairs in this index are to each other.")
    if e.boilerplate:
        out.append("This sentence repeats in many documents (a header, footer or licence), so it counts half.")
    out.append(_confidence_sentence(result))
    return out


def _confidence_sentence(result: SearchResult) -> str:
    """What the number on the card means, in words: said after the closeness in meaning, which alone may read high
    ("99.9%") for a passage that does not answer."""
    chance = f"about {result.score:.0f} in 100"
    word = {"strong": "A strong match", "possible": "A possible match"}.get(result.strength.value, "An unlikely match")
    refined = result.explanation.confidence_features.get("m_best") is not None
    how = " after a second reading of it by a sentence model" if refined else ""
    return (f"{word}: results like this one answered the query {chance} times when quire was measured on judged "
            f"searches{how}.")


# The ranking's numbers (Explanation.contributions) as the Details table names them, a key it does not know as it is:
# the raw keys read as jargon to a new user of the window (docs/decisions/0002, 0015 and 0016 say what each is).
_SCORE_NAMES = {
    "semantic": "Meaning of the whole document (best sentence and average)",
    "words": "Words, counting words related to yours: BM25",
    "fused": "Ranking score: meaning and words combined",
    "evidence": "Evidence of relevance on this index's scale",
}
# What the confidence model read (engine.search.features), by the names of the Details table; the others are left
# out there (they compare the document with the rest of the list, which the table does not show).
_FEATURE_NAMES = {
    "z": "Meaning against chance (standard deviations above random sentences)",
    "coverage": "Share of the query's word weight it holds",
    "m_opening": "Second look: the document's opening, cosine",
    "m_sentence": "Second look: this passage, cosine",
}


def _rank(rank: int | None, side: str, used: bool) -> str:
    """A side's rank as the Details table says it: a mode that does not order by that side says so."""
    if not used:
        unused = f"this mode does not order by {side}"
        return f"{rank} ({unused})" if rank else f"not used: {unused}"
    return str(rank) if rank else f"not found by {side}"


def details_html(result: SearchResult, mode: Mode | None = None) -> str:
    """The ranking's numbers for one result, as an HTML table; ``mode`` is the search's (None: hybrid)."""
    e = result.explanation
    rows = []
    if e.cosine is not None:
        pct = (f" (higher than {share_of_pairs(e.cosine_percentile)} of sentence pairs in this index)"
               if e.cosine_percentile is not None else "")
        rows.append(("Meaning of this passage: cosine", f"{e.cosine:.3f}{pct}"))
    # the rank is the whole document's (its best sentence and all its sentences together), not the passage's alone
    rows.append(("Rank by meaning (whole document)", _rank(e.semantic_rank, "meaning", mode != "lexical")))
    if e.bm25 is not None:
        rows.append(("Words: BM25 of its best passage", f"{e.bm25:.3f}"))
    rows.append(("Rank by words", _rank(e.lexical_rank, "words", mode != "semantic")))
    terms = ", ".join(f"{html.escape(t.said)} (idf {t.idf:.2f})" for t in e.matched_terms) or "none"
    rows.append(("Matched words", terms))
    rows.append(("Word coverage", f"{e.term_coverage:.0%} of the query's weight (rare words weigh more)"))
    rows.append(("Combined by", html.escape(e.fusion)))
    rows.extend((_SCORE_NAMES.get(k, html.escape(k)), f"{v:.4f}") for k, v in e.contributions.items())
    rows.extend((name, f"{e.confidence_features[k]:.3f}") for k, name in _FEATURE_NAMES.items()
                if k in e.confidence_features)
    rows.append(("Shown as", f"{result.score:g}: the estimated chance in 100 that it answers the query "
                             f"({result.strength.value}), never above the result before it"))
    cells = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in rows)
    return f"<table cellspacing='2'>{cells}</table>"


def breakdown_html(result: SearchResult, asked: Sequence[str] | None, mode: Mode | None, details: bool) -> str:
    """The headline and notes, then (``details``) the numbers under a "Details" heading."""
    said = " ".join([headline(result.explanation, asked, mode), *notes(result)])
    out = f"<h4>Why this result</h4><p>{html.escape(said)}</p>"
    return out + ("<h4>Details</h4>" + details_html(result, mode) if details else "")
