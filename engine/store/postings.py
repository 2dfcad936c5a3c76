"""The word index: for each word, the passages it is in and how often, written beside FTS5 and read by
:mod:`engine.store.bm25`.

Why it exists: FTS5's bm25() costs ~2.5 us for every passage that holds a query word, and on the 3.09M-sentence
corpus a query's words are in 51k passages (median; bench/lexical_candidates.py at commit d19a57d measured both), so
an exact ranking took 100-600 ms. With each word's postings as arrays the same BM25 arithmetic is a few numpy
operations. FTS5 stays for what this does not keep (word positions: quoted phrases) and for indexes made before
this existed, until their word index is built (:func:`plan_backfill`).

It lives in the index's SQLite database, written in the transactions that write the passages it describes, so a
crash leaves both or neither, and readers see it under the same WAL snapshots as everything else:

- ``lexical_segments``: one row per segment, never changed once written. Each indexing batch writes a segment of its
  passages; segments of a level are merged MERGE_FANIN at a time into one of the next level (tiered merging, as
  Lucene does) so that a query reads a few segments rather than hundreds. A row holds the segment's passages
  (``members``, int32), their lengths in words (int32) and documents (``owners``, int32), and the first and last
  term key of each of its blocks (int64), the directory a reader searches.
- ``lexical_blocks``: a segment's postings sorted by (term key, passage), cut into blocks of BLOCK_POSTINGS; a
  block's id is ``segment << 32 | number``. A block holds its distinct term keys (int64), where each key's run ends
  (int32), and the postings' passages (int32) and counts (uint16).
- ``lexical_dead``: passages deleted since their segment was written; readers skip them, merges drop them.

Term keys are :func:`engine.search.terms.term_key` hashes of stems, so no vocabulary table is needed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from engine.search.terms import term_counts

log = logging.getLogger(__name__)

# Postings per block: a rare word costs reading one block (~60 kB), a common one reads few rows per segment.
BLOCK_POSTINGS = 8192
# Segments of one level merged together, and the size past which a merged segment merges no further: with ~770
# passages per indexing batch that makes segments of ~0.1M, ~0.9M and ~7M postings, at most ~20 segments for the
# 3.09M-sentence corpus, and no merge needs more than a few hundred MB at once.
MERGE_FANIN = 8
FINAL_POSTINGS = 4_000_000
FINAL_LEVEL = 1_000
# A segment is rewritten without its deleted passages once this share of its passages is deleted (merges drop them
# too, but a final segment is never merged).
PURGE_SHARE = 0.25
# Counts beyond this are stored as this: BM25 saturates long before (k1 = 1.2).
MAX_COUNT = np.iinfo(np.uint16).max
# Meta key of an unfinished build over passages written before the word index existed: {"next": id, "last": id}.
BACKFILL_META = "word_index_backfill"


def create(db: sqlite_utils.Database) -> None:
    """Create the word index's tables (idempotent). AUTOINCREMENT: a segment id is never reused, so readers may keep
    what they loaded of a segment for as long as its id exists."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS lexical_segments (id INTEGER PRIMARY KEY AUTOINCREMENT, level INTEGER NOT NULL, "
        "postings INTEGER NOT NULL, size INTEGER NOT NULL, members BLOB NOT NULL, lengths BLOB NOT NULL, "
        "owners BLOB NOT NULL, firsts BLOB NOT NULL, lasts BLOB NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS lexical_blocks (id INTEGER PRIMARY KEY, terms BLOB NOT NULL, ends BLOB NOT NULL, "
        "passages BLOB NOT NULL, counts BLOB NOT NULL)"
    )
    db.execute("CREATE TABLE IF NOT EXISTS lexical_dead (passage_id INTEGER PRIMARY KEY)")


def plan_backfill(conn: sqlite3.Connection) -> dict | None:
    """The passages an index made before the word index needs indexed (None: none), for :data:`BACKFILL_META`."""
    first, last = conn.execute("SELECT min(id), max(id) FROM passages").fetchone()
    return None if first is None else {"next": int(first), "last": int(last)}


