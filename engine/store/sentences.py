"""The ``sentences`` and ``passages`` tables with the passages' FTS5 rows and word-index postings, which are written
and deleted together with them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from engine.ingest.documents import NewDocument
from engine.store import postings
from engine.store.chunks import in_chunks
from engine.store.counts import Counts

COUNT_SENTENCES = "SELECT count(*) FROM sentences"
COUNT_PASSAGES = "SELECT count(*) FROM passages"
# the columns of a SentenceRow, in its order ("end" quoted: it is an SQL keyword)
_COLUMNS = 'id, doc_id, ordinal, text, start, "end", page, passage_id, hash'


@dataclass(frozen=True)
class SentenceRow:
    """One stored sentence: its ``ordinal`` (place) in document ``doc_id``, its character offsets (``start``,
    ``end``) in the document's text and its ``page`` (None: the format has no pages), the passage it is part of, and
    the ``hash`` of its normalised text that tells boilerplate repeated across files."""

    id: int
    doc_id: int
    ordinal: int
    text: str
    start: int
    end: int
    page: int | None
    passage_id: int
    hash: int


@dataclass(frozen=True)
class StoredSentences:
    """Whole documents' sentences as stored: documents in id order, each one's sentences in order, so that a sentence
    can be embedded with its neighbours (engine.embed.context). ``missing`` marks the sentences without a vector of
    the method asked about."""

    ids: np.ndarray  # int64 sentence ids
    texts: list[str]
    hashes: np.ndarray  # int64, as stored
    doc_sizes: np.ndarray  # sentences per document, in order
    missing: np.ndarray  # bool, one per sentence


# -- writes (in the caller's transaction) ---------------------------------------------------------------------------
def insert(conn: sqlite3.Connection, docs: Sequence[NewDocument], doc_ids: Sequence[int], first_sentence: int,
           first_passage: int) -> np.ndarray:
    """Write the sentences and passages of ``docs`` (stored as ``doc_ids``) with ids from ``first_sentence`` and
    ``first_passage`` on, the passages' FTS5 rows and a word-index segment; returns the new sentence ids in order."""
    sentence_rows: list[tuple] = []
    passage_rows: list[tuple] = []
    fts_rows: list[tuple] = []
    sid, pid = first_sentence, first_passage
    for doc, doc_id in zip(docs, doc_ids):
        passage_of = np.zeros(len(doc.sentences), dtype=np.int64)
        for first, last in doc.passages:
            passage_rows.append((pid, doc_id, first, last))
            fts_rows.append((pid, " ".join(s.text for s in doc.sentences[first : last + 1])))
            passage_of[first : last + 1] = pid
            pid += 1
        for ordinal, s in enumerate(doc.sentences):
            sentence_rows.append((sid, doc_id, ordinal, s.text, s.start, s.end, s.page, int(passage_of[ordinal]), s.hash))
            sid += 1
    conn.executemany("INSERT INTO sentences VALUES (?,?,?,?,?,?,?,?,?)", sentence_rows)
    conn.executemany("INSERT INTO passages VALUES (?,?,?,?)", passage_rows)
    conn.executemany("INSERT INTO passages_fts(rowid, text) VALUES (?,?)", fts_rows)
    postings.add(conn, [r[0] for r in passage_rows], [r[1] for r in passage_rows], [r[1] for r in fts_rows])
    return np.arange(first_sentence, sid, dtype=np.int64)


def delete_document(conn: sqlite3.Connection, doc_id: int) -> list[int]:
    """Delete one document's sentences and passages with their FTS5 rows and postings; returns the sentence ids,
    which are one contiguous run (assigned together by :func:`insert`)."""
    sentences = conn.execute(
        "SELECT id, text, passage_id FROM sentences WHERE doc_id = ? ORDER BY ordinal", [doc_id]
    ).fetchall()
    if not sentences:
        return []
    # a contentless FTS5 row is deleted by sending back exactly the text it was given
    texts: dict[int, list[str]] = {}
    for _, text, passage_id in sentences:
        texts.setdefault(passage_id, []).append(text)
    conn.executemany(
        "INSERT INTO passages_fts(passages_fts, rowid, text) VALUES ('delete', ?, ?)",
        [(pid, " ".join(parts)) for pid, parts in texts.items()],
    )
    postings.forget(conn, list(texts))
    conn.execute("DELETE FROM passages WHERE doc_id = ?", [doc_id])
    conn.execute("DELETE FROM sentences WHERE doc_id = ?", [doc_id])
    return [s[0] for s in sentences]


