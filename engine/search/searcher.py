"""Answer a query: semantic (HNSW over sentences), lexical (BM25 over passages), or both fused.

Documents are ranked by their best evidence and shown through their best sentence. Hybrid ranking fuses the two
sides' normalised scores, and whether a document is shown, and the number shown with it, come from its evidence on
an absolute scale (``engine.search.relevance``; docs/decisions/0002-score-fusion-and-relevance-gate.md).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import math
import re
import time
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.blas import one_blas_thread
from engine.embed import context
from engine.embed.base import Embedder
from engine.errors import QueryError
from engine.facets import rerank as facet_rerank
from engine.facets.space import FacetSpace
from engine.heap import freeze_long_lived, keep_freed_memory
from engine.search import alignment, meaning, related, spelling
from engine.search import relevance as rel
from engine.search.annotate import annotate
from engine.search.calibration import MIN_SENTENCES, Calibration
from engine.search.results import Explanation, Highlight, MatchedTerm, Mode, SearchResponse, SearchResult
from engine.store.bm25 import Postings, WordStatistics
from engine.store.bm25 import idf as bm25_idf
from engine.store.database import Store
from engine.store.documents import DocumentRecord
from engine.store.filters import NOTHING_PASSES, Filters
from engine.store.scans import SCAN_PARTS
from engine.store.sentences import SentenceRow
from engine.store.vectors import VectorIndex
from engine.text import terms as T
from engine.text.sentences import ends_like_sentence, is_heading, is_list_item, split_sentences

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 20_000
# A long query (a pasted passage, "more like this") is searched sentence by sentence, up to this many sentences.
MAX_QUERY_SENTENCES = 32
# Candidates fetched from each ranking before fusion: deep enough that a document ranked modestly by both
# rankings still surfaces, cheap enough for interactive latency.
CANDIDATES = 200
# With filters on, each side ranks this deep and the documents the filters let through are kept: a folder or a
# file type that holds a tenth of the collection still gets a full CANDIDATES of its own (0011).
FILTERED_CANDIDATES = 10 * CANDIDATES
# Quoted phrases are scored by FTS5 (the word index keeps no positions), as is every query on an index whose word index
# is not built yet. FTS5's bm25() costs ~2.5 us per matching passage, so a scan expected to score more passages than
# this is split over the cores (Store.bm25's parts): about 5 ms of bm25() on one core, where handing parts to threads
# costs well under a millisecond.
LEXICAL_SPLIT_PASSAGES = 2_000
CONTEXT_RADIUS = 2
# A sentence repeated in this many documents (or in 5% of a small collection, at least 3) is boilerplate:
# headers, footers, licence blocks. It still matches, at half weight, so a real hit elsewhere ranks first.
BOILERPLATE_DOCS = 5
BOILERPLATE_MIN_DOCS = 3
BOILERPLATE_SHARE = 0.05
BOILERPLATE_PENALTY = 0.5
# Passages of a document, after its best by BM25, whose sentences it may also be shown by: the sentence that
# answers best is not always in the passage with most query words (a FAQ's "second edition" against its "-i
# activates in-place editing").
MORE_PASSAGES = 2
# A document's few sentences with most query-word mass are weighed by their whole evidence (:func:`_most_words`).
CONTENDERS = 3
# A query word a sentence holds only as another word of the same stem ("edition" for "edit") counts this much.
STEM_ONLY_SHARE = 0.5
# Words of an ASCII text as the index splits them (letters and digits; "_" splits), lower-cased.
_ASCII_WORD = re.compile(r"[^\W_]+")
# Documents weighed in the second round, after the first k (:func:`_rounds`): in place of those that turn out weak or
# duplicates.
SECOND_ROUND = 5
# The kind the table reader (engine.ingest.readers.text.TableReader) records: its first row is a header.
TABLE_KIND = "table"
# Hybrid queries that may rank their words at the same time (one per search thread the app and tools run).
WORD_RANKERS = 4


@dataclass
class _Doc:
    """Evidence gathered for one document while ranking."""

    doc_id: int
    sem_sentence: int | None = None
    sem_cosine: float = -1.0
    sem_score: float = -1.0
    sem_row: SentenceRow | None = None
    repeated: list[int] = field(default_factory=list)  # its sentences among the semantic hits that are boilerplate
    # the semantic side's ranking score: best sentence and centroid over all its sentences (engine.search.meaning);
    # NaN: not weighed by meaning
    meaning: float = math.nan
    # a short line's vector is its section's (engine.embed.context): the sentences it was pooled with, to show instead
    span_rows: list[SentenceRow] = field(default_factory=list)
    boilerplate: bool = False
    lex_passage: int | None = None
    lex_more: list[int] = field(default_factory=list)  # the document's next best passages (MORE_PASSAGES)
    lex_score: float = 0.0
    # hybrid mode: the BM25 of its best passage counting the words related to the query's too (engine.search.related),
    # which the word side ranks by; 0 in other modes and where no related word is in its passages
    lex_related: float = 0.0
    sem_rank: int | None = None
    lex_rank: int | None = None
    fused: float = 0.0  # the ranking score: the two sides' normalised scores combined (engine.search.relevance)
    evidence: float = 0.0  # on the relevance scale, the same for every query and index
    # its best sentence's word alignment with the query (F, engine.search.alignment); None: not weighed by the gate
    alignment: float | None = None
    # found within the CANDIDATES a search without filters reads: a filtered search normalises over these, so that
    # a filter leaves the order of what it lets through as it was (docs/decisions/0011-filtered-search-depth.md)
    unfiltered: bool = False


@dataclass
class _Evidence:
    """One document's best sentence and whether it is strong enough to show; ``duplicates`` are the paths of files
    with the same content."""

    doc: _Doc
    record: DocumentRecord
    best: SentenceRow
    similarity: float | None
    matched: set[str]
    coverage: float
    weak: bool
    holding: list[str]  # the texts of its candidate sentences that hold a query word, which ``matched`` was read from
    duplicates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Query:
    """What weighing a document needs to know of the query: its mode, vectors, terms (stem -> term) and their IDF,
    its relevance scale, whether it was answered and the bar it was judged by."""

    mode: Mode
    vectors: np.ndarray | None
    stems: dict[str, T.Term]
    idf: dict[str, float]
    scale: rel.Scale
    answered: bool
    bar: float
    floor: float  # the evidence below which a document of an answered query is weak

    @functools.cached_property
    def stem_set(self) -> frozenset[str]:
        return frozenset(self.stems)

    @functools.cached_property
    def folded(self) -> dict[str, str]:
        """Each query word folded as the index folds words, by its stem (:func:`_word_mass`)."""
        return {s: T.fold(t.word) for s, t in self.stems.items()}


@dataclass(frozen=True)
class CollectionStatistics:
    """What the searcher of one shard of a collection counts over the whole collection rather than its shard, so
    that a document is scored and judged as one index holding the collection would: BM25's statistics for the
    query's words, the indexed documents a repeated sentence is boilerplate among, and the sentences the relevance
    gate sizes a folder by, each a sum over the shards (:meth:`merged`); and the collection's ``calibration``
    (engine.cluster.calibration; None: too small to calibrate, its method's prior stands in)."""

    words: WordStatistics
    documents: int
    sentences: int
    calibration: Calibration | None = None

    @staticmethod
    def merged(parts: Sequence[CollectionStatistics]) -> CollectionStatistics:
        """The statistics of a collection made of ``parts`` (shards): counts and frequencies summed."""
        return CollectionStatistics(WordStatistics.merged([p.words for p in parts]),
                                    sum(p.documents for p in parts), sum(p.sentences for p in parts))


def query_stems(query: str) -> tuple[list[str], list[T.Term], dict[str, T.Term]]:
    """A query's quoted phrases, its other words, and every word of both by stem."""
    phrases, rest = T.split_phrases(query)
    words = T.query_terms(rest)
    stems = {t.stem: t for t in words}
    for phrase in phrases:
        stems.update({t.stem: t for t in T.query_terms(phrase)})
    return phrases, words, stems


class Searcher:
    """Runs queries against one index; holds no state between queries, so several threads may share it.

    ``collection``: the index is one shard of a collection and counts with the collection's statistics (quoted
    phrases excepted: FTS5 scores them with the shard's own).
    """

    def __init__(
        self, store: Store, vectors: VectorIndex | None, embedder: Embedder | None, calibration: Calibration | None,
        *, facets: FacetSpace | None = None, null_sample: np.ndarray | None = None,
        collection: CollectionStatistics | None = None,
    ) -> None:
        self.store, self.vectors, self.embedder, self.calibration = store, vectors, embedder, calibration
        store.serve_searches()
        keep_freed_memory()  # a query's large arrays reuse the last one's memory (engine/heap.py)
        freeze_long_lived()  # the model and word space out of the collector's full collections (engine/heap.py)
        # the static model's word space: facet explanations and the relevance gate's word alignment are made in it
        # (None: results carry no facet explanations and the gate weighs evidence alone)
        self.facets = facets
        # vectors of random sentences of the index: each query's own similarity to the index (its null)
        self.null_sample = null_sample
        self.collection = collection

    def _sentences(self) -> int:
        return self.collection.sentences if self.collection else self.store.sentence_count()

    # -- entry point ------------------------------------------------------------------------------------------
    def search(self, query: str, *, k: int = 10, mode: Mode = Mode.HYBRID, include_weak: bool = False,
               explain: bool = True, rerank_facets: bool | None = None, exclude: Collection[str] = (),
               within: Filters = Filters()) -> SearchResponse:
        """Rank documents for ``query``; weak results are cut (or, with ``include_weak``, kept and flagged).
        Documents at the paths in ``exclude`` are left out (the source of a "more like this" search), and so are those
        ``within`` does not let through (folders, file types, modification times).

        ``rerank_facets`` re-orders the head of the ranking by facet set distance (``engine.facets.rerank``; None:
        its measured default).

        ``explain=False`` is for tools that only read the ranking (benchmarks, ``quire search --queries
        --no-explain``): the same results in the same order, without the per-result work that serves people (facet
        chips and evidence, surrounding sentences), which is most of a query's time.
        """
        started = time.perf_counter()
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
        notes: list[str] = []
        depth = FILTERED_CANDIDATES if within else CANDIDATES
        # the ranking's products are small: on one BLAS thread (engine/blas.py); explanations keep every thread
        with one_blas_thread():
            docs, query_vectors, words = self._rank(query, mode, notes, depth)
            stems, df = words.stems, words.df
            # the related words' BM25 is weighed on a word thread while this one weighs meaning: each sets its own
            # score of the documents, mostly in numpy and SQLite, which release the GIL
            relating = _word_ranker().submit(self._weigh_related, dict(docs), words) if words.related else None
            with _joined(relating):
                for path in exclude:
                    record = self.store.document(path)
                    if record is not None:
                        docs.pop(record.id, None)
                reference = None  # the documents whose scores set the fusion's scales: all of them without a filter
                if within:
                    reference = [d for d in docs.values() if d.unfiltered]
                    allowed = self.store.matching_documents(within)
                    docs = {doc_id: doc for doc_id, doc in docs.items() if doc_id in allowed}
                    if not allowed:
                        notes.append(NOTHING_PASSES)
                idf = self._idf(stems, df)
                # stop words alone make no lexical case: in every passage, "the" held its query's every key word
                # (docs/decisions/0017-stop-words-alone.md); a quoted phrase of them does
                stop_words = T.stop_words_only(query)
                if stop_words:
                    notes.append(_stop_words_note(stop_words, query))
                scale = self._scale(query_vectors, {} if stop_words else idf)
                if reference is None:
                    self._weigh_meaning(docs, mode, query_vectors)
                else:  # apart: a document's share of the sentences scored depends on how many are weighed with it
                    self._weigh_meaning({d.doc_id: d for d in reference}, mode, query_vectors)
                    self._weigh_meaning({i: d for i, d in docs.items() if not d.unfiltered}, mode, query_vectors)
            ranked = self._fuse(docs, mode, scale, reference)
            small = self._sentences() < MIN_SENTENCES
            bar = rel.bar(mode, small_folder=small)
            candidates: dict[int, list[SentenceRow]] = {}
            top = ranked[0] if ranked else None  # the first result; a filtered search's cards are set below
            judged = self._judged(query, docs, mode, small, bar, candidates, None if within else top)
            answered = any(rel.gated(d.evidence, d.alignment, mode) >= bar for d in judged)
            # a small folder's lower bar is for its best document, the best of few chances; the others are weighed as
            # anywhere (docs/decisions/0003-a-prior-for-small-folders.md)
            floor = rel.WEAK_SHARE * rel.bar(mode, small_folder=False)
            asked = _Query(mode, query_vectors, stems, idf, scale, answered, bar, floor)
            beside = judged  # those the gate weighed with the first result
            if reference is not None and top is not None:
                # each card reads what it reads without the filters: the first result without them sets the numbers
                # (decision 0002, "Card score"), its word alignment weighed where the gate weighs it there
                top = max([top, *_ranked_by(mode, reference)], key=lambda d: (d.fused, -d.doc_id))
                beside = self._judged(query, {d.doc_id: d for d in reference}, mode, small, bar, candidates, top)
            # (what the gate weighed of the first result, its fused score): the scale of every card
            card = None if top is None else (
                rel.gated(top.evidence, top.alignment if any(d is top for d in beside) else None, mode), top.fused)
            found = len(ranked) if include_weak else sum(d.evidence >= floor for d in ranked) if answered else 0
            ranked = ranked[: 3 * k + 10]
            if facet_rerank.enabled(rerank_facets):
                candidates.update(self._candidates([d for d in ranked if d.doc_id not in candidates]))
                order = facet_rerank.rerank(self.store, query, [candidates[d.doc_id] for d in ranked], self.facets)
                ranked = [ranked[i] for i in order]
            picked: list[_Evidence] = []
            seen_hashes: dict[str | None, _Evidence] = {}
            strong = 0
            # lazily: the next part of the ranking is weighed only if the ones before did not give k results
            weighed = (e for part in _rounds(ranked, k) for e in self._weigh(part, asked, candidates))
            for evidence in weighed:
                record = evidence.record
                if record.hash in seen_hashes:
                    seen_hashes[record.hash].duplicates.append(record.path)
                    continue
                seen_hashes[record.hash] = evidence
                picked.append(evidence)
                strong += not evidence.weak
                if len(picked) >= k and not include_weak and strong >= k:
                    break
            # most documents weighed here are weak and never shown: only the shown ones are made into results
            shown = picked[:k] if include_weak else [e for e in picked if not e.weak][:k]
            results = _monotonic([self._result(e, asked, card) for e in shown])
        if explain:
            results = self.explain(query, results, [e.best for e in shown])
        missing = () if df is None else tuple(term.word for stem, term in stems.items() if not df.get(stem, 0))
        if df is not None:  # a quoted phrase whose words are all there but never in that order is missing too
            missing += tuple(p for p in T.split_phrases(query)[0] if self._absent_phrase(p, df))
        language = self.facets.tokenizer if self.facets else None  # a word of the language is not a typo (0010)
        return SearchResponse(
            query=query, mode=mode, method=self.embedder.name if self.embedder else "", results=tuple(results),
            nothing_relevant=not strong, weak_hidden=0 if include_weak else len(picked) - strong,
            seconds=time.perf_counter() - started, notes=tuple(notes),
            missing=missing, found=max(found, len(results)), found_at_least=self._cut(mode, df, depth),
            did_you_mean=spelling.did_you_mean(self.store, query, missing, language) if missing else None,
        )

    def _absent_phrase(self, phrase: str, df: dict[str, int]) -> bool:
        """Whether no passage holds ``phrase`` as written, though each of its words is somewhere."""
        if not all(df.get(t.stem, 0) for t in T.query_terms(phrase)):
            return False  # its missing words are named already
        match = T.fts_expression([phrase], [])
        return match is not None and not self.store.bm25(match, 1)

    def _cut(self, mode: Mode, df: dict[str, int] | None, depth: int) -> bool:
        """Whether a ranking that ``mode`` shows may have stopped at its ``depth`` before every document that
        qualifies: the graph holds more sentences than it returns, or the query's words are in more passages than
        are scored (their document frequencies summed, an upper bound of the passages that hold any)."""
        semantic = mode is not Mode.LEXICAL and self.vectors is not None and self.vectors.live_count > depth
        lexical = mode is not Mode.SEMANTIC and df is not None and sum(df.values()) > depth
        return semantic or lexical

    def _judged(self, query: str, docs: dict[int, _Doc], mode: Mode, small_folder: bool, bar: float,
                candidates: dict[int, list[SentenceRow]], card: _Doc | None) -> list[_Doc]:
        """The documents the relevance gate answers a query by: the ALIGNED_DOCS with most evidence, each with its best
        candidate sentence's word alignment with the query, where the static model's word space is loaded and the
        gate has no better view of meaning (docs/decisions/0016-word-alignment-in-the-gate.md): in lexical mode, which
        has no cosine at all, and on an index ranked by that static model, whose sentence vectors pool the same word
        vectors. Otherwise every document, by its evidence alone: sbert's cosine already answers the paraphrases
        static words cannot bridge (with the alignment, 100% shown fell to 97.9), and a folder too small to calibrate
        has half the bar, set on evidence alone, where the long sentences of a few files align with a paraphrase at
        0.3 or less. ``candidates`` gains the sentences read.

        Where one of them clears ``bar`` however badly its words might align, the query is answered whatever the
        others' alignment, and only ``card``'s is weighed (the document whose number sets the cards' scale, if it is
        among them): aligning is a tenth of a whole-corpus query's time
        (docs/decisions/0023-alignment-when-it-decides.md).
        A shard of a collection aligns them all, for the collection's first result may be another of its documents."""
        space = self.facets
        static = (self.embedder is not None and space is not None
                  and self.embedder.fingerprint == space.embedder.fingerprint)
        if space is None or small_folder or not (mode is Mode.LEXICAL or static):
            return list(docs.values())
        best = sorted(docs.values(), key=lambda d: (-d.evidence, d.doc_id))[: rel.ALIGNED_DOCS]
        aligned = best
        if self.collection is None and _answered_anyway(best, mode, bar):
            aligned = [d for d in best if d is card]
        candidates.update(self._candidates([d for d in aligned if d.doc_id not in candidates]))
        rows = [row for d in aligned for row in candidates[d.doc_id]]
        scores = alignment.alignment_f(space, query, [row.text for row in rows]).tolist()
        at = 0
        for d in aligned:
            mine = scores[at : at + len(candidates[d.doc_id])]
            at += len(mine)
            d.alignment = max(mine, default=0.0)
        return best

    # -- rankings ---------------------------------------------------------------------------------------------
    def _rank(self, query: str, mode: Mode, notes: list[str], depth: int = CANDIDATES
              ) -> tuple[dict[int, _Doc], np.ndarray | None, _Words]:
        """Each document's semantic and lexical evidence, the query's vectors, and what the word side found (its
        terms, their document frequencies, the related words still to weigh: :meth:`_weigh_related`), from the
        ``depth`` best sentences and passages of each side.

        Semantic mode ranks by meaning alone but ranks the words too: whether the collection answers the query at all
        is judged on all the evidence (docs/decisions/0002-score-fusion-and-relevance-gate.md). The words are ranked
        on another thread while this one embeds the query and walks the graph; the two sides spend most of their time
        in code that releases the GIL (hnswlib, numpy, SQLite), so a query takes about as long as the slower side.
        """
        docs: dict[int, _Doc] = {}
        expand = mode is Mode.HYBRID
        words = _word_ranker().submit(self._lexical, query, depth, expand) if mode is not Mode.LEXICAL else None
        deeper: list[_Hit] = []
        with _joined(words):
            query_vectors = self._semantic(query, docs, notes, depth, deeper) if mode is not Mode.LEXICAL else None
        found = words.result() if words is not None else self._lexical(query, depth, expand)
        for doc_id, passages in found.near.items():
            _passages(_doc(docs, doc_id, unfiltered=True), passages)
        # what only a filtered search's deeper read found counts for the documents a search without filters does not
        # find; those it finds keep what it sees of them (docs/decisions/0011-filtered-search-depth.md)
        for hit in deeper:
            if hit.doc_id not in docs or not docs[hit.doc_id].unfiltered:
                _add_hit(_doc(docs, hit.doc_id), hit)
        for doc_id, passages in found.deeper.items():
            if doc_id not in docs or not docs[doc_id].unfiltered:
                _passages(_doc(docs, doc_id), passages)
        return docs, query_vectors, found

    def _semantic(self, query: str, docs: dict[int, _Doc], notes: list[str], depth: int, deeper: list[_Hit]
                  ) -> np.ndarray | None:
        """The query's vectors; the documents of the best ``depth`` sentences gain their best hit, those a search
        without filters reads (``CANDIDATES`` per query sentence) in ``docs``, the rest appended to ``deeper``."""
        if self.embedder is None or self.vectors is None or self.vectors.live_count == 0:
            notes.append("semantic search unavailable: the index has no vectors yet")
            return None
        parts = split_sentences(query) if len(query) > 300 else [query]
        parts = parts[:MAX_QUERY_SENTENCES] or [query]
        vectors = self.embedder.encode(parts)
        vectors = vectors[np.linalg.norm(vectors, axis=1) > 0]
        if vectors.shape[0] == 0:
            notes.append("no word of the query is known to the embedding model; only lexical matches can be shown")
            return None
        hits: dict[int, float] = {}  # every hit of the read
        near: dict[int, float] = {}  # the hits a search without filters reads, scored as it scores them
        for vector in vectors:
            ids, sims = self.vectors.search(vector, depth)  # best first
            for rank, (sid, sim) in enumerate(zip(ids.tolist(), sims.tolist())):
                # several query sentences: a sentence's score is the mean over them (missing = 0)
                hits[sid] = hits.get(sid, 0.0) + sim / vectors.shape[0]
                if rank < CANDIDATES:
                    near[sid] = near.get(sid, 0.0) + sim / vectors.shape[0]
        keys = self.store.sentence_keys(list(hits), up_to=BOILERPLATE_DOCS)
        documents = max(1, self.collection.documents if self.collection else self.store.indexed_count())
        for sid, sim in hits.items():
            if sid not in keys:
                continue  # deleted since the graph was saved
            doc_id, copies = keys[sid]
            hit = _Hit(sid, doc_id, near.get(sid, sim), _boilerplate(copies, documents))
            if sid in near:
                _add_hit(_doc(docs, doc_id, unfiltered=True), hit)
            else:
                deeper.append(hit)
        return vectors  # the best sentences' rows are read for the documents weighed (:meth:`_candidates`)

    def _lexical(self, query: str, depth: int, expand: bool = False) -> _Words:
        """The query's words ranked: among the CANDIDATES best passages, which a search without filters reads, and
        among the rest of the ``depth`` best; with ``expand``, the documents' BM25 counting related words too."""
        phrases, words, stems = query_stems(query)
        ranked = sorted(self._bm25(phrases, words, depth), key=lambda r: (-r[2], r[0]))
        if self.collection is not None:
            known = self.collection.words.frequencies
            df = {s: known[s] for s in stems if known.get(s)}
        else:
            df = self.store.term_document_frequencies(list(stems))
        near, deeper = _best_passages(ranked[:CANDIDATES]), _best_passages(ranked[CANDIDATES:])
        space = self.facets if expand and words and self.store.word_index_ready() else None
        near_words = related.related_words(space, words, df) if space else {}
        # read here, beside the graph search, and scored once the documents are known (:meth:`_weigh_related`)
        postings = self.store.word_postings(list(near_words)) if near_words else None
        return _Words(stems, df, near, deeper, ranked, near_words, postings)

    def _weigh_related(self, docs: dict[int, _Doc], found: _Words) -> None:
        """Set each document's BM25 counting the words related to the query's (engine.search.related): its best
        passage's, each passage scoring for the query's words what the ranking of them read (those a search without
        filters reads, for the documents it finds: decision 0011) and for the related words what it holds. Only the
        documents found are scored: related words rank them, and find none of their own."""
        within = np.fromiter(docs, dtype=np.int64, count=len(docs))
        scored = self.store.word_scores(list(found.related), None, None,
                                        self.collection.words if self.collection else None,
                                        weights=list(found.related.values()), within=within, read=found.postings)
        if not scored.passages.size:
            return
        passage_ids, doc_ids, scores = scored.passages, scored.documents, scored.scores
        # each document's best passage for the related words alone...
        order = np.lexsort((-scores, doc_ids))
        first = order[np.r_[True, doc_ids[order][1:] != doc_ids[order][:-1]]]
        for doc_id, score in zip(doc_ids[first].tolist(), scores[first].tolist()):
            docs[doc_id].lex_related = score
        # ...or a passage holding the query's words too, both counted where the ranking of the query's words read it
        related_of = dict(zip(passage_ids.tolist(), scores.tolist()))
        for i, (passage_id, doc_id, own) in enumerate(found.ranked):
            d = docs.get(doc_id)
            if d is not None and passage_id in related_of and (i < CANDIDATES or not d.unfiltered):
                d.lex_related = max(d.lex_related, own + related_of[passage_id])

    def _bm25(self, phrases: list[str], words: list[T.Term], depth: int) -> list[tuple[int, int, float]]:
        """The ``depth`` best passages by BM25 for the quoted ``phrases`` and other ``words`` of a query, OR-ed.

        Words are scored from the word index (engine.store.bm25) by FTS5's formula, in every passage they are in;
        phrases, which need word positions, by FTS5, and added. An index whose word index is not built yet is searched
        by FTS5 alone.
        """
        if not phrases and not words:
            return []
        if not self.store.word_index_ready():
            match = T.fts_expression(phrases, words)
            assert match is not None  # there are phrases or words
            return self.store.bm25(match, depth, parts=self._parts(phrases, words))
        added = None
        if phrases:
            match = T.fts_expression(phrases, [])
            assert match is not None  # there are phrases
            rows = self.store.bm25(match, None, parts=self._parts(phrases, []))
            added = (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[2] for r in rows]))
        return self.store.word_bm25([t.stem for t in words], depth, added,
                                    self.collection.words if self.collection else None)

    def _parts(self, phrases: list[str], words: list[T.Term]) -> int:
        """How many parts an FTS5 scan of ``phrases`` and ``words`` is split into: it scores at most every passage
        of each word and of each phrase's rarest word."""
        df = self.store.term_document_frequencies([t.stem for p in phrases for t in T.query_terms(p)] +
                                                  [t.stem for t in words])
        bound = sum(min((df.get(t.stem, 0) for t in T.query_terms(p)), default=0) for p in phrases)
        matching = bound + sum(df.get(t.stem, 0) for t in words)
        return SCAN_PARTS if matching > LEXICAL_SPLIT_PASSAGES else 1

    def _fuse(self, docs: dict[int, _Doc], mode: Mode, scale: rel.Scale, reference: list[_Doc] | None = None
              ) -> list[_Doc]:
        """The documents in ranking order, each with its fused score; in semantic or lexical mode only the documents
        that side found, in that side's order. Every document's evidence is set, from all the query's evidence.
        ``reference``: the documents whose scores set the two sides' scales (None: ``docs`` themselves)."""
        by_sem = sorted((d for d in docs.values() if not math.isnan(_semantic_score(d))), key=lambda d: -_semantic_score(d))
        by_lex = sorted((d for d in docs.values() if d.lex_passage is not None), key=lambda d: -d.lex_score)
        for rank, d in enumerate(by_sem, 1):
            d.sem_rank = rank
        for rank, d in enumerate(by_lex, 1):
            d.lex_rank = rank
        pool = _ranked_by(mode, list(docs.values()))
        # the reference's documents a filter leaves out are weighed too: the first of them may set the card scores
        outside = [d for d in reference if d.doc_id not in docs] if reference is not None else []
        everything = list(docs.values()) + outside
        evidence = scale.evidence(_cosines(everything), _bm25s(everything))
        for d, e in zip(everything, evidence.tolist()):
            d.evidence = e
        if not pool:
            return []
        # ranked by the document's meaning (its best sentence boilerplate-penalised), judged by the best cosine
        # itself (the scale knows no penalty)
        scales = _ranked_by(mode, reference) if reference is not None else pool
        weighed = pool + _ranked_by(mode, outside)
        fused = rel.fuse(_semantic_scores(weighed), _ranking_bm25s(weighed), rel.semantic_share(mode),
                         (_semantic_scores(scales), _ranking_bm25s(scales)))
        for d, f in zip(weighed, fused.tolist()):
            d.fused = f
        return sorted(pool, key=lambda d: (-d.fused, d.doc_id))

    def _weigh_meaning(self, docs: dict[int, _Doc], mode: Mode, query_vectors: np.ndarray | None) -> None:
        """Set the meaning of the documents ``mode`` ranks by it: in hybrid mode every candidate, in semantic mode
        those found by meaning (engine.search.meaning)."""
        if query_vectors is None or mode is Mode.LEXICAL:
            return
        pool = [d for d in docs.values() if mode is Mode.HYBRID or d.sem_sentence is not None]
        spans = self.store.sentence_spans([d.doc_id for d in pool])
        ids, vectors = self._vectors(meaning.sentences_to_score(spans))
        scores = meaning.document_meaning(query_vectors.mean(axis=0), ids, vectors, spans,
                                          {sid for d in pool for sid in d.repeated}, BOILERPLATE_PENALTY)
        for d in pool:
            if d.doc_id in scores:
                best, centroid = scores[d.doc_id]
                d.meaning = max(best, d.sem_score) + meaning.CENTROID_WEIGHT * centroid

    def _scale(self, query_vectors: np.ndarray | None, idf: dict[str, float]) -> rel.Scale:
        """What a cosine and a BM25 score are worth for this query (engine.search.relevance.Scale).

        A query of several sentences scores a sentence by the mean of their cosines, judged by the same tail as one
        sentence's: the sentences of one passage point the same way, so their mean spreads about as widely as one
        cosine does (drawing the tail in by sqrt(n), as for independent sentences, answered 12% of off-topic
        paragraph-long queries; docs/decisions/0002-score-fusion-and-relevance-gate.md).
        """
        mean = tail = null_mean = None
        if self.calibration is not None:
            mean, tail = self.calibration.mean, self.calibration.threshold
        if query_vectors is not None and self.null_sample is not None and len(self.null_sample) >= 2:
            sims = (self.null_sample @ query_vectors.T).mean(axis=1)
            null_mean = float(sims.mean())
        return rel.Scale(mean, tail, rel.lexical_bound(idf), null_mean)

    def _idf(self, stems: dict[str, T.Term], df: dict[str, int] | None = None) -> dict[str, float]:
        n = max(1, self.collection.words.passages if self.collection else self.store.passage_count())
        if df is None:
            df = self.store.term_document_frequencies(list(stems))
        # the scorer's own IDF, so that a BM25 score can be weighed against what the query's words could score
        return {s: bm25_idf(n, df.get(s, 0)) for s in stems}

    # -- one result -------------------------------------------------------------------------------------------
    def _candidates(self, docs: Sequence[_Doc]) -> dict[int, list[SentenceRow]]:
        """The sentences each document may be shown by (see :func:`_candidates_of`), read for all of ``docs`` at
        once; their best semantic sentences' rows are filled in on the way."""
        rows = self.store.sentences_by_id([d.sem_sentence for d in docs if d.sem_sentence is not None])
        for doc in docs:
            doc.sem_row = rows.get(doc.sem_sentence) if doc.sem_sentence is not None else None
            if doc.sem_row is None:
                continue
            if context.is_short(context.word_counts([doc.sem_row.text]))[0]:
                doc.span_rows = self._span(doc.sem_row)
            elif _heads(doc.sem_row.text):
                doc.span_rows = self._section(doc.sem_row)
        passages = self.store.sentences_of_passages(
            [p for d in docs if d.lex_passage is not None for p in [d.lex_passage, *d.lex_more]])
        return {d.doc_id: _candidates_of(d, passages) for d in docs}

    def _span(self, row: SentenceRow) -> list[SentenceRow]:
        """The sentences a short line may have been embedded with (those around it within a span), short ones left
        out: a heading found by its section's meaning is shown by the section's sentence that says it."""
        near = [r for r in self.store.neighbours(row.doc_id, row.ordinal, context.MAX_SPAN - 1) if r.id != row.id]
        return [r for r, short in zip(near, context.is_short(context.word_counts([r.text for r in near]))) if not short]

    def _section(self, row: SentenceRow) -> list[SentenceRow]:
        """The first sentences under a heading found by meaning (as many as a short line's span may reach, up to the
        next heading) that say something (:func:`_says`): it is shown by the one most similar to the query, as a short
        line is, for a heading's few words lift its cosine above the sentences that say what it names (see
        :func:`_best_sentence`)."""
        near = self.store.neighbours(row.doc_id, row.ordinal, context.MAX_SPAN - 1)
        section = itertools.takewhile(lambda r: not _heads(r.text), (r for r in near if r.ordinal > row.ordinal))
        return [r for r in section if _says(r.text)]

    def _weigh(self, part: Sequence[_Doc], asked: _Query, candidates: dict[int, list[SentenceRow]]) -> list[_Evidence]:
        """The evidence of each document of ``part`` of the ranking, in order; documents deleted while ranking are
        left out. ``candidates`` holds the documents' candidate sentences read so far, and gains those of ``part``."""
        meta = self.store.documents_by_id([d.doc_id for d in part])
        candidates.update(self._candidates([d for d in part if d.doc_id not in candidates]))
        rows_by_id = {c.id: c for d in part for c in candidates[d.doc_id]}
        found = dict(zip(rows_by_id, T.stems_found([c.text for c in rows_by_id.values()], asked.stem_set)))
        # rounded: the same words summed in another order (a set's) must tie, and ranking compares masses hundreds
        # of times per query, so they are rounded once here
        mass = {sid: round(sum(asked.idf.get(s, 0.0) for s in stems_in), 6) for sid, stems_in in found.items()}
        # a cosine decides only between a document's sentences with the most query-word mass, and is shown for the
        # one picked: those few vectors are read, not the few hundred of every candidate (18 us each from the graph)
        contending = {d.doc_id: _contenders(d, candidates[d.doc_id], mass, asked.mode) for d in part}
        cosines = self._cosines(asked.vectors, sorted({sid for ids in contending.values() for sid in ids}))
        return [
            self._evidence(d, meta[d.doc_id], asked, candidates[d.doc_id], contending[d.doc_id], cosines, found, mass)
            for d in part
            # deleted while we were ranking: the document, or the sentence it was found by
            if d.doc_id in meta and candidates[d.doc_id] and (d.sem_sentence is None or d.sem_row is not None)
        ]

    def _evidence(
        self, doc: _Doc, record: DocumentRecord, asked: _Query, candidates: list[SentenceRow], contending: list[int],
        cosines: dict[int, float], found: dict[int, set[str]], mass: dict[int, float],
    ) -> _Evidence:
        """What decides whether one document is shown, and by which sentence (``contending``: the ids of the
        candidates it may be shown by; ``found``: each candidate sentence's query stems; ``mass``: their summed
        IDF)."""
        if doc.sem_sentence is not None and asked.mode is Mode.SEMANTIC:
            best = _semantic_best(doc, cosines)
        else:
            best = _best_sentence(candidates, contending, asked, cosines, found, mass, record)
            if mass[best.id] == 0 and doc.sem_sentence is not None:
                best = _semantic_best(doc, cosines)
        matched = set().union(*(found[c.id] for c in candidates))
        total_idf = sum(asked.idf.values())
        coverage = sum(asked.idf.get(s, 0.0) for s in matched) / total_idf if total_idf else 0.0
        similarity = cosines.get(best.id)
        # weak: the query found nothing relevant at all, or this document's evidence is far below what that takes
        weak = not asked.answered or doc.evidence < asked.floor
        holding = [c.text for c in candidates if found[c.id]]
        return _Evidence(doc, record, best, similarity, matched, coverage, weak, holding)

    def _result(self, evidence: _Evidence, asked: _Query, card: tuple[float, float] | None) -> SearchResult:
        """The result for one document (context left empty: :meth:`explain` adds it). Its score is the ranking's
        fused score scaled so that the ranking's first document shows its relevance (0-100); ``card``: that
        document's evidence as the gate weighed it, and its fused score."""
        doc, record, best, similarity = evidence.doc, evidence.record, evidence.best, evidence.similarity
        written = _written(evidence.holding, evidence.matched, asked)
        percentile = self.calibration.percentile(similarity) if self.calibration and similarity is not None else None
        explanation = Explanation(
            cosine=similarity,
            cosine_percentile=percentile,
            bm25=doc.lex_score if doc.lex_passage is not None else None,
            matched_terms=tuple(
                MatchedTerm(t.word, s, round(asked.idf.get(s, 0.0), 4), written.get(s)) for s, t in asked.stems.items()
                if s in evidence.matched
            ),
            term_coverage=round(evidence.coverage, 4),
            semantic_rank=doc.sem_rank,
            lexical_rank=doc.lex_rank,
            fusion=(f"score fusion ({rel.SEMANTIC_SHARE:.0%} meaning, {1 - rel.SEMANTIC_SHARE:.0%} words)"
                    if asked.mode is Mode.HYBRID else asked.mode.value),
            # "semantic" and "words": the document's scores on the two sides, which a collection's merge of its
            # shards' rankings fuses again (engine.cluster.search); "words" counts related words (hybrid mode)
            contributions={"fused": round(doc.fused, 6), "evidence": round(doc.evidence, 4),
                           **({} if doc.alignment is None else {"alignment": round(doc.alignment, 4)}),
                           **({} if math.isnan(semantic := _semantic_score(doc)) else {"semantic": semantic}),
                           **({"words": _ranking_bm25(doc)} if doc.lex_related else {})},
            boilerplate=doc.boilerplate,
        )
        score = 0.0
        if card is not None and card[1] > 0:
            # at least 0: a filtered search's deeper documents may fall below the scales the fusion keeps (0011)
            score = max(0.0, rel.relevance(card[0], asked.bar) * doc.fused / card[1])
        return SearchResult(
            path=record.path, title=record.title or "", score=round(float(score), 1),
            similarity=None if similarity is None else round(float(similarity), 4),
            sentence=best.text, start=best.start, end=best.end, page=best.page, ordinal=best.ordinal,
            context_before=(), context_after=(),
            highlights=tuple(Highlight(a, b, s, 1.0) for a, b, s in T.matches(best.text, asked.stem_set)),
            explanation=explanation,
            weak=evidence.weak,
            duplicates=tuple(evidence.duplicates),
            sentence_id=best.id,
        )

    def explain(self, query: str, results: Sequence[SearchResult], rows: Sequence[SentenceRow]) -> list[SearchResult]:
        """What ``explain=True`` adds to ``results`` (their best sentences' ``rows``): surrounding sentences, facet
        chips and evidence. Public so that the app can show a ranking at once and explain the rows on screen after
        (``Index.explain``)."""
        results = [self._with_context(r, row) for r, row in zip(results, rows)]
        if self.facets is not None and results:
            results = annotate(self.store, self.facets, query, results, rows)
        return results

    def _with_context(self, result: SearchResult, row: SentenceRow) -> SearchResult:
        neighbours = self.store.neighbours(row.doc_id, row.ordinal, CONTEXT_RADIUS)
        return replace(
            result,
            context_before=tuple(n.text for n in neighbours if n.ordinal < row.ordinal),
            context_after=tuple(n.text for n in neighbours if n.ordinal > row.ordinal),
        )

    def _vectors(self, sentence_ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) of those of ``sentence_ids`` that have vectors: from the graph's memory, and from the
        database those not in it yet (being indexed)."""
        ids, vectors = np.zeros(0, np.int64), np.zeros((0, self.embedder.dim if self.embedder else 0), np.float32)
        if self.embedder is None or len(sentence_ids) == 0:
            return ids, vectors
        if self.vectors is not None:
            ids, vectors = self.vectors.vectors(sentence_ids)
        asked = np.asarray(sentence_ids, dtype=np.int64)
        missing = asked[:0] if ids.size == asked.size else np.setdiff1d(asked, ids)  # all found: the common case
        if missing.size:
            more_ids, more = self.store.vectors(self.embedder.name, missing.tolist())
            if more_ids.size:
                ids, vectors = np.concatenate([ids, more_ids]), np.concatenate([vectors, more])
        return ids, vectors

    def _cosines(self, query_vectors: np.ndarray | None, sentence_ids: list[int]) -> dict[int, float]:
        if query_vectors is None:
            return {}
        ids, vectors = self._vectors(sentence_ids)
        if ids.size == 0:
            return {}
        # float16 storage can put an exact match a hair above 1; a cosine shown to people must not exceed it
        sims = np.clip((vectors @ query_vectors.T).mean(axis=1), -1.0, 1.0)
        return dict(zip(ids.tolist(), sims.tolist()))


@functools.cache
def _word_ranker() -> ThreadPoolExecutor:
    """Threads that rank a hybrid query's words (:meth:`Searcher._rank`) and weigh its related words, shared by every
    searcher of the process."""
    return ThreadPoolExecutor(WORD_RANKERS, thread_name_prefix="quire-words")


@contextlib.contextmanager
def _joined(beside: Future[Any] | None) -> Iterator[None]:
    """Run the block while ``beside`` runs on a word thread, and wait for it however the block ends: it reads the
    searcher's connection, which the caller may close once the search is over. Its error is raised after the
    block's own work, never in place of the block's error."""
    try:
        yield
    except BaseException:
        if beside is not None:
            wait([beside])
        raise
    if beside is not None:
        beside.result()


def _answered_anyway(docs: Sequence[_Doc], mode: Mode, bar: float) -> bool:
    """Whether one of ``docs`` clears ``bar`` on its evidence however badly its best sentence's words align with the
    query (alignment 0): the gate then answers whatever any document's alignment is."""
    return any(rel.gated(d.evidence, 0.0, mode) >= bar for d in docs)


