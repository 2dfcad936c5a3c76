"""Reads by key in chunks: SQLite limits the parameters of one statement."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# Keys per ``IN (...)`` list of a read by key.
IN_CHUNK = 500


def in_chunks(values: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """``values`` (as ints) in chunks of IN_CHUNK, each with its ``IN (...)`` placeholders: reads of hundreds of
    rows by key go as a few statements, none with more parameters than SQLite allows."""
    values = [int(v) for v in values]
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))
