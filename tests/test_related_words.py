"""Words related to the query's (engine.search.related): chosen from the static model's word space, weighed into the
word side of hybrid ranking only, so that a note that says the query in other words is not buried under documents
holding one of its words, while the gate and words-only mode still read the query's own words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import Index, embed
from engine.config import IndexConfig
from engine.facets.space import FacetSpace
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.search import related
from engine.store.database import Store
from engine.text import terms as T

NOTES = {
    "trains.txt": "The night train to Vienna leaves at 22:10 from platform 4. Tickets are sold at the counter.",
    "alaska.txt": "Alaska is the largest state by area. The Alaska Railroad runs a rail line between Seward and "
                  "Fairbanks. Much of the state is wilderness, and many towns can be reached only by air or sea. "
                  "Fishing and oil drive the economy.",
    "pilgrims.txt": "Medieval pilgrims walked for months to reach the shrine. The journey was dangerous, and many "
                    "wrote wills before leaving. Monasteries along the way offered bread and a bed. Relics drew "
                    "crowds to the cathedral.",
    "fences.txt": "A split rail fence is built from logs laid on their sides. Farmers in the colonies used them "
                  "because they needed no nails. Cedar and chestnut lasted longest in the ground.",
    "composers.txt": "Mozart was born in Salzburg and worked for the archbishop before moving away. His operas were "
                     "first performed in court theatres. He wrote more than forty symphonies.",
    "bread.txt": "Sourdough bread rises with wild yeast and lactic bacteria. The starter is fed flour and water every "
                 "day. A long cold proof gives the crumb its open holes.",
}
QUERY = "overnight rail journey to Austria"


@pytest.fixture(scope="module")
def space() -> FacetSpace:
    return FacetSpace(embed.load("static"))


def test_each_key_word_brings_its_nearest_words_at_a_share_of_their_similarity(space: FacetSpace) -> None:
    words = T.query_terms(QUERY)
    found = related.related_words(space, words, {})
    assert {"vienna", "railwai", "railroad", "night"} <= set(found)  # stems, as the index stores words
    assert not set(found) & {t.stem for t in words}
    assert all(related.WEIGHT * related.SIMILARITY <= w <= related.WEIGHT for w in found.values())
    assert len(found) <= related.PER_WORD * len(words)


def test_only_the_rarest_key_words_bring_related_words(space: FacetSpace) -> None:
    words = T.query_terms("rail austria vienna portugal lisbon vegetable water")
    common = {"veget": 5_000, "water": 9_000}
    found = related.related_words(space, words, {t.stem: common.get(t.stem, 3) for t in words})
    assert "railwai" in found and "cabbag" not in found  # "vegetable" is one of the two most common: not a key word
    assert "cabbag" in related.related_words(space, T.query_terms("vegetable"), {})


def test_a_related_word_that_stems_to_a_stop_word_is_not_brought(space: FacetSpace) -> None:
    # "mining" is near "ore", which stems to "or": it would be scored in every passage holding "or"
    assert "ore" in [w for w, _ in space.near([space.tokenizer.id_of("mining")], 11, related.SIMILARITY)[0]]
    found = related.related_words(space, T.query_terms("mining"), {})
    assert found and not set(found) & {T.stem(w) for w in T.STOPWORDS}


def test_a_word_the_model_reads_only_as_a_short_prefix_brings_none(space: FacetSpace) -> None:
    assert related.related_words(space, T.query_terms("asasination"), {}) == {}
    assert related.related_words(space, T.query_terms("zzqx"), {}) == {}


def test_weighted_words_score_their_share_of_bm25(tmp_path: Path) -> None:
    store = Store(tmp_path / "idx")
    try:
        texts = ["the otter swims in the river", "a heron waits by the weir", "otters and herons share the bank"]
        records = tuple(SentenceRecord(t, 0, len(t), None, i) for i, t in enumerate(texts))
        store.write_documents([NewDocument("/a", 1, 1.0, "/a", "a", "text", records, ((0, 0), (1, 1), (2, 2)))],
                              np.ones((3, 4), np.float32), "m")
        plain = {p: s for p, _, s in store.words.bm25(["otter", "heron"], 10)}
        weighed = {p: s for p, _, s in store.words.bm25(["otter", "heron"], 10, weights=[0.5, 0.25])}
        alone = {w: {p: s for p, _, s in store.words.bm25([w], 10)} for w in ("otter", "heron")}
        assert set(weighed) == set(plain) == {1, 2, 3}
        for p in plain:
            expected = 0.5 * alone["otter"].get(p, 0.0) + 0.25 * alone["heron"].get(p, 0.0)
            assert weighed[p] == pytest.approx(expected)
        # the passages of some documents only, each scoring what it scores among all (the collection's IDF)
        other = tuple(SentenceRecord(t, 0, len(t), None, i) for i, t in enumerate(["an otter", "a heron", "weir"]))
        store.write_documents([NewDocument("/b", 1, 1.0, "/b", "b", "text", other, ((0, 0), (1, 1), (2, 2)))],
                              np.ones((3, 4), np.float32), "m")
        every = store.words.bm25(["otter", "heron"], 10)
        b = store.documents.get("/b").id
        within = store.words.bm25(["otter", "heron"], 10, within=np.array([b]))
        assert within == [row for row in every if row[1] == b] and len(within) == 2
        assert store.words.bm25(["weir"], 10, within=np.array([b + 1])) == []
    finally:
        store.close()


def test_postings_read_on_one_thread_score_later_as_the_index_stood_when_read(tmp_path: Path) -> None:
    """A hybrid query reads its related words' postings beside the graph search and scores them once the documents
    are known: the scores are those of a read at that moment, whatever was written since."""
    store = Store(tmp_path / "idx")
    try:
        def write(path: str, texts: list[str]) -> None:
            records = tuple(SentenceRecord(t, 0, len(t), None, i) for i, t in enumerate(texts))
            store.write_documents([NewDocument(path, 1, 1.0, path, path, "text", records,
                                               tuple((i, i) for i in range(len(texts))))],
                                  np.ones((len(texts), 4), np.float32), "m")

        write("/a", ["the otter swims in the river", "a heron waits by the weir"])
        read = store.words.postings(["otter", "heron"])
        before = store.words.bm25(["otter", "heron"], None, weights=[0.5, 0.25])
        write("/b", ["an otter", "otters by the heron's weir"])
        assert store.words.bm25(["otter", "heron"], None, weights=[0.5, 0.25], read=read) == before
        assert len(store.words.bm25(["otter", "heron"], None)) == 4  # read now: the new passages too
        with pytest.raises(AssertionError):
            store.words.bm25(["heron", "otter"], None, read=read)  # read for the words in another order
    finally:
        store.close()


def test_a_note_in_other_words_ranks_above_documents_holding_one_of_the_querys_words(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in NOTES.items():
        (docs / name).write_text(text + "\n", encoding="utf-8")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        hybrid, semantic, lexical = (idx.search(QUERY, k=10, mode=m, include_weak=True).results
                                     for m in ("hybrid", "semantic", "lexical"))
    first = hybrid[0]
    assert Path(first.path).name == "trains.txt"
    # found by no word of the query's own: its card says so, and related words only ranked it
    assert first.explanation.bm25 is None and first.explanation.contributions["words"] > 0
    # what the gate and the card weigh is the query's own words: the same evidence as in semantic mode
    evidence = {r.path: r.explanation.contributions["evidence"] for r in semantic}
    assert {r.path: r.explanation.contributions["evidence"] for r in hybrid} == evidence
    # words-only mode reads the query's words as written
    assert "trains.txt" not in {Path(r.path).name for r in lexical}
