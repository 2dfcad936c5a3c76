"""A document's meaning for a query (engine.search.meaning): best sentence and centroid over all its sentences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import Index, IndexConfig
from engine.search import meaning

TAX_WITH_ONE_WHALE = (
    "Income tax returns are due in April. Whales use sound to find fish. Deductions for home offices changed this "
    "year. The tax office publishes its forms online. Late returns pay a penalty. Capital gains are taxed at a lower "
    "rate. Pension contributions reduce taxable income. Receipts must be kept for six years.\n")
ALL_ABOUT_WHALES = (
    "Killer whales hunt in family groups along the coast. They click and listen for the echoes that come back from "
    "their prey. Sperm whales dive deep to chase squid in total darkness. Humpbacks blow nets of bubbles around "
    "shoals of herring. Dolphins share many of these hunting tricks. Sound travels far and fast under water. The "
    "whales call to each other while they feed. Researchers record their songs with hydrophones.\n")


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_best_sentence_and_centroid_per_document() -> None:
    rng = np.random.default_rng(0)
    vectors = _unit(rng.normal(size=(7, 16)).astype(np.float32))
    query = vectors[1]
    spans = {10: (100, 102), 20: (103, 106)}  # two documents of 3 and 4 sentences
    ids = np.arange(100, 107)
    shuffled = rng.permutation(7)  # the vectors may come in any order
    scores = meaning.document_meaning(query, ids[shuffled], vectors[shuffled], spans)
    for doc, rows in ((10, vectors[:3]), (20, vectors[3:])):
        centroid = rows.mean(axis=0) / np.linalg.norm(rows.mean(axis=0))
        assert scores[doc] == pytest.approx((float((rows @ query).max()), float(centroid @ query)), abs=1e-5)
    assert scores[10][0] == pytest.approx(1.0, abs=1e-5)  # its second sentence is the query


def test_repeated_sentences_count_at_the_penalty_and_strangers_not_at_all() -> None:
    rng = np.random.default_rng(1)
    vectors = _unit(rng.normal(size=(4, 8)).astype(np.float32))
    query = vectors[0]
    spans = {1: (0, 1)}
    ids = np.array([0, 1, 2, 3])  # 2 and 3 belong to no document asked about
    plain = meaning.document_meaning(query, ids, vectors, spans)
    penalised = meaning.document_meaning(query, ids, vectors, spans, repeated={0}, penalty=0.5)
    assert set(plain) == {1}
    assert plain[1][0] == pytest.approx(1.0, abs=1e-5)
    assert penalised[1][0] == pytest.approx(max(0.5, float(vectors[1] @ query)), abs=1e-5)
    assert penalised[1][1] == pytest.approx(plain[1][1])  # the centroid is the document's, repeated or not


@pytest.mark.parametrize("lengths", [[10, 10, 10], [9, 10, 7, 10, 1], [1, 1, 1, 40]])
def test_each_documents_rows_are_summed_as_its_own_slice(lengths: list[int]) -> None:
    # equal runs, runs of about equal length (padded), and one run far longer than the rest (summed slice by slice)
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(sum(lengths), 16)).astype(np.float32)
    starts = np.cumsum([0, *lengths[:-1]])
    expected = np.stack([vectors[a : a + n].sum(axis=0) for a, n in zip(starts, lengths)])
    assert np.array_equal(meaning._sums(vectors, starts), expected)


def test_long_documents_are_read_at_evenly_spaced_sentences(monkeypatch) -> None:
    monkeypatch.setattr(meaning, "SCORED_SENTENCES", 100)
    ids = meaning.sentences_to_score({1: (0, 9), 2: (10, 1009)})
    assert ids[:10].tolist() == list(range(10))  # a short document is read whole
    long = ids[10:]
    assert len(long) == 50 and long[0] == 10 and long[-1] == 1009 and np.all(np.diff(long) > 0)
    assert meaning.sentences_to_score({}).size == 0


def test_spans_bound_exactly_each_documents_sentences(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"d{i}.txt").write_text(" ".join(f"Sentence {j} of file {i} is here." for j in range(3 + i)),
                                        encoding="utf-8")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        (docs / "d1.txt").write_text("Rewritten with two. And a second one.", encoding="utf-8")
        idx.add([docs])
        store = idx.store
        rows = store.db.execute("SELECT doc_id, id FROM sentences ORDER BY id").fetchall()
        spans = store.sentences.spans(sorted({d for d, _ in rows}))
        for doc_id, (first, last) in spans.items():
            assert sorted(i for d, i in rows if d == doc_id) == list(range(first, last + 1))
        assert len(spans) == 4


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_document_about_the_query_outranks_one_with_a_single_close_sentence(tmp_path: Path, mode: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tax.txt").write_text(TAX_WITH_ONE_WHALE, encoding="utf-8")
    (docs / "whales.txt").write_text(ALL_ABOUT_WHALES, encoding="utf-8")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        results = idx.search("whales hunting fish with sound", k=5, mode=mode, include_weak=True).results
    assert [Path(r.path).name for r in results] == ["whales.txt", "tax.txt"]
    # the tax file is still shown by its one close sentence, and its best cosine is the higher of the two
    assert results[1].sentence == "Whales use sound to find fish."
    assert results[1].similarity > results[0].similarity
