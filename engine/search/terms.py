"""Query words for lexical search and highlighting, processed the way the FTS5 index processes text.

The index uses FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer; here the same steps run in Python (Unicode
word split, lowercase, diacritics folded, Porter stem) so that matched terms can be named and highlighted in a
passage, which FTS5 cannot do for a contentless table.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import snowballstemmer

_WORD = re.compile(r"\w+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]+)"')
_STEMMER = snowballstemmer.stemmer("porter")
# ASCII bytes that ``\w`` matches.
_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[[ord(c) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"]] = True

# Function words that carry no topic: dropped from lexical queries (BM25 gives them almost no weight anyway, but
# their posting lists are the longest in the index and slow every query down).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves also may might must shall upon whether
    us per via""".split()
)


@dataclass(frozen=True)
class Term:
    """A query word: as typed, and as the index stores it (folded, stemmed)."""

    word: str
    stem: str


def fold(word: str) -> str:
    """Lowercase and strip diacritics, as ``remove_diacritics 2`` does."""
    if word.isascii():  # nothing to decompose: the common case costs one C call instead of a per-character loop
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The index form of one word."""
    return _STEMMER.stemWord(fold(word))


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


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: quoted phrases stay phrases, other content words are OR-ed (BM25 ranks them).

    Every word is quoted, so nothing a user types can be read as FTS5 syntax.
    """
    phrases = [p.strip() for p in _PHRASE.findall(text) if p.strip()]
    rest = _PHRASE.sub(" ", text)
    # a quoted string with several words is an FTS5 phrase
    parts = ['"' + " ".join(w for w, _, _ in words(p)) + '"' for p in phrases if words(p)]
    parts += [f'"{t.word}"' for t in query_terms(rest)]
    return " OR ".join(parts) if parts else None


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
    alternatives = [f"(?:{'|'.join(map(re.escape, sorted(prefixes, key=len, reverse=True)))})\\w*"]
    if not ascii_text:
        alternatives.append(r"\w*[^\W\x00-\x7f]\w*")
    return re.compile(r"\b(?:" + "|".join(alternatives) + ")", 0 if ascii_text else re.IGNORECASE)


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
    took most of the query's time. ASCII texts (nearly all) are scanned together with numpy: word boundaries come
    from a byte table, and a word is stemmed only when it starts with the :func:`_prefix` of a stem, as there.
    Other texts go through :func:`matches`.
    """
    out: list[set[str]] = [set() for _ in texts]
    prefixes = sorted({_prefix(s).encode() for s in stems if s})
    if not prefixes:
        return out
    plain = [i for i, t in enumerate(texts) if t.isascii()]
    for i in sorted(set(range(len(texts))) - set(plain)):
        out[i] = {m[2] for m in matches(texts[i], stems)}
    if not plain:
        return out
    lowered = "\n".join(texts[i] for i in plain).lower()
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
    text_starts = np.cumsum([0] + [len(texts[i]) + 1 for i in plain[:-1]])
    owners = np.searchsorted(text_starts, starts[candidate], side="right") - 1
    for start, end, owner in zip(starts[candidate].tolist(), ends[candidate].tolist(), owners.tolist()):
        found = stem(lowered[start:end])
        if found in stems:
            out[plain[owner]].add(found)
    return out
