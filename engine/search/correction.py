"""A misspelt query searches its correction: where the query as typed finds no strong match and a word of it is in
no passage, the spelling did-you-mean offers (engine.search.spelling) is searched too, and its answer is given where
it is more confident, naming the query as typed (``corrected_from``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.search.results import Answer, SearchResponse


def with_correction(run: Callable[[str], SearchResponse], query: str, correct: bool) -> SearchResponse:
    """``run(query)``, or with ``correct`` and where it does better, ``run`` of the query's spelling correction."""
    typed = run(query)
    if not correct or typed.did_you_mean is None or typed.answer is Answer.STRONG:
        return typed
    corrected = run(typed.did_you_mean)
    if corrected.confidence <= typed.confidence:
        return typed
    return replace(corrected, corrected_from=typed.query, seconds=typed.seconds + corrected.seconds)