def set_hashes(conn: sqlite3.Connection, ids: np.ndarray, hashes: np.ndarray) -> None:
    """Give sentences other hashes (in the caller's transaction)."""
    conn.executemany("UPDATE sentences SET hash = ? WHERE id = ?", zip(hashes.tolist(), ids.tolist()))


# -- sentences ------------------------------------------------------------------------------------------------------
def _rows(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> list[SentenceRow]:
    """The sentences ``where`` (the rest of the statement after ``FROM sentences``) selects, in its order."""
    return [SentenceRow(*row) for row in conn.execute(f"SELECT {_COLUMNS} FROM sentences {where}", params)]


def by_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, SentenceRow]:
    """Sentence rows keyed by id (ids not there left out)."""
    out: dict[int, SentenceRow] = {}
    for chunk, marks in in_chunks(ids):
        out.update((row.id, row) for row in _rows(conn, f"WHERE id IN ({marks})", chunk))
    return out


def hashes_and_documents(conn: sqlite3.Connection, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(sentence hash, document id) of each of ``ids``, in their order, as int64 arrays; every id must be there."""
    found: dict[int, tuple[int, int]] = {}
    for chunk, marks in in_chunks(ids):
        found.update((sid, (h, d)) for sid, h, d in
                     conn.execute(f"SELECT id, hash, doc_id FROM sentences WHERE id IN ({marks})", chunk))
    pairs = np.array([found[int(i)] for i in ids], dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def keys(conn: sqlite3.Connection, ids: Sequence[int], up_to: int) -> dict[int, tuple[int, int]]:
    """(document id, number of documents holding the same sentence, counted up to ``up_to``) of sentences keyed
    by id: what ranking needs of each of hundreds of semantic hits, the count telling boilerplate (headers,
    footers, licence blocks).

    One statement: each count is a subquery on the (hash, doc_id) covering index, which on the 3.09M-sentence
    corpus took 3.2 ms for 200 hits where a second statement for the counts made it 4.3. The cap keeps a
    sentence repeated thousands of times from being counted once per hit (120 ms for one query).
    """
    out: dict[int, tuple[int, int]] = {}
    for chunk, marks in in_chunks(ids):
        for sid, doc_id, copies in conn.execute(
            "SELECT s.id, s.doc_id, (SELECT count(*) FROM (SELECT DISTINCT t.doc_id FROM sentences t "
            f"WHERE t.hash = s.hash LIMIT ?)) FROM sentences s WHERE s.id IN ({marks})", [up_to, *chunk]
        ):
            out[sid] = (doc_id, copies)
    return out


def neighbours(conn: sqlite3.Connection, doc_id: int, ordinal: int, radius: int) -> list[SentenceRow]:
    """Sentences ``ordinal - radius`` .. ``ordinal + radius`` of a document, in order."""
    return _rows(conn, "WHERE doc_id = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal",
                 [doc_id, ordinal - radius, ordinal + radius])


def of_document(conn: sqlite3.Connection, doc_id: int) -> list[SentenceRow]:
    """Every sentence row of one document, in order."""
    return _rows(conn, "WHERE doc_id = ? ORDER BY ordinal", [doc_id])


def spans(conn: sqlite3.Connection, doc_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(first, last) sentence id of each of ``doc_ids`` that has sentences.

    A document's sentences are written together under consecutive ids (:func:`insert`), so its first sentence's id
    and its count of sentences bound exactly its sentences: one index seek per document, where listing the ids of a
    query's few hundred candidate documents would be tens of thousands of rows.
    """
    out: dict[int, tuple[int, int]] = {}
    for chunk, marks in in_chunks(doc_ids):
        for doc_id, first, count in conn.execute(
            "SELECT d.id, s.id, d.sentences FROM documents d JOIN sentences s ON s.doc_id = d.id AND s.ordinal = 0 "
            f"WHERE d.id IN ({marks})", chunk
        ):
            out[doc_id] = (first, first + count - 1)
    return out


def around(conn: sqlite3.Connection, ids: Sequence[int], reach: int) -> dict[int, tuple[int, int, str]]:
    """(document id, ordinal, text) keyed by id of the sentences ``ids`` and those within ``reach`` of them in their
    documents."""
    rows: dict[int, tuple[int, int, str]] = {}
    for chunk, marks in in_chunks(ids):
        for sid, doc_id, ordinal, text in conn.execute(
            f"SELECT w.id, w.doc_id, w.ordinal, w.text FROM sentences s JOIN sentences w ON w.doc_id = s.doc_id "
            f"AND w.ordinal BETWEEN s.ordinal - ? AND s.ordinal + ? WHERE s.id IN ({marks})",
            [reach, reach, *chunk],
        ):
            rows[sid] = (doc_id, ordinal, text)
    return rows


def whole_documents(conn: sqlite3.Connection, batch: int, *,
                    without_vectors_in: str | None = None) -> Iterator[StoredSentences]:
    """Sentences of whole documents, about ``batch`` at a time (a batch ends where a document does, so one longer
    than ``batch`` comes whole); with ``without_vectors_in`` (a vector table), only batches holding a sentence with
    no row there, those sentences marked missing."""
    missing, join = "1", ""
    if without_vectors_in is not None:
        missing, join = "v.sentence_id IS NULL", f"LEFT JOIN [{without_vectors_in}] v ON v.sentence_id = s.id"
    select = f"SELECT s.id, s.doc_id, s.ordinal, s.text, {missing}, s.hash FROM sentences s {join}"
    last = -1
    while True:
        rows = conn.execute(f"{select} WHERE s.doc_id > ? ORDER BY s.doc_id, s.ordinal LIMIT ?", [last, batch]).fetchall()
        if not rows:
            return
        last = rows[-1][1]
        if len(rows) == batch:  # the last document may go on past the limit
            rows += conn.execute(
                f"{select} WHERE s.doc_id = ? AND s.ordinal > ? ORDER BY s.ordinal", [last, rows[-1][2]]
            ).fetchall()
        flags = np.fromiter((bool(r[4]) for r in rows), dtype=bool, count=len(rows))
        if not flags.any():
            continue
        docs = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        starts = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
        yield StoredSentences(
            ids=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            texts=[r[3] for r in rows], hashes=np.fromiter((r[5] for r in rows), dtype=np.int64, count=len(rows)),
            doc_sizes=np.diff(np.r_[starts, len(rows)]), missing=flags,
        )


def all_ids(conn: sqlite3.Connection) -> np.ndarray:
    """Every sentence id."""
    rows = conn.execute("SELECT id FROM sentences").fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def random_ids(conn: sqlite3.Connection, n: int, seed: int = 0) -> np.ndarray:
    """Up to ``n`` sentence ids drawn uniformly (for calibration and the queries' null): those whose text hashes come
    first from a point ``seed`` sets. Drawn by id, the sample of one folder changed with the order its files were
    read in, and with it the relevance threshold (0.447 to 0.473 over three builds of the same 3,957 articles)."""
    start = (seed * 0x9E3779B97F4A7C15) % 2**64 - 2**63  # a point on the signed 64-bit hashes
    query = "SELECT id FROM sentences WHERE hash {} ? ORDER BY hash, doc_id LIMIT ?"
    rows = conn.execute(query.format(">="), [start, n]).fetchall()
    if len(rows) < n:  # round past the largest hash
        rows += conn.execute(query.format("<"), [start, n - len(rows)]).fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64)


