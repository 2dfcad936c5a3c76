"""Which sentence each document is shown by: the candidate sentences it may be shown by (its best lexical
passages', its best semantic sentence and, for a short line or a heading, those it was embedded with or that say
what it names), and the one among them with most evidence, a heading yielding to a sentence of its section."""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed import context
from engine.search.candidates import Candidate
from engine.search.query import Query
from engine.search.results import Mode
from engine.search.similarity import SentenceVectors
from engine.store.database import Store
from engine.store.documents import DocumentRecord
from engine.store.sentences import SentenceRow
from engine.text import terms as T
from engine.text.sentences import ends_like_sentence, is_heading, is_list_item

log = logging.getLogger(__name__)

# A document's few sentences with most query-word mass are weighed by their whole evidence (:func:`_most_query_words`).
CONTENDERS = 3
# A query word a sentence holds only as another word of the same stem ("edition" for "edit") counts this much.
STEM_ONLY_SHARE = 0.5
# Words of an ASCII text as the index splits them (letters and digits; "_" splits), lower-cased.
_ASCII_WORD = re.compile(r"[^\W_]+")
# The kind the table reader (engine.ingest.readers.text.TableReader) records: its first row is a header.
TABLE_KIND = "table"


@dataclass(frozen=True)
class ChosenPassage:
    """One document's shown sentence (``best``) and its cosine with the query (None: not known), the query's stems
    its candidate sentences hold and their share of the query's IDF."""

    doc: Candidate
    record: DocumentRecord
    best: SentenceRow
    similarity: float | None
    matched: frozenset[str]
    coverage: float
    holding: tuple[str, ...]  # the texts of its candidate sentences that hold a query word, ``matched`` read from them


class CandidateSentences:
    """The sentences each document of one search may be shown by (:meth:`PassageChooser.candidate_sentences`), read
    once whichever stage needs them first: the gate's alignment, the facets' re-ranking, the choice of passages."""

    def __init__(self, chooser: PassageChooser) -> None:
        self._chooser = chooser
        self._rows: dict[int, list[SentenceRow]] = {}

    def read(self, docs: Sequence[Candidate]) -> None:
        """Read the candidate sentences of those of ``docs`` not read yet."""
        self._rows.update(self._chooser.candidate_sentences([d for d in docs if d.doc_id not in self._rows]))

    def __getitem__(self, doc_id: int) -> list[SentenceRow]:
        return self._rows[doc_id]


class PassageChooser:
    """Reads the sentences documents of one index may be shown by, and picks each document's."""

    def __init__(self, store: Store, vectors: SentenceVectors) -> None:
        self.store, self.vectors = store, vectors

    def candidate_sentences(self, docs: Sequence[Candidate]) -> dict[int, list[SentenceRow]]:
        """The sentences each document may be shown by (see :func:`_candidate_rows`), read for all of ``docs`` at
        once; their best semantic sentences' rows are filled in on the way."""
        rows = self.store.sentences.by_ids([d.sem_sentence for d in docs if d.sem_sentence is not None])
        for doc in docs:
            doc.sem_row = rows.get(doc.sem_sentence) if doc.sem_sentence is not None else None
            if doc.sem_row is None:
                continue
            if context.is_short(context.word_counts([doc.sem_row.text]))[0]:
                doc.span_rows = self._pooled_with(doc.sem_row)
            elif _heads_section(doc.sem_row.text):
                doc.span_rows = self._section_sentences(doc.sem_row)
        passages = self.store.sentences.of_passages(
            [p for d in docs if d.lex_passage is not None for p in [d.lex_passage, *d.lex_more]])
        return {d.doc_id: _candidate_rows(d, passages) for d in docs}

    def _pooled_with(self, row: SentenceRow) -> list[SentenceRow]:
        """The sentences a short line may have been embedded with (those around it within a span), short ones left
        out: a heading found by its section's meaning is shown by the section's sentence that says it."""
        near = [r for r in self.store.sentences.neighbours(row.doc_id, row.ordinal, context.MAX_SPAN - 1) if r.id != row.id]
        return [r for r, short in zip(near, context.is_short(context.word_counts([r.text for r in near]))) if not short]

    def _section_sentences(self, row: SentenceRow) -> list[SentenceRow]:
        """The first sentences under a heading found by meaning (as many as a short line's span may reach, up to the
        next heading) that say something (:func:`_says_something`): it is shown by the one most similar to the
        query, as a short line is, for a heading's few words lift its cosine above the sentences that say what it
        names (see :func:`_best_sentence`)."""
        near = self.store.sentences.neighbours(row.doc_id, row.ordinal, context.MAX_SPAN - 1)
        after = (r for r in near if r.ordinal > row.ordinal)
        section = itertools.takewhile(lambda r: not _heads_section(r.text), after)
        return [r for r in section if _says_something(r.text)]

    def choose(self, part: Sequence[Candidate], query: Query, candidates: CandidateSentences) -> list[ChosenPassage]:
        """The passage of each document of ``part`` of the ranking, in order; documents deleted while ranking are
        left out. ``candidates`` gains the candidate sentences of ``part``."""
        meta = self.store.documents.by_ids([d.doc_id for d in part])
        candidates.read(part)
        rows_by_id = {c.id: c for d in part for c in candidates[d.doc_id]}
        found = dict(zip(rows_by_id, T.stems_found([c.text for c in rows_by_id.values()], query.stem_set)))
        # rounded: the same words summed in another order (a set's) must tie, and ranking compares masses hundreds
        # of times per query, so they are rounded once here
        mass = {sid: round(sum(query.idf.get(s, 0.0) for s in stems_in), 6) for sid, stems_in in found.items()}
        # a cosine decides only between a document's sentences with the most query-word mass, and is shown for the
        # one picked: those few vectors are read, not the few hundred of every candidate (18 us each from the graph)
        contending = {d.doc_id: _contenders(d, candidates[d.doc_id], mass, query.mode) for d in part}
        cosines = self.vectors.cosines(query.vectors, sorted({sid for ids in contending.values() for sid in ids}))
        return [
            _chosen(d, meta[d.doc_id], query, candidates[d.doc_id], contending[d.doc_id], cosines, found, mass)
            for d in part
            # deleted while we were ranking: the document, or the sentence it was found by
            if d.doc_id in meta and candidates[d.doc_id] and (d.sem_sentence is None or d.sem_row is not None)
        ]


