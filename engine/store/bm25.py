"""BM25 over the word index (:mod:`engine.store.postings`), with numpy: the scores FTS5's bm25() gives, from arrays.

FTS5's bm25() (fts5_aux.c) is, for a passage of D words in a table of N passages averaging avgdl words::

    sum over query words of  idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))
    idf = log((N - n + 0.5) / (n + 0.5)), or 1e-6 where that is not positive

with f the word's count in the passage, n the passages holding it, k1 = 1.2 and b = 0.75. :meth:`WordIndex.scores`
evaluates it in that order of operations and adds the words in the query's order, so scores equal bm25()'s wherever
the two tokenizers agree. The word index splits and stems text as :mod:`engine.text.terms` does (as queries and
highlighting do); FTS5's Porter stemmer differs from PyStemmer's on about 0.2% of words ("ecology": "ecolog" there,
"ecologi" here) and FTS5 splits a few words at marks it does not count as diacritics.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.store.chunks import in_chunks
from engine.store.topk import best_k
from engine.text.terms import term_key

BM25_K1 = 1.2
BM25_B = 0.75
# FTS5's floor for the IDF of a word in more than half of the passages.
MIN_IDF = 1e-6
# Postings that :func:`_sums` groups by sorting rather than counting into an array over every passage.
DENSE_SUMS = 50_000
# Times a query re-reads the segment list when a merge removed blocks between reading the list and the blocks.
STALE_RETRIES = 5


@dataclass(frozen=True)
class WordStatistics:
    """What BM25 knows of a collection for some words: its live passages, their summed length and the passages
    holding each word. A shard scores with its whole collection's (the sum over shards, :meth:`merged`), so that a
    passage's score does not depend on which shard holds it."""

    passages: int
    length: float
    frequencies: Mapping[str, int]

    @property
    def mean_length(self) -> float:
        """Mean passage length in words (BM25's avgdl)."""
        return self.length / self.passages if self.passages else 0.0

    @staticmethod
    def merged(parts: Sequence[WordStatistics]) -> WordStatistics:
        """The statistics of ``parts`` taken together: passages, lengths and each word's frequency summed."""
        frequencies: dict[str, int] = {}
        for part in parts:
            for stem, n in part.frequencies.items():
                frequencies[stem] = frequencies.get(stem, 0) + n
        return WordStatistics(sum(p.passages for p in parts), sum(p.length for p in parts), frequencies)


@dataclass(frozen=True)
class _Segment:
    """What a reader keeps of a segment: its passages and the directory of its blocks."""

    id: int
    members: np.ndarray
    lengths: np.ndarray
    owners: np.ndarray
    firsts: np.ndarray
    lasts: np.ndarray


@dataclass(frozen=True)
class _Snapshot:
    """The word index at one database version: per passage id, whether it is live, its length and document."""

    version: Hashable
    segments: tuple[_Segment, ...]
    live: np.ndarray
    length: np.ndarray
    owner: np.ndarray
    passages: int
    total_length: float  # of the live passages


@dataclass(frozen=True)
class Scored:
    """Passages ranked by BM25, best first (ties by id): their ids, their documents' ids and their scores."""

    passages: np.ndarray
    documents: np.ndarray
    scores: np.ndarray

    def rows(self) -> list[tuple[int, int, float]]:
        """(passage id, document id, score) of each, best first."""
        return list(zip(self.passages.tolist(), self.documents.tolist(), self.scores.tolist()))


_NOTHING = Scored(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))


@dataclass(frozen=True)
class Postings:
    """Some words' live postings as one snapshot of the word index holds them: read on one thread, scored on another
    (:meth:`WordIndex.scores`). ``lists``: each stem's (passage ids, counts), in the order of ``stems``."""

    stems: tuple[str, ...]
    snapshot: _Snapshot
    lists: list[tuple[np.ndarray, np.ndarray]]


