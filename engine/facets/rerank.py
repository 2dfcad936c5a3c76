"""Facet-aware re-ranking (issue 7): the head of a ranking re-ordered by the set distance SC (Eq. 5).

SC compares the query's facets with a passage's: each set of unit centres reconstructs the other by NNSC (Eq. 1) and
the two errors are summed, so a passage scores well when it covers the query's facets and adds few of its own. A
document's distance is that of its closest candidate sentence (those the searcher may show it by). The distances rank
the top ``DEPTH`` documents once more, and that ranking joins the searcher's by reciprocal rank fusion, as its
semantic and lexical rankings are joined (``engine.search.fusion``); documents below ``DEPTH`` keep their places.

It is off unless a search asks for it (docs/decisions/0047-facet-reranking-off.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from engine.facets.extract import BORROW_RESULTS, query_facets, set_distances
from engine.facets.service import facets_of_sentences, load_space
from engine.facets.space import FacetSpace
from engine.store.database import Store
from engine.store.sentences import SentenceRow

log = logging.getLogger(__name__)

# Off: on the classic collections it gained nothing that was not tuned on them, and costs a query more
# (docs/decisions/0047-facet-reranking-off.md). ``quire search --rerank-facets`` still asks for it.
ENABLED = False
# Documents re-ranked: the head of the ranking that people read; deeper, SC's weaker judgement has more to spoil.
DEPTH = 30
# RRF constant and the facet ranking's vote, relative to the input ranking's 1.
RRF_K = 20
WEIGHT = 0.5


def enabled(flag: bool | None) -> bool:
    """Whether a search re-ranks by facets: ``flag`` when given, else the measured default."""
    return ENABLED if flag is None else flag


def document_distances(store: Store, space: FacetSpace, query: str, rows: Sequence[Sequence[SentenceRow]]) -> np.ndarray:
    """SC between the query's facets and each document's closest candidate sentence (NaN: no facets to compare).

    ``rows[i]`` are document i's candidate sentence rows, documents in ranked order; a short query borrows the words
    of the first ``BORROW_RESULTS`` documents' sentences (``query_facets``).
    """
    borrowed = [row.text for doc in rows[:BORROW_RESULTS] for row in doc]
    query_set = query_facets(space, query, borrowed)
    flat = [row for doc in rows for row in doc]
    distance = set_distances(query_set, facets_of_sentences(store, space, flat))
    out = np.full(len(rows), np.nan)
    start = 0
    for i, doc in enumerate(rows):
        own = distance[start : start + len(doc)]
        start += len(doc)
        if own.size and not np.isnan(own).all():
            out[i] = np.nanmin(own)
    return out


def fuse(distances: np.ndarray, *, depth: int = DEPTH, weight: float = WEIGHT) -> list[int]:
    """New order (indices into the ranking) from the ranking's own order and the head's facet distances.

    Document i of the head gets 1 / (RRF_K + i + 1) for its place, plus ``weight`` / (RRF_K + r) where r is its
    rank by distance; a document without facets gets no facet vote. Ties keep the original order.
    """
    n = len(distances)
    head = min(depth, n)
    score = 1.0 / (RRF_K + np.arange(1, head + 1))
    known = np.flatnonzero(~np.isnan(distances[:head]))
    by_distance = known[np.argsort(distances[known], kind="stable")]
    score[by_distance] += weight / (RRF_K + np.arange(1, by_distance.size + 1))
    order = np.argsort(-score, kind="stable")
    return [*order.tolist(), *range(head, n)]


def rerank(store: Store, query: str, rows: Sequence[Sequence[SentenceRow]], space: FacetSpace | None = None) -> list[int]:
    """The new order of a ranking (indices into it), given each document's candidate sentence rows in ranked order.

    The order is unchanged when the static model (the facets' word space) is missing or the query has no facets.
    """
    space = space or load_space()
    if space is None or not rows:
        return list(range(len(rows)))
    head = rows[:DEPTH]
    distances = document_distances(store, space, query, head)
    return fuse(np.concatenate([distances, np.full(len(rows) - len(head), np.nan)]), depth=DEPTH, weight=WEIGHT)