def _chosen(
    doc: Candidate, record: DocumentRecord, query: Query, candidates: list[SentenceRow], contending: list[int],
    cosines: dict[int, float], found: dict[int, set[str]], mass: dict[int, float],
) -> ChosenPassage:
    """The sentence one document is shown by, and what it matched of the query (``contending``: the ids of the
    candidates it may be shown by; ``found``: each candidate sentence's query stems; ``mass``: their summed IDF)."""
    if doc.sem_sentence is not None and query.mode is Mode.SEMANTIC:
        best = _best_by_meaning(doc, cosines)
    else:
        best = _best_sentence(candidates, contending, query, cosines, found, mass, record)
        if mass[best.id] == 0 and doc.sem_sentence is not None:
            best = _best_by_meaning(doc, cosines)
    matched = set().union(*(found[c.id] for c in candidates))
    total_idf = sum(query.idf.values())
    coverage = sum(query.idf.get(s, 0.0) for s in matched) / total_idf if total_idf else 0.0
    similarity = cosines.get(best.id)
    holding = tuple(c.text for c in candidates if found[c.id])
    return ChosenPassage(doc, record, best, similarity, frozenset(matched), coverage, holding)


def _contenders(doc: Candidate, candidates: list[SentenceRow], mass: dict[int, float], mode: Mode) -> list[int]:
    """Ids of the sentences :func:`_chosen` may show ``doc`` by and must know the cosine of: those with most
    query-word ``mass`` (:func:`_most_query_words`) and the best semantic sentence."""
    ids = [doc.sem_row.id] if doc.sem_row is not None else []
    ids += [r.id for r in doc.span_rows]
    if candidates and mode is not Mode.SEMANTIC:
        ids += _most_query_words(candidates, mass)
    return ids


def _most_query_words(candidates: list[SentenceRow], mass: dict[int, float]) -> list[int]:
    """Ids of the candidates with most query-word mass: every one tied at the most, and more in order of mass until
    there are CONTENDERS (none without a query word). A long document holds many sentences with one query word: all of
    them would be weighed for nothing."""
    ranked = sorted((c for c in candidates if mass[c.id] > 0), key=lambda c: -mass[c.id])
    if not ranked:
        return []
    most = mass[ranked[0].id]
    return [c.id for i, c in enumerate(ranked) if i < CONTENDERS or mass[c.id] == most]


