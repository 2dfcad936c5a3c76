"""Query words for lexical search and highlighting, processed the way the FTS5 index processes text.

The index uses FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer; here the same steps run in Python (Unicode
word split, lowercase, diacritics folded, Porter stem) so that matched terms can be named and highlighted in a
passage, which FTS5 cannot do for a contentless table.
"""

from __future__ import annotations

import hashlib
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
_MARK = re.compile(f"[{_MARKS}]")
# words of text with combining marks, and (twice as fast) of text without
_WORD = re.compile(rf"(?:[^\W_]+|[{_MARKS}]+)+")
_PLAIN_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]+)"')
# Han, kana and Hangul. Chinese and Japanese put no spaces between words and Korean attaches particles to them, so
# unicode61's words there are whole clauses; a run of these letters is cut into overlapping pairs of characters
# instead (a lone one stays a word), as Lucene's CJK analyzer does, and a query's pairs find the text's.
_CJK_RANGES = ((0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF),
               (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
               (0xFF66, 0xFF9F), (0x20000, 0x2FFFF))
_CJK_POINT = np.zeros(0x110000, dtype=bool)
for _low, _high in _CJK_RANGES:
    _CJK_POINT[_low : _high + 1] = True
_CJK_RUN = re.compile("[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in _CJK_RANGES) + "]+")
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
# Code points that are word characters where :data:`_WORD` splits (1, or _CJK_LETTER for a CJK letter), not (0), or
# not looked at yet (-1); filled in as characters are met, like :data:`_FOLDED`.
_CJK_LETTER = 2
_WORD_POINT = np.full(0x110000, -1, dtype=np.int8)
_WORD_POINT[:0x80] = _ASCII_WORD[:0x80]
_WORD_POINT[_STAND_IN] = 0
# Odd multiplier of the polynomial hash that tells a batch's words apart (:func:`term_counts`), and its inverse mod 2**64.
_HASH_BASE = 0x9E3779B97F4A7C15
_HASH_INVERSE = pow(_HASH_BASE, -1, 1 << 64)
_POWERS = (np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64))
# Term key of each word met while indexing, keyed by the word's polynomial hash; started over when this large.
_KEY_CACHE_WORDS = 1_000_000
_KEYS: dict[int, int] = {}
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


# What follows the first part of a negative contraction ("haven" of "haven't", either apostrophe).
_NEGATION = re.compile(r"['\u2019][tT]\b")
# The last part of "I'm" and "I'd", either apostrophe: a stop word there, where "d" of "vitamin D" is not.
_CONTRACTED = frozenset("md")
_APOSTROPHES = "'\u2019"


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


# The stop words' stems: a query word that is one of them ("wa" of "was", "thi" of "this", typed on the way to "water"
# or "think") matches only the documents' function words.
STOP_STEMS = frozenset(stem(w) for w in STOPWORDS)
# What a query drops as a function word: the stop words and their stems.
_FUNCTION_WORDS = STOPWORDS | STOP_STEMS


