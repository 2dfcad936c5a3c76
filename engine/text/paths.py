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
    r"""A path to show or to use as a title: a byte that is not UTF-8 as ``\xff``, an unpaired surrogate as ``\udc80``."""
    if path.isascii() or not _SURROGATE.search(path):
        return path
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte (a Windows name)
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