def _best_sentence(candidates: list[SentenceRow], contending: list[int], query: Query, cosines: dict[int, float],
                   found: dict[int, set[str]], mass: dict[int, float], record: DocumentRecord) -> SentenceRow:
    """The candidate with most evidence on the relevance scale (its cosine, and its query words as a share of what
    the query's key words could score, a word held only through its stem counting STEM_ONLY_SHARE), among the
    ``contending`` ones (:func:`_contenders`), a sentence before a short line; then the most query-word mass. A
    heading picked so yields to the best contending sentence of its section (:func:`_section_end`) that holds a query
    word, else to the best such sentence of the document, as the line the document is titled by (or a table's header
    row) does: one with none of the query's words ("Model WM8400-W, serial number ...") says less than the heading it
    would replace."""
    ids = set(contending)
    known = [c for c in candidates if c.id in ids] or [max(candidates, key=lambda c: mass[c.id])]
    words = np.array([_query_word_mass(c.text, found[c.id], query) for c in known])
    cosine = np.array([cosines.get(c.id, np.nan) for c in known])
    evidence = query.scale.evidence(cosine, words)
    # a heading says what its section is about; a sentence of the section says it (engine.embed.context)
    says = ~context.is_short(context.word_counts([c.text for c in known]))
    weighed = list(zip(known, says.tolist(), evidence.tolist()))
    shown = max(weighed, key=lambda ce: (ce[1], round(ce[2], 6), mass[ce[0].id]))[0]
    # a title line that is a sentence ("Rigel is a blue supergiant star in Orion.") says something itself
    if _names_document(shown, record) and not _says_something(shown.text):
        after, before = -math.inf, math.inf
    elif _heads_section(shown.text):
        # its short words and no sentence's length lift a heading's cosine above its section's sentences' (a lease's
        # "Term and ending the tenancy" over "Either party may end it ... by giving two months' written notice");
        # where none of its section contends, the document's best does (a walking guide was shown by the heading
        # of the walk after the one whose sentence answered)
        after, before = shown.ordinal, _section_end(shown, candidates)
    else:
        return shown
    table = record.kind == TABLE_KIND  # a row says what it says, with or without a full stop
    replacing = [(c, e) for c, _, e in weighed
                 if c.id != shown.id and (table or _says_something(c.text)) and mass[c.id] > 0]
    within = [(c, e) for c, e in replacing if after < c.ordinal < before]
    return max(within or replacing, key=lambda ce: (round(ce[1], 6), mass[ce[0].id]), default=(shown, 0.0))[0]


def _names_document(row: SentenceRow, record: DocumentRecord) -> bool:
    """Whether ``row`` is the line ``record`` is titled by, which its card shows already, or a table's header row,
    which names columns ("date_finished title author pages format rating notes" was shown for a reading log)."""
    return row.text.strip() == (record.title or "").strip() or (record.kind == TABLE_KIND and row.ordinal == 0)


def _section_end(heading: SentenceRow, candidates: list[SentenceRow]) -> float:
    """The ordinal where the section under ``heading`` ends: the next heading among a document's ``candidates``
    (those holding query words, and those found by meaning; a heading with neither is not seen), else the end."""
    return min((c.ordinal for c in candidates if c.ordinal > heading.ordinal and _heads_section(c.text)),
               default=math.inf)


def _heads_section(text: str) -> bool:
    """Whether a sentence heads a section: a heading, not a list's item (engine.text.sentences)."""
    return is_heading(text) and not is_list_item(text)


def _says_something(text: str) -> bool:
    """Whether a sentence says something a heading names: one that ends as sentences do, or a list's item. A table's
    rows look like headings, and are passages of their own."""
    return ends_like_sentence(text) or is_list_item(text)


def _query_word_mass(text: str, stems_in: set[str], query: Query) -> float:
    """The IDF of the query's words in ``text``, each counted fully where the text has the query's own word and by
    STEM_ONLY_SHARE where it has only another word of its stem."""
    if not stems_in:
        return 0.0
    if text.isascii():
        words = set(_ASCII_WORD.findall(text.lower()))
    else:  # folded as the index folds ("café" holds "cafe")
        words = {T.fold(w) for w, _, _ in T.words(text)}
    return sum(query.idf.get(s, 0.0) * (1.0 if query.folded[s] in words else STEM_ONLY_SHARE) for s in stems_in)


def _best_by_meaning(doc: Candidate, cosines: dict[int, float]) -> SentenceRow:
    """The sentence a document found by meaning is shown by: its best semantic sentence or, when that is a short line
    embedded with its section or a heading, the section's sentence most similar to the query."""
    if not doc.span_rows:
        assert doc.sem_row is not None
        return doc.sem_row
    return max(doc.span_rows, key=lambda r: cosines.get(r.id, -1.0))


def _candidate_rows(doc: Candidate, passages: dict[int, list[SentenceRow]]) -> list[SentenceRow]:
    """The sentences a document may be shown by: its best lexical passages', its best semantic sentence and, when
    that is a short line, the sentences it was embedded with."""
    lexical = [doc.lex_passage, *doc.lex_more] if doc.lex_passage is not None else []
    rows = [row for passage in lexical for row in passages.get(passage, ())]
    for row in ([doc.sem_row] if doc.sem_row is not None else []) + doc.span_rows:
        if all(r.id != row.id for r in rows):
            rows.append(row)
    return rows
