"""Both sides of a query's ranking: the semantic side (the query embedded, its nearest sentences in the graph) and
the lexical side (BM25 over passages from the word index, or FTS5 for quoted phrases), with the words related to
the query's weighed on a word thread; each document found becomes a :class:`engine.search.candidates.Candidate`."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.embed.base import Embedder
from engine.facets.space import FacetSpace
from engine.search import related
from engine.search.candidates import (
    BOILERPLATE_DOCS,
    BestPassages,
    Candidate,
    SemanticHit,
    add_hit,
    best_passages,
    candidate,
    is_boilerplate,
    set_passages,
)
from engine.search.query import MAX_QUERY_SENTENCES, query_stems
from engine.search.results import Mode
from engine.search.statistics import CollectionStatistics
from engine.store.bm25 import Postings
from engine.store.database import Store
from engine.store.scans import SCAN_PARTS
from engine.store.vectors import VectorIndex
from engine.text import terms as T
from engine.text.sentences import split_sentences

log = logging.getLogger(__name__)

# Candidates fetched from each ranking before fusion: deep enough that a document ranked modestly by both
# rankings still surfaces, cheap enough for interactive latency.
CANDIDATES = 200
# With filters on, each side ranks this deep and the documents the filters let through are kept: a folder or a
# file type that holds a tenth of the collection still gets a full CANDIDATES of its own (0011).
FILTERED_CANDIDATES = 10 * CANDIDATES
# Quoted phrases are scored by FTS5 (the word index keeps no positions), as is every query on an index whose word index
# is not built yet. FTS5's bm25() costs ~2.5 us per matching passage, so a scan expected to score more passages than
# this is split over the cores (Words.fts_bm25's parts): about 5 ms of bm25() on one core, where handing parts to threads
# costs well under a millisecond.
LEXICAL_SPLIT_PASSAGES = 2_000
# Hybrid queries that may rank their words at the same time (one per search thread the app and tools run).
WORD_RANKERS = 4


@dataclass(frozen=True)
class WordMatches:
    """The word side of one query: its terms by stem, their document frequencies, each matching document's best
    passages by BM25 (passage id, score; the best and up to MORE_PASSAGES more, best first) among the CANDIDATES a
    search without filters reads (``near``) and deeper (``deeper``), every passage ranked (passage id, document id,
    BM25; best first), and in hybrid mode the stems of the words related to the query's with their weights and
    their postings in the word index."""

    stems: dict[str, T.Term]
    df: dict[str, int]
    near: BestPassages
    deeper: BestPassages
    ranked: list[tuple[int, int, float]]
    related: dict[str, float]
    postings: Postings | None


@dataclass(frozen=True)
class Retrieved:
    """What both sides found for one query: each document's evidence so far (by id), the query's vectors (None: no
    semantic side), the word side's findings, and how deep each side read."""

    docs: dict[int, Candidate]
    vectors: np.ndarray | None
    words: WordMatches
    depth: int


