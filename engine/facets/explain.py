"""Why a passage matched a query, in the static model's word space (issue 7).

For each result: which query facets met which passage facets (cosine of centres), how well the passage's facets
cover each query word (the max-cosine coverage of Eq. 7, SIF-weighted), which passage words the facets single out
(Eq. 6, for highlighting), and word bridges. A static sentence vector is the normalised sum of its word vectors, so
cos(q, p) = sum_ij q_i . p_j / (|sum q| |sum p|) splits exactly into word-pair terms; the largest pairs explain a
match even when the two texts share no word.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.facets.extract import DEFAULT_K, FacetSet, query_facets, set_distances
from engine.facets.space import FacetSpace, Token
from engine.search.results import Bridge, Facet, FacetExplanation, FacetMatch, WordCoverage, WordImportance

log = logging.getLogger(__name__)

# Word pairs shown per result; pairs of stop words are left out of the list (their share still counts in the sum).
BRIDGES = 5
# Decimals kept in explanations: enough to rank and show, short in JSON.
DIGITS = 4


@dataclass(frozen=True)
class QueryFacets:
    """What an explanation needs of the query, computed once per search (labels come with the results' labels)."""

    text: str
    tokens: tuple[Token, ...]
    facets: FacetSet
    word_sum: np.ndarray


class Explainer:
    """Explains results for one query; build once per search, then call :meth:`explain` with all results at once."""

    def __init__(self, space: FacetSpace, query: str, k: int = DEFAULT_K, borrowed: Sequence[str] = ()) -> None:
        """``borrowed``: the top results' sentences, whose words a short query borrows (``query_facets``)."""
        self.space = space
        tokens = tuple(t for t in space.tokens(query) if space.content[t.id])
        facets = query_facets(space, query, borrowed, k)
        ids, _ = space.ids([query])
        self.query = QueryFacets(query, tokens, facets, space.embedder.table[ids].sum(axis=0))
        self._query_ids = ids

    def explain(self, sentences: Sequence[str], facets: Sequence[FacetSet]) -> list[tuple[tuple[Facet, ...], FacetExplanation]]:
        """Chips and facet evidence for each (sentence text, its facets).

        The query's and every result's facet centres are labelled in one matrix product against the label
        vocabulary, the dominant cost of an explanation (see ``engine.facets.space.LABEL_VOCABULARY``).
        """
        q = self.query.facets
        all_labels = self.space.labels(np.concatenate([q.centres, *(f.centres for f in facets)]))
        query_labels = tuple(words[0][0] if words else "" for words in all_labels[: q.k])
        distances = [None if np.isnan(d) else float(d) for d in set_distances(self.query.facets, facets)]
        out = []
        start = q.k
        for text, doc, distance in zip(sentences, facets, distances):
            labels = all_labels[start : start + doc.k]
            start += doc.k
            out.append(self._one(text, doc, labels, query_labels, distance))
        return out

    def _one(self, text: str, doc: FacetSet, labels: list[list[tuple[str, float]]], query_labels: tuple[str, ...],
             distance: float | None) -> tuple[tuple[Facet, ...], FacetExplanation]:
        q = self.query
        names = [words[0][0] if words else "" for words in labels]
        cross = q.facets.centres @ doc.centres.T  # (Kq, Kd) cosines of unit centres
        chips = []
        for j in range(doc.k):
            best = int(cross[:, j].argmax()) if q.facets.k else None
            chips.append(Facet(
                label=names[j], words=tuple(w for w, _ in labels[j]), weight=_r(doc.mass[j]),
                match=None if best is None else _r(cross[best, j]),
                query_label=None if best is None else query_labels[best],
            ))
        matches = []
        if doc.k:
            for i in np.argsort(-cross.max(axis=1), kind="stable"):
                j = int(cross[i].argmax())
                matches.append(FacetMatch(query_labels[i], names[j], _r(cross[i, j])))
        coverage, words = self._coverage(doc, names)
        p_ids, _ = self.space.ids([text])
        cosine, bridges = self._bridges(p_ids)
        explanation = FacetExplanation(
            matches=tuple(matches), coverage=coverage, words=words, importance=self._importance(text, doc),
            bridges=bridges, static_cosine=_r(cosine), set_distance=None if distance is None else _r(distance),
        )
        return tuple(chips), explanation

    def _coverage(self, doc: FacetSet, names: list[str]) -> tuple[float, tuple[WordCoverage, ...]]:
        """Eq. 7's inner term per query word: SIF weight x max cosine with a passage facet (negative counts as 0)."""
        tokens = self.query.tokens
        if not tokens or not doc.k:
            return 0.0, tuple(WordCoverage(t.text, 0.0, _r(self.space.sif[t.id]), None) for t in tokens)
        ids = np.array([t.id for t in tokens])
        sims = np.maximum(self.space.unit[ids] @ doc.centres.T, 0.0)
        best = sims.argmax(axis=1)
        covered = sims[np.arange(ids.size), best]
        weights = self.space.sif[ids]
        total = float(weights.sum())
        overall = float(weights @ covered) / total if total > 0 else 0.0
        return _r(overall), tuple(
            WordCoverage(t.text, _r(c), _r(w), names[b]) for t, c, w, b in zip(tokens, covered, weights, best)
        )

    def _importance(self, text: str, doc: FacetSet) -> tuple[WordImportance, ...]:
        """Eq. 6: a word's importance is the sum over facets of its positive cosine with them; top word = 1."""
        tokens = [t for t in self.space.tokens(text) if self.space.content[t.id]]
        if not tokens or not doc.k:
            return ()
        ids = np.array([t.id for t in tokens])
        score = np.maximum(self.space.unit[ids] @ doc.centres.T, 0.0).sum(axis=1)
        top = float(score.max())
        if top <= 0:
            return ()
        return tuple(WordImportance(t.text, t.start, t.end, _r(s / top)) for t, s in zip(tokens, score))

    def _bridges(self, p_ids: np.ndarray) -> tuple[float, tuple[Bridge, ...]]:
        """The static cosine of query and passage, and its largest word-pair terms, each as a share of it."""
        table = self.space.embedder.table
        q_ids = self._query_ids
        denominator = float(np.linalg.norm(self.query.word_sum) * np.linalg.norm(table[p_ids].sum(axis=0)))
        if denominator <= 0:
            return 0.0, ()
        q_unique, q_count = np.unique(q_ids, return_counts=True)
        p_unique, p_count = np.unique(p_ids, return_counts=True)
        # a word repeated n times contributes n copies of its vector; pairs of distinct words carry the product
        terms = (table[q_unique] @ table[p_unique].T) * np.outer(q_count, p_count) / denominator
        cosine = float(terms.sum())
        shown = self.space.content[q_unique][:, None] & self.space.content[p_unique][None, :]
        flat = np.where(shown, terms, -np.inf).ravel()
        order = np.argsort(-flat, kind="stable")[:BRIDGES]
        out = []
        for index in order:
            if not np.isfinite(flat[index]) or flat[index] <= 0:
                break
            i, j = divmod(int(index), p_unique.size)
            share = float(flat[index]) / cosine if cosine > 0 else 0.0
            out.append(Bridge(self.space.word(int(q_unique[i])), self.space.word(int(p_unique[j])), _r(share)))
        return cosine, tuple(out)


def _r(x: float) -> float:
    return round(float(x), DIGITS)