# -- passages -------------------------------------------------------------------------------------------------------
def of_passages(conn: sqlite3.Connection, passage_ids: Sequence[int]) -> dict[int, list[SentenceRow]]:
    """Each passage's sentences in order, keyed by passage id (passages without sentences left out)."""
    out: dict[int, list[SentenceRow]] = {}
    for chunk, marks in in_chunks(sorted({int(i) for i in passage_ids})):
        # a passage's sentences have consecutive ids in ordinal order: ordering by id lets SQLite walk the
        # passage_id index in order instead of sorting
        for row in _rows(conn, f"WHERE passage_id IN ({marks}) ORDER BY passage_id, id", chunk):
            out.setdefault(row.passage_id, []).append(row)
    return out


def passage_texts(conn: sqlite3.Connection, passage_ids: Sequence[int]) -> dict[int, str]:
    """Each passage's text as FTS5 was given it (its sentences joined by spaces), keyed by passage id: what
    counting a passage's words needs, joined in SQLite rather than built into a dict per sentence."""
    out: dict[int, str] = {}
    for chunk, marks in in_chunks(sorted({int(i) for i in passage_ids})):
        out.update(conn.execute(
            f"SELECT passage_id, group_concat(text, ' ') FROM sentences WHERE passage_id IN ({marks}) GROUP BY passage_id",
            chunk,
        ).fetchall())
    return out


