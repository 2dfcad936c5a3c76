"""Facets in the shipped static model's space: extraction, storage, index integration and explanations."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import embedded_as_indexed

from engine import embed
from engine.facets.explain import Explainer
from engine.facets.extract import (
    context_words,
    document_facets,
    facet_batches,
    packed_document_facets,
    text_facets,
    unpack,
)
from engine.facets.service import load_space
from engine.facets.space import FacetSpace
from engine.index import Index, IndexConfig
from engine.store import schema
from engine.store.database import Store
from engine.store.meta import Key

SPACE = load_space()
META = embed.load("static").model.meta if SPACE is not None else {}
# A toy build (tests/test_staticbuild.py makes one; early checkouts ship one) has too few words and dimensions
# for meaningful labels; the hand-picked label test needs a real model.
TOY_MODEL = SPACE is None or SPACE.dim < 128 or META.get("frequent_words", 0) < 10_000
pytestmark = pytest.mark.skipif(SPACE is None, reason="the static model is not installed")

HOSPITAL = "Patients can now book hospital appointments by sending a text message to the clinic."


@pytest.mark.skipif(TOY_MODEL, reason="the shipped static model is a toy build (too few words/dimensions for labels)")
def test_hospital_sentence_has_a_medical_and_a_messaging_facet():
    facets = text_facets(SPACE, [HOSPITAL], k=5)[0]
    labels = [{w for w, _ in words} for words in SPACE.labels(facets.centres, top=3)]
    medical = {"hospital", "hospitals", "medical", "clinic", "clinics", "patients", "patient", "doctor", "doctors"}
    messaging = {"message", "messages", "messaging", "text", "texts", "sms", "email", "emails", "texting"}
    has_medical = [bool(ws & medical) for ws in labels]
    has_messaging = [bool(ws & messaging) for ws in labels]
    assert any(has_medical) and any(has_messaging), labels
    assert any(m and not s for m, s in zip(has_medical, has_messaging)), labels  # distinct facets


def test_context_has_each_content_word_once_at_its_largest_weight():
    texts = ["The clinic opens early.", "The clinic sends reminders by text.", "Lunch is at noon."]
    ids, weights = context_words(SPACE, texts, np.array([0, 0, 1]))
    the = SPACE.tokenizer.word_id("the")
    clinic = SPACE.tokenizer.word_id("clinic")
    lunch = SPACE.tokenizer.word_id("lunch")
    for row in range(3):
        real = ids[row][weights[row] > 0].tolist()
        assert len(real) == len(set(real)) and the not in real
    assert clinic in ids[0] and weights[0][ids[0].tolist().index(clinic)] == pytest.approx(SPACE.sif[clinic])
    assert lunch is None or lunch not in ids[1][weights[1] > 0]  # the third sentence is another document


def test_facets_are_deterministic_unit_and_ordered_by_mass():
    first = document_facets(SPACE, [HOSPITAL, "The doctor replies with a time."], [0, 0])
    second = document_facets(SPACE, [HOSPITAL, "The doctor replies with a time."], [0, 0])
    for a, b in zip(first, second):
        assert np.array_equal(a.centres, b.centres) and np.array_equal(a.mass, b.mass)
        assert 1 <= a.k <= 5
        np.testing.assert_allclose(np.linalg.norm(a.centres, axis=1), 1.0, atol=1e-5)
        assert np.all(np.diff(a.mass) <= 0) and a.mass.sum() == pytest.approx(1.0, abs=0.1)
    assert text_facets(SPACE, ["the of and"])[0].k == 0  # stop words only: no facet


def test_pack_round_trip_and_database_round_trip(tmp_path):
    texts = [HOSPITAL, "The doctor replies with a time.", "the of and"]
    facets = document_facets(SPACE, texts, [0, 0, 1])
    packed = packed_document_facets(SPACE, texts, [0, 0, 1])
    assert [row[0] for row in packed] == [f.k for f in facets] and facets[2].k == 0
    # the context words and one float16 coefficient per facet and word: a fraction of the centres' 256 dimensions
    k, words, mixtures, mass = packed[0]
    assert len(mixtures) == 2 * k * len(words) // 4 and len(words) // 4 <= 20 and len(mass) == 4 * k
    store = Store(tmp_path / "idx")
    try:
        store.facets.add([(7 + i, *row) for i, row in enumerate(packed)])
        rows = store.facets.read([7, 8, 9, 10])
        assert set(rows) == {7, 8, 9}
        for i, f in enumerate(facets):
            back = unpack(*rows[7 + i], SPACE)
            assert back.k == f.k
            np.testing.assert_allclose(back.mass, f.mass)
            np.testing.assert_allclose(np.linalg.norm(back.centres, axis=1), 1.0, atol=1e-5)
            assert np.all(np.sum(back.centres * f.centres, axis=1) > 0.9999)  # float16 mixtures keep the centres
    finally:
        store.close()


def test_old_schema_migrates_forward(tmp_path):
    store = Store(tmp_path / "idx")
    with store.db.conn:
        store.db.execute("DROP TABLE facets")
        store.meta.put(Key.SCHEMA_VERSION, 1)
    store.close()
    store = Store(tmp_path / "idx")
    try:
        assert "facets" in store.db.table_names()
        assert store.meta.get(Key.SCHEMA_VERSION) == schema.SCHEMA_VERSION >= 6
        assert store.words.ready()  # an empty index has no passages to build it for
    finally:
        store.close()


def test_indexing_stores_facets_when_asked_and_removing_drops_them(corpus, tmp_path, index_dir):
    with Index(tmp_path / "default") as index:
        index.add([corpus])
        assert index.store.db.execute("SELECT count(*) FROM facets").fetchone()[0] == 0  # computed when shown
    with Index(index_dir, config=IndexConfig(facets=True)) as index:
        report = index.add([corpus])
        count = index.store.db.execute("SELECT count(*) FROM facets").fetchone()[0]
        assert count == report.sentences > 0
        index.remove([corpus / "health"])
        left = index.store.db.execute("SELECT count(*) FROM facets").fetchone()[0]
        assert left == index.store.sentences.count() < count


def test_facets_stored_as_int8_centres_are_dropped_and_computed_by_searches(corpus, index_dir):
    with Index(index_dir, config=IndexConfig(facets=True)) as index:
        index.add([corpus])
        fresh = index.search("book hospital appointments by text message", k=3).to_json()
        with index.store.db.atomic():  # the index as schema 3 stored facets
            index.store.db.execute("DROP TABLE facets")
            index.store.db.execute("CREATE TABLE facets (sentence_id INTEGER PRIMARY KEY, k INTEGER NOT NULL, "
                                   "centres BLOB NOT NULL, scales BLOB NOT NULL, mass BLOB NOT NULL)")
            index.store.db.execute("INSERT INTO facets VALUES (1, 1, ?, ?, ?)", [bytes(SPACE.dim), bytes(4), bytes(4)])
            index.store.meta.put(Key.SCHEMA_VERSION, 3)
    with Index(index_dir) as index:
        assert index.store.meta.get(Key.SCHEMA_VERSION) == schema.SCHEMA_VERSION
        assert index.store.db["facets"].columns_dict == {"sentence_id": int, "k": int, "words": bytes,
                                                          "mixtures": bytes, "mass": bytes}
        assert index.store.db.execute("SELECT count(*) FROM facets").fetchone()[0] == 0
        again = index.search("book hospital appointments by text message", k=3).to_json()
    # the same facets; stored ones went through float16, so their rounded scores may differ in the last digit
    assert again["results"][0]["facets"] and len(again["results"]) == len(fresh["results"])
    for computed, stored in zip(again["results"], fresh["results"]):
        assert [(f["label"], f["words"], f["query_label"]) for f in computed["facets"]] == [
            (f["label"], f["words"], f["query_label"]) for f in stored["facets"]]
        for a, b in zip(computed["facets"], stored["facets"]):
            assert a["weight"] == pytest.approx(b["weight"], abs=2e-4)
            assert a["match"] == pytest.approx(b["match"], abs=2e-4)


def test_search_results_carry_deterministic_json_facets(corpus, index_dir):
    with Index(index_dir) as index:
        index.add([corpus])
        first = index.search("book hospital appointments by text message", k=3)
        second = index.search("book hospital appointments by text message", k=3)
    assert first.results and first.results[0].path.endswith("appointments.txt")
    data = json.loads(json.dumps(first.to_json(), allow_nan=False))
    again = json.loads(json.dumps(second.to_json()))
    for one, two in zip(data["results"], again["results"]):
        assert one["facets"] == two["facets"] and one["explanation"]["facets"] == two["explanation"]["facets"]
    top = first.results[0]
    assert top.facets and all(f.label for f in top.facets)
    evidence = top.explanation.facets
    assert evidence is not None and evidence.matches and 0 <= evidence.coverage <= 1
    assert {w.word.lower() for w in evidence.words} >= {"hospital", "appointments"}
    hospital = next(w for w in evidence.words if w.word == "hospital")
    assert hospital.coverage > 0.5  # the passage contains the word, so some facet sits near it
    assert max(i.weight for i in evidence.importance) == 1.0
    for item in evidence.importance:
        assert top.sentence[item.start : item.end] == item.word


@pytest.mark.skipif(TOY_MODEL, reason="the shipped static model is a toy build (too few words/dimensions for labels)")
def test_chips_are_named_by_words_of_the_passage_or_the_query():
    """Issue 34: chips read "zwingli", "pa", "tel" beside a sed FAQ, the vocabulary's nearest words to facets of the
    neighbouring sentences. A chip is now named by a word of the passage (or, for a facet of its neighbours, of the
    query), and a facet near no such word gets none."""
    passage, neighbour = "Porpoises are small toothed whales.", "They hunt squid in murky coastal water."
    facets = document_facets(SPACE, [passage, neighbour], [0, 0])[0]
    words = {w.lower() for w in re.findall(r"\w+", passage)}
    chips, _ = Explainer(SPACE, "ocean animals").explain([passage], [facets])[0]
    assert chips and len(chips) < facets.k  # the neighbour's facets have no word of the passage to be named by
    assert all(chip.label.lower() in words and chip.words[0] == chip.label for chip in chips)
    assert "porpoises" in [chip.label for chip in chips]  # as a person writes it, not as the sentence's start capitalised it
    assert len({chip.label for chip in chips}) == len(chips)
    # a word of the query names a facet of the neighbours that no word of the passage is near
    chips, evidence = Explainer(SPACE, "murky water").explain([passage], [facets])[0]
    assert "murky" in [chip.label for chip in chips]
    assert next(w for w in evidence.words if w.word == "murky").facet == "murky"
    # what a chip is about: the passage's words near it, then the vocabulary's closest, one word per stem
    chips, _ = Explainer(SPACE, "doctor").explain([HOSPITAL], text_facets(SPACE, [HOSPITAL]))[0]
    clinic = next(chip for chip in chips if chip.label == "clinic")
    assert clinic.words[:2] == ("clinic", "hospital")


@pytest.mark.skipif(TOY_MODEL, reason="the shipped static model is a toy build (too few words/dimensions for labels)")
def test_a_word_the_model_reads_as_a_much_shorter_one_matches_no_facet():
    # a new user's "asasination" was read as "asa", and a chip said the facet of "ASA" matched it
    tokens = {t.text: t for t in SPACE.tokens("asasination doctorr hospital")}
    assert not tokens["asasination"].faithful and tokens["doctorr"].faithful and tokens["hospital"].faithful
    _, evidence = Explainer(SPACE, "asasination doctorr hospital").explain([HOSPITAL], text_facets(SPACE, [HOSPITAL]))[0]
    facet = {w.word: w.facet for w in evidence.words}
    assert facet["asasination"] is None and facet["doctorr"] is not None and facet["hospital"] is not None


def test_word_bridges_split_the_static_cosine_exactly():
    query, passage = "texting the doctor", HOSPITAL
    explainer = Explainer(SPACE, query)
    _, evidence = explainer.explain([passage], text_facets(SPACE, [passage]))[0]
    vectors = embed.load("static").encode([query, passage])
    assert evidence.static_cosine == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-3)
    # the full pair matrix sums to the cosine; the shown pairs are its largest content-word terms
    table = SPACE.embedder.table
    q_ids, _ = SPACE.ids([query])
    p_ids, _ = SPACE.ids([passage])
    terms = table[q_ids] @ table[p_ids].T / (np.linalg.norm(table[q_ids].sum(0)) * np.linalg.norm(table[p_ids].sum(0)))
    assert terms.sum() == pytest.approx(evidence.static_cosine, abs=1e-3)
    shares = [b.share for b in evidence.bridges]
    assert shares == sorted(shares, reverse=True)
    assert all(b.query_word not in ("the",) for b in evidence.bridges)


@pytest.mark.parametrize("workers", [0, 1])
def test_indexing_tokenises_once_yet_stores_what_separate_passes_give(corpus, index_dir, workers):
    """Vectors and facets from the shared word ids (made by the reader processes when there are some) equal the
    embedder's and the facet extractor's own."""
    with Index(index_dir, config=IndexConfig(workers=workers, facets=True)) as index:
        index.add([corpus])
        rows = index.store.db.execute("SELECT id, doc_id, text FROM sentences ORDER BY id").fetchall()
        ids = [r[0] for r in rows]
        texts = [r[2] for r in rows]
        _, stored = index.store.vectors.read("static", ids)
        stored_facets = index.store.facets.read(ids)
    embedder = SPACE.embedder
    expected = embedded_as_indexed(embedder, [(r[1], r[2]) for r in rows])
    np.testing.assert_array_equal(stored, expected)  # computed from the text (engine.embed.derived), as indexed
    np.testing.assert_array_equal(embedder.embed_ids(*SPACE.ids(texts)), embedder.encode(texts))
    assert [stored_facets[i] for i in ids] == packed_document_facets(SPACE, texts, [r[1] for r in rows])
    alone = document_facets(SPACE, texts, [r[1] for r in rows])
    words, weights = context_words(SPACE, texts, np.array([r[1] for r in rows]))
    batch = next(facet_batches(SPACE, words, weights))
    for a, b in zip(batch.sets(), alone):
        assert np.array_equal(a.centres, b.centres) and np.array_equal(a.mass, b.mass)


def test_centres_labelled_before_are_not_searched_again(monkeypatch):
    space = FacetSpace(SPACE.embedder)
    centres = np.concatenate([f.centres for f in text_facets(SPACE, [HOSPITAL, "The river flooded the valley."])])
    first = space.labels(centres)
    searched: list[int] = []
    search = space._nearest_labels
    monkeypatch.setattr(space, "_nearest_labels", lambda rows, top: searched.append(len(rows)) or search(rows, top))
    assert space.labels(centres[::-1]) == first[::-1] and searched == []
    assert space.labels(centres, top=1) == [words[:1] for words in first] and searched == [len(centres)]
    monkeypatch.setattr("engine.facets.space.LABEL_CACHE_ROWS", 2)
    space.labels(centres[:3] + 1.0)
    assert len(space._labelled) == 2


def test_labelling_many_centres_at_once_equals_one_at_a_time():
    """Explanations label the query's and all results' centres in one product; batching must not change a label."""
    texts = [HOSPITAL, "The river flooded the valley after heavy rain.", "Investors sold shares as rates rose."]
    centres = np.concatenate([f.centres for f in text_facets(SPACE, texts)])
    together = FacetSpace(SPACE.embedder).labels(centres)
    fresh = FacetSpace(SPACE.embedder)  # nothing labelled before: each row is computed on its own
    alone = [fresh.labels(row[None, :])[0] for row in centres]
    assert len(together) == centres.shape[0] > len(texts)
    for batch, single in zip(together, alone):
        assert [w for w, _ in batch] == [w for w, _ in single]
        assert [s for _, s in batch] == pytest.approx([s for _, s in single], abs=1e-4)
        assert [s for _, s in batch] == sorted((s for _, s in batch), reverse=True)
    query = "texting the doctor"
    chip = Explainer(SPACE, query).explain([HOSPITAL], text_facets(SPACE, [HOSPITAL]))[0][0][0]
    assert chip.query_label in {words[0][0] for words in SPACE.labels(text_facets(SPACE, [query])[0].centres)}
