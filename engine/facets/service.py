"""Where facets meet an index: the shared word space, writing facets while indexing, reading them for results."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from engine import embed
from engine.errors import MethodUnavailableError
from engine.facets.explain import Explainer
from engine.facets.extract import DEFAULT_K, FacetSet, document_facets, pack, unpack
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
    """Computes and stores the facets of newly indexed sentences (called once per indexing batch)."""

    def __init__(self, store: Store, space: FacetSpace, k: int = DEFAULT_K) -> None:
        self.store, self.space, self.k = store, space, k
        self.seconds = 0.0
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

    def write(self, docs: Sequence[NewDocument], sentence_ids: np.ndarray) -> None:
        """Facets of every sentence of ``docs`` (ids in the same order), neighbours taken within each document."""
        started = time.perf_counter()
        texts = [s.text for d in docs for s in d.sentences]
        doc_of = np.repeat(np.arange(len(docs)), [len(d.sentences) for d in docs])
        facets = document_facets(self.space, texts, doc_of, self.k)
        self.store.add_facets((int(sid), *pack(f)) for sid, f in zip(sentence_ids.tolist(), facets))
        self.seconds += time.perf_counter() - started


def facets_of_sentences(store: Store, space: FacetSpace, rows: Sequence[dict]) -> list[FacetSet]:
    """Facets of sentence rows: stored ones, or computed from the sentence and its neighbours when missing
    (sentences indexed before facets existed, or while the static model was unavailable)."""
    stored = store.facets([r["id"] for r in rows])
    out = []
    for row in rows:
        found = stored.get(row["id"])
        if found is not None:
            out.append(unpack(*found, dim=space.dim))
            continue
        around = store.neighbours(row["doc_id"], row["ordinal"], 1)
        position = next(i for i, n in enumerate(around) if n["id"] == row["id"])
        out.append(document_facets(space, [n["text"] for n in around], [0] * len(around))[position])
    return out


def annotate(store: Store, space: FacetSpace, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
    """``results`` with their facet chips and facet explanation filled in (one label search for all of them)."""
    rows = [store.sentence_at(r.path, r.ordinal) for r in results]
    present = [(r, row) for r, row in zip(results, rows) if row is not None]  # a row vanishes if re-indexed meanwhile
    if not present:
        return list(results)
    explained = Explainer(space, query).explain(
        [row["text"] for _, row in present], facets_of_sentences(store, space, [row for _, row in present])
    )
    done = {id(r): replace(r, facets=chips, explanation=replace(r.explanation, facets=evidence))
            for (r, _), (chips, evidence) in zip(present, explained)}
    return [done.get(id(r), r) for r in results]
