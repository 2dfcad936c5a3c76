"""Where facets meet an index: the shared word space, writing facets while indexing, reading them for sentences."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import numpy as np

from engine.embed import load
from engine.embed.static import StaticEmbedder
from engine.errors import MethodUnavailableError
from engine.facets.extract import FacetSet, context_words, empty, facets_of_words, unpack
from engine.facets.space import FacetSpace
from engine.store.database import Store
from engine.store.meta import Key
from engine.store.sentences import SentenceRow

log = logging.getLogger(__name__)

_SPACES: dict[str, FacetSpace] = {}
# Meta key naming the static model the stored facets were computed with.


def load_space() -> FacetSpace | None:
    """The bundled static model's facet space, built once per process; None (logged) when the model is missing."""
    try:
        embedder = load("static")
    except MethodUnavailableError as e:
        log.warning("facets are off: %s", e)
        return None
    assert isinstance(embedder, StaticEmbedder)  # what the "static" method makes
    space = _SPACES.get(embedder.fingerprint)
    if space is None:
        space = _SPACES.setdefault(embedder.fingerprint, FacetSpace(embedder))
    return space


class FacetWriter:
    """The word space an indexing run's facets are computed in by the reader processes (``engine.indexing.prepare``);
    they are stored with their documents (``Store.write_documents``). Facets stored in another static model's word
    space are forgotten first.

    A sentence stored without facets (indexed before facets existed, or while the static model was unavailable)
    gets them at query time (:func:`facets_of_sentences`).
    """

    def __init__(self, store: Store, space: FacetSpace) -> None:
        self.store, self.space = store, space
        fingerprint = space.embedder.fingerprint
        if store.meta.get(Key.FACETS_MODEL) != fingerprint:
            store.facets.clear()  # computed in another model's word space: meaningless now
            with store.transaction():
                store.meta.put(Key.FACETS_MODEL, fingerprint)

    @classmethod
    def open(cls, store: Store) -> FacetWriter | None:
        """A writer for ``store``, or None when the static model is unavailable (indexing goes on without facets)."""
        space = load_space()
        return cls(store, space) if space is not None else None


def facets_of_sentences(store: Store, space: FacetSpace, rows: Sequence[SentenceRow]) -> list[FacetSet]:
    """Facets of sentence rows: stored ones, or computed from the sentence and its neighbours when missing
    (sentences indexed before facets existed, or while the static model was unavailable). The missing ones are
    computed together, in one pass over their neighbourhoods: one pass per sentence cost milliseconds each."""
    stored = store.facets.read([r.id for r in rows])
    texts: list[str] = []
    owner: list[int] = []  # which row's neighbourhood each text is in: neighbourhoods never share words
    at: list[int | None] = []  # each missing row's place among ``texts``; None: no longer in the index
    for i, row in enumerate(rows):
        if row.id in stored:
            continue
        around = store.sentences.neighbours(row.doc_id, row.ordinal, 1)
        position = next((j for j, n in enumerate(around) if n.id == row.id), None)
        at.append(None if position is None else len(texts) + position)  # None: re-indexed since the search
        texts.extend(n.text for n in around)
        owner.extend([i] * len(around))
    computed: Iterator[FacetSet] = iter(())
    wanted = [j for j in at if j is not None]
    if wanted:
        ids, weights = context_words(space, texts, np.asarray(owner))
        computed = iter(facets_of_words(space, ids[wanted], weights[wanted]))
    places = iter(at)
    out = []
    for row in rows:
        found = stored.get(row.id)
        if found is not None:
            out.append(unpack(*found, space))
        else:
            out.append(empty(space.dim) if next(places) is None else next(computed))
    return out