class WordIndex:
    """One connection's reader of the word index. Segments never change once written, so what was loaded of one is
    kept for as long as it exists; the per-passage arrays are rebuilt when the database changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot: _Snapshot | None = None
        # (snapshot, mean passage length, every passage's length normaliser): :meth:`_normalisers`
        self._normalised: tuple[_Snapshot, float, np.ndarray] | None = None

    def scores(
        self, conn: sqlite3.Connection, version: Hashable, stems: Sequence[str], limit: int | None,
        added: tuple[np.ndarray, np.ndarray] | None = None, collection: WordStatistics | None = None,
        weights: Sequence[float] | None = None, within: np.ndarray | None = None, read: Postings | None = None,
    ) -> tuple[Scored, dict[str, int]]:
        """The ``limit`` best passages (None: every one) for the words ``stems`` by BM25, best first (ties by id),
        and the number of passages holding each stem (absent: none).

        ``added``: (passage ids, scores) to add before ranking, for quoted phrases that FTS5 scored; they come first
        in the sum, as phrases come first in the FTS5 query the searcher would otherwise send. ``collection``: the
        statistics to score with when this index is one shard of a collection (the numbers returned stay this
        index's own). ``weights``: each stem's BM25 term is multiplied by its weight (None: all 1, bm25()'s own).
        ``within``: document ids; only their passages are scored (each word's IDF is still the collection's).
        ``read``: the postings of ``stems`` read before (:meth:`postings`), scored as they were read.
        """
        if read is None:
            read = self.postings(conn, version, stems)
        assert read.stems == tuple(stems), "postings read for other words"
        snapshot, lists = read.snapshot, read.lists
        if collection is None:
            collection = WordStatistics(snapshot.passages, snapshot.total_length, {})
        normalisers = self._normalisers(snapshot, collection.mean_length)
        ids, terms = [], []
        documents = None if within is None else _document_mask(within)
        if added is not None and added[0].size:
            ids.append(added[0])
            terms.append(added[1])
        df: dict[str, int] = {}
        for n, (stem, (passages, counts)) in enumerate(zip(stems, lists)):
            if not passages.size:
                continue
            df[stem] = int(passages.size)
            hits = collection.frequencies.get(stem, passages.size)
            if documents is not None:
                passages, counts = _of_documents(snapshot, documents, passages, counts)
                if not passages.size:
                    continue
            ids.append(passages)
            scores = _bm25_terms(normalisers, collection, hits, passages, counts)
            terms.append(scores if weights is None else weights[n] * scores)
        if not ids:
            return _NOTHING, df
        matched, total = _sums(np.concatenate(ids), np.concatenate(terms))
        order = best_k(total, matched, total.size if limit is None else limit)
        best = matched[order]
        owners = np.zeros(best.size, dtype=np.int64)
        inside = best < snapshot.owner.size  # a phrase match may be in a passage newer than this snapshot
        owners[inside] = snapshot.owner[best[inside]]
        return Scored(best, owners, total[order]), df

    def _normalisers(self, snapshot: _Snapshot, mean_length: float) -> np.ndarray:
        """BM25's length normaliser of every passage of ``snapshot``, ``k1 * (1 - b + b * D / avgdl)``: the same for
        each word of every query until the database changes, where computing it for each posting of each word was a
        quarter of scoring a common word."""
        with self._lock:
            kept = self._normalised
            if kept is None or kept[0] is not snapshot or kept[1] != mean_length:
                with np.errstate(divide="ignore", invalid="ignore"):  # an empty index: no posting reads them
                    every = BM25_K1 * (1 - BM25_B + BM25_B * snapshot.length / mean_length)
                kept = self._normalised = (snapshot, mean_length, every)
            return kept[2]

    def frequencies(self, conn: sqlite3.Connection, version: Hashable, stems: Sequence[str]) -> dict[str, int]:
        """Live passages holding each stem (stems in none left out)."""
        return dict(self.statistics(conn, version, stems).frequencies)

    def statistics(self, conn: sqlite3.Connection, version: Hashable, stems: Sequence[str]) -> WordStatistics:
        """This index's BM25 statistics for ``stems``: what a shard adds to its collection's."""
        snapshot, lists = self._lists(conn, version, stems)
        return WordStatistics(snapshot.passages, snapshot.total_length,
                              {s: int(p.size) for s, (p, _) in zip(stems, lists) if p.size})

    def postings(self, conn: sqlite3.Connection, version: Hashable, stems: Sequence[str]) -> Postings:
        """The live postings of ``stems``, to score now or on another thread (:meth:`scores`)."""
        snapshot, lists = self._lists(conn, version, stems)
        return Postings(tuple(stems), snapshot, lists)

    def _lists(self, conn: sqlite3.Connection, version: Hashable,
               stems: Sequence[str]) -> tuple[_Snapshot, list[tuple[np.ndarray, np.ndarray]]]:
        """Each stem's live postings (passage ids, counts) and the snapshot they belong to.

        The segment list and the blocks are two reads; a merge committed between them removes blocks the list
        names, which is noticed (a block is missing) and answered by reading the list again.
        """
        keys = np.array([term_key(s) for s in stems], dtype=np.int64)
        for _ in range(STALE_RETRIES):
            snapshot = self._current(conn, version)
            lists = _fetch(conn, snapshot, keys)
            if lists is not None:
                return snapshot, lists
            version = object()  # the database moved on: read the segment list again
        raise sqlite3.OperationalError("the word index kept changing while it was read; try the search again")

    def _current(self, conn: sqlite3.Connection, version: Hashable) -> _Snapshot:
        with self._lock:
            if self._snapshot is None or self._snapshot.version != version:
                self._snapshot = _load(conn, version, self._snapshot)
            return self._snapshot


def _load(conn: sqlite3.Connection, version: Hashable, previous: _Snapshot | None) -> _Snapshot:
    """Read the segment list (loading only segments not in ``previous``) and the deleted passages."""
    known = {s.id: s for s in previous.segments} if previous else {}
    ids = [r[0] for r in conn.execute("SELECT id FROM lexical_segments ORDER BY id")]
    segments = []
    for segment in ids:
        if segment not in known:
            row = conn.execute(
                "SELECT members, lengths, owners, firsts, lasts FROM lexical_segments WHERE id = ?", [segment]
            ).fetchone()
            if row is None:
                continue  # merged away since the list was read
            members, lengths, owners = (np.frombuffer(b, dtype=np.int32) for b in row[:3])
            known[segment] = _Segment(segment, members, lengths, owners, np.frombuffer(row[3], dtype=np.int64),
                                      np.frombuffer(row[4], dtype=np.int64))
        segments.append(known[segment])
    size = 1 + max((int(s.members.max()) for s in segments if s.members.size), default=0)
    live = np.zeros(size, dtype=bool)
    length = np.zeros(size, dtype=np.float64)
    owner = np.zeros(size, dtype=np.int64)
    for s in segments:
        live[s.members] = True
        length[s.members] = s.lengths
        owner[s.members] = s.owners
    dead = np.array([r[0] for r in conn.execute("SELECT passage_id FROM lexical_dead")], dtype=np.int64)
    live[dead[dead < size]] = False
    return _Snapshot(version, tuple(segments), live, length, owner, int(live.sum()), float(length[live].sum()))


def _fetch(conn: sqlite3.Connection, snapshot: _Snapshot,
           keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Each key's live postings from the blocks that may hold it; None when a block is gone (a merge since)."""
    wanted: dict[int, list[int]] = {}
    for segment in snapshot.segments:
        # blocks are in key order: those holding a key run from the first that ends at or after it to the last
        # that starts at or before it
        lows = np.searchsorted(segment.lasts, keys, side="left")
        highs = np.searchsorted(segment.firsts, keys, side="right")
        for j, (low, high) in enumerate(zip(lows.tolist(), highs.tolist())):
            for number in range(low, high):
                wanted.setdefault((segment.id << 32) | number, []).append(j)
    found: list[list[np.ndarray]] = [[] for _ in keys]
    counts: list[list[np.ndarray]] = [[] for _ in keys]
    read = 0
    for chunk, marks in in_chunks(sorted(wanted)):
        for block, terms, ends, passages, block_counts in conn.execute(
            f"SELECT id, terms, ends, passages, counts FROM lexical_blocks WHERE id IN ({marks})", chunk
        ):
            read += 1
            terms = np.frombuffer(terms, dtype=np.int64)
            ends = np.frombuffer(ends, dtype=np.int32)
            for j in wanted[block]:
                at = int(np.searchsorted(terms, keys[j]))
                if at == terms.size or terms[at] != keys[j]:
                    continue
                first, last = (int(ends[at - 1]) if at else 0), int(ends[at])
                found[j].append(np.frombuffer(passages, dtype=np.int32, count=last - first, offset=4 * first))
                counts[j].append(np.frombuffer(block_counts, dtype=np.uint16, count=last - first, offset=2 * first))
    if read != len(wanted):
        return None
    out = []
    for ids, tfs in zip(found, counts):
        ids_ = np.concatenate(ids).astype(np.int64) if ids else np.zeros(0, np.int64)
        tfs_ = np.concatenate(tfs).astype(np.float64) if tfs else np.zeros(0, np.float64)
        alive = snapshot.live[ids_]
        # a word's passages are nearly always all live: copying them through the mask is then a copy for nothing
        out.append((ids_, tfs_) if alive.all() else (ids_[alive], tfs_[alive]))
    return out


def _of_documents(snapshot: _Snapshot, documents: np.ndarray, passages: np.ndarray,
                  counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The postings of ``passages`` (with their ``counts``) that belong to ``documents``, a mask over document ids."""
    owners = snapshot.owner[passages]
    keep = documents[np.minimum(owners, documents.size - 1)] & (owners < documents.size)
    return passages[keep], counts[keep]


def _document_mask(documents: np.ndarray) -> np.ndarray:
    """A mask over document ids, true at ``documents``."""
    mask = np.zeros(int(documents.max(initial=0)) + 1, dtype=bool)
    mask[documents] = True
    return mask


def _sums(ids: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``ids`` and the sum of their ``weights``, each sum taken in input order (as bm25() adds a
    passage's words in the query's order): ``np.bincount`` adds in input order, where ``np.add.reduceat`` adds all
    but a group's first value pairwise. Up to DENSE_SUMS postings are grouped by a stable sort, which keeps a group's
    input order; more are counted into an array over every passage id, which costs the same whatever their number (on
    the 3.09M-sentence corpus that array costs ~1.5 ms, a sort of 50k postings about as much)."""
    if ids.size <= DENSE_SUMS:
        order = np.argsort(ids, kind="stable")
        ordered = ids[order]
        first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
        return ordered[first], np.bincount(np.cumsum(first) - 1, weights=weights[order])
    total = np.bincount(ids, weights=weights)
    # the test as a mask first: nonzero over floats branches on each of them, over booleans it does not
    # (docs/decisions/0050-store-reads-on-the-query-path.md)
    matched = np.flatnonzero(total != 0)
    return matched, total[matched]


def idf(passages: int, hits: int) -> float:
    """FTS5's IDF of a word found in ``hits`` of ``passages`` passages."""
    value = math.log((passages - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else MIN_IDF


def _bm25_terms(normalisers: np.ndarray, collection: WordStatistics, hits: int, passages: np.ndarray,
                counts: np.ndarray) -> np.ndarray:
    """One word's BM25 term for each of its ``passages`` (the word is in ``hits`` of the ``collection``'s), in the
    order of operations of fts5_aux.c (``normalisers``: :meth:`WordIndex._normalisers`, computed in that order)."""
    return idf(collection.passages, hits) * ((counts * (BM25_K1 + 1.0)) / (counts + normalisers[passages]))
