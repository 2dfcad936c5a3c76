"""Answer a query: semantic (HNSW over sentences), lexical (BM25 over passages), or both fused.

A search is a pipeline of stages, each a module of its own, passing typed records: the query checked
(``engine.search.query``); both sides retrieved (``retrieve``: :class:`engine.search.candidates.Candidate` records);
meaning weighed and the two sides fused (``fusion``: a :class:`engine.search.fusion.Ranking`); the relevance gate's
:class:`engine.search.gate.Verdict`; each document's shown passage chosen (``passages``) and the shown documents
picked (``pick``); the results presented (``present``). Documents are ranked by their best evidence and shown
through their best sentence (docs/architecture.md, "The query path").
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Collection, Iterator, Sequence

import numpy as np

from engine.blas import one_blas_thread
from engine.embed import context as embed_context
from engine.embed import onnx
from engine.embed.base import Embedder
from engine.facets import rerank as facet_rerank
from engine.facets.space import FacetSpace
from engine.search import confidence, features, fusion, gate, pick, present, secondlook, spelling
from engine.search.calibration import Calibration, prior
from engine.search.candidates import Candidate
from engine.search.correction import with_correction
from engine.search.gate import Verdict
from engine.search.passages import CandidateSentences, ChosenPassage, PassageChooser
from engine.search.query import Query, checked, query_scale, stop_words_note, word_idf
from engine.search.results import Answer, Mode, SearchResponse, SearchResult
from engine.search.retrieve import Retrieved, Retriever, running_beside, word_thread
from engine.search.secondlook import Look
from engine.search.similarity import SentenceVectors
from engine.search.statistics import CollectionStatistics
from engine.store.database import Store
from engine.store.filters import NOTHING_PASSES, Filters
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
        # the static model's word space: facet explanations and the relevance gate's word alignment are made in it
        # (None: results carry no facet explanations and the gate weighs evidence alone)
        self.facets = facets
        # vectors of random sentences of the index: each query's own similarity to the index (its null)
        self.null_sample = null_sample
        self.collection = collection
        self.retriever = Retriever(store, vectors, embedder, facets, collection)
        self.sentence_vectors = SentenceVectors(store, vectors, embedder)
        self.chooser = PassageChooser(store, self.sentence_vectors)
        method = embedder.name if embedder is not None else "static"
        self.models = confidence.shipped(method)
        # the sentence model's second look, where its files are there (a checkout may lack the built model)
        self.second_look = secondlook.SecondLook(store) if onnx.available() else None

    def search(self, text: str, *, k: int = 10, mode: Mode = Mode.HYBRID, include_weak: bool = False,
               explain: bool = True, rerank_facets: bool | None = None, exclude: Collection[str] = (),
               within: Filters = Filters(), second_look: bool = True, correct: bool = True) -> SearchResponse:
        """Rank documents for the query ``text``, each with its probability of answering it; documents that share nothing
        with the query are left out (with ``include_weak``, kept and flagged). Documents at the paths in
        ``exclude`` are left out (the source of a "more like this" search), and so are those ``within`` does not let
        through (folders, file types, modification times).

        ``second_look``: the first documents are read again by the sentence model, which re-orders them and refines
        their confidence (engine.search.secondlook); without it the answer is the first ranking's, at once.
        ``rerank_facets`` re-orders the head of the ranking by facet set distance (``engine.facets.rerank``; None:
        its measured default). ``explain=False`` is for tools that only read the ranking (benchmarks, ``quire
        search --queries --no-explain``): the same results in the same order, without the per-result work that
        serves people (facet chips and evidence, surrounding sentences), which is most of a query's time.

        ``correct``: a query that finds no strong match, with a word no passage holds and a spelling correction of
        it (``did_you_mean``), is searched as corrected too, and answered so where that does better
        (``corrected_from`` names the query as typed).
        """
        run = functools.partial(self._search, k=k, mode=mode, include_weak=include_weak, explain=explain,
                                rerank_facets=rerank_facets, exclude=exclude, within=within, second_look=second_look)
        return with_correction(run, text, correct)

    def _search(self, text: str, *, k: int, mode: Mode, include_weak: bool, explain: bool,
                rerank_facets: bool | None, exclude: Collection[str], within: Filters,
                second_look: bool) -> SearchResponse:
        """One search of the query ``text`` as it is written (:meth:`search`)."""
        started = time.perf_counter()
        text = checked(text, k)
        notes: list[str] = []
        looking = second_look and self.second_look is not None
        # the ranking's products are small: on one BLAS thread (engine/blas.py); explanations keep every thread
        with one_blas_thread():
            found = self.retriever.retrieve(text, mode, notes, filtered=bool(within))
            query, ranking = self._rank(text, mode, found, notes, exclude, within, depth=3 * k + 10)
            candidates = CandidateSentences(self.chooser)
            head = self._reranked(ranking.head, query, candidates, rerank_facets)
            kept, verdict = self._kept_and_judged(head, query, found, ranking, candidates, k, include_weak, looking)
            shown = pick.shown(verdict, k, include_weak)
            results = [present.result(j, query, kept.copies.get(j.passage.doc.doc_id, ()), self.calibration)
                       for j in shown]
        if explain:
            results = present.explain(self.store, self.facets, text, results, [j.passage.best for j in shown])
        return self._response(query, found, ranking, verdict, results, notes, include_weak, looking, started)

    def _kept_and_judged(self, head: Sequence[Candidate], query: Query, found: Retrieved, ranking: fusion.Ranking,
                         candidates: CandidateSentences, k: int, include_weak: bool, looking: bool
                         ) -> tuple[pick.Kept, Verdict]:
        """The distinct documents judged and the verdict on them: the first screen (the second look's documents where
        ``looking``), and further ones while fewer than ``k`` of those share something with the query (the others are
        not shown) and the ranking holds more that do."""
        window = max(k, secondlook.DOCUMENTS if looking else features.SCREEN)
        looks: list[Look] | None = None
        while True:
            kept = pick.distinct(self._chosen(head, query, candidates, window), window)
            if looking and looks is None and self.second_look is not None:
                looks = self.second_look.look(query.text, kept.passages[: secondlook.DOCUMENTS])
            verdict = self._judge(query, found, kept.passages, looks)
            short = k - sum(j.related for j in verdict.order)
            if include_weak or short <= 0 or len(kept.passages) < window or not self._beyond(query, ranking, verdict):
                return kept, verdict
            window += short

    def _judge(self, query: Query, found: Retrieved, passages: Sequence[ChosenPassage], looks: list[Look] | None
               ) -> Verdict:
        """The verdict on the distinct documents ``passages`` (engine.search.gate), with the second look's ``looks``
        at the first of them."""
        sentences = self._sentences()
        context = features.QueryContext(query.scale.null_mean, query.scale.null_spread, sentences,
                                        any(not found.words.df.get(s, 0) for s in query.stems),
                                        self._chance(sentences))
        return gate.judge(passages, context, self.models, looks, reorder=query.mode is not Mode.LEXICAL,
                          cosines=self._lexical_cosines(query, passages), relatable=not T.stop_words_only(query.text))

    @staticmethod
    def _beyond(query: Query, ranking: fusion.Ranking, verdict: Verdict, include_weak: bool = False) -> int:
        """How many documents of the ranking beyond those judged share something with the query: one of its words or
        a meaning closer than chance gives (every one with ``include_weak``)."""
        judged = {j.passage.doc.doc_id for j in verdict.order}
        context = features.QueryContext(query.scale.null_mean, query.scale.null_spread, 0, False)
        return sum(1 for d in ranking.ranked if d.doc_id not in judged and (
            include_weak or d.lex_passage is not None or (
                d.sem_sentence is not None and features.z_of(d.sem_cosine, context) >= gate.RELATED_Z)))

    def _lexical_cosines(self, query: Query, passages: Sequence[ChosenPassage]) -> dict[int, float] | None:
        """In lexical mode, which ranks without the query's vectors, the shown sentences' cosines with the query for
        their confidence (None in the other modes, whose passages carry theirs)."""
        if query.vectors is not None or self.embedder is None or not passages:
            return None
        vectors = self.embedder.encode([query.text])
        if not np.linalg.norm(vectors):
            return None
        return self.sentence_vectors.cosines(vectors, [p.best.id for p in passages])

    def _chance(self, sentences: int) -> Calibration | None:
        """Random pairs' cosines for an index smaller than the sample its queries' null is read from (then all of it,
        relevant sentences included, as are its own random pairs): the model's bundled prior (None: a larger index)."""
        if self.null_sample is None or len(self.null_sample) < sentences or self.embedder is None:
            return None
        return prior(embed_context.fingerprint(self.embedder))

    def _sentences(self) -> int:
        return self.collection.sentences if self.collection else self.store.sentences.count()

    def _rank(self, text: str, mode: Mode, found: Retrieved, notes: list[str], exclude: Collection[str],
              within: Filters, depth: int) -> tuple[Query, fusion.Ranking]:
        """The query's record and its ranking of the documents found that ``exclude`` and ``within`` let through
        (``depth``: how many of them may be shown)."""
        docs, words = found.docs, found.words
        # the related words' BM25 is weighed on a word thread while this one weighs meaning: each sets its own
        # score of the documents, mostly in numpy and SQLite, which release the GIL
        relating = word_thread().submit(self.retriever.weigh_related, dict(docs), words) if words.related else None
        with running_beside(relating):
            docs, reference = self._filtered(docs, exclude, within, notes)
            passages = self.collection.words.passages if self.collection else self.store.sentences.passage_count()
            idf = word_idf(passages, words.stems, words.df)
            # stop words alone make no lexical case: in every passage, "the" held its query's every key word
            # (docs/decisions/0017-stop-words-alone.md); a quoted phrase of them does
            stop_words = T.stop_words_only(text)
            if stop_words:
                notes.append(stop_words_note(stop_words, text))
            scale = query_scale(self.calibration, self.null_sample, found.vectors, {} if stop_words else idf)
            self._weigh_meaning(docs, reference, mode, found.vectors)
        ranked = fusion.fuse(docs, mode, scale, reference)
        query = Query(text, mode, found.vectors, words.stems, idf, scale)
        return query, fusion.Ranking(tuple(ranked), docs, None if reference is None else tuple(reference), depth)

    def _filtered(self, docs: dict[int, Candidate], exclude: Collection[str], within: Filters, notes: list[str]
                  ) -> tuple[dict[int, Candidate], list[Candidate] | None]:
        """The documents of ``docs`` that ``exclude`` and ``within`` let through, and the documents whose scores set
        the fusion's scales: those a search without filters reads (None without filters: all of them)."""
        for path in exclude:
            record = self.store.documents.get(path)
            if record is not None:
                docs.pop(record.id, None)
        if not within:
            return docs, None
        reference = [d for d in docs.values() if d.unfiltered]
        allowed = self.store.documents.matching(within)
        if not allowed:
            notes.append(NOTHING_PASSES)
        return {doc_id: doc for doc_id, doc in docs.items() if doc_id in allowed}, reference

    def _weigh_meaning(self, docs: dict[int, Candidate], reference: list[Candidate] | None, mode: Mode,
                       query_vectors: np.ndarray | None) -> None:
        """Set the meaning of the documents ranked by it (engine.search.fusion.weigh_meaning)."""
        if reference is None:
            fusion.weigh_meaning(self.store, self.sentence_vectors, docs, mode, query_vectors)
            return
        # apart: a document's share of the sentences scored depends on how many are weighed with it
        fusion.weigh_meaning(self.store, self.sentence_vectors, {d.doc_id: d for d in reference}, mode, query_vectors)
        fusion.weigh_meaning(self.store, self.sentence_vectors, {i: d for i, d in docs.items() if not d.unfiltered},
                             mode, query_vectors)

    def _reranked(self, head: Sequence[Candidate], query: Query, candidates: CandidateSentences,
                  rerank_facets: bool | None) -> Sequence[Candidate]:
        """``head`` re-ordered by facet set distance where that is on (engine.facets.rerank)."""
        if not facet_rerank.enabled(rerank_facets):
            return head
        candidates.read(head)
        order = facet_rerank.rerank(self.store, query.text, [candidates[d.doc_id] for d in head], self.facets)
        return [head[i] for i in order]

    def _chosen(self, head: Sequence[Candidate], query: Query, candidates: CandidateSentences, n: int
                ) -> Iterator[ChosenPassage]:
        """Each document's passage, in ranking order; lazily: the next part of the ranking is weighed only if the
        ones before did not give ``n`` distinct documents."""
        for part in pick.rounds(head, n):
            yield from self.chooser.choose(part, query, candidates)

    def _response(self, query: Query, found: Retrieved, ranking: fusion.Ranking, verdict: Verdict,
                  results: list[SearchResult], notes: list[str], include_weak: bool, refined: bool,
                  started: float) -> SearchResponse:
        """The response: the results and what the search noted, the query's words no passage holds and, for them,
        the query spelt as close words of the index's own vocabulary (``engine.search.spelling``)."""
        missing = present.missing_words(self.store, query.text, query.stems, found.words.df)
        language = self.facets.tokenizer if self.facets else None  # a word of the language is not a typo (0010)
        unrelated = sum(not j.related for j in verdict.order)
        beyond = self._beyond(query, ranking, verdict, include_weak)
        return SearchResponse(
            query=query.text, mode=query.mode, method=self.embedder.name if self.embedder else "",
            results=tuple(results), nothing_relevant=verdict.answer in (Answer.CLOSEST, Answer.NOTHING),
            weak_hidden=0 if include_weak else unrelated,
            seconds=time.perf_counter() - started, notes=tuple(notes),
            missing=missing, found=max(len(verdict.order) - (0 if include_weak else unrelated) + beyond, len(results)),
            found_at_least=present.ranking_cut(query.mode, self.vectors, found.words.df, found.depth),
            did_you_mean=spelling.did_you_mean(self.store, query.text, missing, language) if missing else None,
            answer=verdict.answer, confidence=verdict.confidence, refined=refined,
        )
