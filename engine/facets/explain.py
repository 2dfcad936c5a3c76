"""Why a passage matched a query, in the static model's word space (issue 7).

For each result: which query facets met which passage facets (cosine of centres), how well the passage's facets
cover each query word (the max-cosine coverage of Eq. 7, SIF-weighted), which passage words the facets single out
(Eq. 6, for highlighting), and word bridges. A static sentence vector is the normalised sum of its word vectors, so
cos(q, p) = sum_ij q_i . p_j / (|sum q| |sum p|) splits exactly into word-pair terms; the largest pairs explain a
match even when the two texts share no word.

A result's chips are named by words a person can recognise: the word of the sentence nearest a facet's centre (or,
for a facet of the neighbouring sentences' words, the nearest word of the query). A facet no such word is near gets no
chip; it still counts in the evidence. Which chips the app shows, and what their tooltips say, is the app's choice.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.facets.extract import DEFAULT_K, FacetSet, query_facets, set_distances
from engine.facets.results import Bridge, Facet, FacetExplanation, FacetMatch, WordCoverage, WordImportance
from engine.facets.space import FacetSpace, Token
from engine.text.terms import stem

log = logging.getLogger(__name__)

# Word pairs shown per result; pairs of stop words are left out of the list (their share still counts in the sum).
BRIDGES = 5
# Decimals kept in explanations: enough to rank and show, short in JSON.
DIGITS = 4
# A word names a facet, or is listed as what the facet is about, when its vector is at least this close to the centre.
# On tests/conftest.py's corpus a facet built on a word of the sentence sits at 0.95-1.0 from it and its other close
# words at 0.5-0.9 ("clinic": hospital 0.69, patients 0.56; "dr": doctor 0.74), while a facet of the neighbouring
# sentences' words is at most 0.35 from any word of the sentence, and its nearest vocabulary words below 0.5 ("munch",
# "mu", "strange" for "murky"; "po", "poaching" for "porpoises": the chips issue 34 called noise).
NAME_FLOOR = 0.5
# A vocabulary word is listed as what a facet is about only this close: nearer words are synonyms and spellings
# ("doctor": physician 0.76, dr 0.75; "spaghetti": pasta 0.76), farther ones drift ("pot": potash 0.67, marijuana 0.53).
VOCABULARY_FLOOR = 0.7
# Words a chip lists as what its facet is about, after folding the words of one stem ("whale", "whales", "whaling").
ABOUT_WORDS = 3
# Vocabulary words fetched per facet centre: the nearest few are often one word's inflections.
VOCABULARY_WORDS = 6


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
        all_labels = self.space.labels(np.concatenate([q.centres, *(f.centres for f in facets)]), VOCABULARY_WORDS)
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
        own = [t for t in self.space.tokens(text) if self.space.content[t.id]]
        named = self._names(text, own, doc, labels)
        names = [name[0] if name else (words[0][0] if words else "") for name, words in zip(named, labels)]
        cross = q.facets.centres @ doc.centres.T  # (Kq, Kd) cosines of unit centres
        chips = []
        for j in range(doc.k):
            chip_words = named[j]
            if chip_words is None:
                continue  # no word of the passage or the query is near it: a chip would say nothing to a person
            best = int(cross[:, j].argmax()) if q.facets.k else None
            chips.append(Facet(
                label=names[j], words=chip_words, weight=_r(doc.mass[j]),
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
            matches=tuple(matches), coverage=coverage, words=words, importance=self._importance(own, doc),
            bridges=bridges, static_cosine=_r(cosine), set_distance=None if distance is None else _r(distance),
        )
        return tuple(chips), explanation

    def _names(self, text: str, own: list[Token], doc: FacetSet, labels: list[list[tuple[str, float]]]
               ) -> list[tuple[str, ...] | None]:
        """Per facet, the words a chip shows: its name first (the passage's word nearest the centre, else the query's,
        no two facets named by words of one stem), then what else it is about (words of the passage, then of the
        vocabulary within VOCABULARY_FLOOR, one per stem, ABOUT_WORDS in all); None when no word of the passage
        or the query is within NAME_FLOOR."""
        # words, not numbers: a chip "860" names nothing
        own = [t for t in own if any(c.isalpha() for c in t.text)]
        query_tokens = [t for t in self.query.tokens if any(c.isalpha() for c in t.text)]
        candidates = [*own, *query_tokens]
        if not candidates or not doc.k:
            return [None] * doc.k
        sims = self.space.unit[np.array([t.id for t in candidates])] @ doc.centres.T  # (words, facets)
        shown = [_as_written(text, t) for t in own] + [t.text for t in query_tokens]
        taken: set[str] = set()
        out: list[tuple[str, ...] | None] = []
        for j in range(doc.k):
            near = [i for i in np.argsort(-sims[:, j], kind="stable") if sims[i, j] >= NAME_FLOOR]
            passage = [shown[i] for i in near if i < len(own)]
            query = [shown[i] for i in near if i >= len(own)]
            # the passage's own words first: a facet of the passage is named by what the passage says
            name = next((w for w in [*passage, *query] if stem(w) not in taken), None)
            if name is None:
                out.append(None)
                continue
            taken.add(stem(name))
            about = [name, *passage, *(w for w, cosine in labels[j] if cosine >= VOCABULARY_FLOOR)]
            out.append(_one_per_stem(about, ABOUT_WORDS))
        return out

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
        # a word the model read as a much shorter word names no facet: "asasination" read as "asa" matched the facet
        # of "ASA" (the standards body), and a chip said it matched "asasination"
        return _r(overall), tuple(
            WordCoverage(t.text, _r(c), _r(w), names[b] if t.faithful else None)
            for t, c, w, b in zip(tokens, covered, weights, best)
        )

    def _importance(self, tokens: list[Token], doc: FacetSet) -> tuple[WordImportance, ...]:
        """Eq. 6: a word's importance (``tokens``: the passage's content words) is the sum over facets of its positive
        cosine with them; top word = 1."""
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


def _as_written(text: str, token: Token) -> str:
    """A word of ``text`` (a sentence) as a chip shows it: as written, but in lower case when it opens the sentence,
    whose start alone may have capitalised it ("Porpoises are ..." gives "porpoises"; "... of Orion" keeps "Orion")."""
    word = token.text
    opens = not any(c.isalnum() for c in text[: token.start])
    return word.lower() if opens and word[:1].isupper() and word[1:].islower() else word


def _one_per_stem(words: Sequence[str], n: int) -> tuple[str, ...]:
    """The first ``n`` of ``words`` whose stems differ, each stem by the first word that has it."""
    first: dict[str, str] = {}
    for word in words:
        first.setdefault(stem(word), word)
    return tuple(first.values())[:n]


def _r(x: float) -> float:
    return round(float(x), DIGITS)
