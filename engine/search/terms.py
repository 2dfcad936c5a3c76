"""Query words for lexical search and highlighting, processed the way the FTS5 index processes text.

The index uses FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer; here the same steps run in Python (Unicode
word split, lowercase, diacritics folded, Porter stem) so that matched terms can be named and highlighted in a
passage, which FTS5 cannot do for a contentless table.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import Stemmer

# unicode61 splits at everything but letters and digits, the underscore included, and keeps combining marks in the
# word (remove_diacritics then drops them: a separately typed "nai\u0308ve" is "naive"); these are the blocks of
# combining diacritics, which Python's \w leaves out
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_LETTER = rf"(?:[^\W_]|[{_MARKS}])"
_MARK = re.compile(f"[{_MARKS}]")
# words of text with combining marks, and (twice as fast) of text without
_WORD = re.compile(rf"(?:[^\W_]+|[{_MARKS}]+)+")
_PLAIN_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]+)"')
# PyStemmer's objects are not thread-safe (the app searches on worker threads while the indexer runs): one per thread.
_STEMMERS = threading.local()
# ASCII bytes that :data:`_WORD` matches.
_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[[ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"]] = True
# Where a text's non-ASCII letters and digits stand when :func:`stem_counts` scans it as ASCII bytes.
_STAND_IN = 0x01
_ASCII_WORD[_STAND_IN] = True
# Ends each text :func:`_ascii_bytes` joins: ASCII, so folding keeps it, and not a word character.
_JOIN = "\x00"
_SEPARATOR = ord(_JOIN)
# What :func:`_ascii_bytes` turns each code point into (a byte, or -1: dropped; :func:`_fold_point`), filled in as
# characters are met.
_UNSEEN = -2
_FOLDED = np.full(0x110000, _UNSEEN, dtype=np.int16)
_FOLDED[:0x80] = np.arange(0x80)
# ASCII bytes lowercased, by table.
_LOWERCASE = np.arange(0x80, dtype=np.uint8)
_LOWERCASE[ord("A") : ord("Z") + 1] += ord("a") - ord("A")
# Bytes of a word's start that :func:`_starting_with` packs into one integer.
_KEY_BYTES = 8
# FTS5's porter tokenizer leaves tokens shorter or longer than this (in UTF-8 bytes) unstemmed (fts5_tokenize.c)
_PORTER_MIN_BYTES, _PORTER_MAX_BYTES = 3, 64

# Function words that carry no topic: dropped from lexical queries (BM25 gives them almost no weight anyway, but
# their posting lists are the longest in the index and slow every query down).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves also may might must shall upon whether
    us per via s t ll re ve""".split()  # the last five: what is left of "it's", "don't", "we'll", "they're", "I've"
)


@dataclass(frozen=True)
class Term:
    """A query word: as typed, and as the index stores it (folded, stemmed)."""

    word: str
    stem: str


def fold(word: str) -> str:
    """Lowercase and strip diacritics, as ``remove_diacritics 2`` does (canonical decomposition only: FTS5 keeps
    ligatures such as "ﬁ" as they are)."""
    if word.isascii():  # nothing to decompose: the common case costs one C call instead of a per-character loop
        return word.lower()
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The index form of one word."""
    folded = fold(word)
    if not _PORTER_MIN_BYTES <= len(folded.encode()) <= _PORTER_MAX_BYTES:
        return folded
    stemmer = getattr(_STEMMERS, "porter", None)
    if stemmer is None:
        stemmer = _STEMMERS.porter = Stemmer.Stemmer("porter")
    return stemmer.stemWord(folded)


def words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every word of ``text``."""
    pattern = _PLAIN_WORD if text.isascii() or not _MARK.search(text) else _WORD
    return [(m.group(), m.start(), m.end()) for m in pattern.finditer(text)]


def query_terms(text: str) -> list[Term]:
    """Distinct content words of a query, in order; stop words are dropped unless nothing else is left."""
    seen: dict[str, Term] = {}
    stopped: dict[str, Term] = {}
    for word, _, _ in words(text):
        target = stopped if fold(word) in STOPWORDS else seen
        target.setdefault(stem(word), Term(word, stem(word)))
    return list((seen or stopped).values())


