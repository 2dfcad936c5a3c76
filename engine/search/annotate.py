"""Search results with their facet chips and facet-level evidence (``engine.facets.explain``), for the sentences the
searcher already holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.facets.explain import Explainer
from engine.facets.extract import BORROW_RESULTS
from engine.facets.service import facets_of_sentences
from engine.facets.space import FacetSpace
from engine.search.results import SearchResult
from engine.store.database import Store
from engine.store.sentences import SentenceRow


def annotate(store: Store, space: FacetSpace, query: str, results: Sequence[SearchResult],
             rows: Sequence[SentenceRow]) -> list[SearchResult]:
    """``results`` with their facet chips and facet explanation filled in (one label search for all of them).

    ``rows`` are the results' sentence rows, which the searcher already holds.
    """
    if not results:
        return list(results)
    texts = [row.text for row in rows]
    explainer = Explainer(space, query, borrowed=texts[:BORROW_RESULTS])
    explained = explainer.explain(texts, facets_of_sentences(store, space, rows))
    return [replace(r, facets=chips, explanation=replace(r.explanation, facets=evidence))
            for r, (chips, evidence) in zip(results, explained)]
