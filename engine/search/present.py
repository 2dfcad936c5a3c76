"""What a person reads of a search: each result with its explanation (the query's words as the document writes
them, the scores that ranked it), the sentences around its passage and its facets, and the words of the query no
passage holds."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import replace

from engine.facets.space import FacetSpace
from engine.search import relevance as rel
from engine.search.annotate import annotate
from engine.search.calibration import Calibration
from engine.search.candidates import semantic_side_score, word_side_score
from engine.search.confidence import Strength
from engine.search.gate import Judged, card_score
from engine.search.query import Query
from engine.search.results import Explanation, Highlight, MatchedTerm, Mode, SearchResult
from engine.store.database import Store
from engine.store.sentences import SentenceRow
from engine.store.vectors import VectorIndex
from engine.text import terms as T

log = logging.getLogger(__name__)

CONTEXT_RADIUS = 2


def result(judged: Judged, query: Query, copies: Sequence[str], calibration: Calibration | None) -> SearchResult:
    """The result for one document as the verdict ``judged`` it (context left empty: :func:`explain` adds it);
    ``copies``: the paths of files with the same content."""
    passage = judged.passage
    doc, record, best, similarity = passage.doc, passage.record, passage.best, passage.similarity
    written = _written_forms(passage.holding, passage.matched, query)
    percentile = calibration.percentile(similarity) if calibration and similarity is not None else None
    explanation = Explanation(
        cosine=similarity,
        cosine_percentile=percentile,
        bm25=doc.lex_score if doc.lex_passage is not None else None,
        matched_terms=tuple(
            MatchedTerm(t.word, s, round(query.idf.get(s, 0.0), 4), written.get(s)) for s, t in query.stems.items()
            if s in passage.matched
        ),
        term_coverage=round(passage.coverage, 4),
        semantic_rank=doc.sem_rank,
        lexical_rank=doc.lex_rank,
        fusion=(f"score fusion ({rel.SEMANTIC_SHARE:.0%} meaning, {1 - rel.SEMANTIC_SHARE:.0%} words)"
                if query.mode is Mode.HYBRID else query.mode.value),
        # "semantic" and "words": the document's scores on the two sides, which a collection's merge of its
        # shards' rankings fuses again (engine.cluster.search); "words" counts related words (hybrid mode)
        contributions={"fused": round(doc.fused, 6), "evidence": round(doc.evidence, 4),
                       **({} if math.isnan(semantic := semantic_side_score(doc)) else {"semantic": semantic}),
                       **({"words": word_side_score(doc)} if doc.lex_related else {})},
        boilerplate=doc.boilerplate,
        confidence_features={name: round(value, 6) for name, value in judged.features.items()},
    )
    return SearchResult(
        path=record.path, title=record.title or "", score=card_score(judged.probability),
        similarity=None if similarity is None else round(float(similarity), 4),
        sentence=best.text, start=best.start, end=best.end, page=best.page, ordinal=best.ordinal,
        context_before=(), context_after=(),
        highlights=tuple(Highlight(a, b, s, 1.0) for a, b, s in T.matches(best.text, query.stem_set)),
        explanation=explanation,
        weak=judged.strength is Strength.UNLIKELY,
        duplicates=tuple(copies),
        sentence_id=best.id,
        byline=record.byline or "",
        confidence=round(judged.probability, 4),
        strength=judged.strength,
        related=judged.related,
    )


def _written_forms(texts: Sequence[str], stems: frozenset[str], query: Query) -> dict[str, str]:
    """For each of the query's ``stems`` that ``texts`` hold only through another word of the stem, the first such word
    as written: an explanation that says the document holds "medication" where it holds "Medical" is untrue."""
    joined = "\n".join(texts)
    lowered = joined.lower()
    same = len(lowered) == len(joined)  # lowercasing a few letters changes the length: then named in lower case
    out: dict[str, str] = {}
    for s in stems:
        if _word_at(lowered, query.folded[s]) is not None:
            continue  # held as typed, as most are
        # a word of the stem begins with it, but for the letter the stemmer rewrites ("stori" of "story")
        for at, end in _words_from(lowered, s[: max(1, len(s) - 1)]):
            if T.stem(lowered[at:end]) == s:
                form = (joined if same else lowered)[at:end]
                if T.fold(form) != query.folded[s]:  # not "café" for a typed "cafe": the same word to the index
                    out[s] = form
                break
    return out


def _words_from(text: str, start: str) -> Iterator[tuple[int, int]]:
    """Where each word of ``text`` that begins with ``start`` begins and ends."""
    at = text.find(start)
    while at >= 0:
        if at == 0 or not text[at - 1].isalnum():
            end = at + len(start)
            while end < len(text) and text[end].isalnum():
                end += 1
            yield at, end
        at = text.find(start, at + 1)


def _word_at(text: str, word: str) -> int | None:
    """Where ``text`` holds ``word`` as a whole word first, or None."""
    return next((at for at, end in _words_from(text, word) if end == at + len(word)), None)


def explain(store: Store, facets: FacetSpace | None, query: str, results: Sequence[SearchResult],
            rows: Sequence[SentenceRow]) -> list[SearchResult]:
    """What ``explain=True`` adds to ``results`` (their best sentences' ``rows``): surrounding sentences, facet
    chips and evidence (``facets``: the static model's word space; None: no facets). The app shows a ranking at once
    and explains the rows on screen after (``Index.explain``)."""
    results = [_with_context(store, r, row) for r, row in zip(results, rows)]
    if facets is not None and results:
        results = annotate(store, facets, query, results, rows)
    return results


def _with_context(store: Store, result: SearchResult, row: SentenceRow) -> SearchResult:
    neighbours = store.sentences.neighbours(row.doc_id, row.ordinal, CONTEXT_RADIUS)
    return replace(
        result,
        context_before=tuple(n.text for n in neighbours if n.ordinal < row.ordinal),
        context_after=tuple(n.text for n in neighbours if n.ordinal > row.ordinal),
    )


def missing_words(store: Store, query: str, stems: dict[str, T.Term], df: dict[str, int]) -> tuple[str, ...]:
    """The query's words no passage holds, and its quoted phrases whose words are all there but never in that
    order."""
    missing = tuple(term.word for stem, term in stems.items() if not df.get(stem, 0))
    return missing + tuple(p for p in T.split_phrases(query)[0] if _absent_phrase(store, p, df))


def _absent_phrase(store: Store, phrase: str, df: dict[str, int]) -> bool:
    """Whether no passage holds ``phrase`` as written, though each of its words is somewhere."""
    if not all(df.get(t.stem, 0) for t in T.query_terms(phrase)):
        return False  # its missing words are named already
    match = T.fts_expression([phrase], [])
    return match is not None and not store.words.fts_bm25(match, 1)


def ranking_cut(mode: Mode, vectors: VectorIndex | None, df: dict[str, int], depth: int) -> bool:
    """Whether a ranking that ``mode`` shows may have stopped at its ``depth`` before every document that
    qualifies: the graph holds more sentences than it returns, or the query's words are in more passages than
    are scored (their document frequencies summed, an upper bound of the passages that hold any)."""
    semantic = mode is not Mode.LEXICAL and vectors is not None and vectors.live_count > depth
    lexical = mode is not Mode.SEMANTIC and sum(df.values()) > depth
    return semantic or lexical
