"""The word space facets live in: the static model's vectors, unit length, with stop words, SIF weights and labels.

Facets always use the static model, whatever method ranks the index: it is small, always bundled, and its sentence
vectors are sums of these same word vectors, which is what makes word-level explanations exact.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from engine.embed.static import StaticEmbedder
from engine.embed.wordtok import FIRST_WORD_ID
from engine.facets.neighbours import COSINE_SCALE, Neighbours
from engine.text.terms import STOPWORDS, fold, words

log = logging.getLogger(__name__)

# The paper's stop list (Appendix C.1) beside the search stop words; contractions' tails ("s", "t") are in it.
PAPER_STOPWORDS = frozenset(
    """disambiguation etc t d ll s m ve a about above after again against all am an and any are aren as at be because
    been before being below between both but by can cannot could couldn did didn do does doesn doing don down during
    each few for from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
    into is isn it its itself let me more most mustn my myself no nor not of off on once only or other ought our ours
    ourselves out over own same she should shouldn so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was wasn we were weren what when where which while who
    whom why with won would wouldn you your yours yourself yourselves""".split()
)
FACET_STOPWORDS = PAPER_STOPWORDS | STOPWORDS
# SIF's alpha (Arora et al. 2017), the value the paper uses (Sec. 3.3).
SIF_ALPHA = 1e-4
# Labels come from this many of the most frequent content words: rarer words make odd labels, and the brute-force
# nearest-word search over them is most of an explanation's cost (docs/decisions/0048-facet-extraction-settings.md).
LABEL_VOCABULARY = 20_000
LABEL_WORDS = 3
# Labels of centres met before, kept by the centres' bytes: typing a query explains mostly the same results again at
# every step, and each new row costs its share of a (rows x LABEL_VOCABULARY) product (decision 0048).
LABEL_CACHE_ROWS = 4096
# Words whose nearest labels are one product when the model build makes its neighbour table.
NEIGHBOURS_BATCH = 2048


# An out-of-vocabulary word is read as its longest known prefix; where that holds less than this share of the word
# ("asasination" read as "asa", "lincon" as "lin") the word is not what the model read, and explanations do not say
# it matched anything; "doctorr" read as "doctor" still does (docs/decisions/0018-faithful-words-in-explanations.md).
FAITHFUL_PREFIX_SHARE = 0.75


@dataclass(frozen=True)
class Token:
    """One word of a text as the static model sees it: vocabulary id, display form and character span;
    ``faithful``: the model reads the word as itself, or as a known prefix holding most of it."""

    id: int
    text: str
    start: int
    end: int
    faithful: bool = True


class FacetSpace:
    """Unit word vectors, content-word mask, SIF weights and the label vocabulary of one static model.

    The model's vocabulary lists corpus words most frequent first (``engine.staticbuild.vocab``), followed by the
    teacher's word-pieces; frequencies are not stored, so p(w) for SIF is Zipf's law on the rank, and word-pieces
    count as the rarest words.
    """

    def __init__(self, embedder: StaticEmbedder) -> None:
        self.embedder = embedder
        self.tokenizer = embedder.tokenizer
        table = embedder.table
        norms = np.linalg.norm(table, axis=1, keepdims=True)
        self.unit = np.divide(table, norms, out=np.zeros_like(table), where=norms > 0)
        vocabulary = self.tokenizer.words
        frequent = int(embedder.model.meta.get("frequent_words", len(vocabulary)))
        frequent = min(frequent, len(vocabulary))
        size = self.tokenizer.size
        self.content = np.zeros(size, dtype=bool)
        self.content[FIRST_WORD_ID:] = [w not in FACET_STOPWORDS for w in vocabulary]
        self.content &= norms[:, 0] > 0
        rank = np.minimum(np.arange(size) - FIRST_WORD_ID, frequent).clip(0)
        zipf = 1.0 / ((rank + 1.0) * (math.log(max(frequent, 2)) + 0.5772))
        self.sif = (SIF_ALPHA / (SIF_ALPHA + zipf)).astype(np.float32) * self.content
        labelable = np.array([w.isalpha() and len(w) > 1 for w in vocabulary[:frequent]], dtype=bool)
        candidates = FIRST_WORD_ID + np.flatnonzero(labelable & self.content[FIRST_WORD_ID : FIRST_WORD_ID + frequent])
        self.label_ids = candidates[:LABEL_VOCABULARY]
        # (dim, vocabulary), float32 and C-contiguous, built once per process: the label search is then one BLAS
        # product with no per-call transpose or copy
        self.label_matrix = np.ascontiguousarray(self.unit[self.label_ids].T, dtype=np.float32)
        self._labelled: OrderedDict[tuple[int, bytes], list[tuple[str, float]]] = OrderedDict()
        self._labelled_lock = threading.Lock()  # the app explains on worker threads
        # each word's nearest labels, shipped with the model (engine.facets.neighbours)
        shipped = embedder.neighbours
        self._neighbours = Neighbours.load(shipped) if shipped is not None and shipped.exists() else None

    @property
    def neighbours(self) -> Neighbours | None:
        """The model's shipped neighbour table, if it has one that could be read."""
        return self._neighbours

    @property
    def dim(self) -> int:
        """Width of the word vectors."""
        return int(self.unit.shape[1])

    def word(self, token_id: int) -> str:
        """The vocabulary word of an id."""
        return self.tokenizer.words[token_id - FIRST_WORD_ID]

    def ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of texts exactly as the static embedder pools them: (flat ids, CSR offsets)."""
        return self.tokenizer.encode(texts)

    def tokens(self, text: str) -> list[Token]:
        """The words of one text with character spans, for highlighting; unknown and punctuation-only words skipped.

        The split is the search highlighter's (runs of letters and digits) and each word is folded and looked up as the static
        tokenizer would, so the ids match what the embedder pooled for ordinary text.
        """
        out = []
        for word, start, end in words(text):
            token_id, faithful = self.read_as(fold(word))
            if token_id >= FIRST_WORD_ID:
                out.append(Token(token_id, word, start, end, faithful))
        return out

    def read_as(self, folded: str) -> tuple[int, bool]:
        """The id the model reads a folded word as (below FIRST_WORD_ID: none), and whether that is the word itself
        rather than a much shorter known prefix of it ("asasination" read as "asa"; decision 0018)."""
        token_id = self.tokenizer.id_of(folded)
        if token_id < FIRST_WORD_ID:
            return token_id, False
        read = self.word(token_id)
        return token_id, read == folded or len(read) >= FAITHFUL_PREFIX_SHARE * len(folded)

    def labels(self, centres: np.ndarray, top: int = LABEL_WORDS) -> list[list[tuple[str, float]]]:
        """Nearest label words (word, cosine) of each centre row, best first: how the paper shows facets (Table 1).

        Callers pass every centre of a search at once (query and results): the cost is one matrix product over the
        label vocabulary for the rows not labelled before, so one call with many rows is far cheaper than many calls
        with few.
        """
        if centres.shape[0] == 0 or self.label_ids.size == 0:
            return [[] for _ in range(centres.shape[0])]
        centres = np.ascontiguousarray(centres, dtype=np.float32)
        keys = [(top, row.tobytes()) for row in centres]
        with self._labelled_lock:
            out = [self._labelled.get(key) for key in keys]
            for key, found in zip(keys, out):
                if found is not None:
                    self._labelled.move_to_end(key)
        new = [i for i, found in enumerate(out) if found is None]
        if new:
            fresh = self._nearest_labels(centres[new], top)
            with self._labelled_lock:
                for i, words in zip(new, fresh):
                    out[i] = self._labelled[keys[i]] = words
                while len(self._labelled) > LABEL_CACHE_ROWS:
                    self._labelled.popitem(last=False)
        return cast(list[list[tuple[str, float]]], out)  # every row is filled now

    def near(self, word_ids: Sequence[int], top: int, floor: float) -> list[list[tuple[str, float]]]:
        """The label words nearest each of ``word_ids`` (word, cosine), best first: at most ``top``, none below
        ``floor``. Read from the model's shipped table where it has one that covers the request
        (engine.facets.neighbours), else found by :meth:`labels` (and cached with its rows)."""
        table = self.neighbours
        if table is not None and table.covers(self.embedder.fingerprint, LABEL_VOCABULARY, top, floor):
            return [[(self.word(w), c) for w, c in table.of(i, top, floor)] for i in word_ids]
        rows = self.labels(self.unit[np.asarray(word_ids, dtype=np.int64)], top)
        return [[(w, c) for w, c in row if c >= floor] for row in rows]

    def neighbour_table(self, top: int, floor: float) -> Neighbours:
        """Every content word's :meth:`near` words, for the model build to ship (engine.facets.neighbours)."""
        counts = np.zeros(self.content.size, dtype=np.int64)
        found, cosines = [], []
        ids = np.flatnonzero(self.content)
        for start in range(0, ids.size, NEIGHBOURS_BATCH):
            batch = ids[start : start + NEIGHBOURS_BATCH]
            best, scores = self._nearest_label_ids(self.unit[batch], top)
            # kept as the label search rounds them, and compared with ``floor`` as rounded
            scaled = np.rint(scores.astype(np.float64) * COSINE_SCALE)
            keep = scaled >= round(floor * COSINE_SCALE)
            counts[batch] = keep.sum(axis=1)
            found.append(best[keep])
            cosines.append(scaled[keep])
        offsets = np.zeros(self.content.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Neighbours(self.embedder.fingerprint, LABEL_VOCABULARY, top, floor, offsets.astype(np.int32),
                          np.concatenate(found).astype(np.int32), np.concatenate(cosines).astype(np.uint16))

    def _nearest_labels(self, centres: np.ndarray, top: int) -> list[list[tuple[str, float]]]:
        """:meth:`labels` of float32 rows, computed."""
        best, scores = self._nearest_label_ids(centres, top)
        words = self.tokenizer.words
        return [[(words[i - FIRST_WORD_ID], round(s, 4)) for i, s in zip(row_ids, row_scores)]
                for row_ids, row_scores in zip(best.tolist(), scores.tolist())]

    def _nearest_label_ids(self, centres: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
        """(word ids, cosines) of the ``top`` label words nearest each row, best first."""
        norms = np.linalg.norm(centres, axis=1, keepdims=True)
        unit = np.divide(centres, norms, out=np.zeros_like(centres), where=norms > 0)
        sims = unit @ self.label_matrix
        top = min(top, sims.shape[1])
        best = np.argpartition(sims, -top, axis=1)[:, -top:]
        scores = np.take_along_axis(sims, best, axis=1)
        order = np.argsort(-scores, axis=1, kind="stable")
        best, scores = np.take_along_axis(best, order, axis=1), np.take_along_axis(scores, order, axis=1)
        return self.label_ids[best], scores
