"""The ``meta`` table: JSON values under names (the schema version, the method, id counters, the generation)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def get(conn: sqlite3.Connection, key: str, default: Any = None) -> Any:
    """The JSON value stored under ``key``, or ``default``."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return json.loads(row[0]) if row else default


def put(conn: sqlite3.Connection, key: str, value: Any) -> None:
    """Store a JSON value (in the caller's transaction, if any)."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, json.dumps(value)])


def delete(conn: sqlite3.Connection, key: str) -> None:
    """Forget ``key`` (in the caller's transaction)."""
    conn.execute("DELETE FROM meta WHERE key = ?", [key])


def reserve_ids(conn: sqlite3.Connection, key: str, table: str, count: int) -> int:
    """Reserve ``count`` ids of ``table``, counted under ``key``, and return the first; ids are never reused, so an
    HNSW label always means one sentence."""
    stored = get(conn, key)
    if stored is None:
        stored = (conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0) + 1
    put(conn, key, stored + count)
    return int(stored)


def bump_generation(conn: sqlite3.Connection) -> None:
    """Count a change to the set of sentences; a vector index saved at another generation is stale."""
    put(conn, "generation", int(get(conn, "generation", 0)) + 1)
