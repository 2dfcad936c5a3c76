"""The static model's share of indexing, done by the reader processes: word ids and facets.

Indexing with the static model tokenises every sentence once, for the embedding and the facets, and clusters each
sentence's context words into facets (``engine.facets``). In the indexer's process both held the GIL beside the
thread that writes the database, which is the critical path of an indexing run: on 462k Wikipedia sentences,
tokenising there cost 62 of the main thread's CPU-seconds at full size and made the run 7% slower, and a run without
facets took 60 s instead of 72 s for only 21 CPU-seconds less. The reader processes had time to spare. A task's
documents are prepared together, so the facets' numpy passes cover many sentences at once.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.embed.static import StaticEmbedder, load_tokenizer
from engine.embed.wordtok import WordTokenizer
from engine.facets.extract import DEFAULT_K, packed_document_facets
from engine.facets.space import FacetSpace
from engine.ingest.extract import Extracted


@functools.cache
def _load(model: Path, facets: bool) -> tuple[WordTokenizer, FacetSpace | None]:
    if not facets:
        return load_tokenizer(model), None
    embedder = StaticEmbedder.from_file(model)
    return embedder.tokenizer, FacetSpace(embedder)


class StaticPreparer:
    """Adds to a task's outcomes each document's word ids (``Extracted.words``) and, given a facet ``space``, its
    sentences' facets in storage form (``Extracted.facets``).

    Sent to a reader process with each task, it carries only the model file's path; each process loads the model
    from it once. In the process that made it, it uses ``embedder`` (the index's static model, None for another
    method) and ``space`` themselves. With a space, the word ids are its embedder's (the facets cluster the words the
    static model pools).
    """

    def __init__(self, embedder: StaticEmbedder | None, space: FacetSpace | None = None, k: int = DEFAULT_K) -> None:
        embedder = space.embedder if space is not None else embedder
        assert embedder is not None  # made for the static model, a facet space, or both
        self.embedder: StaticEmbedder | None = embedder
        self.model, self.facets, self.k = embedder.path, space is not None, k
        self._loaded: tuple[WordTokenizer, FacetSpace | None] | None = (embedder.tokenizer, space)

    def __getstate__(self) -> dict:
        return {"model": self.model, "facets": self.facets, "k": self.k}

    def __setstate__(self, state: dict) -> None:
        self.model, self.facets, self.k = state["model"], state["facets"], state["k"]
        self.embedder, self._loaded = None, None

    def __call__(self, outcomes: list[Extracted]) -> list[Extracted]:
        """The read documents of one task with their static word ids and facets added (the rest unchanged)."""
        found = [i for i, outcome in enumerate(outcomes) if outcome.document is not None]
        if not found:
            return outcomes
        tokenizer, space = self._loaded or _load(self.model, self.facets)
        docs = [outcome.document for outcome in outcomes if outcome.document is not None]  # those of found
        texts = [s.text for d in docs for s in d.sentences]
        flat, offsets = tokenizer.encode(texts)
        counts = [len(d.sentences) for d in docs]
        facets = None
        if space is not None:
            doc_of = np.repeat(np.arange(len(docs)), counts)
            facets = packed_document_facets(space, texts, doc_of, self.k, ids=(flat, offsets))
        bounds = np.cumsum([0, *counts]).tolist()
        out = list(outcomes)
        for i, start, end in zip(found, bounds, bounds[1:]):
            words = (flat[offsets[start] : offsets[end]], offsets[start : end + 1] - offsets[start])
            out[i] = replace(outcomes[i], words=words, facets=None if facets is None else facets[start:end])
        return out
