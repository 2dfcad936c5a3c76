"""The word index: for each word, the passages it is in and how often, written beside FTS5 and read by
:mod:`engine.store.bm25`.

Why it exists: FTS5's bm25() costs microseconds for every passage that holds a query word, and on a whole-corpus
index a query's words are in tens of thousands of passages, so an exact ranking took hundreds of milliseconds
(docs/benchmarks.md, "the word index"). With each word's postings as arrays the same BM25 arithmetic is a few numpy
operations. FTS5 stays for what this does not keep (word positions: quoted phrases) and for indexes made before this
existed, until their word index is built (:func:`plan_backfill`).

It lives in the index's SQLite database, written in the transactions that write the passages it describes, so a
crash leaves both or neither, and readers see it under the same WAL snapshots as everything else:

- ``lexical_segments``: one row per segment, never changed once committed. Each indexing batch writes a segment of its
  passages; segments of a level are merged MERGE_FANIN at a time into one of the next level (tiered merging, as
  Lucene does) so that a query reads a few segments rather than hundreds. A row holds the segment's passages
  (``members``, int32), their lengths in words (int32) and documents (``owners``, int32), and the first and last
  term key of each of its blocks (int64), the directory a reader searches.
- ``lexical_blocks``: a segment's postings sorted by (term key, passage), cut into blocks of BLOCK_POSTINGS; a
  block's id is ``segment << 32 | number``. A block holds its distinct term keys (int64), where each key's run ends
  (int32), and the postings' passages (int32) and counts (uint16).
- ``lexical_dead``: passages deleted since their segment was written; readers skip them, merges drop them.

An indexing run that wrote much ends by merging all segments into one (:func:`compact`); merges read their segments a
few blocks at a time, so even that one holds little in memory.

Term keys are :func:`engine.text.terms.term_key` hashes of stems, so no vocabulary table is needed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from engine.text.terms import term_counts

log = logging.getLogger(__name__)

# Postings per block: a rare word costs reading one block (~60 kB), a common one reads few rows per segment.
BLOCK_POSTINGS = 8192
# Blocks a merge reads of each segment at a time.
READ_AHEAD = 8
# Segments of one level merged together, and the size past which a merged segment merges no further: with ~770
# passages per indexing batch that makes segments of ~0.1M, ~0.9M and ~7M postings, at most ~20 segments for the
# 3.09M-sentence corpus.
MERGE_FANIN = 8
FINAL_POSTINGS = 4_000_000
FINAL_LEVEL = 1_000
# An indexing run ends by merging every segment into one (:func:`compact`) when the segments beside the largest hold
# at least this share of its postings. A query reads a block or more per word from every segment, so after a bulk
# load (the 3.09M-sentence corpus ended its run in 15 segments) one segment ranks a query's words in about half the
# time; runs that add little leave the index alone until their segments add up, so each posting is rewritten a
# logarithmic number of times.
COMPACT_SHARE = 0.5
# A segment is rewritten without its deleted passages once this share of its passages is deleted (merges drop them
# too, but a final segment is never merged).
PURGE_SHARE = 0.25
# Counts beyond this are stored as this: BM25 saturates long before (k1 = 1.2).
MAX_COUNT = np.iinfo(np.uint16).max
# Meta key of an unfinished build over passages written before the word index existed: {"next": id, "last": id}.


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


def clear(db: sqlite_utils.Database) -> None:
    """Empty the word index, for :func:`plan_backfill` to build it again (segment ids are still never reused)."""
    for table in ("lexical_segments", "lexical_blocks", "lexical_dead"):
        db.execute(f"DELETE FROM {table}")


def plan_backfill(conn: sqlite3.Connection) -> dict | None:
    """The passages an index made before the word index needs indexed (None: none), for
    :attr:`engine.store.meta.Key.WORD_INDEX_BACKFILL`."""
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


def compact(conn: sqlite3.Connection, *, force: bool = False) -> bool:
    """Merge every segment into one when COMPACT_SHARE says the index is worth rewriting (or ``force``: whenever
    there are several); returns whether it was."""
    sizes = dict(conn.execute("SELECT id, postings FROM lexical_segments ORDER BY id").fetchall())
    if len(sizes) < 2:
        return False
    largest = max(sizes.values())
    if not force and sum(sizes.values()) - largest < COMPACT_SHARE * largest:
        return False
    _merge(conn, list(sizes), FINAL_LEVEL)
    return True


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


def purge(conn: sqlite3.Connection) -> None:
    """Rewrite every segment that holds a deleted passage without it, in the caller's transaction: a deleted
    passage's postings name its words only by their hashes, which a dictionary of likely words (a PIN's ten
    thousand) would still read (docs/decisions/0028-removed-words-leave-the-disk.md)."""
    _purge(conn, share=0.0)


def _purge(conn: sqlite3.Connection, share: float = PURGE_SHARE) -> None:
    """Rewrite the segments of which at least ``share`` of passages (and at least one) are deleted."""
    dead = _dead(conn)
    if not dead.size:
        return
    for segment, level, members in conn.execute("SELECT id, level, members FROM lexical_segments").fetchall():
        members = np.frombuffer(members, dtype=np.int32)
        gone = int(np.isin(members, dead).sum())
        if gone and gone >= share * members.size:
            _merge(conn, [segment], level)


def _merge(conn: sqlite3.Connection, ids: list[int], level: int) -> None:
    """Replace segments ``ids`` by one at ``level`` holding their live passages.

    The segments are read a few blocks at a time and merged by key (:class:`_Source`), so a merge holds a few blocks
    of each, never whole segments: read whole, the 3.09M-sentence corpus's 38M postings (:func:`compact`) would be
    int64 arrays of 0.9 GB and their sorted copies, beside the graph at the end of an indexing run.
    """
    marks = ",".join("?" * len(ids))
    heads = {r[0]: r[1:] for r in conn.execute(
        f"SELECT id, members, lengths, owners FROM lexical_segments WHERE id IN ({marks})", ids)}
    members, lengths, owners = (
        _joined([np.frombuffer(heads[s][i], dtype=np.int32) for s in ids], np.int64) for i in range(3))
    live = ~np.isin(members, _dead(conn))
    gone = members[~live]
    if live.any():
        writer = _SegmentWriter(conn, level, members[live], lengths[live], owners[live])
        sources = [_Source(conn, segment) for segment in ids]
        while True:
            open_ = [s for s in sources if not s.done]
            # every key below the smallest last key held of an unfinished segment is complete in what is held
            bound = min(int(s.keys[-1]) for s in open_) if open_ else None
            keys, passages, counts = (np.concatenate(part) for part in zip(*(s.take(bound) for s in sources)))
            # parts in segment order, each sorted by key: a stable sort keeps one run per key, segments in order
            order = np.argsort(keys, kind="stable")
            if gone.size:
                order = order[~np.isin(passages[order], gone)]
            writer.add(keys[order], passages[order], counts[order])
            if not open_:
                break
            for source in open_:
                if int(source.keys[-1]) == bound:  # all it holds is that key; its run may go on in the next block
                    source.pull()
        writer.close()
    for segment in ids:
        conn.execute("DELETE FROM lexical_blocks WHERE id BETWEEN ? AND ?", [segment << 32, (segment << 32) | 0xFFFFFFFF])
    conn.executemany("DELETE FROM lexical_segments WHERE id = ?", [(s,) for s in ids])
    conn.executemany("DELETE FROM lexical_dead WHERE passage_id = ?", [(int(p),) for p in gone])
    log.debug("merged word index segments %s", ids)


def _dead(conn: sqlite3.Connection) -> np.ndarray:
    return np.array([r[0] for r in conn.execute("SELECT passage_id FROM lexical_dead")], dtype=np.int64)


def _write(conn: sqlite3.Connection, level: int, postings: _Postings) -> None:
    """Insert one segment."""
    writer = _SegmentWriter(conn, level, postings.members, postings.lengths, postings.owners)
    writer.add(postings.keys, postings.passages, postings.counts)
    writer.close()


class _SegmentWriter:
    """Writes one segment's postings as they come, in key order, a block at a time; its level becomes FINAL_LEVEL
    once it is large enough never to be merged."""

    def __init__(self, conn: sqlite3.Connection, level: int, members: np.ndarray, lengths: np.ndarray,
                 owners: np.ndarray) -> None:
        self.conn, self.level = conn, level
        segment = conn.execute(
            "INSERT INTO lexical_segments(level, postings, size, members, lengths, owners, firsts, lasts) "
            "VALUES (?, 0, ?, ?, ?, ?, x'', x'')",
            [level, int(members.size), _int32(members), _int32(lengths), _int32(owners)],
        ).lastrowid
        assert segment is not None  # an INSERT sets it
        self.segment: int = segment
        self.firsts: list[int] = []
        self.lasts: list[int] = []
        self.held: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.held_size = 0
        self.postings = 0

    def add(self, keys: np.ndarray, passages: np.ndarray, counts: np.ndarray) -> None:
        """Append postings whose keys are at or after every key added before."""
        if keys.size:
            self.held.append((keys, passages, counts))
            self.held_size += keys.size
        if self.held_size >= BLOCK_POSTINGS:
            self._flush(whole_blocks_only=True)

    def close(self) -> None:
        """Write what is held and the segment's block directory."""
        self._flush(whole_blocks_only=False)
        level = FINAL_LEVEL if self.postings >= FINAL_POSTINGS else self.level
        self.conn.execute(
            "UPDATE lexical_segments SET level = ?, postings = ?, firsts = ?, lasts = ? WHERE id = ?",
            [level, self.postings, np.array(self.firsts, dtype=np.int64).tobytes(),
             np.array(self.lasts, dtype=np.int64).tobytes(), self.segment],
        )

    def _flush(self, *, whole_blocks_only: bool) -> None:
        if not self.held:
            return
        keys, passages, counts = (np.concatenate(part) for part in zip(*self.held))
        end = keys.size - keys.size % BLOCK_POSTINGS if whole_blocks_only else keys.size
        rows = []
        for start in range(0, end, BLOCK_POSTINGS):
            block = keys[start : start + BLOCK_POSTINGS]
            runs = np.flatnonzero(np.concatenate(([True], block[1:] != block[:-1])))
            rows.append((
                (self.segment << 32) | len(self.firsts),
                block[runs].astype(np.int64).tobytes(),
                _int32(np.append(runs[1:], block.size)),
                _int32(passages[start : start + BLOCK_POSTINGS]),
                np.minimum(counts[start : start + BLOCK_POSTINGS], MAX_COUNT).astype(np.uint16).tobytes(),
            ))
            self.firsts.append(int(block[0]))
            self.lasts.append(int(block[-1]))
            self.postings += block.size
        self.conn.executemany("INSERT INTO lexical_blocks(id, terms, ends, passages, counts) VALUES (?, ?, ?, ?, ?)", rows)
        self.held = [(keys[end:], passages[end:], counts[end:])] if end < keys.size else []
        self.held_size = keys.size - end


