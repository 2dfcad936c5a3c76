"""Where facets meet an index: the shared word space, writing facets while indexing, reading them for sentences."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from engine.embed import load
from engine.errors import MethodUnavailableError
from engine.facets.extract import FacetSet, document_facets, empty, unpack
from engine.facets.space import FacetSpace
from engine.store.database import Store

log = logging.getLogger(__name__)

_SPACES: dict[str, FacetSpace] = {}
# Meta key naming the static model the stored facets were computed with.
FACETS_MODEL_KEY = "facets_model"


def load_space() -> FacetSpace | None:
    """The bundled static model's facet space, built once per process; None (logged) when the model is missing."""
    try:
        embedder = load("static")
    except MethodUnavailableError as e:
        log.warning("facets are off: %s", e)
        return None
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
        if store.get_meta(FACETS_MODEL_KEY) != fingerprint:
            store.clear_facets()  # computed in another model's word space: meaningless now
            with store.db.atomic():
                store.set_meta(FACETS_MODEL_KEY, fingerprint)

    @classmethod
    def open(cls, store: Store) -> FacetWriter | None:
        """A writer for ``store``, or None when the static model is unavailable (indexing goes on without facets)."""
        space = load_space()
        return cls(store, space) if space is not None else None


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
