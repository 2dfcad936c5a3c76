"""Sentence splitting with character offsets.

blingfire's finite-state splitter does the bulk of the work: it is the only one of blingfire, pysbd and syntok fast
enough for the indexing target (about 3.5 MB/s on one core here; syntok managed 0.8 MB/s, pysbd 0.14 MB/s). It gets
a few things wrong that the other two get right, so its output is repaired with cheap rules: a split after a title
abbreviation ("Dr. Smith") or an initial ("J. Smith") is undone, and so is a split before a lowercase word, which is
what it does after a quoted question ('"Really?" she asked.').

blingfire's wheel holds x86-64 binaries only, and its sentence breaker is reached through a private symbol of its C
library, so the splitter is chosen at import: blingfire where its library loads and has the symbol, otherwise the
pure-Python rules of :mod:`engine.text.sentence_rules` (Apple Silicon, Linux ARM; docs/decisions/0009). Both feed
the same repair.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import re
from collections.abc import Callable, Iterator
from enum import Enum

import numpy as np

from engine.errors import ConfigError
from engine.text import sentence_rules

log = logging.getLogger(__name__)


class Splitter(str, Enum):
    """What finds the sentence ends inside a paragraph, before the shared repair."""

    BLINGFIRE = "blingfire"  # the default wherever its library loads: the repair below was written against it
    # Pure Python (engine.text.sentence_rules), wherever blingfire cannot run; no slower through split_spans
    # (docs/decisions/0009-sentences-without-blingfire.md).
    RULES = "rules"


def _load_blingfire() -> ctypes.CDLL | None:
    """The C library inside the blingfire package, or None (logged) where it cannot be used."""
    try:
        import blingfire
    except (ImportError, OSError) as exc:  # OSError: the package is installed but its library is for another CPU
        log.info("sentence splitting uses the pure-Python rules: blingfire cannot be loaded (%s)", exc)
        return None
    library = getattr(blingfire, "blingfire", None)
    # A private symbol (see _sentence_offsets), so a release may drop it; hasattr looks it up in the library.
    if library is None or not hasattr(library, "TextToSentencesWithOffsets"):
        log.info("sentence splitting uses the pure-Python rules: blingfire's library has no TextToSentencesWithOffsets")
        return None
    return library


_BLINGFIRE = _load_blingfire()
# The splitter split_spans uses unless told otherwise.
SPLITTER = Splitter.BLINGFIRE if _BLINGFIRE is not None else Splitter.RULES
_INT32_P = ctypes.POINTER(ctypes.c_int32)
# Abbreviations after which a full stop never ends a sentence in running text.
_TITLES = frozenset(
    "mr mrs ms dr prof sr jr st mt vs cf fig figs eq eqs ca approx dept est gen col lt sgt capt cmdr rev hon gov"
    " sen rep pres supt messrs mme mlle ft ave blvd nos vol vols pp ed eds al resp".split()
)
# Abbreviations that end a sentence only when nothing number-like follows ("No. 5", "p. 12").
_BEFORE_NUMBER = frozenset("no p art ch sec ref op".split())
_LAST_WORD = re.compile(r"(\w+)\.\s*$")
_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.\s*$")
# Characters of a sentence's end (and of the next one's start) that the abbreviation repair looks at: far more than
# the longest abbreviation plus trailing space.
_TAIL_CHARS = 32
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n+")
# A line this short that does not end in punctuation is a heading, not a wrapped line.
_HEADING_MAX_WORDS = 8
_HEADING_END = re.compile(r"[\w)\]]$")
# A line that ends in one of these goes on on the next line: a heading wrapped in two ("Washing Machine — Guarantee
# and" / "Registration", as a PDF lays it out) is one heading.
_CARRIED_ON = re.compile(r"\b(?:and|or|of|the|a|an)$", re.IGNORECASE)
_NOT_SPACE = re.compile(r"\S")
# How a sentence ends: a full stop, "!", "?" or "…", then perhaps a closing quote or bracket.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s*$")
# The fields of a message's header ("From: ...", "Subject: ..."): a line that starts with one is a line of its own (a
# saved e-mail's header ran together as one sentence, "From: Sam ... To: Priya ... Date: ...").
MESSAGE_FIELDS = "from|to|cc|bcc|date|sent|subject|re|reply-to"
_FIELD_LINE = re.compile(rf"[ \t]*(?:{MESSAGE_FIELDS})[ \t]*:", re.IGNORECASE)
# A numbered item's marker, which the splitters end a sentence after ("1." of "1. First step").
_LIST_NUMBER = re.compile(r"\d{1,2}[.)]")
# A list item's marker at a line's start ("- ", "* ", "• ", "3. ", "b) "): the item is a passage of its own, not the
# previous line's continuation (a Markdown checklist read as one sentence, "- Check credit reports - Work out ...").
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•‣◦▪–]|\d{1,2}[.)]|[a-z][)])[ \t]+\S")
# Longer "sentences" are tables, code or lists with no full stops; they are cut at whitespace so that one passage
# never drowns its neighbours or the embedder's context window.
MAX_SENTENCE_CHARS = 600


def _sentence_offsets(unit: str) -> list[tuple[int, int]]:
    """blingfire's sentence (start, end) character offsets of ``unit``.

    Calls the library's C function directly: its Python wrapper maps byte offsets to character offsets with a loop
    over every byte, which cost more than the splitting itself (about 1 ms per paragraph). Here the mapping is one
    numpy cumulative sum, and none at all for ASCII text, where bytes and characters coincide.
    """
    assert _BLINGFIRE is not None  # reached only through _OFFSETS, which holds this function only when it loaded
    data = unit.encode("utf-8")
    capacity = 2 * len(data) + 2
    # numpy buffers: a ctypes array type per distinct length would be created (slowly) on every call
    out = np.zeros(capacity, dtype=np.uint8)
    starts = np.empty(capacity, dtype=np.int32)
    ends = np.empty(capacity, dtype=np.int32)
    n = _BLINGFIRE.TextToSentencesWithOffsets(
        ctypes.c_char_p(data), ctypes.c_int(len(data)), out.ctypes.data_as(ctypes.c_char_p),
        starts.ctypes.data_as(_INT32_P), ends.ctypes.data_as(_INT32_P), ctypes.c_int(capacity),
    )
    if n < 0 or n > capacity:
        return [(0, len(unit))]
    count = out[:n].tobytes().split(b"\0", 1)[0].count(b"\n") + 1
    first = starts[:count].astype(np.int64)
    last = ends[:count].astype(np.int64)  # last byte of each sentence
    if len(data) != len(unit):
        # character index of every byte: count the bytes that start a UTF-8 sequence
        char_of = np.cumsum((np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80) - 1
        first, last = char_of[np.minimum(first, len(data) - 1)], char_of[np.minimum(last, len(data) - 1)]
    return list(zip(first.tolist(), (last + 1).tolist()))


_OFFSETS: dict[Splitter, Callable[[str], list[tuple[int, int]]]] = {Splitter.RULES: sentence_rules.sentence_offsets}
if _BLINGFIRE is not None:
    _OFFSETS[Splitter.BLINGFIRE] = _sentence_offsets
# The splitters that run here, the default first.
AVAILABLE = tuple(sorted(_OFFSETS, key=lambda splitter: splitter != SPLITTER))


def _ends_with_abbreviation(piece: str, following: str) -> bool:
    if _INITIAL.search(piece):
        return True
    match = _LAST_WORD.search(piece)
    if not match:
        return False
    word = match.group(1).lower()
    if word in _TITLES:
        return True
    return word in _BEFORE_NUMBER and following[:1].isdigit()


def _tail(text: str, start: int, end: int) -> str:
    """The end of ``text[start:end]``, all the abbreviation rules look at.

    Their end-anchored regexes would otherwise be tried at every character of the sentence (and merged pieces keep
    growing). A cut-off start is marked with a word character, so it reads as neither a word start nor the string's.
    """
    return text[start:end] if end - start <= _TAIL_CHARS else "x" + text[end - _TAIL_CHARS : end]


def _repair(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged:
            prev_start, prev_end = merged[-1]
            following = text[start : min(end, start + _TAIL_CHARS)].lstrip("\"'“‘(")
            if (following[:1].islower() or _ends_with_abbreviation(_tail(text, prev_start, prev_end), following)
                    or _LIST_NUMBER.fullmatch(text, prev_start, prev_end)):
                merged[-1] = (prev_start, end)
                continue
        merged.append((start, end))
    return merged


def _cut_long(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while end - start > MAX_SENTENCE_CHARS:
        cut = text.rfind(" ", start + MAX_SENTENCE_CHARS // 2, start + MAX_SENTENCE_CHARS)
        if cut <= start:
            cut = start + MAX_SENTENCE_CHARS
        yield start, cut
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        yield start, end


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _offsets_of(splitter: Splitter | str | None) -> Callable[[str], list[tuple[int, int]]]:
    if splitter is None:
        return _OFFSETS[SPLITTER]
    try:
        return _OFFSETS[Splitter(splitter)]
    except (ValueError, KeyError) as exc:
        available = ", ".join(s.value for s in AVAILABLE)
        raise ConfigError(f"sentence splitter {splitter!r} cannot run here; available: {available}") from exc


def _lines_to_units(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Split a block after a heading (a short line without final punctuation followed by a capitalised line), and
    before a list item or a message header's field.

    A wrapped line of running text is followed by a lowercase continuation, which is what tells them apart. The
    next line's first letter is searched for, not sliced out of the rest of the block: that copy made 4 MB of short
    lines take 28 s.
    """
    unit_start = start
    pos = start
    while True:
        newline = text.find("\n", pos, end)
        if newline < 0:
            break
        line = text[pos:newline].strip()
        if _LIST_ITEM.match(text, newline + 1, end) or _FIELD_LINE.match(text, newline + 1, end) or (
            is_heading(line)
            and (following := _NOT_SPACE.search(text, newline + 1, end))
            and (following.group().isupper() or following.group().isdigit())
        ):
            yield unit_start, newline
            unit_start = newline + 1
        pos = newline + 1
    yield unit_start, end


