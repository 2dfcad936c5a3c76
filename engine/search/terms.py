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

# unicode61 splits at everything but letters and digits, the underscore included
_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]+)"')
# PyStemmer's objects are not thread-safe (the app searches on worker threads while the indexer runs): one per thread.
_STEMMERS = threading.local()
# ASCII bytes that :data:`_WORD` matches.
_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[[ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"]] = True
# Where a text's non-ASCII letters and digits stand when :func:`stem_counts` scans it as ASCII.
_STAND_IN = "\x01"
_ASCII_WORD[ord(_STAND_IN)] = True
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
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
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


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
    alternatives = [f"(?:{'|'.join(map(re.escape, sorted(prefixes, key=len, reverse=True)))})[^\\W_]*"]
    if not ascii_text:
        alternatives.append(r"[^\W_]*[^\W\x00-\x7f][^\W_]*")
    # a word starts where no letter or digit precedes (``\b`` would also count the underscore as one)
    return re.compile(r"(?<![^\W_])(?:" + "|".join(alternatives) + ")", 0 if ascii_text else re.IGNORECASE)


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

    The texts are scanned together with numpy, as ASCII: word boundaries come from a byte table, and a word is
    stemmed only when it starts with the :func:`_prefix` of a stem, as in :func:`matches`. Texts with other
    characters are folded to ASCII first (:func:`_ascii_form`) when every stem is ASCII; otherwise they go through
    :func:`matches`.
    """
    out: list[dict[str, int]] = [{} for _ in texts]
    prefixes = sorted({_prefix(s).encode() for s in stems if s})
    if not prefixes:
        return out
    foldable = all(s.isascii() for s in stems)
    plain: list[int] = []
    scanned: list[str] = []
    for i, text in enumerate(texts):
        if text.isascii() or foldable:
            plain.append(i)
            scanned.append(text if text.isascii() else _ascii_form(text))
        else:
            for _, _, found in matches(text, stems):
                out[i][found] = out[i].get(found, 0) + 1
    if not plain:
        return out
    lowered = "\n".join(scanned).lower()
    data = np.frombuffer(lowered.encode("ascii"), dtype=np.uint8)
    word = np.concatenate(([False], _ASCII_WORD[data], [False]))
    edges = np.diff(word.view(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    candidate = np.zeros(starts.size, dtype=bool)
    for prefix in prefixes:
        fits = (ends - starts) >= len(prefix)
        for j, byte in enumerate(prefix):
            fits &= data[np.minimum(starts + j, data.size - 1)] == byte
        candidate |= fits
    text_starts = np.cumsum([0] + [len(t) + 1 for t in scanned[:-1]])
    owners = np.searchsorted(text_starts, starts[candidate], side="right") - 1
    for start, end, owner in zip(starts[candidate].tolist(), ends[candidate].tolist(), owners.tolist()):
        found = stem(lowered[start:end])
        if found in stems:
            counts = out[plain[owner]]
            counts[found] = counts.get(found, 0) + 1
    return out


def _ascii_form(text: str) -> str:
    """``text`` with its diacritics removed as ``remove_diacritics 2`` removes them, its other non-ASCII letters and
    digits replaced by a stand-in word byte, and other non-ASCII characters by spaces: words split where FTS5 splits
    them, and a word with a non-ASCII letter, which can never stem to an ASCII stem, still never does."""
    return _NON_ASCII.sub(_ascii_stand_in, unicodedata.normalize("NFD", text))


def _ascii_stand_in(match: re.Match) -> str:
    char = match.group()
    if unicodedata.combining(char):
        return ""
    return _STAND_IN if char.isalnum() else " "