def split_phrases(text: str) -> tuple[list[str], str]:
    """A query's quoted phrases (as typed, two words or more) and the rest of it; a quoted single word is an
    ordinary word of the rest."""
    phrases: list[str] = []

    def take(match: re.Match) -> str:
        quoted = match.group(1)
        if len(words(quoted)) > 1:
            phrases.append(quoted)
            return " "
        return f" {quoted} "

    rest = _PHRASE.sub(take, text)
    return phrases, rest


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: quoted phrases stay phrases, other content words are OR-ed (BM25 ranks them)."""
    phrases, rest = split_phrases(text)
    return fts_expression(phrases, query_terms(rest))


def fts_expression(phrases: Sequence[str], terms: Sequence[Term], operator: str = "OR") -> str | None:
    """``phrases`` as FTS5 phrases and ``terms`` as words, joined by ``operator``; None when there are none.

    Every word is quoted, so nothing a user types can be read as FTS5 syntax.
    """
    parts = ['"' + " ".join(w for w, _, _ in words(p)) + '"' for p in phrases] + [f'"{t.word}"' for t in terms]
    return f" {operator} ".join(parts) if parts else None


def _prefix(stem_: str) -> str:
    """What every word stemming to ``stem_`` starts with (folded).

    Porter keeps a word's start and rewrites at most the last three letters of what remains ("happy" -> "happi",
    "ability" -> "abil"; checked on the 110k distinct words of the enwiki sample and the static vocabulary).
    """
    return stem_[: max(1, len(stem_) - 3)]


@lru_cache(maxsize=256)
def _candidates(stems: frozenset[str], ascii_text: bool) -> re.Pattern | None:
    """Words that may stem to one of ``stems``, so that the regex engine skips every other word without Python.

    For lowercased ASCII text that is a word starting with a stem's :func:`_prefix`; otherwise also any case of it,
    and any word with a non-ASCII letter (whose folded form only :func:`fold` can tell). None: no stem to look for.
    """
    prefixes = {_prefix(s) for s in stems if s}
    if not prefixes:
        return None
    letter = r"[^\W_]" if ascii_text else _LETTER
    alternatives = [f"(?:{'|'.join(map(re.escape, sorted(prefixes, key=len, reverse=True)))}){letter}*"]
    start = r"(?<![^\W_])"  # a word starts where no letter or digit precedes (``\b`` would count the underscore)
    if not ascii_text:
        alternatives.append(rf"{letter}*(?:[^\W\x00-\x7f]|[{_MARKS}]){letter}*")
        start += rf"(?<![{_MARKS}])"  # nor a combining mark
    return re.compile(start + "(?:" + "|".join(alternatives) + ")", 0 if ascii_text else re.IGNORECASE)


def matches(text: str, stems: set[str] | frozenset[str]) -> list[tuple[int, int, str]]:
    """(start, end, stem) of the words of ``text`` whose stem is in ``stems``: what to highlight."""
    # the (pure Python) stemmer runs only on words that start like a query stem: it dominated query time otherwise
    ascii_text = text.isascii()  # then lowercasing keeps every offset, and a case-sensitive scan is faster
    pattern = _candidates(frozenset(stems), ascii_text)  # a frozenset argument is reused as is: pass one per query
    if pattern is None:
        return []
    out = []
    for m in pattern.finditer(text.lower() if ascii_text else text):
        found = stem(m.group())
        if found and found in stems:
            out.append((m.start(), m.end(), found))
    return out


def stems_found(texts: Sequence[str], stems: frozenset[str]) -> list[set[str]]:
    """For each text, the stems of ``stems`` that its words have: what :func:`matches` finds, without the spans.

    Ranking asks this of every candidate sentence of a query (hundreds), where the regex scan of :func:`matches`
    took most of the query's time.
    """
    return [set(counts) for counts in stem_counts(texts, stems)]


def stem_counts(texts: Sequence[str], stems: frozenset[str]) -> list[dict[str, int]]:
    """For each text, how often each stem of ``stems`` occurs in it: BM25's term frequencies, counted as FTS5 does.

    The texts are scanned together with numpy, as ASCII bytes (:func:`_ascii_bytes`): word boundaries come from a
    byte table, and a word is stemmed only when it starts with the :func:`_prefix` of a stem, as in
    :func:`matches`. When a stem is not ASCII, texts that are not go through :func:`matches` instead.
    """
    out: list[dict[str, int]] = [{} for _ in texts]
    prefixes = sorted({_prefix(s).encode() for s in stems if s})
    if not prefixes:
        return out
    foldable = all(s.isascii() for s in stems)
    plain: list[int] = []
    for i, text in enumerate(texts):
        if foldable or text.isascii():
            plain.append(i)
            continue
        for _, _, found in matches(text, stems):
            out[i][found] = out[i].get(found, 0) + 1
    if not plain:
        return out
    data = _ascii_bytes([texts[i] for i in plain])
    word = np.concatenate(([False], _ASCII_WORD[data], [False]))
    # words are the runs of word bytes: their edges alternate start, end
    edges = np.flatnonzero(word[1:] != word[:-1])
    starts, ends = edges[0::2], edges[1::2]
    candidate = _starting_with(data, starts, ends - starts, prefixes)
    starts, ends = starts[candidate], ends[candidate]
    owners = np.searchsorted(np.flatnonzero(data == _SEPARATOR), starts)
    lowered = data.tobytes().decode("ascii")
    for start, end, owner in zip(starts.tolist(), ends.tolist(), owners.tolist()):
        found = stem(lowered[start:end])
        if found in stems:
            counts = out[plain[owner]]
            counts[found] = counts.get(found, 0) + 1
    return out


def _starting_with(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, prefixes: list[bytes]) -> np.ndarray:
    """Which words (``starts``, ``lengths`` into ``data``) start with one of ``prefixes``.

    Words whose first byte begins no prefix are dropped first (one gather); the others' first eight bytes are read
    as a big-endian integer, so a prefix test is one shift and compare rather than a gather per letter. A prefix
    longer than eight bytes is tested on its first eight (the caller stems every candidate, which settles it).
    """
    out = np.zeros(starts.size, dtype=bool)
    near = np.flatnonzero(np.isin(data[starts], np.frombuffer(b"".join(p[:1] for p in prefixes), np.uint8)))
    padded = np.concatenate([data, np.zeros(_KEY_BYTES, np.uint8)])
    keys = np.ascontiguousarray(padded[starts[near, None] + np.arange(_KEY_BYTES)]).view(">u8").ravel()
    for prefix in prefixes:
        head = prefix[:_KEY_BYTES]
        shift = np.uint64(8 * (_KEY_BYTES - len(head)))
        # bytes past the word's end (a separator, the next word) are shifted out: only its first len(head) stay
        hit = (lengths[near] >= len(prefix)) & ((keys >> shift) == np.uint64(int.from_bytes(head, "big")))
        out[near[hit]] = True
    return out


def _ascii_bytes(texts: list[str]) -> np.ndarray:
    """``texts`` lowercased as ASCII bytes, each ended by :data:`_SEPARATOR`: diacritics removed as ``remove_diacritics
    2`` removes them (canonical decomposition, combining marks dropped), other non-ASCII letters and digits replaced
    by a stand-in word byte, and other non-ASCII characters by spaces. Words split where FTS5 splits them, and a word
    with a non-ASCII letter, which can never stem to an ASCII stem, still never does.

    Done on code points with numpy, character by character rather than by normalising whole texts: each
    non-ASCII character is looked at in Python once (:data:`_FOLDED`).
    """
    joined = _JOIN.join(texts) + _JOIN
    if joined.count(_JOIN) != len(texts):  # a text holds the separator: as a non-word character it is a space
        joined = _JOIN.join(t.replace(_JOIN, " ") for t in texts) + _JOIN
    if joined.isascii():
        return np.frombuffer(joined.lower().encode("ascii"), dtype=np.uint8)
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    wide = np.flatnonzero(points >= 0x80)
    folded = _folded(points[wide])
    mapped = points.astype(np.int16)
    mapped[wide] = folded
    if (folded < 0).any():
        mapped = mapped[mapped >= 0]
    return _LOWERCASE[mapped]


def _folded(points: np.ndarray) -> np.ndarray:
    """:data:`_FOLDED` of non-ASCII code points, filling in the entries of characters not met before."""
    mapped = _FOLDED[points]
    unknown = mapped == _UNSEEN
    if unknown.any():
        for point in np.unique(points[unknown]).tolist():
            _FOLDED[point] = _fold_point(chr(point))
        mapped = _FOLDED[points]
    return mapped


def _fold_point(char: str) -> int:
    """The byte a non-ASCII character scans as (-1: dropped): its canonical decomposition without combining marks,
    as ``remove_diacritics 2`` folds it ("é" is "e"), else a stand-in for a letter or digit and a space for the rest.
    A decomposed text's combining marks are dropped the same way."""
    kept = [c for c in unicodedata.normalize("NFD", char) if not unicodedata.combining(c)]
    if not kept:
        return -1
    if len(kept) == 1 and kept[0].isascii():
        return ord(kept[0])
    return _STAND_IN if any(c.isalnum() for c in kept) else ord(" ")
