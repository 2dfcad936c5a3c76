"""Which documents a search may return: under some folders, of some file types, modified within a time range (the
filters of Recoll and DocFetcher). Read from the ``documents`` table by one statement; the searcher keeps the
documents this returns (engine.search.searcher)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from engine.filestate import FileState
from engine.text.paths import to_column

# The note of a filtered search that no indexed document passes (a type nothing indexed has): the window tells
# the person to change the filters rather than the words.
NOTHING_PASSES = "no indexed document passes these filters"


@dataclass(frozen=True)
class Filters:
    """``folders``: absolute paths, a document at or under any of them; ``types``: file name extensions without the
    dot ("pdf", "md"), any case; ``modified_after`` / ``modified_before``: seconds since the epoch (the file's
    modification time when it was indexed). Empty or None: no limit on that."""

    folders: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    modified_after: float | None = None
    modified_before: float | None = None

    def __bool__(self) -> bool:
        return bool(self.folders or self.types or self.modified_after is not None
                    or self.modified_before is not None)


def _any(clauses: list[str]) -> str:
    return "(" + " OR ".join(clauses) + ")"


def matching_documents(conn: sqlite3.Connection, filters: Filters) -> frozenset[int]:
    """The ids of the indexed documents that ``filters`` lets through."""
    where, params = [f"status = '{FileState.INDEXED}'"], []
    if filters.folders:
        clauses = []
        for folder in filters.folders:
            prefix = to_column(folder.rstrip("/\\") + "/")
            clauses.append("path = ? OR substr(path, 1, ?) = ?")
            params += [to_column(folder), len(prefix), prefix]
        where.append(_any(clauses))
    if filters.types:
        suffixes = ["." + t.lower().lstrip(".") for t in filters.types]
        where.append(_any(["lower(substr(path, -?)) = ?"] * len(suffixes)))
        params += [v for s in suffixes for v in (len(s), s)]
    if filters.modified_after is not None:
        where.append("mtime >= ?")
        params.append(filters.modified_after)
    if filters.modified_before is not None:
        where.append("mtime < ?")
        params.append(filters.modified_before)
    rows = conn.execute(f"SELECT id FROM documents WHERE {' AND '.join(where)}", params)
    return frozenset(r[0] for r in rows)
