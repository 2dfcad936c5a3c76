"""Each vocabulary word's nearest label words, computed once for a model and shipped beside it.

Hybrid search asks for the nearest words of a query's key words (engine.search.related). Found at query time, each
new word costs one row of a (words x LABEL_VOCABULARY) product over 20 MB of label vectors: about 3.8 ms of a
whole-corpus query's lexical side for a query of new words, where the rest of that side takes 4 ms. The answer depends
on the model alone, so the model build writes it for every word (17 s on a 2-core machine) and a query reads it
(docs/decisions/0020-shipped-word-neighbours.md).

The table keeps, for each word, its ``top`` nearest label words whose cosine is at least ``floor``, as the space's
label search finds and rounds them; a caller asking for no more than ``top`` words at no less than ``floor`` gets
exactly what the search would have given. A table made for another model, or another label vocabulary, is not used.
"""

from __future__ import annotations

import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# Cosines are stored in ten-thousandths: the label search rounds them to four decimals.
COSINE_SCALE = 10_000


@dataclass(frozen=True)
class Neighbours:
    """Nearest label words of every word id of one model: the ids ``words[offsets[i]:offsets[i + 1]]`` of word id
    ``i``'s, best first, with their cosines; at most ``top`` of them, none below ``floor``."""

    fingerprint: str
    label_vocabulary: int
    top: int
    floor: float
    offsets: np.ndarray
    words: np.ndarray
    cosines: np.ndarray

    def covers(self, fingerprint: str, label_vocabulary: int, top: int, floor: float) -> bool:
        """Whether this table answers a search for ``top`` words at ``floor`` or more in that model's labels."""
        return (fingerprint == self.fingerprint and label_vocabulary == self.label_vocabulary and top <= self.top
                and floor >= self.floor)

    def of(self, word_id: int, top: int, floor: float) -> list[tuple[int, float]]:
        """(label word id, cosine) of one word's nearest, best first: at most ``top``, none below ``floor``."""
        start, end = int(self.offsets[word_id]), int(self.offsets[word_id + 1])
        found = zip(self.words[start:end].tolist(), (self.cosines[start:end] / COSINE_SCALE).tolist())
        return [(w, round(c, 4)) for w, c in found if c >= floor][:top]

    def save(self, path: Path) -> None:
        """Write the table (compressed: most of it is small integers)."""
        with path.open("wb") as f:
            np.savez_compressed(f, fingerprint=np.array(self.fingerprint), label_vocabulary=self.label_vocabulary,
                                top=self.top, floor=self.floor, offsets=self.offsets, words=self.words,
                                cosines=self.cosines)

    @classmethod
    def load(cls, path: Path) -> Neighbours | None:
        """The table at ``path``; None (and a warning: queries find the words themselves) when it is damaged."""
        try:
            with np.load(path) as data:
                table = cls(str(data["fingerprint"]), int(data["label_vocabulary"]), int(data["top"]),
                            float(data["floor"]), data["offsets"].astype(np.int64), data["words"].astype(np.int64),
                            data["cosines"].astype(np.float64))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            log.warning("ignoring the word neighbours in %s, which cannot be read (%s)", path, e)
            return None
        if table.offsets.size < 2 or table.offsets[-1] != table.words.size or table.words.size != table.cosines.size:
            log.warning("ignoring the word neighbours in %s, whose arrays do not agree", path)
            return None
        return table