def term_key(stem_: str) -> int:
    """The 64-bit integer a stem is stored as in the word index (engine.store.postings): a hash, stable across
    processes and releases (blake2b); two of the few million stems of a large index share one with odds of about
    1e-6."""
    return int.from_bytes(hashlib.blake2b(stem_.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little",
                          signed=True)


@dataclass(frozen=True)
class TermCounts:
    """The words of several texts as the word index stores them: one row per (text, distinct stem), sorted by text
    then key, and each text's length in words (BM25's document length)."""

    texts: np.ndarray  # int64: which text
    keys: np.ndarray  # int64: term_key of the stem
    counts: np.ndarray  # int64: occurrences in the text
    lengths: np.ndarray  # int64: words in each text


def term_counts(texts: Sequence[str]) -> TermCounts:
    """Count the stems of every word of ``texts``, split and stemmed as :func:`words` and :func:`stem` do.

    Indexing counts the words of every passage: a regex and a Counter per passage cost ~200 us each (60 s for the
    3.09M-sentence corpus), so the texts are scanned together with numpy instead. Words are the runs of word code
    points; each word's code points get a polynomial hash (prefix sums of points times powers of an odd base, mod
    2**64, divided back by the power at the word's start), so equal words have equal hashes without Python touching
    each word. Only each batch's distinct words go through Python, once, to be stemmed (and cached by hash).
    """
    joined = _joined(texts)
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    starts, ends = _spans(points)
    owners = np.searchsorted(np.flatnonzero(points == _SEPARATOR), starts)
    lengths = np.bincount(owners, minlength=len(texts)).astype(np.int64)
    if not starts.size:
        empty = np.zeros(0, np.int64)
        return TermCounts(empty, empty, empty, lengths)
    powers, inverses = _powers(points.size + 1)
    sums = np.zeros(points.size + 1, dtype=np.uint64)
    np.cumsum(np.multiply(points, powers[: points.size], dtype=np.uint64), out=sums[1:])
    # the length is mixed in too: a word is its hash and its length
    hashes = (sums[ends] - sums[starts]) * inverses[starts] + (ends - starts).astype(np.uint64)
    distinct, first, word_of = _distinct(hashes)
    keys = _keys(distinct, joined, starts[first], ends[first])
    stems, stem_of = np.unique(keys, return_inverse=True)
    pairs, counts = np.unique(owners * stems.size + stem_of[word_of], return_counts=True)
    return TermCounts(pairs // stems.size, stems[pairs % stems.size], counts.astype(np.int64), lengths)


def _spans(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the words of ``points`` as :func:`words` finds them: runs of word code points, where a run of
    CJK letters is a word apart from its neighbours and is cut into overlapping pairs (a lone letter stays one)."""
    kind = _point_kinds(points)
    if kind.max(initial=0) < _CJK_LETTER:
        word = np.concatenate(([False], kind.astype(bool), [False]))
        edges = np.flatnonzero(word[1:] != word[:-1])
        return edges[0::2], edges[1::2]
    changes = np.flatnonzero(np.diff(np.concatenate(([0], kind, [0]))))  # where each run of one kind starts
    starts, ends = changes[:-1], changes[1:]
    kinds = kind[starts]
    starts, ends, kinds = starts[kinds > 0], ends[kinds > 0], kinds[kinds > 0]
    if not (kinds == 2).any():
        return starts, ends
    lengths = ends - starts
    pieces = np.where(kinds == 2, np.maximum(lengths - 1, 1), 1)
    offsets = np.arange(int(pieces.sum())) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    first = np.repeat(starts, pieces) + offsets
    return first, first + np.repeat(np.where(kinds == 2, np.minimum(lengths, 2), lengths), pieces)


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)`` with one unstable sort: the first-occurrence
    indexes ask numpy for a stable one, twice as slow, and any occurrence will do here."""
    order = np.argsort(values)
    ordered = values[order]
    new = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    inverse = np.empty(values.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], order[new], inverse


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` powers of :data:`_HASH_BASE` and of its inverse mod 2**64, computed once for the longest batch
    met so far."""
    global _POWERS
    if _POWERS[0].size < n:
        size = max(n, 2 * _POWERS[0].size)
        made = []
        for base in (_HASH_BASE, _HASH_INVERSE):
            powers = np.ones(size, dtype=np.uint64)
            np.cumprod(np.full(size - 1, base, dtype=np.uint64), out=powers[1:])
            made.append(powers)
        _POWERS = (made[0], made[1])
    return _POWERS


def _keys(hashes: np.ndarray, joined: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`term_key` of the stems of the words with polynomial ``hashes`` (one occurrence of each at
    ``starts``/``ends`` in ``joined``)."""
    found = [_KEYS.get(h) for h in hashes.tolist()]
    missing = [i for i, key in enumerate(found) if key is None]
    if len(_KEYS) + len(missing) > _KEY_CACHE_WORDS:
        _KEYS.clear()
    for i in missing:
        found[i] = _KEYS[int(hashes[i])] = term_key(stem(joined[starts[i] : ends[i]]))
    return np.array(found, dtype=np.int64)


def _point_kinds(points: np.ndarray) -> np.ndarray:
    """What each code point is where :data:`_WORD` splits: 0 not a word character, 1 a word character (letter, digit,
    combining mark), :data:`_CJK_LETTER` a CJK letter."""
    seen = _WORD_POINT[points]
    unknown = seen < 0
    if unknown.any():
        for point in np.unique(points[unknown]).tolist():
            char = chr(point)
            word = char.isalnum() or _MARK.match(char) is not None
            _WORD_POINT[point] = _CJK_LETTER if word and _CJK_POINT[point] else int(word)
        seen = _WORD_POINT[points]
    return seen


def words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) for every word of ``text``; CJK letters as overlapping pairs (:data:`_CJK_RUN`)."""
    if text.isascii():
        return [(m.group(), m.start(), m.end()) for m in _PLAIN_WORD.finditer(text)]
    pattern = _PLAIN_WORD if not _MARK.search(text) else _WORD
    out: list[tuple[str, int, int]] = []
    for m in pattern.finditer(text):
        out.extend(_cut(m.group(), m.start()))
    return out


def _cut(word: str, at: int) -> list[tuple[str, int, int]]:
    """A word found at ``at`` as the words the index counts: itself, or, where it holds CJK letters, its other
    letters and the overlapping pairs of its CJK runs (:func:`_spans` does the same with numpy)."""
    if word.isascii() or not _CJK_RUN.search(word):
        return [(word, at, at + len(word))]
    out: list[tuple[str, int, int]] = []
    last = 0
    for run in _CJK_RUN.finditer(word):
        if run.start() > last:
            out.append((word[last : run.start()], at + last, at + run.start()))
        begin, end = run.start(), run.end()
        for i in range(begin, max(end - 1, begin + 1)):
            j = min(i + 2, end)
            out.append((word[i:j], at + i, at + j))
        last = end
    if last < len(word):
        out.append((word[last:], at + last, at + len(word)))
    return out


def query_terms(text: str) -> list[Term]:
    """Distinct content words of a query, in order; stop words are dropped unless nothing else is left, and so is
    the part of a negative contraction before its "'t" ("haven't", "don't", "won't"): a function word there, though
    "haven", "don" and "won" are words of their own (a new user's "members who haven't paid" was told "haven" is in
    none of the documents), the "m" of "I'm" and "d" of "I'd", and a stop word's stem ("wa", met while "water" is
    typed, which matched every "was": :data:`STOP_STEMS`)."""
    seen: dict[str, Term] = {}
    stopped: dict[str, Term] = {}
    for word, start, end in words(text):
        contracted = word.lower() in _CONTRACTED and start > 0 and text[start - 1] in _APOSTROPHES
        function_word = fold(word) in _FUNCTION_WORDS or contracted
        target = stopped if function_word or _NEGATION.match(text, end) else seen
        target.setdefault(stem(word), Term(word, stem(word)))
    return list((seen or stopped).values())


def stop_words_only(text: str) -> tuple[str, ...]:
    """The query's words when every one is a stop word and no phrase is quoted ("the", "to be or not to be"): words
    that say nothing of what to look for; () otherwise."""
    phrases, rest = split_phrases(text)
    terms = query_terms(rest)
    if phrases or not terms or any(fold(t.word) not in STOPWORDS for t in terms):
        return ()
    return tuple(t.word for t in terms)


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
    """What tells the words that may stem to one of ``stems``, so that most words are skipped without the stemmer.

    For lowercased ASCII text, a pattern of the words starting with a stem's :func:`_prefix`, which the regex engine
    finds without Python. Otherwise the prefixes alone, in any case, matched at the start of each word (``_WORD``) that
    is ASCII: a word with a non-ASCII letter may stem to any of them (only :func:`fold` can tell). Each query has
    stems of its own, and a pattern holding the classes of non-ASCII words takes 2.3 ms to compile. None: no stem
    to look for.
    """
    prefixes = {_prefix(s) for s in stems if s}
    if not prefixes:
        return None
    alternatives = "|".join(map(re.escape, sorted(prefixes, key=len, reverse=True)))
    if not ascii_text:
        return re.compile(alternatives, re.IGNORECASE)
    # a word starts where no letter or digit precedes (``\b`` would count the underscore)
    return re.compile(rf"(?<![^\W_])(?:{alternatives})[^\W_]*")


def matches(text: str, stems: set[str] | frozenset[str]) -> list[tuple[int, int, str]]:
    """(start, end, stem) of the words of ``text`` whose stem is in ``stems``: what to highlight."""
    # the (pure Python) stemmer runs only on words that start like a query stem: it dominated query time otherwise
    ascii_text = text.isascii()  # then lowercasing keeps every offset, and a case-sensitive scan is faster
    pattern = _candidates(frozenset(stems), ascii_text)  # a frozenset argument is reused as is: pass one per query
    if pattern is None:
        return []
    if ascii_text:
        starting = pattern.finditer(text.lower())
    else:
        starting = (m for m in _WORD.finditer(text) if not m.group().isascii() or pattern.match(m.group()))
    out = []
    for m in starting:
        for word, start, end in _cut(m.group(), m.start()):
            found = stem(word)
            if found and found in stems:
                out.append((start, end, found))
    return out


def stems_found(texts: Sequence[str], stems: frozenset[str]) -> list[set[str]]:
    """For each text, the stems of ``stems`` that its words have: what :func:`matches` finds, without the spans.

    Ranking asks this of every candidate sentence of a query (hundreds), where the regex scan of :func:`matches`
    took most of the query's time.
    """
    return [set(counts) for counts in stem_counts(texts, stems)]


def stem_counts(texts: Sequence[str], stems: frozenset[str]) -> list[dict[str, int]]:
    """For each text, how often each stem of ``stems`` occurs in it, counted as the index counts its words.

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
    joined = _joined(texts)
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


def _joined(texts: Sequence[str]) -> str:
    """``texts`` each ended by :data:`_SEPARATOR`, where a separator inside a text (a non-word character) is a space."""
    joined = _JOIN.join(texts) + _JOIN
    if joined.count(_JOIN) != len(texts):
        joined = _JOIN.join(t.replace(_JOIN, " ") for t in texts) + _JOIN
    return joined


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
    if _CJK_POINT[ord(char)]:
        return ord(" ")  # a word of its own in the index (:func:`_spans`): never part of an ASCII word
    kept = [c for c in unicodedata.normalize("NFD", char) if not unicodedata.combining(c)]
    if not kept:
        return -1
    if len(kept) == 1 and kept[0].isascii():
        return ord(kept[0])
    return _STAND_IN if any(c.isalnum() for c in kept) else ord(" ")
