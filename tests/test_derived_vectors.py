"""The static method's vectors are computed from the text when read, never stored (engine.embed.derived), and an
index that stored them (schema 5) drops them and gives their space back."""

from __future__ import annotations

from pathlib import Path

import docgen
import numpy as np
import pytest

from engine import Index, IndexConfig, Mode
from engine.embed import context
from engine.store import schema
from engine.store.meta import Key
from engine.store.vectorrows import VECTOR_DTYPE

CONFIG = IndexConfig(workers=0)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """Files of the toy corpus, ten lines each: short lines among long ones, so vectors span neighbours."""
    docgen.write_toy_corpus(tmp_path / "docs", lines=300)
    return tmp_path / "docs"


def _whole_documents(idx: Index) -> tuple[np.ndarray, np.ndarray]:
    """(ids, vectors) of every sentence, embedded document by document as indexing does."""
    rows = idx.store.db.execute("SELECT id, doc_id, text FROM sentences ORDER BY doc_id, ordinal").fetchall()
    docs = np.array([r[1] for r in rows])
    sizes = np.diff(np.r_[np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]]), len(rows)])
    vectors, _ = context.encode(idx.methods.embedder(), [r[2] for r in rows], sizes)
    return np.array([r[0] for r in rows]), vectors


def test_no_static_vector_is_stored_and_any_sentence_reads_as_indexed(docs: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "idx", config=CONFIG) as idx:
        idx.add([docs])
        assert idx.store.vectors.tables() == [] and idx.status().methods_embedded == ("static",)
        ids, whole = _whole_documents(idx)
        picked = np.random.default_rng(0).choice(ids.size, 40, replace=False)
        asked = [*ids[picked].tolist(), 10**9]  # one that does not exist is left out
        found, vectors = idx.store.vectors.read("static", asked)
        assert found.tolist() == ids[picked].tolist()
        np.testing.assert_array_equal(vectors, whole[picked])  # each from a few neighbours, as from its document
        every, _ = idx.store.vectors.read("static")
        assert every.tolist() == sorted(ids.tolist())
        assert len(idx.store.vectors.ids("static")) == ids.size
        assert idx.search("Rigel supergiant", mode=Mode.SEMANTIC).results


def _answers(idx: Index, queries: list[str]) -> list[list[tuple]]:
    """Each query's results: path and the labels and words of its facets (stored or computed)."""
    return [[(r.path, [(f.label, f.words) for f in r.facets]) for r in idx.search(q, mode=Mode.SEMANTIC).results]
            for q in queries]


def test_schema_5_drops_stored_static_vectors_and_facets_and_gives_their_space_back(docs: Path, tmp_path: Path
                                                                                   ) -> None:
    folder = tmp_path / "idx"
    queries = ["the river at dawn", "a blue star in Orion", "trains and stations"]
    with Index(folder, config=IndexConfig(workers=0, facets=True)) as idx:  # as schema 5 indexed, facets stored
        idx.add([docs])
        ids, whole = _whole_documents(idx)
        assert idx.store.db.execute("SELECT count(*) FROM facets").fetchone()[0] == ids.size
        before = _answers(idx, queries)
        # what schema 5 stored: a float16 row per sentence
        table = schema.create_vector_table(idx.store.db, "static")
        with idx.store.db.atomic():
            idx.store.db.conn.executemany(f"INSERT INTO [{table}] VALUES (?, ?)",
                                          zip(ids.tolist(), (v.tobytes() for v in whole.astype(VECTOR_DTYPE))))
            idx.store.meta.put(Key.SCHEMA_VERSION, 5)
        idx.store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = (folder / "index.db").stat().st_size
    with Index(folder, create=False, config=CONFIG) as idx:
        assert idx.store.meta.get(Key.SCHEMA_VERSION) == schema.SCHEMA_VERSION >= 6
        assert "vectors_static" not in idx.store.db.table_names()
        assert idx.store.db.execute("SELECT count(*) FROM facets").fetchone()[0] == 0
        assert (folder / "index.db").stat().st_size < size - ids.size * whole.shape[1]  # at least half came back
        assert _answers(idx, queries) == before  # the same ranking, the same facets computed when shown
        assert idx.add().documents == 0
