"""Words for static embeddings, tokenised the way Wada et al. (2025) do at inference (Sec. 4.1).

The text is split with BERT's pre-tokeniser (whitespace and punctuation), punctuation is dropped, and each word is
looked up in the vocabulary. The authors look a word up as written, then lowercased; the teacher here
(all-MiniLM-L6-v2) is uncased, so the vocabulary holds lowercased, accent-stripped forms and both lookups collapse into
the teacher's own normaliser. A word that is not in the vocabulary is cut into the teacher's word-pieces and its
trailing pieces are dropped until the remaining prefix is a vocabulary word ("tokeniser" -> token ##ise ##r ->
"tokenise" -> "token"); a word with no such prefix is skipped.

Two implementations of the same steps. :meth:`WordTokenizer.encode_raw` runs the teacher's own normaliser and
pre-tokeniser (``tokenizers``), which the build pipeline needs to align teacher vectors with words. :meth:`encode`, the
indexing and query path, maps each character once through the same two steps and then runs on a cached
``str.translate`` table and ``str.split``: the Rust normaliser and pre-tokeniser cost some 250 µs per sentence through
their Python binding, the table about a tenth of that, and the tests check that both give the same ids.
Out-of-vocabulary words are resolved once each, then cached too.
"""

from __future__ import annotations

import itertools
import string
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

UNK = "[UNK]"
# Ids below FIRST_WORD_ID are not words: 0 = unknown (resolved by fall-back), 1 = punctuation (dropped).
UNK_ID = 0
PUNCT_ID = 1
FIRST_WORD_ID = 2
# Out-of-vocabulary words remembered across calls; the memory is cleared when it holds this many.
_OOV_CACHE_LIMIT = 200_000


def is_punctuation(token: str) -> bool:
    """True for tokens BERT's pre-tokeniser treats as punctuation (Unicode P* and the ASCII symbols)."""
    return all(ch in string.punctuation or unicodedata.category(ch).startswith("P") for ch in token)


def normaliser() -> normalizers.Normalizer:
    """The teacher's normaliser: clean control characters, lowercase, strip accents, space out CJK characters."""
    return normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)


_NORMALISER = normaliser()
_SPLITTER = pre_tokenizers.BertPreTokenizer()


def _fold_char(ch: str) -> str:
    """One character as :meth:`WordTokenizer.encode` sees it: its normalised form, or a space where the pre-tokeniser
    splits (whitespace, and punctuation, which is dropped: no vocabulary word is punctuation).

    Asking ``tokenizers`` itself, once per distinct character, keeps its exact Unicode tables (which are older than
    Python's): the two paths can then differ only where NFD reorders combining marks across characters. A single
    space for punctuation, rather than the punctuation token between spaces, keeps ASCII text on ``str.translate``'s
    fast path (one ASCII character in, one out): translating 100,000 Wikipedia sentences took 0.61 s instead of
    1.06 s.
    """
    out = []
    for c in _NORMALISER.normalize_str(ch):
        pieces = _SPLITTER.pre_tokenize_str(f"a{c}a")  # one piece: part of a word; two: whitespace; three: punctuation
        out.append(c if len(pieces) == 1 else " ")
    return "".join(out)


class _CharTable(dict):
    """``str.translate`` table of :func:`_fold_char`, filled as characters are first seen (a text uses few)."""

    def __missing__(self, code: int) -> str:
        value = self[code] = _fold_char(chr(code))
        return value


# Shared by every tokenizer: it depends on the normaliser only, not on a vocabulary.
_CHARS = _CharTable()


class _IdTable(dict):
    """Pre-token -> id with out-of-vocabulary words resolved on first sight; the vocabulary is its starting content."""

    def __init__(self, vocab: dict[str, int], resolve: Callable[[str], int]) -> None:
        super().__init__(vocab)
        self._vocab, self._resolve = vocab, resolve

    def __missing__(self, token: str) -> int:
        if len(self) > len(self._vocab) + _OOV_CACHE_LIMIT:
            self.clear()
            self.update(self._vocab)
        value = self[token] = self._resolve(token)
        return value


class WordTokenizer:
    """Maps texts to vocabulary ids, in CSR layout for vectorised pooling.

    Parameters:
        words: the vocabulary, normalised (lowercase, no accents); word ``i`` gets id ``i + FIRST_WORD_ID``.
        wordpieces: the teacher's WordPiece vocabulary, used only to shorten out-of-vocabulary words.
    """

    def __init__(self, words: Sequence[str], wordpieces: Sequence[str]) -> None:
        self.words = list(words)
        vocab = {UNK: UNK_ID}
        for ch in string.punctuation:
            vocab[ch] = PUNCT_ID
        for i, word in enumerate(self.words):
            vocab[word] = i + FIRST_WORD_ID
        self._tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        self._tokenizer.normalizer = normaliser()
        self._tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        self._vocab = vocab
        self._wordpiece = models.WordPiece(
            vocab={piece: i for i, piece in enumerate(wordpieces)}, unk_token=UNK, max_input_chars_per_word=100
        )
        self._ids = _IdTable(vocab, self.resolve_oov)

    @property
    def size(self) -> int:
        """Number of ids, the non-word ones included (rows of an embedding matrix indexed by these ids)."""
        return len(self.words) + FIRST_WORD_ID

    def word_id(self, word: str) -> int | None:
        """Id of an already normalised word, or None."""
        found = self._vocab.get(word)
        return found if found is not None and found >= FIRST_WORD_ID else None

    def resolve_oov(self, word: str) -> int:
        """Id for a normalised out-of-vocabulary word: longest word-piece prefix in the vocabulary, else PUNCT_ID."""
        if not is_punctuation(word):
            pieces = [tok.value for tok in self._wordpiece.tokenize(word)]
            for keep in range(len(pieces) - 1, 0, -1):
                prefix = pieces[0] + "".join(p[2:] if p.startswith("##") else p for p in pieces[1:keep])
                found = self.word_id(prefix)
                if found is not None:
                    return found
        return PUNCT_ID

    def id_of(self, word: str) -> int:
        """The id :meth:`encode` gives a normalised pre-token: a word id, or PUNCT_ID when it has none (cached)."""
        return self._ids[word]

    def encode_raw(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every pre-token (UNK_ID and PUNCT_ID included), as (flat ids, per-text start offsets).

        Pre-token ``j`` of a text is word ``j`` of the teacher's tokeniser (same normaliser and pre-tokeniser), which
        is what lets the build pipeline align teacher vectors with vocabulary words.
        """
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        id_lists = [enc.ids for enc in encodings]
        lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
        offsets = np.zeros(len(id_lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=int(offsets[-1]))
        return flat, offsets

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of each text with out-of-vocabulary words resolved and punctuation dropped.

        Returns (flat ids, offsets): text ``i`` owns ``flat[offsets[i]:offsets[i + 1]]``; every id is a word id.
        """
        tokens = [text.translate(_CHARS).split() for text in texts]
        offsets = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)), out=offsets[1:])
        flat = np.fromiter(
            map(self._ids.__getitem__, itertools.chain.from_iterable(tokens)), dtype=np.int64, count=int(offsets[-1])
        )
        keep = flat >= FIRST_WORD_ID
        if keep.all():
            return flat, offsets
        kept_before = np.zeros(flat.size + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        return flat[keep], kept_before[offsets]

    def pre_tokens(self, text: str) -> list[str]:
        """The normalised pre-tokens (words and punctuation) of one text."""
        normalised = self._tokenizer.normalizer.normalize_str(text)
        return [tok for tok, _ in self._tokenizer.pre_tokenizer.pre_tokenize_str(normalised)]