def _stop_words_note(words: tuple[str, ...], query: str) -> str:
    """Why a query of stop words alone finds nothing relevant, and what to do: add a word, or quote the phrase."""
    if len(words) == 1:
        return f"“{words[0]}” is a word too common to search by: add a word that says what you are looking for"
    quoted = ", ".join(f"“{w}”" for w in words)
    return (f"{quoted} are words too common to search by: add a word that says what you are looking for, or put the "
            f"phrase in quotes (\"{query}\") to find it as written")


def _ranked_by(mode: Mode, docs: list[_Doc]) -> list[_Doc]:
    """The documents ``mode`` ranks: in semantic or lexical mode those that side found."""
    if mode is Mode.SEMANTIC:
        return [d for d in docs if d.sem_sentence is not None]
    if mode is Mode.LEXICAL:
        return [d for d in docs if d.lex_passage is not None]
    return docs


@dataclass(frozen=True)
class _Hit:
    """A sentence the semantic side found: its document, its score (cosine, or the mean over the query's sentences)
    and whether it is boilerplate."""

    sentence: int
    doc_id: int
    score: float
    boilerplate: bool


# each document's best passages by BM25: (passage id, score), best first
_Passages = dict[int, list[tuple[int, float]]]


@dataclass(frozen=True)
class _Words:
    """The word side of one query: its terms by stem, their document frequencies, each matching document's best
    passages by BM25 (passage id, score; the best and up to MORE_PASSAGES more, best first) among the CANDIDATES a
    search without filters reads (``near``) and deeper (``deeper``), every passage ranked (passage id, document id,
    BM25; best first), and in hybrid mode the stems of the words related to the query's with their weights and
    their postings in the word index."""

    stems: dict[str, T.Term]
    df: dict[str, int]
    near: _Passages
    deeper: _Passages
    ranked: list[tuple[int, int, float]]
    related: dict[str, float]
    postings: Postings | None