def is_heading(sentence: str) -> bool:
    """Whether ``sentence`` reads as a heading (or a list item's line): a short line that does not end in punctuation,
    as the splitter ends a sentence after one (:func:`_lines_to_units`)."""
    line = sentence.strip()
    return (bool(line) and len(line.split()) <= _HEADING_MAX_WORDS and _HEADING_END.search(line) is not None
            and not carries_on(line))


def carries_on(line: str) -> bool:
    """Whether ``line`` ends in a word that cannot end a sentence or a heading ("and", "of", "the"): the next line
    goes on with it."""
    return _CARRIED_ON.search(line.rstrip()) is not None


def is_list_item(sentence: str) -> bool:
    """Whether ``sentence`` begins with a list item's marker ("- ", "3. ", "b) ")."""
    return _LIST_ITEM.match(sentence) is not None


def ends_like_sentence(sentence: str) -> bool:
    """Whether ``sentence`` ends as a sentence does (_SENTENCE_END); one that does not was a line of its own (a
    heading, a list item, a letterhead, a table's row), or a run of over MAX_SENTENCE_CHARS cut."""
    return _SENTENCE_END.search(sentence) is not None


def split_spans(text: str, splitter: Splitter | str | None = None) -> list[tuple[int, int]]:
    """Return (start, end) character offsets of the sentences in ``text`` (see :func:`iter_spans`)."""
    return list(iter_spans(text, splitter))


