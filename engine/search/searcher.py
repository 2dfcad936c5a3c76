"""Answer a query: semantic (HNSW over sentences), lexical (BM25 over passages), or both fused.

Documents are ranked by their best evidence and shown through their best sentence. Hybrid ranking fuses the two
sides' normalised scores, and whether a document is shown, and the number shown with it, come from its evidence on
an absolute scale (``engine.search.relevance``; docs/decisions/0002-score-fusion-and-relevance-gate.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

import numpy as np

from engine.blas import one_blas_thread
from engine.embed.base import Embedder
from engine.facets import rerank as facet_rerank
from engine.facets.space import FacetSpace
from engine.heap import freeze_long_lived, keep_freed_memory
from engine.search import fusion, gate, pick, present, spelling
from engine.search import relevance as rel
from engine.search.calibration import MIN_SENTENCES, Calibration
from engine.search.candidates import Candidate, ranked_by
from engine.search.passages import PassageChooser
from engine.search.query import Query, checked, query_scale, stop_words_note, word_idf
from engine.search.results import Mode, SearchResponse
from engine.search.retrieve import Retrieved, Retriever, running_beside, word_thread
from engine.search.similarity import SentenceVectors
from engine.search.statistics import CollectionStatistics
from engine.store.database import Store
from engine.store.filters import NOTHING_PASSES, Filters
from engine.store.sentences import SentenceRow
from engine.store.vectors import VectorIndex
from engine.text import terms as T

log = logging.getLogger(__name__)


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
        self.retriever = Retriever(store, vectors, embedder, facets, collection)
        self.sentence_vectors = SentenceVectors(store, vectors, embedder)
        self.passages = PassageChooser(store, self.sentence_vectors)
        self.gate = gate.RelevanceGate(facets, embedder, collection, self.passages)

    def _sentences(self) -> int:
        return self.collection.sentences if self.collection else self.store.sentence_count()

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
        query = checked(query, k)
        notes: list[str] = []
        # the ranking's products are small: on one BLAS thread (engine/blas.py); explanations keep every thread
        with one_blas_thread():
            found = self.retriever.retrieve(query, mode, notes, bool(within))
            docs, ranked, reference, scale, idf = self._fused(query, mode, found, notes, exclude, within)
            stems = found.words.stems
            small = self._sentences() < MIN_SENTENCES
            bar = rel.bar(mode, small_folder=small)
            candidates: dict[int, list[SentenceRow]] = {}
            top = ranked[0] if ranked else None  # the first result; a filtered search's cards are set below
            judged = self.gate._deciding(query, docs, mode, small, bar, candidates, None if within else top)
            answered = any(rel.gated(d.evidence, d.alignment, mode) >= bar for d in judged)
            # a small folder's lower bar is for its best document, the best of few chances; the others are weighed as
            # anywhere (docs/decisions/0003-a-prior-for-small-folders.md)
            floor = rel.WEAK_SHARE * rel.bar(mode, small_folder=False)
            record = Query(mode, found.vectors, stems, idf, scale, answered, bar, floor)
            beside = judged  # those the gate weighed with the first result
            if reference is not None and top is not None:
                # each card reads what it reads without the filters: the first result without them sets the numbers
                # (decision 0002, "Card score"), its word alignment weighed where the gate weighs it there
                top = max([top, *ranked_by(mode, reference)], key=lambda d: (d.fused, -d.doc_id))
                beside = self.gate._deciding(query, {d.doc_id: d for d in reference}, mode, small, bar, candidates, top)
            # (what the gate weighed of the first result, its fused score): the scale of every card
            card = None if top is None else (
                rel.gated(top.evidence, top.alignment if any(d is top for d in beside) else None, mode), top.fused)
            found_count = len(ranked) if include_weak else sum(d.evidence >= floor for d in ranked) if answered else 0
            ranked = ranked[: 3 * k + 10]
            if facet_rerank.enabled(rerank_facets):
                candidates.update(self.passages.candidate_sentences([d for d in ranked if d.doc_id not in candidates]))
                order = facet_rerank.rerank(self.store, query, [candidates[d.doc_id] for d in ranked], self.facets)
                ranked = [ranked[i] for i in order]
            # lazily: the next part of the ranking is weighed only if the ones before did not give k results
            weighed = (e for part in pick.rounds(ranked, k) for e in self.passages.choose(part, record, candidates))
            kept = pick.pick_shown(weighed, k, include_weak)
            picked, strong = kept.picked, kept.strong
            # most documents weighed here are weak and never shown: only the shown ones are made into results
            shown = picked[:k] if include_weak else [e for e in picked if not e.weak][:k]
            results = present.monotonic([present.result(e, record, card, self.calibration) for e in shown])
        if explain:
            results = present.explain(self.store, self.facets, query, results, [e.best for e in shown])
        df = found.words.df
        missing = present.missing_words(self.store, query, stems, df)
        language = self.facets.tokenizer if self.facets else None  # a word of the language is not a typo (0010)
        return SearchResponse(
            query=query, mode=mode, method=self.embedder.name if self.embedder else "", results=tuple(results),
            nothing_relevant=not strong, weak_hidden=0 if include_weak else len(picked) - strong,
            seconds=time.perf_counter() - started, notes=tuple(notes),
            missing=missing, found=max(found_count, len(results)),
            found_at_least=present.ranking_cut(mode, self.vectors, df, found.depth),
            did_you_mean=spelling.did_you_mean(self.store, query, missing, language) if missing else None,
        )

    def _fused(self, query: str, mode: Mode, found: Retrieved, notes: list[str], exclude: Collection[str],
               within: Filters
               ) -> tuple[dict[int, Candidate], list[Candidate], list[Candidate] | None, rel.Scale, dict[str, float]]:
        """The documents found that ``exclude`` and ``within`` let through, their ranking, the documents a search
        without filters reads (None: no filters), the query's scale and its words' IDF."""
        docs, words = found.docs, found.words
        # the related words' BM25 is weighed on a word thread while this one weighs meaning: each sets its own
        # score of the documents, mostly in numpy and SQLite, which release the GIL
        relating = word_thread().submit(self.retriever.weigh_related, dict(docs), words) if words.related else None
        with running_beside(relating):
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
            passages = self.collection.words.passages if self.collection else self.store.passage_count()
            idf = word_idf(passages, words.stems, words.df)
            # stop words alone make no lexical case: in every passage, "the" held its query's every key word
            # (docs/decisions/0017-stop-words-alone.md); a quoted phrase of them does
            stop_words = T.stop_words_only(query)
            if stop_words:
                notes.append(stop_words_note(stop_words, query))
            scale = query_scale(self.calibration, self.null_sample, found.vectors, {} if stop_words else idf)
            if reference is None:
                fusion.weigh_meaning(self.store, self.sentence_vectors, docs, mode, found.vectors)
            else:  # apart: a document's share of the sentences scored depends on how many are weighed with it
                fusion.weigh_meaning(self.store, self.sentence_vectors, {d.doc_id: d for d in reference}, mode,
                                      found.vectors)
                fusion.weigh_meaning(self.store, self.sentence_vectors,
                                      {i: d for i, d in docs.items() if not d.unfiltered}, mode, found.vectors)
        ranked = fusion.fuse(docs, mode, scale, reference)
        return docs, ranked, reference, scale, idf