def _doc(docs: dict[int, _Doc], doc_id: int, unfiltered: bool = False) -> _Doc:
    """The evidence gathered so far for ``doc_id``, new if none (``setdefault`` would build one per hit);
    ``unfiltered``: it is found by what a search without filters reads."""
    doc = docs.get(doc_id)
    if doc is None:
        doc = docs[doc_id] = _Doc(doc_id)
    doc.unfiltered = doc.unfiltered or unfiltered
    return doc


def _add_hit(doc: _Doc, hit: _Hit) -> None:
    """Count a semantic hit for its document: boilerplate is remembered, the best (penalised) hit kept."""
    penalised = hit.score * (BOILERPLATE_PENALTY if hit.boilerplate else 1.0)
    if hit.boilerplate:
        doc.repeated.append(hit.sentence)
    if penalised > doc.sem_score:
        doc.sem_score, doc.sem_cosine, doc.sem_sentence, doc.boilerplate = (penalised, hit.score, hit.sentence,
                                                                             hit.boilerplate)


def _best_passages(ranked: Sequence[tuple[int, int, float]]) -> _Passages:
    """Each document's best passages among ``ranked`` (passage id, document id, BM25; best first)."""
    best: _Passages = {}
    for passage_id, doc_id, score in ranked:
        kept = best.setdefault(doc_id, [])
        if len(kept) <= MORE_PASSAGES:
            kept.append((passage_id, score))
    return best


