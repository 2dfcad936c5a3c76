"""Reads by key in chunks (SQLite limits the parameters of one statement), and rows as dicts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

# Keys per ``IN (...)`` list of a read by key.
IN_CHUNK = 500


def in_chunks(values: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """``values`` (as ints) in chunks of IN_CHUNK, each with its ``IN (...)`` placeholders: reads of hundreds of
    rows by key go as a few statements, none with more parameters than SQLite allows."""
    values = [int(v) for v in values]
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


def dicts(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[dict]:
    """Rows as dicts, read straight from the connection (sqlite_utils' ``db.query`` wraps each read in a savepoint,
    two more statements per read)."""
    cursor = conn.execute(sql, params)
    keys = [d[0] for d in cursor.description]
    return [dict(zip(keys, row)) for row in cursor]


def by_id(conn: sqlite3.Connection, table: str, ids: Sequence[int]) -> dict[int, dict]:
    """Rows of ``table`` keyed by id (ids not there left out)."""
    out: dict[int, dict] = {}
    for chunk, marks in in_chunks(ids):
        for row in dicts(conn, f"SELECT * FROM {table} WHERE id IN ({marks})", chunk):
            out[row["id"]] = row
    return out
