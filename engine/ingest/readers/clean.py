"""Characters no reader should pass on: terminal escape sequences and control characters, and Emacs modelines.

Text copied from a terminal or written for one (man pages, logs, README files with colour) carries ANSI escape
sequences, and old files carry stray control characters; shown in a result they are boxes and "[1m" noise, and
indexed they glue words together. :func:`read` of :mod:`engine.ingest.readers` cleans every document here, whatever
its format, before it is split into sentences (so offsets are into the cleaned text).
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.ingest.readers.base import Document

# ECMA-48: CSI (ESC [ ... final byte, "\x1b[1m"), OSC and other strings ended by BEL or ST ("\x1b]0;title\x07"),
# then any other two-character escape ("\x1b(B", "\x1bM"); and a character struck over by a backspace, the bold
# and underline of man pages and nroff ("N\bNA\bAM\bME\bE", "_\bw"), which leaves the character struck last.
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|[^\x08\n]\x08"
)
# Controls that separate words (carriage return, vertical tab, form feed, the file/group/record/unit separators)
# become a space, so the words on either side stay apart; every other C0 control, DEL and the C1 controls go.
# Newline and tab are text.
_SEPARATORS = "\r\v\f\x1c\x1d\x1e\x1f"
_CONTROLS = str.maketrans(
    {c: (" " if chr(c) in _SEPARATORS else None)
     for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"}
)
# Any character the two above remove or replace.
_UNCLEAN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# "-*- mode: outline -*-", "# -*- coding: utf-8 -*-", ";;; x.el --- Summary -*- lexical-binding: t -*-".
_MODELINE = re.compile(r"-\*-.*?-\*-")


def clean_text(text: str) -> str:
    """``text`` without escape sequences and control characters (newline and tab kept)."""
    if not _UNCLEAN.search(text):  # most text: one scan, no copy
        return text
    return _ESCAPE.sub("", text).translate(_CONTROLS)


def clean_document(doc: Document) -> Document:
    """``doc`` with its title and blocks cleaned (:func:`clean_text`); blocks left empty are dropped."""
    cleaned = ((b, clean_text(b.text)) for b in doc.blocks)
    blocks = tuple(b if text is b.text else replace(b, text=text) for b, text in cleaned if text.strip())
    title = clean_text(doc.title)
    return replace(doc, title=title if title is doc.title else " ".join(title.split()), blocks=blocks)


def drop_modeline(text: str) -> str:
    """``text`` without the Emacs modeline ("-*- ... -*-") of its first line (the second after a "#!" line): the
    editor's settings, not content. The rest of that line stays when it holds words (an Emacs Lisp file's summary)."""
    lines = text.split("\n", 2)
    at = 1 if lines[0].startswith("#!") and len(lines) > 1 else 0
    found = _MODELINE.search(lines[at])
    if found is None:
        return text
    rest = (lines[at][: found.start()] + lines[at][found.end() :]).strip()
    if re.search(r"\w", rest):
        lines[at] = rest
    else:
        del lines[at]
    return "\n".join(lines)