def _passages(doc: _Doc, passages: list[tuple[int, float]]) -> None:
    (doc.lex_passage, doc.lex_score), doc.lex_more = passages[0], [p for p, _ in passages[1:]]


def _boilerplate(copies: int, documents: int) -> bool:
    """Whether a sentence found in ``copies`` of the index's ``documents`` is boilerplate."""
    return copies >= BOILERPLATE_DOCS or (copies >= BOILERPLATE_MIN_DOCS and copies / documents >= BOILERPLATE_SHARE)


def _cosines(docs: Sequence[_Doc]) -> np.ndarray:
    """Each document's best cosine (NaN: not found by meaning)."""
    return np.array([d.sem_cosine if d.sem_sentence is not None else np.nan for d in docs])


def _semantic_scores(docs: Sequence[_Doc]) -> np.ndarray:
    return np.array([_semantic_score(d) for d in docs])


def _bm25s(docs: Sequence[_Doc]) -> np.ndarray:
    """Each document's best BM25 (0: not found by its words)."""
    return np.array([d.lex_score if d.lex_passage is not None else 0.0 for d in docs])


def _ranking_bm25(doc: _Doc) -> float:
    """What the word side ranks ``doc`` by: its best BM25, or in hybrid mode that counting related words."""
    return max(doc.lex_score if doc.lex_passage is not None else 0.0, doc.lex_related)


