"""Ways to damage an index's database, as a failing disk, a killed tool or a hand at the sqlite3 prompt would.

Used by tests/test_damage_found.py and by ``bench/hostile_damage.py``, so that both damage the same way.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

from engine.store.meta import Key


def overwrite(db: Path, at: int, data: bytes) -> None:
    """Write ``data`` over the file at byte ``at``."""
    with db.open("r+b") as f:
        f.seek(at)
        f.write(data)


def sql(db: Path, *statements: str) -> None:
    """Run ``statements`` on the database and commit them."""
    conn = sqlite3.connect(db)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def page_size(db: Path) -> int:
    """The database's page size in bytes."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


def random_bytes_at(share: float, count: int = 4096) -> Callable[[Path], None]:
    """Damage: ``count`` random bytes (seeded by ``share``) at ``share`` of the file's length."""
    return lambda db: overwrite(db, int(db.stat().st_size * share), random.Random(share).randbytes(count))


def flip_in_text(words: bytes) -> Callable[[Path], None]:
    """Damage: the first bytes of ``words`` in the file made invalid UTF-8 (SQLite gives the text back, Python
    cannot decode it)."""
    return lambda db: overwrite(db, db.read_bytes().index(words), b"\xff\xfe")


def replace_by_folder(db: Path) -> None:
    """Damage: the database file replaced by an empty folder."""
    db.unlink()
    db.mkdir()


def _meta(key: Key, value: str) -> Callable[[Path], None]:
    return lambda db: sql(db, f"UPDATE meta SET value = '{value}' WHERE key = '{key.value}'")


def _pages(start: Callable[[Path], int], data: Callable[[int], bytes]) -> Callable[[Path], None]:
    return lambda db: overwrite(db, start(db), data(page_size(db)))


# Each damage the issue found unnoticed or answered with a traceback (issue 58, items 4 and 9), by name.
DAMAGE: dict[str, Callable[[Path], None]] = {
    "random bytes at 75%": random_bytes_at(0.75),
    "page 2 damaged": _pages(page_size, os.urandom),
    "last page zeroed": _pages(lambda db: db.stat().st_size - page_size(db), bytes),
    "table sentences dropped": lambda db: sql(db, "DROP TABLE sentences"),
    "table passages_fts dropped": lambda db: sql(db, "DROP TABLE passages_fts"),
    "a seventh of the sentences deleted": lambda db: sql(db, "DELETE FROM sentences WHERE id % 7 = 0"),
    "a fifth of the documents deleted": lambda db: sql(db, "DELETE FROM documents WHERE id % 5 = 0"),
    "a setting that is not JSON": _meta(Key.GENERATION, "{oops"),
    "schema_version 'abc'": _meta(Key.SCHEMA_VERSION, '"abc"'),
    "method sbert": _meta(Key.METHOD, '"sbert"'),
}
