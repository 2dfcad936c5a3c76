"""Static word embeddings (Wada et al., 2025): a sentence is the normalised sum of its words' vectors.

Pure numpy plus ``tokenizers``, so the default search path never imports torch. The model file is produced by
``python -m engine.staticbuild`` (see that package); its layout is described in :func:`save_model`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.embed.base import normalise_rows
from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer
from engine.errors import MethodUnavailableError

log = logging.getLogger(__name__)

# Texts pooled per numpy pass: bounds the temporary (tokens x dim) gather to a few tens of MB.
_CHUNK = 2048
# The file beside a model file that holds its words' nearest label words (engine.staticbuild.neighbours writes it).
NEIGHBOURS_FILE = "neighbours.npz"


@dataclass(frozen=True)
class StaticModel:
    """Vocabulary, teacher word-pieces and the (vocabulary x dim) float32 matrix, plus build metadata."""

    words: list[str]
    wordpieces: list[str]
    vectors: np.ndarray
    meta: dict


def _pack_strings(items: Sequence[str]) -> np.ndarray:
    return np.frombuffer("\n".join(items).encode("utf-8"), dtype=np.uint8)


def _unpack_strings(packed: np.ndarray) -> list[str]:
    text = packed.tobytes().decode("utf-8")
    return text.split("\n") if text else []


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows with one float32 scale per row: 4x smaller than float32, cosine error about 1e-4."""
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales.astype(np.float32)


def save_model(path: Path, model: StaticModel) -> None:
    """Write one uncompressed ``.npz``: words and word-pieces as newline-joined UTF-8, int8 vectors, row scales, meta."""
    q, scales = quantise(model.vectors)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        words=_pack_strings(model.words),
        wordpieces=_pack_strings(model.wordpieces),
        vectors=q,
        scales=scales,
        meta=np.frombuffer(json.dumps(model.meta).encode("utf-8"), dtype=np.uint8),
    )
    tmp.replace(path)


def _check_model_file(path: Path) -> None:
    if not path.is_file():
        raise MethodUnavailableError(
            f"static model file {path} is missing; build it with `python -m engine.staticbuild` or reinstall quire"
        )


def load_model(path: Path) -> StaticModel:
    """Read a model written by :func:`save_model`, dequantising to float32."""
    _check_model_file(path)
    with np.load(path) as data:
        vectors = data["vectors"].astype(np.float32)
        vectors *= data["scales"][:, None]  # in place: a second float32 copy raises loading's peak (decision 0049)
        return StaticModel(
            words=_unpack_strings(data["words"]),
            wordpieces=_unpack_strings(data["wordpieces"]),
            vectors=vectors,
            meta=json.loads(data["meta"].tobytes().decode("utf-8")),
        )


def load_tokenizer(path: Path) -> WordTokenizer:
    """The tokenizer of a model file alone, its vectors left unread: a reader process only splits words, and
    dequantising the vectors would cost it CPU and memory (docs/decisions/0049-static-vectors-from-the-text.md)."""
    _check_model_file(path)
    with np.load(path) as data:
        return WordTokenizer(_unpack_strings(data["words"]), _unpack_strings(data["wordpieces"]))


def pool(table: np.ndarray, flat: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum the rows ``table[flat]`` per text (CSR ``offsets``); texts with no words get a zero row."""
    n = offsets.size - 1
    out = np.zeros((n, table.shape[1]), dtype=np.float32)
    lengths = np.diff(offsets)
    # Texts of one length are summed together as a (texts, length, dim) gather, much faster than np.add.reduceat
    # over the rows; a batch has only a hundred or so distinct lengths
    # (docs/decisions/0049-static-vectors-from-the-text.md).
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    bounds = np.flatnonzero(np.diff(sorted_lengths)) + 1
    for group in np.split(order, bounds):
        length = int(lengths[group[0]]) if group.size else 0
        if length:
            out[group] = table[flat[offsets[group, None] + np.arange(length)]].sum(axis=1)
    return out


class StaticEmbedder:
    """The default embedder: averaged static word vectors, L2-normalised (paper Sec. 3 and 4.1)."""

    name = "static"

    def __init__(self, model: StaticModel, *, path: Path | None = None, neighbours: Path | None = None) -> None:
        self.tokenizer = WordTokenizer(model.words, model.wordpieces)
        # Rows 0 and 1 (unknown, punctuation) are never pooled; they are zero so the table aligns with token ids.
        self.table = np.zeros((self.tokenizer.size, model.vectors.shape[1]), dtype=np.float32)
        self.table[FIRST_WORD_ID:] = model.vectors
        # the model's matrix becomes a view of the table, so one copy of the vectors stays in memory, and the digest
        # reads the table's own buffer: every indexing reader process loads this model
        self.model = replace(model, vectors=self.table[FIRST_WORD_ID:])
        digest = hashlib.sha256(self.table.data)  # the array's buffer, as memoryview(table) (numpy's stubs lack it)
        digest.update("\n".join(model.words).encode("utf-8"))
        self.fingerprint = f"static-{digest.hexdigest()[:16]}"
        self.path = path
        # the model's table of each word's nearest label words, where the build made one (engine.facets.neighbours)
        self.neighbours = neighbours

    @classmethod
    def from_file(cls, path: Path, neighbours: Path | None = None) -> StaticEmbedder:
        """Load a model file (see :func:`load_model`), with its neighbour table at ``neighbours`` (None: the file
        NEIGHBOURS_FILE beside it)."""
        return cls(load_model(path), path=path, neighbours=neighbours or path.with_name(NEIGHBOURS_FILE))

    @property
    def dim(self) -> int:
        """Embedding width."""
        return int(self.table.shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 rows, L2-normalised; a text with no known word is a zero row."""
        return self.embed_ids(*self.tokenizer.encode(list(texts)))

    def embed_ids(self, flat: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """:meth:`encode` of texts already tokenised by ``self.tokenizer.encode`` (CSR word ids).

        Indexing tokenises each batch once and hands the same ids to the facets (``engine.facets``), which cluster
        exactly the words pooled here.
        """
        n = offsets.size - 1
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            lo, hi = offsets[start], offsets[stop]
            out[start:stop] = pool(self.table, flat[lo:hi], offsets[start : stop + 1] - lo)
        return normalise_rows(out)

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """Rows for already-normalised vocabulary words (zero rows for unknown ones); used by facets and explanations."""
        ids = [self.tokenizer.word_id(w) or 0 for w in words]
        return self.table[np.asarray(ids, dtype=np.int64)]