def _ranking_bm25s(docs: Sequence[_Doc]) -> np.ndarray:
    return np.array([_ranking_bm25(d) for d in docs])


def _semantic_score(doc: _Doc) -> float:
    """What the semantic side ranks ``doc`` by: its meaning, or where that was not weighed its best hit (NaN: not
    found by meaning)."""
    if not math.isnan(doc.meaning):
        return doc.meaning
    return doc.sem_score if doc.sem_sentence is not None else math.nan


def _monotonic(results: list[SearchResult]) -> list[SearchResult]:
    """Scores that never rise down the list: a re-ranking after fusion (facets) may move a document above one with
    a higher fused score, and the number on each card must agree with the order the cards are in."""
    out: list[SearchResult] = []
    for result in results:
        if out and result.score > out[-1].score:
            result = replace(result, score=out[-1].score)
        out.append(result)
    return out


def _contenders(doc: _Doc, candidates: list[SentenceRow], mass: dict[int, float], mode: Mode) -> list[int]:
    """Ids of the sentences :meth:`Searcher._evidence` may show ``doc`` by and must know the cosine of: those with
    most query-word ``mass`` (:func:`_most_words`) and the best semantic sentence."""
    ids = [doc.sem_row.id] if doc.sem_row is not None else []
    ids += [r.id for r in doc.span_rows]
    if candidates and mode is not Mode.SEMANTIC:
        ids += _most_words(candidates, mass)
    return ids


