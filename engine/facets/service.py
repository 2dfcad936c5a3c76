"""Where facets meet an index: the shared word space, writing facets while indexing, reading them for results."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from engine import embed
from engine.errors import MethodUnavailableError
from engine.facets.explain import Explainer
from engine.facets.extract import (
    BORROW_RESULTS,
    DEFAULT_K,
    FacetSet,
    document_facets,
    empty,
    packed_document_facets,
    unpack,
)
from engine.facets.space import FacetSpace
from engine.search.results import SearchResult
from engine.store.database import NewDocument, Store

log = logging.getLogger(__name__)

_SPACES: dict[str, FacetSpace] = {}
# Meta key naming the static model the stored facets were computed with.
FACETS_MODEL_KEY = "facets_model"


def load_space() -> FacetSpace | None:
    """The bundled static model's facet space, built once per process; None (logged) when the model is missing."""
    try:
        embedder = embed.load("static")
    except MethodUnavailableError as e:
        log.warning("facets are off: %s", e)
        return None
    space = _SPACES.get(embedder.fingerprint)
    if space is None:
        space = _SPACES.setdefault(embedder.fingerprint, FacetSpace(embedder))
    return space


class FacetWriter:
    """Computes and stores the facets of newly indexed sentences (called once per indexing batch).

    The clustering runs on a background thread while the indexer embeds and writes the next batch: numpy releases
    the GIL in its array loops, so on a 2-core machine the facets use the core that the reader process leaves idle
    instead of adding their time to the indexer's. Each batch's facets are stored (by the caller's thread, which owns
    the database) at the next :meth:`write` or at :meth:`finish`; a batch lost to a crash is recomputed at query time
    (:func:`facets_of_sentences`).
    """

    def __init__(self, store: Store, space: FacetSpace, k: int = DEFAULT_K) -> None:
        self.store, self.space, self.k = store, space, k
        self.seconds = 0.0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quire-facets")
        self._pending: Future[list[tuple]] | None = None
        fingerprint = space.embedder.fingerprint
        if store.get_meta(FACETS_MODEL_KEY) != fingerprint:
            store.clear_facets()  # computed in another model's word space: meaningless now
            with store.db.atomic():
                store.set_meta(FACETS_MODEL_KEY, fingerprint)

    @classmethod
    def open(cls, store: Store) -> FacetWriter | None:
        """A writer for ``store``, or None when the static model is unavailable (indexing goes on without facets)."""
        space = load_space()
        return cls(store, space) if space is not None else None

    def write(self, docs: Sequence[NewDocument], sentence_ids: np.ndarray,
              ids: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Start on the facets of every sentence of ``docs`` (ids in the same order), neighbours taken within each
        document; the previous batch's are stored first.

        ``ids`` are the sentences' word ids from ``self.space.ids`` when the caller has them (see ``Index``).
        """
        self.store_pending()
        texts = [s.text for d in docs for s in d.sentences]
        if texts:
            doc_of = np.repeat(np.arange(len(docs)), [len(d.sentences) for d in docs])
            self._pending = self._pool.submit(self._rows, texts, doc_of, ids, sentence_ids.tolist())

    def _rows(self, texts: list[str], doc_of: np.ndarray, ids: tuple[np.ndarray, np.ndarray] | None,
              sentence_ids: list[int]) -> list[tuple]:
        started = time.perf_counter()
        packed = packed_document_facets(self.space, texts, doc_of, self.k, ids=ids)
        self.seconds += time.perf_counter() - started
        return [(sid, *row) for sid, row in zip(sentence_ids, packed)]

    def store_pending(self) -> None:
        """Wait for the batch in progress, if any, and store its facets."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.store.add_facets(pending.result())

    def finish(self) -> None:
        """Store the last batch and stop the background thread."""
        try:
            self.store_pending()
        finally:
            self._pool.shutdown(wait=True)

    def shares_tokens(self, embedder: object) -> bool:
        """True when ``embedder`` is the static model facets use, so one tokenisation can serve both."""
        return embedder is self.space.embedder


def facets_of_sentences(store: Store, space: FacetSpace, rows: Sequence[dict]) -> list[FacetSet]:
    """Facets of sentence rows: stored ones, or computed from the sentence and its neighbours when missing
    (sentences indexed before facets existed, or while the static model was unavailable)."""
    stored = store.facets([r["id"] for r in rows])
    out = []
    for row in rows:
        found = stored.get(row["id"])
        if found is not None:
            out.append(unpack(*found, space))
            continue
        around = store.neighbours(row["doc_id"], row["ordinal"], 1)
        position = next((i for i, n in enumerate(around) if n["id"] == row["id"]), None)
        if position is None:  # re-indexed since the search found it
            out.append(empty(space.dim))
            continue
        out.append(document_facets(space, [n["text"] for n in around], [0] * len(around))[position])
    return out


def annotate(store: Store, space: FacetSpace, query: str, results: Sequence[SearchResult],
             rows: Sequence[dict]) -> list[SearchResult]:
    """``results`` with their facet chips and facet explanation filled in (one label search for all of them).

    ``rows`` are the results' sentence rows (id, doc_id, ordinal, text), which the searcher already holds.
    """
    if not results:
        return list(results)
    texts = [row["text"] for row in rows]
    explainer = Explainer(space, query, borrowed=texts[:BORROW_RESULTS])
    explained = explainer.explain(texts, facets_of_sentences(store, space, rows))
    return [replace(r, facets=chips, explanation=replace(r.explanation, facets=evidence))
            for r, (chips, evidence) in zip(results, explained)]
