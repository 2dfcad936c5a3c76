"""A reader that also turns each document's sentences into the static model's word ids.

Indexing with the static model tokenises every sentence once, for the embedding and the facets (``engine.index``).
On the indexer's main thread that was 62 of its 342 CPU-seconds on the 3.09M-sentence Wikipedia corpus, time in
which the graph and database waited on it; the reader processes had time to spare. The ids are exactly the
embedder's own (same vocabulary, same :meth:`WordTokenizer.encode`).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from engine.embed.static import load_tokenizer
from engine.embed.wordtok import WordTokenizer
from engine.ingest.extract import Extracted, extract
from engine.ingest.readers.base import Limits


@functools.cache
def _tokenizer(model: Path) -> WordTokenizer:
    return load_tokenizer(model)


class TokenisingReader:
    """:func:`engine.ingest.extract.extract`, plus the word ids of the sentences it found (``Extracted.words``).

    Sent to a reader process with each task, it carries only the model file's path; each process loads the
    tokenizer from it once. In the process that made it, it uses the embedder's own tokenizer.
    """

    def __init__(self, tokenizer: WordTokenizer, model: Path) -> None:
        self.model = model
        self._tokenizer: WordTokenizer | None = tokenizer

    def __getstate__(self) -> dict:
        return {"model": self.model}

    def __setstate__(self, state: dict) -> None:
        self.model, self._tokenizer = state["model"], None

    def __call__(self, path: str, limits: Limits, known_hash: str | None = None) -> Extracted:
        outcome = extract(path, limits, known_hash)
        if outcome.document is None:
            return outcome
        tokenizer = self._tokenizer or _tokenizer(self.model)
        return replace(outcome, words=tokenizer.encode([s.text for s in outcome.document.sentences]))