def iter_spans(text: str, splitter: Splitter | str | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) character offsets of the sentences in ``text``, in order, found as they are asked for (a
    document cut at its sentence limit is not split further).

    Blank lines always end a sentence (they separate paragraphs); single line breaks do not (text is often
    hard-wrapped), except after a heading-like line. Spans are trimmed and never empty; spans with no letter or
    digit are dropped.

    ``splitter`` picks what finds sentence ends inside a paragraph (default :data:`SPLITTER`, chosen at import);
    raises ConfigError for one that cannot run here.
    """
    offsets = _offsets_of(splitter)
    block_start = 0
    for brk in itertools.chain(_BLOCK_BREAK.finditer(text), [None]):
        block_end = brk.start() if brk else len(text)
        for unit_start, unit_end in _lines_to_units(text, block_start, block_end):
            unit = text[unit_start:unit_end]
            if not unit.strip():
                continue
            local = _repair(unit, [(a, b) for a, b in offsets(unit) if b > a])
            for a, b in local:
                a, b = _trimmed(text, unit_start + a, unit_start + b)
                for c, d in _cut_long(text, a, b):
                    c, d = _trimmed(text, c, d)
                    if d > c and any(ch.isalnum() for ch in text[c:d]):
                        yield c, d
        block_start = brk.end() if brk else len(text)


def verbatim_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) offsets of a block of code or other preformatted text, ``text[start:end]``: the block as one
    sentence, trimmed, cut at line ends into pieces of at most MAX_SENTENCE_CHARS (a longer line at whitespace, as
    :func:`iter_spans` cuts). :func:`iter_spans` would end a sentence after every short line without a full stop
    that a capital follows, which is most lines of code ("heap = []" / "Heapify(x)")."""
    start, end = _trimmed(text, start, len(text) if end is None else end)
    while start < end:
        cut = text.rfind("\n", start + 1, start + MAX_SENTENCE_CHARS + 1) if end - start > MAX_SENTENCE_CHARS else -1
        piece_end = cut if cut > start else end
        for a, b in _cut_long(text, start, piece_end):
            a, b = _trimmed(text, a, b)
            if b > a and any(ch.isalnum() for ch in text[a:b]):
                yield a, b
        start, _ = _trimmed(text, piece_end, end)


def split_sentences(text: str, splitter: Splitter | str | None = None) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`split_spans`)."""
    return [text[a:b] for a, b in split_spans(text, splitter)]
