r"""File names that are not valid Unicode: kept exactly, stored as valid UTF-8, shown readably.

A POSIX file name is any bytes. Python decodes the bytes that are not UTF-8 as lone surrogates (PEP 383's
surrogate escapes, ``bad_\xff.txt`` becomes ``'bad_\udcff.txt'``), so ``open`` and ``stat`` get the same bytes back;
Windows names may hold unpaired UTF-16 surrogates, which arrive the same way. The engine passes such a path around
as it is, but SQLite, terminals and most JSON readers refuse lone surrogates: the database keeps an escaped form
(:func:`to_column`, :func:`from_column`) and the edges show :func:`readable`.
"""

from __future__ import annotations

import re

# A noncharacter, which Unicode sets aside for a program's own use, so no real file name is expected to hold one.
# In the database it starts an escaped surrogate (the mark and four hex digits) or, doubled, stands for itself.
_MARK = "\ufdd0"
_ESCAPED = re.compile("[\ud800-\udfff\ufdd0]")
_MARKED = re.compile("\ufdd0([0-9a-f]{4}|\ufdd0)")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters (C0, DEL, C1) and the bidirectional controls, which a name can hold and a terminal or window
# would act on rather than show (:func:`readable`).
_MISLEADING = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _MARK * 2 if ch == _MARK else f"{_MARK}{ord(ch):04x}"


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    return _MARK if code == _MARK else chr(int(code, 16))


def to_column(path: str) -> str:
    """The form a path is stored in: valid UTF-8, one to one with paths, and a path's prefix stays its prefix."""
    return _ESCAPED.sub(_escape, path) if not path.isascii() else path


def from_column(text: str) -> str:
    """The path a stored value stands for (the inverse of :func:`to_column`)."""
    return _MARKED.sub(_unescape, text) if _MARK in text else text


def readable(path: str) -> str:
    r"""A path to show or to use as a title: a byte that is not UTF-8 as ``\xff``, an unpaired surrogate as ``\udc80``,
    and a character that would change how the line reads as its escape: a control character (a newline would print
    one name as two lines, an escape sequence would drive the terminal) as ``\n`` or ``\x1b``, a bidirectional
    control (U+202E shows ``txt.exe`` as ``exe.txt``) as ``\u202e``."""
    if _SURROGATE.search(path):
        try:
            path = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that is no escaped byte (a Windows name)
            path = path.encode("utf-8", "backslashreplace").decode("utf-8")
    return _MISLEADING.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), path)