class Sentences:
    """The sentences and passages of one index, read through its connection (the functions above, on it)."""

    def __init__(self, db: sqlite_utils.Database, counts: Counts) -> None:
        self._db, self._conn, self._counts = db, db.conn, counts

    def count(self) -> int:
        """Number of indexed sentences (kept between queries, as the other counts every query needs)."""
        return self._counts.count("sentences", COUNT_SENTENCES)

    def passage_count(self) -> int:
        """Number of passages (the N of BM25's IDF)."""
        return self._counts.count("passages", COUNT_PASSAGES)

    def by_ids(self, ids: Sequence[int]) -> dict[int, SentenceRow]:
        """Sentence rows keyed by id (ids not there left out)."""
        return by_ids(self._conn, ids)

    def hashes_and_documents(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(sentence hash, document id) of each sentence of ``ids``, in their order, as arrays: what the calibration
        sample needs of thousands of sentences, without reading their text."""
        return hashes_and_documents(self._conn, ids)

    def keys(self, ids: Sequence[int], up_to: int) -> dict[int, tuple[int, int]]:
        """(document id, number of documents holding the same sentence, counted up to ``up_to``) of sentences keyed
        by id (:func:`keys`)."""
        return keys(self._conn, ids, up_to)

    def neighbours(self, doc_id: int, ordinal: int, radius: int) -> list[SentenceRow]:
        """Sentences ``ordinal - radius`` .. ``ordinal + radius`` of a document, in order."""
        return neighbours(self._conn, doc_id, ordinal, radius)

    def of_document(self, doc_id: int) -> list[SentenceRow]:
        """Every sentence row of one document, in order (what "more like this" picks its query from)."""
        return of_document(self._conn, doc_id)

    def spans(self, doc_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(first, last) sentence id of each of ``doc_ids`` that has sentences (:func:`spans`)."""
        return spans(self._conn, doc_ids)

    def random_ids(self, n: int, seed: int = 0) -> np.ndarray:
        """Up to ``n`` sentence ids drawn uniformly (:func:`random_ids`), for calibration and the queries' null."""
        if self.count() == 0:
            return np.zeros(0, np.int64)
        return random_ids(self._conn, n, seed)

    def of_passages(self, passage_ids: Sequence[int]) -> dict[int, list[SentenceRow]]:
        """Each passage's sentences in order, keyed by passage id (passages without sentences left out)."""
        return of_passages(self._conn, passage_ids)

    def passage_texts(self, passage_ids: Sequence[int]) -> dict[int, str]:
        """Each passage's text as FTS5 was given it (its sentences joined by spaces), keyed by passage id."""
        return passage_texts(self._conn, passage_ids)

    def set_hashes(self, ids: np.ndarray, hashes: np.ndarray) -> None:
        """Give sentences other hashes (a short line carries the hash of the sentence its vector stands for,
        engine.embed.context), in one transaction."""
        with self._db.atomic():
            set_hashes(self._conn, ids, hashes)