@dataclass(frozen=True)
class _Postings:
    """A segment's content: its passages with their lengths and documents, and postings sorted by term key."""

    members: np.ndarray
    lengths: np.ndarray
    owners: np.ndarray
    keys: np.ndarray
    passages: np.ndarray
    counts: np.ndarray


def add(conn: sqlite3.Connection, passage_ids: Sequence[int], doc_ids: Sequence[int], texts: Sequence[str]) -> None:
    """Index the words of new passages (their ids, documents and texts as FTS5 was given them), in the caller's
    transaction, and merge segments as the new one makes due."""
    if not len(passage_ids):
        return
    members = np.asarray(passage_ids, dtype=np.int64)
    counted = term_counts(texts)
    passages = members[counted.texts]
    order = np.lexsort((passages, counted.keys))
    _write(conn, 0, _Postings(members, counted.lengths, np.asarray(doc_ids, dtype=np.int64), counted.keys[order],
                              passages[order], counted.counts[order]))
    merge(conn)


def forget(conn: sqlite3.Connection, passage_ids: Sequence[int]) -> None:
    """Mark deleted passages, in the caller's transaction."""
    conn.executemany("INSERT OR IGNORE INTO lexical_dead(passage_id) VALUES (?)", ((int(p),) for p in passage_ids))


def forget_unindexed(conn: sqlite3.Connection) -> None:
    """Drop the marks of deleted passages that no segment holds: passages deleted before a build over older passages
    (:func:`plan_backfill`) reached them, which no merge would clear."""
    members = [np.frombuffer(m, dtype=np.int32) for (m,) in conn.execute("SELECT members FROM lexical_segments")]
    dead = _dead(conn)
    held = np.concatenate(members) if members else np.zeros(0, np.int32)
    conn.executemany("DELETE FROM lexical_dead WHERE passage_id = ?",
                     [(int(p),) for p in dead[~np.isin(dead, held)]])


def merge(conn: sqlite3.Connection) -> None:
    """Merge every level that has MERGE_FANIN segments, lowest first, and rewrite segments that are mostly deleted."""
    while True:
        row = conn.execute(
            "SELECT level FROM lexical_segments WHERE level < ? GROUP BY level HAVING count(*) >= ? ORDER BY level "
            "LIMIT 1", [FINAL_LEVEL, MERGE_FANIN]
        ).fetchone()
        if row is None:
            break
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM lexical_segments WHERE level = ? ORDER BY id LIMIT ?", [row[0], MERGE_FANIN])]
        _merge(conn, ids, row[0] + 1)
    dead, total = conn.execute(
        "SELECT (SELECT count(*) FROM lexical_dead), (SELECT coalesce(sum(size), 0) FROM lexical_segments)").fetchone()
    if dead and dead >= PURGE_SHARE * total / 2:  # cheap test first: enough deletions that some segment may qualify
        _purge(conn)


def _purge(conn: sqlite3.Connection) -> None:
    dead = _dead(conn)
    for segment, level, members in conn.execute("SELECT id, level, members FROM lexical_segments").fetchall():
        members = np.frombuffer(members, dtype=np.int32)
        if np.isin(members, dead).sum() >= PURGE_SHARE * members.size:
            _merge(conn, [segment], level)


