"""The second look: the best documents of the first ranking read again by a sentence transformer (all-MiniLM-L6-v2
through ONNX Runtime, ``engine.embed.onnx``), which knows what a paraphrase means where the static word vectors only
know the words (docs/decisions/0039-second-look.md).

For each of the first ``DOCUMENTS`` documents it compares the query with two texts: the document's opening (its title
and first sentences, what the document is about) and the sentence it is shown by (what it says to the query). The
opening re-orders the ranking; both cosines, with the first ranking's evidence, make its confidence
(``engine.search.features``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed import onnx
from engine.search.passages import ChosenPassage
from engine.store.database import Store
from engine.store.openings import Openings, stored_precision

log = logging.getLogger(__name__)

# Documents of the first ranking read again: the re-ordering reaches its gain by 20 on the classic collections, and
# 20 documents' two texts take a query's time budget on two cores (docs/decisions/0039-second-look.md).
DOCUMENTS = 20
# An opening is cut here: a title and a sentence or two say what a document is about, and each token costs.
OPENING_TOKENS = 64
# Sentences read for an opening; the cut above ends it.
OPENING_SENTENCES = 4
# Characters of a shown sentence passed on; the model reads 128 tokens of it at most.
SENTENCE_CHARS = 1000


@dataclass(frozen=True)
class Look:
    """The sentence model's cosines of the query with one document's ``opening`` and with its shown ``sentence``."""

    opening: float
    sentence: float

    @property
    def best(self) -> float:
        """The higher of the two."""
        return max(self.opening, self.sentence)


class SecondLook:
    """Reads documents of one index again with the sentence model (loaded on first use, once per process)."""

    def __init__(self, store: Store, model: Callable[[], onnx.OnnxSentenceModel] = onnx.bundled) -> None:
        self.store, self._model = store, model

    def look(self, query: str, passages: Sequence[ChosenPassage]) -> list[Look]:
        """The cosines of ``query`` with each of ``passages``' document opening and shown sentence, in order."""
        if not passages:
            return []
        model = self._model()
        q = model.encode([query])[0]
        opened = self._opening_vectors(model, passages) @ q
        said = model.encode([p.best.text[:SENTENCE_CHARS] for p in passages]) @ q
        return [Look(float(o), float(s)) for o, s in zip(np.clip(opened, -1, 1), np.clip(said, -1, 1))]

    def _opening_vectors(self, model: onnx.OnnxSentenceModel, passages: Sequence[ChosenPassage]) -> np.ndarray:
        """The passages' documents' opening vectors: those the indexer stored, the others read now."""
        stored = Openings(self.store.db.conn, reader()).vectors([p.record.id for p in passages])
        todo = [p for p in passages if p.record.id not in stored]
        if todo:
            fresh = encode_openings(model, [self.opening(p) for p in todo])
            stored.update((p.record.id, v) for p, v in zip(todo, fresh))
        return np.vstack([stored[p.record.id] for p in passages])

    def opening(self, passage: ChosenPassage) -> str:
        """A document's title and first sentences (:func:`opening_text`)."""
        first = [row.text for row in self.store.sentences.neighbours(passage.record.id, 0, OPENING_SENTENCES - 1)]
        return opening_text(passage.record.title or "", first) or passage.best.text


def opening_text(title: str, first: Sequence[str]) -> str:
    """A document's opening: its title and first sentences, the title left out where the first sentence is it."""
    title = title.strip()
    head = [] if not title or (first and first[0].strip() == title) else [title]
    return "\n".join([*head, *first])


def encode_openings(model: onnx.OnnxSentenceModel, texts: Sequence[str]) -> np.ndarray:
    """Openings' vectors, at the precision they are stored at, so that one read now scores as a stored one."""
    return stored_precision(model.encode(texts, max_tokens=OPENING_TOKENS))


def reader() -> str:
    """What an opening's vector depends on beside its text: the model's build and the cut."""
    return f"{onnx.identity()}:{OPENING_TOKENS}:{OPENING_SENTENCES}"
