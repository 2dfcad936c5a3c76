"""Reads by key in chunks: SQLite limits the parameters of one statement."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# Keys per ``IN (...)`` list of a read by key.
IN_CHUNK = 500
# The lengths an ``IN (...)`` list is padded to, the last of them IN_CHUNK: a statement is prepared once per length
# and kept by the connection's statement cache, where a list of every length made a new statement per read
# (docs/decisions/0026-in-lists-of-few-lengths.md).
IN_LENGTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256, IN_CHUNK)


def in_chunks(values: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """``values`` (as ints) in chunks of IN_CHUNK, each with its ``IN (...)`` placeholders: reads of hundreds of
    rows by key go as a few statements, none with more parameters than SQLite allows. A chunk is padded to the next
    of IN_LENGTHS by repeating its last key, which an ``IN`` list holds once whatever its repeats."""
    values = [int(v) for v in values]
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        length = next(n for n in IN_LENGTHS if n >= len(chunk))
        chunk += chunk[-1:] * (length - len(chunk))
        yield chunk, ",".join("?" * length)
