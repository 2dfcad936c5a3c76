"""A query as the searcher takes it: the checks it must pass, its words by stem, what its words and vectors are
worth on the index, and the record every later stage weighs documents against (:class:`Query`)."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import numpy as np

from engine.errors import QueryError
from engine.search import relevance as rel
from engine.search.calibration import Calibration
from engine.search.results import Mode
from engine.store.bm25 import idf as bm25_idf
from engine.text import terms as T
from engine.text.paths import readable

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 20_000
# A long query (a pasted passage, "more like this") is searched sentence by sentence, up to this many sentences.
MAX_QUERY_SENTENCES = 32


def checked(query: str, k: int) -> str:
    """``query`` stripped; raises :class:`QueryError` for an empty or overlong query, or a ``k`` below 1."""
    query = query.strip()
    if not query:
        raise QueryError("the query is empty: type a few words or paste a passage")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,} "
            "(paste a passage rather than a whole document)"
        )
    if k < 1:
        raise QueryError("k must be at least 1")
    return query


def query_stems(query: str) -> tuple[list[str], list[T.Term], dict[str, T.Term]]:
    """A query's quoted phrases, its other words, and every word of both by stem."""
    phrases, rest = T.split_phrases(query)
    words = T.query_terms(rest)
    stems = {t.stem: t for t in words}
    for phrase in phrases:
        stems.update({t.stem: t for t in T.query_terms(phrase)})
    return phrases, words, stems


def stop_words_note(words: tuple[str, ...], query: str) -> str:
    """Why a query of stop words alone finds nothing relevant, and what to do: add a word, or quote the phrase."""
    if len(words) == 1:
        return f"“{words[0]}” is a word too common to search by: add a word that says what you are looking for"
    quoted = ", ".join(f"“{w}”" for w in words)
    return (f"{quoted} are words too common to search by: add a word that says what you are looking for, or put the "
            f"phrase in quotes (\"{query}\") to find it as written")


def word_idf(passages: int, stems: dict[str, T.Term], df: dict[str, int]) -> dict[str, float]:
    """Each stem's IDF among ``passages``: the scorer's own, so that a BM25 score can be weighed against what the
    query's words could score."""
    n = max(1, passages)
    return {s: bm25_idf(n, df.get(s, 0)) for s in stems}


def query_scale(calibration: Calibration | None, null_sample: np.ndarray | None, query_vectors: np.ndarray | None,
           idf: dict[str, float]) -> rel.Scale:
    """What a cosine and a BM25 score are worth for this query (engine.search.relevance.Scale).

    A query of several sentences scores a sentence by the mean of their cosines, judged by the same tail as one
    sentence's: the sentences of one passage point the same way, so their mean spreads about as widely as one
    cosine does (drawing the tail in by sqrt(n), as for independent sentences, answered 12% of off-topic
    paragraph-long queries; docs/decisions/0002-score-fusion-and-relevance-gate.md).
    """
    mean = tail = null_mean = null_spread = None
    if calibration is not None:
        mean, tail = calibration.mean, calibration.threshold
    if query_vectors is not None and null_sample is not None and len(null_sample) >= 2:
        sims = (null_sample @ query_vectors.T).mean(axis=1)
        null_mean, null_spread = float(sims.mean()), float(sims.std())
    return rel.Scale(mean, tail, rel.lexical_bound(idf), null_mean, null_spread)


@dataclass(frozen=True)
class Query:
    """What judging and showing a document needs to know of the query: its text (checked), mode, vectors (None: no
    semantic side), terms (stem -> term) and their IDF, and its relevance scale."""

    text: str
    mode: Mode
    vectors: np.ndarray | None
    stems: dict[str, T.Term]
    idf: dict[str, float]
    scale: rel.Scale

    @functools.cached_property
    def stem_set(self) -> frozenset[str]:
        """The query's stems, which highlights and candidate sentences are matched against."""
        return frozenset(self.stems)

    @functools.cached_property
    def folded(self) -> dict[str, str]:
        """Each query word folded as the index folds words, by its stem (:func:`_query_word_mass`)."""
        return {s: T.fold(t.word) for s, t in self.stems.items()}


def check_text(query: str) -> None:
    """Refuse a query holding lone surrogates: bytes that were not UTF-8 (a terminal in another encoding gives
    them to the command line as surrogate escapes), which neither SQLite nor the tokenizers accept."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as e:
        raise QueryError(f"the query is not valid UTF-8 text (it holds {readable(query[e.start:e.end])} in "
                         f"{readable(query)!r}); check the terminal's or the file's encoding") from e