class _Source:
    """One segment's postings for a merge, read a few blocks at a time in key order. ``keys``, ``passages`` and
    ``counts`` are what is held: read, not yet taken."""

    def __init__(self, conn: sqlite3.Connection, segment: int) -> None:
        self.conn = conn
        self.next_id, self.last_id = segment << 32, (segment << 32) | 0xFFFFFFFF
        self.keys = np.zeros(0, np.int64)
        self.passages = np.zeros(0, np.int64)
        self.counts = np.zeros(0, np.int64)
        self.rows: list[tuple] = []
        self.done = False
        self.pull()

    def pull(self) -> None:
        """Hold the segment's next block too, or mark the segment read to its end."""
        if not self.rows:
            # fetched whole: no statement stays open while the merge writes
            self.rows = self.conn.execute(
                "SELECT id, terms, ends, passages, counts FROM lexical_blocks WHERE id BETWEEN ? AND ? ORDER BY id "
                "LIMIT ?", [self.next_id, self.last_id, READ_AHEAD]).fetchall()[::-1]  # popped from the end
            if self.rows:
                # deleted as read, so that the merged segment's blocks reuse their pages instead of growing the file
                self.conn.execute("DELETE FROM lexical_blocks WHERE id BETWEEN ? AND ?", [self.next_id, self.rows[0][0]])
                self.next_id = self.rows[0][0] + 1
        if not self.rows:
            self.done = True
            return
        _, terms, ends, passages, counts = self.rows.pop()
        runs: np.ndarray = np.diff(np.frombuffer(ends, dtype=np.int32), prepend=0)  # numpy's stubs guess timedelta64
        self.keys = np.concatenate([self.keys, np.repeat(np.frombuffer(terms, dtype=np.int64), runs)])
        self.passages = np.concatenate([self.passages, np.frombuffer(passages, dtype=np.int32)])
        self.counts = np.concatenate([self.counts, np.frombuffer(counts, dtype=np.uint16)])

    def take(self, bound: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Give up the postings held with keys below ``bound`` (all of them: None)."""
        cut = self.keys.size if bound is None else int(np.searchsorted(self.keys, bound, side="left"))
        taken = self.keys[:cut], self.passages[:cut], self.counts[:cut]
        self.keys, self.passages, self.counts = self.keys[cut:], self.passages[cut:], self.counts[cut:]
        return taken


def _joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)


def _int32(values: np.ndarray) -> bytes:
    return np.asarray(values).astype(np.int32).tobytes()