def _most_words(candidates: list[SentenceRow], mass: dict[int, float]) -> list[int]:
    """Ids of the candidates with most query-word mass: every one tied at the most, and more in order of mass until
    there are CONTENDERS (none without a query word). A long document holds many sentences with one query word: all of
    them would be weighed for nothing."""
    ranked = sorted((c for c in candidates if mass[c.id] > 0), key=lambda c: -mass[c.id])
    if not ranked:
        return []
    most = mass[ranked[0].id]
    return [c.id for i, c in enumerate(ranked) if i < CONTENDERS or mass[c.id] == most]


def _best_sentence(candidates: list[SentenceRow], contending: list[int], asked: _Query, cosines: dict[int, float],
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
    words = np.array([_word_mass(c.text, found[c.id], asked) for c in known])
    cosine = np.array([cosines.get(c.id, np.nan) for c in known])
    evidence = asked.scale.evidence(cosine, words)
    # a heading says what its section is about; a sentence of the section says it (engine.embed.context)
    says = ~context.is_short(context.word_counts([c.text for c in known]))
    weighed = list(zip(known, says.tolist(), evidence.tolist()))
    shown = max(weighed, key=lambda ce: (ce[1], round(ce[2], 6), mass[ce[0].id]))[0]
    # a title line that is a sentence ("Rigel is a blue supergiant star in Orion.") says something itself
    if _names_document(shown, record) and not _says(shown.text):
        after, before = -math.inf, math.inf
    elif _heads(shown.text):
        # its short words and no sentence's length lift a heading's cosine above its section's sentences' (a lease's
        # "Term and ending the tenancy" over "Either party may end it ... by giving two months' written notice");
        # where none of its section contends, the document's best does (a walking guide was shown by the heading
        # of the walk after the one whose sentence answered)
        after, before = shown.ordinal, _section_end(shown, candidates)
    else:
        return shown
    table = record.kind == TABLE_KIND  # a row says what it says, with or without a full stop
    replacing = [(c, e) for c, _, e in weighed if c.id != shown.id and (table or _says(c.text)) and mass[c.id] > 0]
    within = [(c, e) for c, e in replacing if after < c.ordinal < before]
    return max(within or replacing, key=lambda ce: (round(ce[1], 6), mass[ce[0].id]), default=(shown, 0.0))[0]


def _names_document(row: SentenceRow, record: DocumentRecord) -> bool:
    """Whether ``row`` is the line ``record`` is titled by, which its card shows already, or a table's header row,
    which names columns ("date_finished title author pages format rating notes" was shown for a reading log)."""
    return row.text.strip() == (record.title or "").strip() or (record.kind == TABLE_KIND and row.ordinal == 0)


def _section_end(heading: SentenceRow, candidates: list[SentenceRow]) -> float:
    """The ordinal where the section under ``heading`` ends: the next heading among a document's ``candidates``
    (those holding query words, and those found by meaning; a heading with neither is not seen), else the end."""
    return min((c.ordinal for c in candidates if c.ordinal > heading.ordinal and _heads(c.text)), default=math.inf)


def _heads(text: str) -> bool:
    """Whether a sentence heads a section: a heading, not a list's item (engine.text.sentences)."""
    return is_heading(text) and not is_list_item(text)


def _says(text: str) -> bool:
    """Whether a sentence says something a heading names: one that ends as sentences do, or a list's item. A table's
    rows look like headings, and are passages of their own."""
    return ends_like_sentence(text) or is_list_item(text)


def _word_mass(text: str, stems_in: set[str], asked: _Query) -> float:
    """The IDF of the query's words in ``text``, each counted fully where the text has the query's own word and by
    STEM_ONLY_SHARE where it has only another word of its stem."""
    if not stems_in:
        return 0.0
    if text.isascii():
        words = set(_ASCII_WORD.findall(text.lower()))
    else:  # folded as the index folds ("café" holds "cafe")
        words = {T.fold(w) for w, _, _ in T.words(text)}
    return sum(asked.idf.get(s, 0.0) * (1.0 if asked.folded[s] in words else STEM_ONLY_SHARE) for s in stems_in)


def _written(texts: list[str], stems: set[str], asked: _Query) -> dict[str, str]:
    """For each of the query's ``stems`` that ``texts`` hold only through another word of the stem, the first such word
    as written: an explanation that says the document holds "medication" where it holds "Medical" is untrue."""
    joined = "\n".join(texts)
    lowered = joined.lower()
    same = len(lowered) == len(joined)  # lowercasing a few letters changes the length: then named in lower case
    out: dict[str, str] = {}
    for s in stems:
        if _word_at(lowered, asked.folded[s]) is not None:
            continue  # held as typed, as most are
        # a word of the stem begins with it, but for the letter the stemmer rewrites ("stori" of "story")
        for at, end in _words_from(lowered, s[: max(1, len(s) - 1)]):
            if T.stem(lowered[at:end]) == s:
                form = (joined if same else lowered)[at:end]
                if T.fold(form) != asked.folded[s]:  # not "café" for a typed "cafe": the same word to the index
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


def _semantic_best(doc: _Doc, cosines: dict[int, float]) -> SentenceRow:
    """The sentence a document found by meaning is shown by: its best semantic sentence or, when that is a short line
    embedded with its section or a heading, the section's sentence most similar to the query."""
    if not doc.span_rows:
        assert doc.sem_row is not None
        return doc.sem_row
    return max(doc.span_rows, key=lambda r: cosines.get(r.id, -1.0))


def _rounds(ranked: list[_Doc], k: int) -> Iterator[list[_Doc]]:
    """The ranking in the parts that are weighed one after another, each only if the ones before did not give k
    results: the first k, SECOND_ROUND more, then the rest. Most queries find their k results among the first few
    documents (on the Wikipedia benchmark's queries, 10 results took 10 documents at the median and at most 13 in
    three queries of four), so the candidates of the documents after the first k are read only when needed
    (docs/benchmarks.md)."""
    yield ranked[:k]
    if len(ranked) > k:
        yield ranked[k : k + SECOND_ROUND]
    if len(ranked) > k + SECOND_ROUND:
        yield ranked[k + SECOND_ROUND :]


def _candidates_of(doc: _Doc, passages: dict[int, list[SentenceRow]]) -> list[SentenceRow]:
    """The sentences a document may be shown by: its best lexical passages', its best semantic sentence and, when
    that is a short line, the sentences it was embedded with."""
    lexical = [doc.lex_passage, *doc.lex_more] if doc.lex_passage is not None else []
    rows = [row for passage in lexical for row in passages.get(passage, ())]
    for row in ([doc.sem_row] if doc.sem_row is not None else []) + doc.span_rows:
        if all(r.id != row.id for r in rows):
            rows.append(row)
    return rows