class Retriever:
    """Ranks a query's sentences and passages in one index (``collection``: a shard, counting with the collection's
    statistics; ``facets``: the static word space related words are found in)."""

    def __init__(self, store: Store, vectors: VectorIndex | None, embedder: Embedder | None,
                 facets: FacetSpace | None, collection: CollectionStatistics | None) -> None:
        self.store, self.vectors, self.embedder, self.facets, self.collection = (store, vectors, embedder, facets,
                                                                                 collection)

    def retrieve(self, query: str, mode: Mode, notes: list[str], filtered: bool) -> Retrieved:
        """Each document's semantic and lexical evidence, the query's vectors, and what the word side found (its
        terms, their document frequencies, the related words still to weigh: :meth:`weigh_related`), from the
        best sentences and passages of each side (``filtered``: FILTERED_CANDIDATES of each, else CANDIDATES).

        Semantic mode ranks by meaning alone but ranks the words too: whether the collection answers the query at all
        is judged on all the evidence (docs/decisions/0002-score-fusion-and-relevance-gate.md). The words are ranked
        on another thread while this one embeds the query and walks the graph; the two sides spend most of their time
        in code that releases the GIL (numpy, SQLite), so a query takes about as long as the slower side.
        """
        depth = FILTERED_CANDIDATES if filtered else CANDIDATES
        docs: dict[int, Candidate] = {}
        expand = mode is Mode.HYBRID
        words = word_thread().submit(self._rank_words, query, depth, expand) if mode is not Mode.LEXICAL else None
        deeper: list[SemanticHit] = []
        with running_beside(words):
            semantic = mode is not Mode.LEXICAL
            query_vectors = self._nearest_sentences(query, docs, notes, depth, deeper) if semantic else None
        found = words.result() if words is not None else self._rank_words(query, depth, expand)
        for doc_id, passages in found.near.items():
            set_passages(candidate(docs, doc_id, unfiltered=True), passages)
        # what only a filtered search's deeper read found counts for the documents a search without filters does not
        # find; those it finds keep what it sees of them (docs/decisions/0011-filtered-search-depth.md)
        for hit in deeper:
            if hit.doc_id not in docs or not docs[hit.doc_id].unfiltered:
                add_hit(candidate(docs, hit.doc_id), hit)
        for doc_id, passages in found.deeper.items():
            if doc_id not in docs or not docs[doc_id].unfiltered:
                set_passages(candidate(docs, doc_id), passages)
        return Retrieved(docs, query_vectors, found, depth)

    def _nearest_sentences(self, query: str, docs: dict[int, Candidate], notes: list[str], depth: int,
                           deeper: list[SemanticHit]) -> np.ndarray | None:
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
        keys = self.store.sentences.keys(list(hits), up_to=BOILERPLATE_DOCS)
        documents = max(1, self.collection.documents if self.collection else self.store.documents.indexed_count())
        for sid, sim in hits.items():
            if sid not in keys:
                continue  # deleted since the graph was saved
            doc_id, copies = keys[sid]
            hit = SemanticHit(sid, doc_id, near.get(sid, sim), is_boilerplate(copies, documents))
            if sid in near:
                add_hit(candidate(docs, doc_id, unfiltered=True), hit)
            else:
                deeper.append(hit)
        return vectors  # the best sentences' rows are read for the documents weighed (engine.search.passages)

    def _rank_words(self, query: str, depth: int, expand: bool = False) -> WordMatches:
        """The query's words ranked: among the CANDIDATES best passages, which a search without filters reads, and
        among the rest of the ``depth`` best; with ``expand``, the documents' BM25 counting related words too."""
        phrases, words, stems = query_stems(query)
        ranked = sorted(self._passages_by_bm25(phrases, words, depth), key=lambda r: (-r[2], r[0]))
        if self.collection is not None:
            known = self.collection.words.frequencies
            df = {s: known[s] for s in stems if known.get(s)}
        else:
            df = self.store.words.frequencies(list(stems))
        near, deeper = best_passages(ranked[:CANDIDATES]), best_passages(ranked[CANDIDATES:])
        space = self.facets if expand and words and self.store.words.ready() else None
        near_words = related.related_words(space, words, df) if space else {}
        # read here, beside the graph search, and scored once the documents are known (:meth:`weigh_related`)
        postings = self.store.words.postings(list(near_words)) if near_words else None
        return WordMatches(stems, df, near, deeper, ranked, near_words, postings)

    def weigh_related(self, docs: dict[int, Candidate], found: WordMatches) -> None:
        """Set each document's BM25 counting the words related to the query's (engine.search.related): its best
        passage's, each passage scoring for the query's words what the ranking of them read (those a search without
        filters reads, for the documents it finds: decision 0011) and for the related words what it holds. Only the
        documents found are scored: related words rank them, and find none of their own."""
        within = np.fromiter(docs, dtype=np.int64, count=len(docs))
        scored = self.store.words.scores(list(found.related), None, None,
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

    def _passages_by_bm25(self, phrases: list[str], words: list[T.Term], depth: int) -> list[tuple[int, int, float]]:
        """The ``depth`` best passages by BM25 for the quoted ``phrases`` and other ``words`` of a query, OR-ed.

        Words are scored from the word index (engine.store.bm25) by FTS5's formula, in every passage they are in;
        phrases, which need word positions, by FTS5, and added. An index whose word index is not built yet is searched
        by FTS5 alone.
        """
        if not phrases and not words:
            return []
        if not self.store.words.ready():
            match = T.fts_expression(phrases, words)
            assert match is not None  # there are phrases or words
            return self.store.words.fts_bm25(match, depth, parts=self._scan_parts(phrases, words))
        added = None
        if phrases:
            match = T.fts_expression(phrases, [])
            assert match is not None  # there are phrases
            rows = self.store.words.fts_bm25(match, None, parts=self._scan_parts(phrases, []))
            added = (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[2] for r in rows]))
        return self.store.words.bm25([t.stem for t in words], depth, added,
                                    self.collection.words if self.collection else None)

    def _scan_parts(self, phrases: list[str], words: list[T.Term]) -> int:
        """How many parts an FTS5 scan of ``phrases`` and ``words`` is split into: it scores at most every passage
        of each word and of each phrase's rarest word."""
        df = self.store.words.frequencies([t.stem for p in phrases for t in T.query_terms(p)] +
                                                  [t.stem for t in words])
        bound = sum(min((df.get(t.stem, 0) for t in T.query_terms(p)), default=0) for p in phrases)
        matching = bound + sum(df.get(t.stem, 0) for t in words)
        return SCAN_PARTS if matching > LEXICAL_SPLIT_PASSAGES else 1


@functools.cache
def word_thread() -> ThreadPoolExecutor:
    """Threads that rank a hybrid query's words (:meth:`Retriever.retrieve`) and weigh its related words, shared by
    every searcher of the process."""
    return ThreadPoolExecutor(WORD_RANKERS, thread_name_prefix="quire-words")


@contextlib.contextmanager
def running_beside(beside: Future[Any] | None) -> Iterator[None]:
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
