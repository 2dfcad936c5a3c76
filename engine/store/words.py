"""The words of one index's passages, as searches read them: FTS5's scans and vocabulary, and the word index
(engine.store.bm25, engine.store.postings) that scores the same BM25 faster, built in place for an index made
before it existed."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import sqlite_utils

from engine.errors import CancelFlag, Cancelled
from engine.store import meta, postings, scans, vocabulary
from engine.store.bm25 import Postings, Scored, WordIndex, WordStatistics
from engine.store.counts import Counts
from engine.store.meta import Key
from engine.store.scans import FtsScans
from engine.store.sentences import passage_texts

log = logging.getLogger(__name__)


class Words:
    """Lexical reads of one index (``counts`` kept between queries), and the word index's upkeep."""

    def __init__(self, db: sqlite_utils.Database, counts: Counts, fts: FtsScans) -> None:
        self._db, self._conn, self._counts, self._fts = db, db.conn, counts, fts
        self._index = WordIndex()

    def stems_from(self, prefix: str) -> list[tuple[str, int]]:
        """(stem, passages holding it) for every stem of the index that starts with ``prefix``."""
        return vocabulary.terms_from(self._conn, prefix)

    def passages_holding(self, stem: str, limit: int) -> list[int]:
        """The ids of up to ``limit`` passages that hold ``stem``."""
        return vocabulary.passages_holding(self._conn, stem, limit)

    def fts_bm25(self, match: str, limit: int | None, *, parts: int = 1) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score, higher is better) of the best passages for an FTS5 query
        (:meth:`engine.store.scans.FtsScans.bm25`)."""
        return self._fts.bm25(match, limit, parts=parts)

    def ready(self) -> bool:
        """Whether the word index covers every passage (an index made before it existed has to build it first:
        :meth:`build`)."""
        return meta.get(self._conn, Key.WORD_INDEX_BACKFILL) is None

    def postings(self, stems: Sequence[str]) -> Postings:
        """The word index's postings of ``stems`` (as the index stores them), read now for :meth:`bm25` to score
        later, on another thread: a hybrid query reads its related words' while it walks the graph."""
        return self._index.postings(self._conn, self._counts.version(), stems)

    def bm25(self, stems: Sequence[str], limit: int | None, added: tuple[np.ndarray, np.ndarray] | None = None,
             collection: WordStatistics | None = None, weights: Sequence[float] | None = None,
             within: np.ndarray | None = None, read: Postings | None = None) -> list[tuple[int, int, float]]:
        """(passage id, document id, BM25 score) of :meth:`scores`' passages, best first."""
        return self.scores(stems, limit, added, collection, weights, within, read).rows()

    def scores(self, stems: Sequence[str], limit: int | None, added: tuple[np.ndarray, np.ndarray] | None = None,
               collection: WordStatistics | None = None, weights: Sequence[float] | None = None,
               within: np.ndarray | None = None, read: Postings | None = None) -> Scored:
        """The ``limit`` best passages (None: all) for words ``stems`` (as the index stores them), best first, from
        the word index: the scores FTS5's bm25() gives for the same words OR-ed.
        ``added``: (passage ids, scores) of quoted phrases that FTS5 scored, added first. The words' document
        frequencies are kept for :meth:`frequencies`. ``collection``: the statistics to score with, for a shard of a
        collection (:meth:`statistics` summed over the shards). ``weights``: each stem's term is multiplied by its
        weight (words related to the query's, engine.search.related). ``within``: document ids, whose passages alone
        are scored. ``read``: the postings of ``stems`` read before (:meth:`postings`)."""
        scored, df = self._index.scores(self._conn, self._counts.version(), stems, limit, added, collection,
                                        weights, within, read)
        self._counts.current().update({"term:" + s: df.get(s, 0) for s in stems})
        return scored

    def statistics(self, stems: Sequence[str]) -> WordStatistics:
        """This index's BM25 statistics for ``stems`` from the word index (which must be ready)."""
        return self._index.statistics(self._conn, self._counts.version(), stems)

    def frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """Passages containing each (stemmed, as FTS5 stores it) term; terms in none are left out.

        From the word index when it is complete, else from FTS5 (fts5vocab walks each term's whole posting list: 5
        ms a query on the 3.09M-sentence corpus); kept while the database is unchanged, as typing a query asks for
        the same words at every keystroke.
        """
        cache = self._counts.current()
        missing = sorted({t for t in terms if "term:" + t not in cache})
        if missing and self.ready():
            found = self._index.frequencies(self._conn, self._counts.version(), missing)
            cache.update({"term:" + t: found.get(t, 0) for t in missing})
        elif missing:
            found = scans.document_frequencies(self._conn, missing)
            cache.update({"term:" + t: found.get(t, 0) for t in missing})
        return {t: n for t in terms if (n := cache.get("term:" + t, 0))}

    def build(self, *, batch: int = 5_000, progress: Callable[[int, int], None] | None = None,
              cancel: CancelFlag | None = None) -> None:
        """Index the words of passages written before the word index existed, ``batch`` passages per transaction,
        from where the last call stopped. The caller holds the index's write lock.

        ``progress(done, total)`` is called after each batch; ``cancel`` stops between batches (raises Cancelled).
        """
        plan = meta.get(self._conn, Key.WORD_INDEX_BACKFILL)
        if plan is None:
            return
        total = self._conn.execute("SELECT count(*) FROM passages WHERE id BETWEEN ? AND ?",
                                   [plan["next"], plan["last"]]).fetchone()[0]
        done = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"building the word index paused at {done:,} of {total:,} passages")
            rows = self._conn.execute(
                "SELECT id, doc_id FROM passages WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?",
                [plan["next"], plan["last"], batch],
            ).fetchall()
            with self._db.atomic():
                if not rows:
                    postings.forget_unindexed(self._conn)
                    postings.compact(self._conn)
                    meta.delete(self._conn, Key.WORD_INDEX_BACKFILL)
                    return
                texts = passage_texts(self._conn, [r[0] for r in rows])
                postings.add(self._conn, [r[0] for r in rows], [r[1] for r in rows],
                             [texts.get(r[0], "") for r in rows])
                plan = {**plan, "next": rows[-1][0] + 1}
                meta.put(self._conn, Key.WORD_INDEX_BACKFILL, plan)
            done += len(rows)
            if progress is not None:
                progress(done, total)

    def compact(self) -> bool:
        """Merge the word index into one segment if an indexing run wrote enough to make it worth it
        (:func:`engine.store.postings.compact`); returns whether it did."""
        with self._db.atomic():
            return postings.compact(self._conn)
