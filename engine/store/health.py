"""Damage to an index found before it misleads (docs/decisions/0029-damage-found-on-open.md).

SQLite reports a damaged page only when a statement reads it, and nothing at all when rows or tables are gone: a
dropped ``sentences`` table was created again, empty, by the next open, and deleting a fifth of the document rows
left searches that silently missed them. Two checks:

- on every open, :func:`cheap_problems`: the tables an index has, the ``meta`` values, and counts that must agree
  (every document's sentence count adds up to the sentences stored, the passages cover them, FTS5 has a row per
  passage), a few milliseconds even on a large index;
- :func:`page_problems`, SQLite's ``quick_check`` of every page, which costs a read of the whole file: run where it
  is affordable (``quire status`` and every indexing run on a small index, ``quire status --check``, and the first
  indexing run after one was killed or after FULL_CHECK_DAYS).

What they find is an :class:`engine.errors.IndexDamagedError` that names it and says what to do: ``quire index
--rebuild``, which reads the folders the index held from it (:func:`salvage_roots`) before it is made again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from urllib.parse import quote

from engine.errors import IndexDamagedError
from engine.store.documents import roots
from engine.store.meta import Key, PerMethod, stored_name

log = logging.getLogger(__name__)

# The tables every index of the current schema has (engine.store.schema), FTS5's own included.
TABLES = frozenset({
    "meta", "roots", "documents", "sentences", "passages", "facets", "lexical_segments", "lexical_blocks",
    "lexical_dead", "passages_fts", "passages_fts_data", "passages_fts_idx", "passages_fts_config",
    "passages_fts_docsize", "passages_vocab",
})
# The tables of an index of any schema version, and the version from which it has all of TABLES (the word index
# came with 3).
CORE_TABLES = frozenset({
    "meta", "roots", "documents", "sentences", "passages", "passages_fts", "passages_fts_data", "passages_fts_idx",
    "passages_fts_config", "passages_fts_docsize",
})
LATEST_TABLES = 3
# Counts that must agree in a sound index: (what they are, the two counts' names in :data:`_COUNTS`).
AGREEING = (
    ("the documents' sentences and the sentences stored", "documents' sentences", "sentences"),
    ("the sentences in passages and the sentences stored", "passages' sentences", "sentences"),
    ("the passages and their rows in the word search", "passages", "word search rows"),
)
_COUNTS = {
    "documents' sentences": "SELECT coalesce(sum(sentences), 0) FROM documents",
    "sentences": "SELECT count(*) FROM sentences",
    "passages' sentences": "SELECT coalesce(sum(last - first + 1), 0) FROM passages",
    "passages": "SELECT count(*) FROM passages",
    "word search rows": "SELECT count(*) FROM passages_fts_docsize",
}
# Problems quick_check lists before it stops: the first few say enough.
PAGE_PROBLEMS = 5
# A database at most this large has every page checked at every indexing run and `quire status`; above it, only
# after a killed run, every FULL_CHECK_DAYS, and on `quire status --check` (docs/decisions/0029).
FULL_CHECK_BYTES = 256 << 20
FULL_CHECK_DAYS = 7
# A database at most this large has every page checked whenever it is opened, searches included (tens of
# milliseconds; docs/decisions/0029).
OPEN_CHECK_BYTES = 32 << 20


def cheap_problems(conn: sqlite3.Connection, version: int) -> list[str]:
    """What is wrong with the tables, ``meta`` and counts of an index of schema ``version`` (empty: nothing found;
    an older schema lacks the tables its migrations add)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted((TABLES if version >= LATEST_TABLES else CORE_TABLES) - names)
    if missing:
        return [f"{'tables' if len(missing) > 1 else 'table'} {', '.join(missing)} missing"]
    problems = meta_problems(conn)
    if problems:
        return problems
    counts = dict(zip(_COUNTS, conn.execute("SELECT " + ", ".join(f"({sql})" for sql in _COUNTS.values())).fetchone()))
    for what, first, second in AGREEING:
        if counts[first] != counts[second]:
            problems.append(f"{what} disagree ({counts[first]:,} and {counts[second]:,}): rows were deleted or lost")
    return problems


def damaged(folder: Path, problems: list[str] | str) -> IndexDamagedError:
    """The error for an index found damaged: what was found, and what to do."""
    found = problems if isinstance(problems, str) else "; ".join(problems)
    return IndexDamagedError(
        f"the index at {folder} is damaged ({found}); your documents are not: make the index again with "
        f"`quire index --rebuild --db {folder}`, which reads them again from the folders the index held")


def meta_problems(conn: sqlite3.Connection) -> list[str]:
    """What is wrong with the ``meta`` table's values: not JSON, a version or generation that is no number, a method
    the index was never embedded with."""
    problems = []
    values = {}
    for key, value in conn.execute("SELECT key, value FROM meta"):
        try:
            values[key] = json.loads(value)
        except (TypeError, ValueError):
            problems.append(f"the setting {key!r} is not readable ({str(value)[:40]!r})")
    for key in (Key.SCHEMA_VERSION, Key.GENERATION):
        if key in values and (not isinstance(values[key], int) or isinstance(values[key], bool)):
            problems.append(f"the setting {key!r} is {values[key]!r}, not a number")
    method = values.get(Key.METHOD)
    if method is not None and (not isinstance(method, str) or stored_name(PerMethod.FINGERPRINT.of(method)) not in values):
        problems.append(f"the index's method {method!r} is not one it was embedded with")
    return problems


def page_problems(conn: sqlite3.Connection) -> list[str]:
    """What SQLite's quick_check finds wrong in the pages of the file (empty: nothing): every page is read."""
    found = [r[0] for r in conn.execute(f"PRAGMA quick_check({PAGE_PROBLEMS})")]
    if found == ["ok"]:
        return []
    # each problem on one line, without the header SQLite puts above those of a database
    lines = (line.strip() for problem in found for line in problem.splitlines())
    return [line for line in lines if line and not line.startswith("***")]


def salvage_roots(path: Path) -> list[str] | None:
    """The folders and files the damaged database at ``path`` was asked to index, as far as it can be read (None:
    not at all). Read-only: the file is not changed."""
    uri = "file:" + quote(str(path.resolve())) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            return roots(conn)
        finally:
            conn.close()
    except (sqlite3.Error, OSError, ValueError) as e:
        log.info("could not read the roots of %s (%s)", path, e)
        return None


def discard(folder: Path) -> list[Path]:
    """Delete a damaged index's database and saved vectors (:data:`engine.store.privacy.INDEX_FILES` but the locks), for it
    to be made again; returns what was deleted. The caller holds its write lock."""
    gone = []
    for path in sorted({p for pattern in ("index.db", "index.db-*", "vectors-*", "hnsw-*") for p in folder.glob(pattern)}):
        path.unlink(missing_ok=True)
        gone.append(path)
    log.warning("deleted the damaged index files %s", ", ".join(p.name for p in gone))
    return gone