def _merge(conn: sqlite3.Connection, ids: list[int], level: int) -> None:
    """Replace segments ``ids`` by one at ``level`` holding their live passages."""
    parts = [_read(conn, segment) for segment in ids]
    dead = _dead(conn)
    members = np.concatenate([p.members for p in parts])
    live = ~np.isin(members, dead)
    keys = np.concatenate([p.keys for p in parts])
    passages = np.concatenate([p.passages for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    kept = ~np.isin(passages, members[~live])
    # each part is sorted by key and no passage is in two parts: a stable sort by key keeps one run per key
    order = np.argsort(keys[kept], kind="stable")
    merged = _Postings(members[live], np.concatenate([p.lengths for p in parts])[live],
                       np.concatenate([p.owners for p in parts])[live], keys[kept][order], passages[kept][order],
                       counts[kept][order])
    for segment in ids:
        conn.execute("DELETE FROM lexical_blocks WHERE id BETWEEN ? AND ?", [segment << 32, (segment << 32) | 0xFFFFFFFF])
    conn.executemany("DELETE FROM lexical_segments WHERE id = ?", [(s,) for s in ids])
    conn.executemany("DELETE FROM lexical_dead WHERE passage_id = ?", [(int(p),) for p in members[~live]])
    if merged.members.size:
        _write(conn, level, merged)
    log.debug("merged word index segments %s into one of %d postings", ids, merged.keys.size)


def _dead(conn: sqlite3.Connection) -> np.ndarray:
    return np.array([r[0] for r in conn.execute("SELECT passage_id FROM lexical_dead")], dtype=np.int64)


def _write(conn: sqlite3.Connection, level: int, postings: _Postings) -> None:
    """Insert one segment; its level becomes FINAL_LEVEL once it is large enough never to be merged."""
    keys = postings.keys
    starts = np.arange(0, keys.size, BLOCK_POSTINGS)
    firsts = keys[starts] if keys.size else keys
    lasts = keys[np.minimum(starts + BLOCK_POSTINGS, keys.size) - 1] if keys.size else keys
    if keys.size >= FINAL_POSTINGS:
        level = FINAL_LEVEL
    segment = conn.execute(
        "INSERT INTO lexical_segments(level, postings, size, members, lengths, owners, firsts, lasts) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [level, int(keys.size), int(postings.members.size), _int32(postings.members), _int32(postings.lengths),
         _int32(postings.owners), firsts.astype(np.int64).tobytes(), lasts.astype(np.int64).tobytes()],
    ).lastrowid
    rows = []
    for number, start in enumerate(starts.tolist()):
        block = keys[start : start + BLOCK_POSTINGS]
        runs = np.flatnonzero(np.concatenate(([True], block[1:] != block[:-1])))
        rows.append((
            (segment << 32) | number,
            block[runs].astype(np.int64).tobytes(),
            _int32(np.append(runs[1:], block.size)),
            _int32(postings.passages[start : start + BLOCK_POSTINGS]),
            np.minimum(postings.counts[start : start + BLOCK_POSTINGS], MAX_COUNT).astype(np.uint16).tobytes(),
        ))
    conn.executemany("INSERT INTO lexical_blocks(id, terms, ends, passages, counts) VALUES (?, ?, ?, ?, ?)", rows)


def _read(conn: sqlite3.Connection, segment: int) -> _Postings:
    """A whole segment, for merging."""
    members, lengths, owners = conn.execute(
        "SELECT members, lengths, owners FROM lexical_segments WHERE id = ?", [segment]).fetchone()
    keys, passages, counts = [], [], []
    for terms, ends, block_passages, block_counts in conn.execute(
        "SELECT terms, ends, passages, counts FROM lexical_blocks WHERE id BETWEEN ? AND ? ORDER BY id",
        [segment << 32, (segment << 32) | 0xFFFFFFFF],
    ):
        runs = np.diff(np.frombuffer(ends, dtype=np.int32), prepend=0)
        keys.append(np.repeat(np.frombuffer(terms, dtype=np.int64), runs))
        passages.append(np.frombuffer(block_passages, dtype=np.int32))
        counts.append(np.frombuffer(block_counts, dtype=np.uint16))
    return _Postings(
        np.frombuffer(members, dtype=np.int32).astype(np.int64), np.frombuffer(lengths, dtype=np.int32).astype(np.int64),
        np.frombuffer(owners, dtype=np.int32).astype(np.int64), _joined(keys, np.int64), _joined(passages, np.int64),
        _joined(counts, np.int64),
    )


def _joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)


def _int32(values: np.ndarray) -> bytes:
    return np.asarray(values).astype(np.int32).tobytes()
