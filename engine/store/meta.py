"""The ``meta`` table: JSON values under names (the schema version, the method, id counters, the generation).

Every name is typed here: :class:`Key` for the index's own settings, :class:`MethodKey` for those kept for each
embedding method (``fingerprint:static``); the values stored are the names' strings, as indexes have always held.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Key(str, Enum):
    """A setting of the whole index, stored under its value."""

    SCHEMA_VERSION = "schema_version"
    INDEX_ID = "index_id"  # the database's own id, which its saved graphs record
    METHOD = "method"  # the embedding method searches use
    FINGERPRINT = "fingerprint"  # what made the method's vectors (model and rule, engine.embed.context)
    DIM = "dim"
    GENERATION = "generation"  # counts changes to the set of sentences
    NEXT_SENTENCE_ID = "next_sentence_id"
    NEXT_PASSAGE_ID = "next_passage_id"
    WORD_INDEX_BACKFILL = "word_index_backfill"  # the passages an older index's word index has still to take in
    WORDS_TO_PURGE = "words_to_purge"  # removed documents' words are still in the file (engine.store.space)
    PAGES_CHECKED_AT = "pages_checked_at"  # seconds since the epoch (engine.store.health)
    RUN_IN_PROGRESS = "run_in_progress"  # left set by an indexing run that was killed
    FACETS_MODEL = "facets_model"  # the static model the stored facets were computed with
    OPENINGS = "openings"  # the model and cut the stored openings were read with (engine.store.openings)


class PerMethod(str, Enum):
    """A setting kept for each embedding method (:class:`MethodKey`)."""

    FINGERPRINT = "fingerprint"  # what made the method's stored vectors
    CALIBRATION = "calibration"  # its random-pair cosine distribution (engine.search.calibration)
    CENTRE = "centre"  # the mean its vectors are centred on (engine.embed.centre)

    def of(self, method: str) -> MethodKey:
        """This setting's key for ``method``."""
        return MethodKey(self, method)


@dataclass(frozen=True)
class MethodKey:
    """The key of one method's setting, stored as ``{setting}:{method}``."""

    setting: PerMethod
    method: str


MetaKey = Key | MethodKey


def stored_name(key: MetaKey) -> str:
    """The name ``key``'s value is stored under."""
    return key.value if isinstance(key, Key) else f"{key.setting.value}:{key.method}"


def get(conn: sqlite3.Connection, key: MetaKey, default: Any = None) -> Any:
    """The JSON value stored under ``key``, or ``default``."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [stored_name(key)]).fetchone()
    return json.loads(row[0]) if row else default


def put(conn: sqlite3.Connection, key: MetaKey, value: Any) -> None:
    """Store a JSON value (in the caller's transaction, if any)."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [stored_name(key), json.dumps(value)])


def delete(conn: sqlite3.Connection, key: MetaKey) -> None:
    """Forget ``key`` (in the caller's transaction)."""
    conn.execute("DELETE FROM meta WHERE key = ?", [stored_name(key)])


def reserve_ids(conn: sqlite3.Connection, key: Key, table: str, count: int) -> int:
    """Reserve ``count`` ids of ``table``, counted under ``key``, and return the first; ids are never reused, so an
    HNSW label always means one sentence."""
    stored = get(conn, key)
    if stored is None:
        stored = (conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0) + 1
    put(conn, key, stored + count)
    return int(stored)


def bump_generation(conn: sqlite3.Connection) -> None:
    """Count a change to the set of sentences; a vector index saved at another generation is stale."""
    put(conn, Key.GENERATION, generation(conn) + 1)


def generation(conn: sqlite3.Connection) -> int:
    """The count of changes to the set of sentences (:func:`bump_generation`)."""
    return int(get(conn, Key.GENERATION, 0))


class Meta:
    """The settings of one index's database: reads, and writes in the caller's transaction (if any)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def get(self, key: MetaKey, default: Any = None) -> Any:
        """The JSON value stored under ``key``, or ``default``."""
        return get(self._conn, key, default)

    def put(self, key: MetaKey, value: Any) -> None:
        """Store a JSON value under ``key``."""
        put(self._conn, key, value)

    def delete(self, key: MetaKey) -> None:
        """Forget ``key``."""
        delete(self._conn, key)

    def generation(self) -> int:
        """The count of changes to the set of sentences: a graph saved at another generation is stale."""
        return generation(self._conn)

    def bump_generation(self) -> None:
        """Count a change to the set of sentences, or to the vectors a graph holds (:func:`bump_generation`)."""
        bump_generation(self._conn)
