"""The readers' share of static-model work: word ids and facets equal to the embedder's and the facet extractor's
own, in any process, for documents prepared together."""

from __future__ import annotations

import pickle

import numpy as np
from conftest import embedded_as_indexed

from engine.config import IndexConfig
from engine.facets.extract import packed_document_facets
from engine.facets.service import FacetWriter, load_space
from engine.index import Index
from engine.indexing.prepare import StaticPreparer
from engine.ingest.extract import extract
from engine.ingest.readers.base import Limits
from engine.store.database import Store

TEXTS = [
    (
        "Tokenisers split words at punctuation! Ünïcode naïveté, café-au-lait and zzqxwordsnotinvocab too.\n\n"
        "A second paragraph: 3.14 is not a word, but Dr. Smith's results are."
    ),
    "",
    "The clinic sends reminders by text message. Patients book appointments online.",
]


def test_a_preparer_sent_to_another_process_gives_the_embedders_ids_and_the_same_facets(tmp_path):
    space = load_space()
    paths = []
    for i, text in enumerate(TEXTS):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    read = [extract(str(p), Limits()) for p in paths]
    assert read[1].document is None
    preparer = StaticPreparer(None, space)
    blob = pickle.dumps(preparer)
    assert len(blob) < 1000  # the model's path, not its vocabulary or vectors, travels with every task
    elsewhere = pickle.loads(blob)
    here, there = preparer(read), elsewhere(read)
    assert preparer.embedder is space.embedder and there[1].words is None and there[1].facets is None
    docs = [o.document for o in read if o.document is not None]
    texts = [s.text for d in docs for s in d.sentences]
    doc_of = np.repeat(np.arange(len(docs)), [len(d.sentences) for d in docs])
    facets = packed_document_facets(space, texts, doc_of)
    for prepared in (here, there):
        start = 0
        for outcome in (prepared[0], prepared[2]):
            own = [s.text for s in outcome.document.sentences]
            flat, offsets = space.embedder.tokenizer.encode(own)
            np.testing.assert_array_equal(outcome.words[0], flat)
            np.testing.assert_array_equal(outcome.words[1], offsets)
            np.testing.assert_array_equal(space.embedder.embed_ids(*outcome.words), space.embedder.encode(own))
            # the same to the bit whatever else the task held (engine.facets.extract._padded)
            assert outcome.facets == facets[start : start + len(own)] == packed_document_facets(space, own, [0] * len(own))
            start += len(own)


def test_without_facets_a_preparer_only_tokenises():
    space = load_space()
    outcome = StaticPreparer(space.embedder)([extract(__file__, Limits())])[0]
    assert outcome.facets is None and outcome.words[1].size == len(outcome.document.sentences) + 1


def test_documents_whose_preparation_fails_are_indexed_all_the_same(corpus, index_dir, monkeypatch, caplog):
    def broken(self, outcomes):
        raise MemoryError("no room for facets")

    monkeypatch.setattr(StaticPreparer, "__call__", broken)
    with Index(index_dir, config=IndexConfig(workers=0, facets=True)) as index:
        report = index.add([corpus])
        rows = index.store.db.execute("SELECT id, doc_id, text FROM sentences ORDER BY id").fetchall()
        _, stored = index.store.vectors.read("static", [r[0] for r in rows])
        assert index.store.db.execute("SELECT count(*) FROM facets").fetchone()[0] == 0
        found = index.search("book hospital appointments by text message", k=3)
    assert report.sentences == len(rows) > 0 and not report.issues
    assert "preparing" in caplog.text
    expected = embedded_as_indexed(load_space().embedder, [(r[1], r[2]) for r in rows])
    np.testing.assert_array_equal(stored, expected)  # computed from the text (engine.embed.derived), as indexed
    assert found.results[0].facets  # computed when asked for, as for sentences indexed without facets


def test_the_writer_stores_each_documents_facets_under_its_own_sentences(tmp_path):
    space = load_space()
    (tmp_path / "a.txt").write_text("One sentence here. Another one there.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("The clinic opens early. Reminders go out by text. Lunch is at noon.", encoding="utf-8")
    first, second = (extract(str(tmp_path / name), Limits()).document for name in ("a.txt", "b.txt"))
    rows = packed_document_facets(space, [s.text for s in second.sentences], [0] * len(second.sentences))
    store = Store(tmp_path / "idx")
    try:
        FacetWriter(store, space)
        vectors = np.zeros((5, 8), np.float32)
        _, ids = store.write_documents([first, second], vectors, "m", facets=[None, rows])
        stored = store.facets.read(ids.tolist())
    finally:
        store.close()
    assert len(first.sentences) == 2 and stored == dict(zip(ids[2:].tolist(), rows))
