"""A pure-Python finder of sentence ends, for machines blingfire's compiled library does not run on.

blingfire's wheel carries x86-64 binaries only, so on Apple Silicon or Linux ARM :mod:`engine.text.sentences` uses
this instead. It gives what blingfire's ``TextToSentencesWithOffsets`` gives (trimmed (start, end) character offsets
of the sentences of one paragraph) and leaves the same things to the repair both share: a split after a title
("Dr."), an initial ("J.") or "No." before a number, and one before a lowercase word, are undone there.

What it knows itself, following blingfire where blingfire is right: a full stop, question or exclamation mark or
ellipsis ends a sentence only when whitespace follows it, so decimals ("4.5%") and dotted names inside a word stay
whole; closing quotes and brackets after the mark belong to the sentence they close; the next sentence starts with a
capital, perhaps after quotes, brackets, a dash or a list marker ("3) Add"), never with a digit; "e.g." and "i.e."
never end a sentence, and a dotted abbreviation ("U.S.", "p.m.") ends one only before a word such as "He" or "The".
On prose (tests/data/toy_corpus.txt) the two give the same sentences; on Vim's user manual 99.7% of paragraphs split
the same, most of the rest where blingfire misses a boundary after "CTRL-V.".
"""

from __future__ import annotations

import re

# A run of sentence-final marks with the closing quotes and brackets after it, then whitespace or the text's end; CJK
# marks need no space after them. A match starts only where a run starts: tried inside a long run of dots that is
# not followed by a space, each position would backtrack over the rest of it (quadratic in the run).
_END = re.compile(r"""(?<![.!?…‽])[.!?…‽]+[-"'”’»)\]}]*(?=\s|$)|[。！？]+["'”’」』）)\]]*""")
# Lowercase abbreviations (without their last full stop) that introduce what follows rather than end a sentence.
# Titles, initials and "No. 5" are the shared repair's, and "etc." often does end a sentence, so neither is here.
_NEVER_FINAL = frozenset("e.g i.e viz c".split())  # c: circa ("from c. AD 600")
# The word before the marks, opening brackets and quotes left off.
_LAST_TOKEN = re.compile(r"(?:^|\s)[(\[\"'“‘]*([\w.]+)\.$")
# Characters that may come before the first letter of a sentence: quotes, brackets, dashes and list bullets. A
# sentence never starts with a digit or other punctuation here ("in 2020. 42 people"): blingfire does the same.
_OPENERS = "\"'“‘«([{¿¡—–-*•"
# After a dotted abbreviation ("U.S.", "p.m.") a capital is usually a name ("U.S. Army"), so the sentence ends only
# before one of these words, which open sentences far more often than they follow an abbreviation (as blingfire).
_OPENING_WORDS = frozenset(
    "a about after all also although an and another as at because before both but by during each for from he her"
    " here his however i if in it its many more most my no not on once one only or our she since so some such that"
    " the their then there these they this those though thus to today under until we what when where which while"
    " who with within without yet you".split()
)
_WORD = re.compile(r"\w+")
# A dotted abbreviation: letters in groups of one or two ("U.S", "p.m", "Ph.D"), without its last full stop.
_DOTTED = re.compile(r"(?:[^\W\d_]{1,2}\.)+[^\W\d_]{1,2}")
# A list item's number or letter ("3)", "(a)", "2."): a sentence may start with one if a word follows it.
_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[a-z])[.)][ \t]+(?=[^\W\d_])")


def _continues(text: str, mark_start: int, mark_end: int, following: int) -> bool:
    """Whether the sentence goes on past the marks at ``text[mark_start:mark_end]``, judged by the word before them
    and what starts at ``following`` (the first character after the whitespace)."""
    window = text[following : following + 8]
    word_start = following + len(window) - len(window.lstrip(_OPENERS + " \t"))
    first = text[word_start : word_start + 1]
    if not first.isalpha() or first.islower():
        item = _ENUMERATOR.match(text, following)
        return not item or text[item.end()].islower()
    if text[mark_start] != "." or (mark_end - mark_start > 1 and text[mark_start + 1] == "."):
        return False  # a question, an exclamation or an ellipsis before a capital ends the sentence
    if text[mark_end - 1] != ".":
        return False  # an abbreviation does not go on past the quote or bracket that closes it ("in L.A." During)
    token = _LAST_TOKEN.search(text, max(0, mark_start - 16), mark_start + 1)
    if not token:
        return False
    word = token.group(1).lower()
    if word in _NEVER_FINAL:
        return True
    if not _DOTTED.fullmatch(word):
        return False  # a plain word, a version number ("9.0.") or a file name ("foo.txt.")
    next_word = _WORD.match(text, word_start)
    return not next_word or next_word.group().lower() not in _OPENING_WORDS


def sentence_offsets(unit: str) -> list[tuple[int, int]]:
    """The (start, end) character offsets of the sentences of ``unit``, each trimmed of surrounding whitespace.

    ``unit`` is one paragraph or heading (blank lines and headings are split off before this is called); single line
    breaks inside it are whitespace like any other.
    """
    spans: list[tuple[int, int]] = []
    start = len(unit) - len(unit.lstrip())
    for match in _END.finditer(unit):
        end = match.end()
        following = end
        while following < len(unit) and unit[following].isspace():
            following += 1
        if following == len(unit):
            break
        mark_start = match.start()
        if _continues(unit, mark_start, end, following):
            continue
        if end > start:
            spans.append((start, end))
        start = following
    end = len(unit.rstrip())
    if end > start:
        spans.append((start, end))
    return spans
