"""The SQLite schema of an index, versioned so that later releases migrate old indexes forward."""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

from engine import embed
from engine.store import openings, postings

# Sentences with Han, kana or Hangul letters: an index that holds any has its word index rebuilt on the way to 5.
_CJK_GLOB = "*[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]*"

# FTS5 over passages (runs of sentences), not single sentences: BM25 needs the term statistics of a
# paragraph-sized unit, or a multi-word query whose words sit in neighbouring sentences never matches well.
# The table is contentless (sentences already hold the text); deleting a row means re-sending its text.
# Porter stemming plus diacritics folding is what users expect from "search by words".
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"


def create(db: sqlite_utils.Database) -> None:
    """Create every table of a fresh index (idempotent)."""
    db.table("meta").create({"key": str, "value": str}, pk="key", if_not_exists=True)
    db.table("roots").create({"path": str, "added_at": float}, pk="path", if_not_exists=True)
    db.table("documents").create(
        {
            "id": int,
            "path": str,
            "size": int,
            "mtime": float,
            "hash": str,
            "status": str,  # indexed | skipped | failed
            "reason": str,
            "title": str,
            "kind": str,
            "sentences": int,
            "updated_at": float,
            "byline": str,  # who wrote it and when, for a result's card (an e-mail's sender and date)
        },
        pk="id",
        not_null={"path", "status"},
        if_not_exists=True,
    )
    db.table("documents").create_index(["path"], unique=True, if_not_exists=True)
    db.table("documents").create_index(["hash"], if_not_exists=True)
    db.table("sentences").create(
        {
            "id": int,
            "doc_id": int,
            "ordinal": int,
            "text": str,
            "start": int,
            "end": int,
            "page": int,
            "passage_id": int,
            "hash": int,  # of the normalised text: finds boilerplate repeated across files
        },
        pk="id",
        not_null={"doc_id", "ordinal", "text"},
        if_not_exists=True,
    )
    db.table("sentences").create_index(["doc_id", "ordinal"], unique=True, if_not_exists=True)
    # boilerplate detection counts the documents of each hash: with doc_id in the index that is an index-only scan,
    # not one table lookup per copy of a sentence repeated thousands of times. Indexes made with the old (hash)
    # index get this one at their next open.
    db.table("sentences").create_index(["hash", "doc_id"], if_not_exists=True)
    db.execute("DROP INDEX IF EXISTS idx_sentences_hash")
    # search fetches the sentences of its best passages; without this index each fetch scans every sentence.
    # create() runs at every open, so indexes made before it was added get it then.
    db.table("sentences").create_index(["passage_id"], if_not_exists=True)
    db.table("passages").create(
        {"id": int, "doc_id": int, "first": int, "last": int}, pk="id", if_not_exists=True
    )
    db.table("passages").create_index(["doc_id"], if_not_exists=True)
    create_facets_table(db)
    postings.create(db)
    openings.create(db.conn)
    if "passages_fts" not in db.table_names():
        db.execute(f"CREATE VIRTUAL TABLE passages_fts USING fts5(text, content='', tokenize='{FTS_TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE passages_vocab USING fts5vocab(passages_fts, 'row')")


def vector_table(method: str) -> str:
    """Table holding one method's vectors (float16 blobs keyed by sentence id)."""
    return "vectors_" + "".join(ch if ch.isalnum() else "_" for ch in method)


def create_vector_table(db: sqlite_utils.Database, method: str) -> str:
    """Create the vector table of ``method`` if needed and return its name."""
    name = vector_table(method)
    if name not in db.table_names():
        db.execute(f"CREATE TABLE [{name}] (sentence_id INTEGER PRIMARY KEY, vector BLOB NOT NULL)")
    return name


def create_facets_table(db: sqlite_utils.Database) -> None:
    """Facets of each sentence (``engine.facets.extract.FacetBatch.packed``): k centres as mixtures of the context
    words' vectors, and their masses."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS facets (sentence_id INTEGER PRIMARY KEY, k INTEGER NOT NULL, "
        "words BLOB NOT NULL, mixtures BLOB NOT NULL, mass BLOB NOT NULL)"
    )


def _facets_table(db: sqlite_utils.Database) -> bool:
    """2: the facets table (issue 7). Sentences indexed before have no facets until re-indexed; searches compute
    those on the fly."""
    create_facets_table(db)
    return False


def _word_index(db: sqlite_utils.Database) -> bool:
    """3: the word index's tables (engine.store.postings). The passages already there are indexed by the next
    indexing run; searches use FTS5 alone until that is done."""
    postings.create(db)
    return True


def _facets_as_mixtures(db: sqlite_utils.Database) -> bool:
    """4: facets stored as word mixtures, not int8 centres. Those stored before are dropped and, like those of 1,
    computed by searches when needed."""
    db.execute("DROP TABLE IF EXISTS facets")
    create_facets_table(db)
    return False


def _cjk_pairs(db: sqlite_utils.Database) -> bool:
    """5: CJK text counted as pairs of letters in the word index (engine.text.terms): the word index of an index
    that holds CJK text, which counted it as whole runs of letters, is emptied to be built again."""
    if db.execute("SELECT 1 FROM sentences WHERE text GLOB ? LIMIT 1", [_CJK_GLOB]).fetchone() is None:
        return False
    postings.clear(db)
    return True


def _no_derived_rows(db: sqlite_utils.Database) -> bool:
    """6: no stored vectors of the methods whose vectors are computed from the text (engine.embed.derived, the
    static model's), nor stored facets, which results compute when shown (engine.config.IndexConfig.facets). The
    caller gives their space back."""
    for method in embed.derived():
        db.execute(f"DROP TABLE IF EXISTS [{vector_table(method)}]")
    db.execute("DELETE FROM facets")
    return False


def _bylines(db: sqlite_utils.Database) -> bool:
    """7: a document's byline (who wrote it and when: an e-mail's sender and date, engine.ingest.mail), shown on its
    result's card. Documents indexed before have none; mail is read again when a run finds it changed."""
    if "byline" not in db.table("documents").columns_dict:
        db.execute("ALTER TABLE documents ADD COLUMN byline TEXT")
    return False


# Every change of the schema, in order: (the version it makes, the step from the version before). A step returns
# whether the word index has to be built (again) for the passages already there. A new change goes at the end.
MIGRATIONS: tuple[tuple[int, Callable[[sqlite_utils.Database], bool]], ...] = (
    (2, _facets_table),
    (3, _word_index),
    (4, _facets_as_mixtures),
    (5, _cjk_pairs),
    (6, _no_derived_rows),
    (7, _bylines),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def migrate(db: sqlite_utils.Database, version: int) -> bool:
    """Bring an index made with schema ``version`` up to :data:`SCHEMA_VERSION` by the steps of :data:`MIGRATIONS`
    after it, in order (in the caller's transaction; :func:`create` has run); returns whether the word index has to
    be built (again) for the passages already there."""
    rebuild = False
    for to, step in MIGRATIONS:
        if version < to:
            rebuild = step(db) or rebuild
    return rebuild
