"""Query handling of the searcher on a real index: limits, long queries, words the model does not know."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fts5_check import assert_word_index_matches_fts5

from engine import Index, IndexConfig
from engine.errors import QueryError
from engine.search.query import MAX_QUERY_CHARS
from engine.store.connection import SQLITE_MMAP_BYTES
from engine.store.database import Store
from engine.store.documents import Documents
from engine.store.meta import Key
from engine.store.vectors import VectorIndex
from engine.store.words import Words
from engine.text import terms as T

RIGEL = "Rigel is a blue supergiant star in the constellation of Orion."


@pytest.fixture
def idx(corpus: Path, index_dir: Path):
    with Index(index_dir, config=IndexConfig(workers=0)) as index:
        index.add([corpus])
        yield index


@pytest.mark.parametrize("query", ["", "  \n ", "x" * (MAX_QUERY_CHARS + 1)])
def test_unusable_query_raises_query_error(idx: Index, query: str) -> None:
    with pytest.raises(QueryError):
        idx.search(query)


def test_k_must_be_positive(idx: Index) -> None:
    with pytest.raises(QueryError, match="k must be"):
        idx.search(RIGEL, k=0)


def test_query_at_the_limit_is_accepted(idx: Index) -> None:
    # a pasted page of MAX_QUERY_CHARS characters is searched, not refused, and still finds what it is about
    response = idx.search(("porpoises hunt fish. " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS])
    assert not response.nothing_relevant
    assert Path(response.results[0].path).name == "porpoise.md"


def test_pasted_passage_is_searched_sentence_by_sentence(idx: Index) -> None:
    passage = " ".join([RIGEL, "Astronomers measure its distance with parallax from space telescopes."] * 4)
    response = idx.search(passage, k=1, mode="semantic")
    assert Path(response.results[0].path).name == "rigel.txt"
    assert response.results[0].similarity > 0.5


def test_a_query_without_words_leaves_a_note(idx: Index) -> None:
    response = idx.search("!!! ???", mode="semantic", include_weak=True)
    assert response.results == () and response.nothing_relevant
    assert any("no word of the query" in note for note in response.notes)


def test_the_response_names_the_query_words_no_passage_holds(idx: Index) -> None:
    # as typed, once each, whatever their case; words the index holds are not named
    assert idx.search("Zeppelin porpoises zeppelin xylophone echolocation").missing == ("Zeppelin", "xylophone")
    assert idx.search("Zeppelin porpoises", mode="lexical").missing == ("Zeppelin",)
    assert idx.search("porpoises echolocation").missing == ()
    # semantic search ranks by meaning, but weighs the words too in judging whether anything is relevant
    assert idx.search("Zeppelin porpoises", mode="semantic").missing == ("Zeppelin",)


def test_lexical_results_carry_no_cosine_and_highlight_the_words(idx: Index) -> None:
    best = idx.search("echolocation squid", k=1, mode="lexical").results[0]
    assert Path(best.path).name == "porpoise.md" and best.similarity is None
    marked = {best.sentence[h.start : h.end].lower() for h in best.highlights}
    assert marked == {"echolocation", "squid"}
    assert best.explanation.term_coverage == pytest.approx(1.0)


def test_a_word_held_only_in_another_form_is_named_as_the_document_writes_it(idx: Index) -> None:
    # a new user read "which this document holds: medication" of a letter that says "Medical" (both "medic")
    best = idx.search("hunting squid", k=1, mode="lexical").results[0]
    terms = {t.word: t for t in best.explanation.matched_terms}
    assert Path(best.path).name == "porpoise.md"
    assert (terms["hunting"].written, terms["hunting"].said) == ("hunt", "hunting (as hunt)")
    assert (terms["squid"].written, terms["squid"].said) == (None, "squid")


def test_context_surrounds_the_best_sentence(idx: Index) -> None:
    sentence = "They use echolocation to hunt fish and squid in murky coastal water."
    best = idx.search(sentence, k=1, mode="semantic").results[0]
    assert best.sentence == sentence
    assert best.context_before[-1] == "Porpoises are small toothed whales that live in the ocean."
    assert best.context_after == ("Fishing nets kill thousands of harbour porpoises every year.",)


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_search_without_explanations_ranks_the_same(idx: Index, mode: str) -> None:
    query = "whales hunting fish with sound"
    full = idx.search(query, k=5, mode=mode, include_weak=True)
    bare = idx.search(query, k=5, mode=mode, include_weak=True, explain=False)
    assert full.results  # so the comparison below can fail
    assert [(r.path, r.score, r.sentence, r.start, r.end) for r in bare.results] == [
        (r.path, r.score, r.sentence, r.start, r.end) for r in full.results]
    assert all(r.facets == () and r.explanation.facets is None and not r.context_before for r in bare.results)


def test_cosines_of_sentences_not_in_the_graph_come_from_the_database(idx: Index, monkeypatch) -> None:
    """Cosines are read from the graph's memory; sentences it does not hold yet (a batch still being inserted) are
    read from the database, with the same values up to its half precision."""
    query = "whales hunting fish with sound"
    from_graph = idx.search(query, k=5, include_weak=True, explain=False).results
    monkeypatch.setattr(VectorIndex, "vectors", lambda self, ids: (np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)))
    from_database = idx.search(query, k=5, include_weak=True, explain=False).results
    assert [r.similarity for r in from_graph] and all(r.similarity is not None for r in from_graph)
    assert [r.path for r in from_database] == [r.path for r in from_graph]
    assert [r.similarity for r in from_database] == pytest.approx([r.similarity for r in from_graph], abs=2e-3)


def test_cosines_are_read_only_for_the_sentences_a_result_may_be_shown_by(tmp_path: Path, monkeypatch) -> None:
    """A result is shown by one of its document's few sentences with most query words, and its similarity is that
    sentence's cosine: the vectors read for cosines are those few sentences', not those of every sentence that holds
    a query word."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(5):
        # one passage each; five sentences hold a query word, one holds every word but "hunting" as the query has it
        (docs / f"sea{i}.txt").write_text(
            f"Report {i} on the coast. Whales hunt fish near the shore. The weather was calm all week. Boats left "
            "the harbour at dawn. Whales use sound to find fish. Nets were mended on the quay. The fish market opened "
            "late. Fish were dried on racks by the sheds. Children watched the fish in the pools. Gulls followed the "
            "boats home.\n", encoding="utf-8")
    idx = Index(tmp_path / "idx", config=IndexConfig(workers=0))
    idx.add([docs])
    asked: list[list[int]] = []
    read = VectorIndex.vectors
    monkeypatch.setattr(VectorIndex, "vectors", lambda self, ids: asked.append(list(ids)) or read(self, ids))

    def shown(mode: str) -> dict[str, tuple]:
        asked.clear()
        results = idx.search("whales hunting fish with sound", k=5, mode=mode, include_weak=True, explain=False).results
        return {r.path: (r.sentence_id, r.sentence, r.similarity) for r in results}

    hybrid = shown("hybrid")
    # each search reads every sentence of the candidates to rank them by meaning (engine.search.meaning), then the
    # sentences results may be shown by
    cosines_read = set(asked[-1])
    assert len(hybrid) == 5 and all(similarity is not None for _, _, similarity in hybrid.values())
    assert {sentence for _, sentence, _ in hybrid.values()} == {"Whales use sound to find fish."}
    assert {sid for sid, _, _ in hybrid.values()} <= cosines_read
    with_words = [row.id for path in hybrid for row in idx.store.sentences.of_document(idx.store.documents.get(path).id)
                  if any(word in row.text.lower() for word in ("whale", "hunt", "fish", "sound"))]
    assert len(with_words) == 25 and len(cosines_read) < len(with_words)
    # the sentence shows the same similarity as when ranking by meaning alone finds it
    assert shown("semantic") == hybrid


@pytest.fixture
def river(tmp_path: Path):
    """30 files (one passage each): "river" in all, "old mill" in half, "otters" in a third, "heron waits" in a tenth."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        text = f"The river flows past the bridge number {i}, and the river is wide."
        text += " Otters swim in the river." if i % 3 == 0 else ""
        text += " A heron waits by the weir, watching the otters." if i % 10 == 0 else ""
        text += " The old mill wheel turns." if i % 2 == 0 else ""
        (docs / f"d{i:02d}.txt").write_text(text + "\n")
    with Index(tmp_path / "idx", config=IndexConfig(workers=0)) as index:
        index.add([docs])
        yield index


def _fts5_scores(store: Store, query: str) -> dict[str, float]:
    """Each document's best passage score for the whole of ``query`` (its words and quoted phrases OR-ed) as FTS5's
    bm25() gives it, by path."""
    best: dict[int, float] = {}
    for _, doc_id, score in store.words.fts_bm25(T.fts_query(query), None):
        best[doc_id] = max(score, best.get(doc_id, score))
    records = store.documents.by_ids(list(best))
    return {records[doc_id].path: score for doc_id, score in best.items()}


def _assert_ranked_as(index: Index, query: str, expected: dict[str, float]) -> None:
    """A lexical search for ``query`` finds the documents of ``expected`` with their BM25 scores, best first."""
    results = index.search(query, k=30, mode="lexical", include_weak=True, explain=False).results
    scores = [r.explanation.bm25 for r in results]
    assert {r.path for r in results} == set(expected), query
    assert scores == pytest.approx([expected[r.path] for r in results], rel=1e-12), query
    assert scores == sorted(scores, reverse=True), query


def test_words_are_ranked_from_the_word_index_as_fts5_ranks_them(river: Index, monkeypatch) -> None:
    queries = ("heron river otters", "river mill otters", "weir", "wheel turns bridge")
    assert river.store.words.ready()
    expected = {query: _fts5_scores(river.store, query) for query in queries}
    for query in queries:
        assert_word_index_matches_fts5(river.store, query)
    scanned: list[str] = []
    scan = Words.fts_bm25
    monkeypatch.setattr(Words, "fts_bm25", lambda self, match, *args, **kwargs: scanned.append(match)
                        or scan(self, match, *args, **kwargs))
    for query in queries:
        _assert_ranked_as(river, query, expected[query])
    assert scanned == []  # words alone are scored from the word index: FTS5 is never scanned


@pytest.mark.parametrize("query", ['"heron waits" otters river', '"old mill" river otters', '"old mill"',
                                   '"river flows" "heron waits"'])
def test_quoted_phrases_are_scored_by_fts5_and_added_to_the_words(river: Index, query: str) -> None:
    assert river.store.words.ready()
    _assert_ranked_as(river, query, _fts5_scores(river.store, query))


def test_an_index_without_its_word_index_ranks_the_same_by_fts5(river: Index) -> None:
    def ranking() -> list[tuple[str, float]]:
        return [(r.path, round(r.score, 9)) for r in river.search('heron river "old mill"', k=30, mode="lexical",
                                                                 include_weak=True, explain=False).results]

    built = ranking()
    with river.store.db.atomic():
        river.store.meta.put(Key.WORD_INDEX_BACKFILL, {"next": 1, "last": 1})
    assert not river.store.words.ready()
    assert len(built) == 30 and ranking() == built


def test_splitting_the_bm25_scan_over_cores_ranks_the_same(river: Index, monkeypatch) -> None:
    from engine.search import retrieve
    from engine.store import scans

    def ranking() -> list[tuple[str, float]]:
        # the quoted phrase is what FTS5 scans
        return [(r.path, r.score) for r in river.search('heron river otters "old mill"', k=30, mode="lexical",
                                                       include_weak=True, explain=False).results]

    alone = ranking()
    monkeypatch.setattr(scans, "SCAN_PARTS", 3)
    monkeypatch.setattr(retrieve, "SCAN_PARTS", 3)
    monkeypatch.setattr(retrieve, "LEXICAL_SPLIT_PASSAGES", 0)
    assert len(alone) == 30 and ranking() == alone
    assert len(river.store._scans.opened) == 2  # the scan was split


def test_hybrid_queries_rank_words_on_another_thread_and_many_threads_may_search_at_once(river: Index,
                                                                                          monkeypatch) -> None:
    ranked_on: list[str] = []
    scored = Words.bm25
    # the query's own words (words related to them are scored afterwards, for the documents found: ``within``)
    monkeypatch.setattr(Words, "bm25", lambda self, *args, **kw: (
        kw.get("within") is None and ranked_on.append(threading.current_thread().name)) or scored(self, *args, **kw))
    queries = ["heron river otters", "old mill wheel", "a bridge over the water", '"heron waits" weir']

    def ranking(query: str) -> list[tuple]:
        results = river.search(query, k=10, include_weak=True, explain=False).results
        return [(r.path, r.score, r.sentence, r.similarity) for r in results]

    alone = [ranking(q) for q in queries]
    assert all(alone) and len(ranked_on) == len(queries) and all(name.startswith("quire-words") for name in ranked_on)
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(ranking, queries * 4))
    assert together == alone * 4


def test_related_words_are_weighed_on_a_word_thread_and_its_errors_reach_the_caller(river: Index,
                                                                                    monkeypatch) -> None:
    from engine.search import fusion
    from engine.search.retrieve import Retriever

    weigh = Retriever.weigh_related
    finished: list[str] = []
    main_failed = threading.Event()
    main_failed.set()  # the first search does not fail: nothing to wait for

    def related_on_a_thread(self, docs, found) -> None:
        weigh(self, docs, found)
        if main_failed.wait(timeout=60):  # still running when the main thread fails below
            finished.append(threading.current_thread().name)

    monkeypatch.setattr(Retriever, "weigh_related", related_on_a_thread)
    ranked = river.search("river otters", explain=False).results
    assert ranked and finished and finished[-1].startswith("quire-words")

    def meaning_fails(self, *args) -> None:
        main_failed.set()
        raise RuntimeError("meaning failed")

    finished.clear()
    main_failed.clear()
    with monkeypatch.context() as patched:
        patched.setattr(fusion, "weigh_meaning", meaning_fails)
        with pytest.raises(RuntimeError, match="meaning failed"):
            river.search("river otters", explain=False)
    assert finished  # waited for: the word thread reads the connection the caller may close next

    def related_fails(self, docs, found) -> None:
        raise RuntimeError("related failed")

    monkeypatch.setattr(Retriever, "weigh_related", related_fails)
    with pytest.raises(RuntimeError, match="related failed"):
        river.search("river otters", explain=False)


def test_the_ranking_is_weighed_head_first_and_ranks_as_if_weighed_whole(river: Index, monkeypatch) -> None:
    from engine.search import pick, secondlook

    weighed: list[int] = []
    read = Documents.by_ids
    monkeypatch.setattr(Documents, "by_ids", lambda self, ids: weighed.append(len(ids)) or read(self, ids))

    def ranking(**options) -> list[tuple]:
        response = river.search("river otters heron", k=3, explain=False, **options)
        return [(r.path, r.score, r.sentence, r.weak) for r in response.results] + [response.weak_hidden]

    # the first round is the documents the second look reads (k is 3): the river's 19 ranked hold them all
    head_first = ranking()
    assert weighed == [min(19, secondlook.DOCUMENTS)]
    weighed.clear()
    with_weak = ranking(include_weak=True)
    assert weighed == [min(19, secondlook.DOCUMENTS)] and len(with_weak) == 4
    monkeypatch.setattr(pick, "rounds", lambda ranked, k: iter([ranked]))  # weighed whole
    weighed.clear()
    assert ranking() == head_first and ranking(include_weak=True) == with_weak
    assert weighed == [19, 19]


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "semantic"])
def test_the_response_counts_the_documents_found_beyond_k(river: Index, mode: str) -> None:
    """Issue 34: the app shows "1-3 of N" and pages on; N is what a search with a larger k would show."""
    first = river.search("otters", k=3, mode=mode, explain=False)
    everything = river.search("otters", k=100, mode=mode, explain=False)
    assert len(first.results) == 3 and first.found == everything.found == len(everything.results) > 3
    assert not first.found_at_least  # 30 passages and fewer sentences than a ranking's depth: nothing was cut
    # a larger k shows the same documents first
    assert [r.path for r in everything.results[:3]] == [r.path for r in first.results]
    if mode == "lexical":
        assert first.found == 12  # "otters" is in a third of the 30 files and in the heron's two others
    weak = river.search("otters", k=3, mode=mode, explain=False, include_weak=True)
    assert weak.found >= first.found


def test_a_ranking_cut_at_its_depth_makes_the_count_a_lower_bound(river: Index, monkeypatch) -> None:
    from engine.search import retrieve

    monkeypatch.setattr(retrieve, "CANDIDATES", 5)  # "river" is in 30 passages: only 5 are scored
    response = river.search("river", k=2, mode="lexical", explain=False)
    assert response.found_at_least and 2 <= response.found <= 5
    assert response.to_json()["found"] == response.found and response.to_json()["found_at_least"]


def test_a_searching_store_maps_the_whole_file_and_an_indexing_one_keeps_the_narrow_window(
        idx: Index, index_dir: Path) -> None:
    def window(store: Store) -> int:
        return int(store.db.conn.execute("PRAGMA mmap_size").fetchone()[0])

    indexing = Store(index_dir)  # a second store on the index that never searches, as an indexing run's
    try:
        before = window(idx.store)
        idx.search(RIGEL)
        assert window(idx.store) > before == SQLITE_MMAP_BYTES  # capped by SQLite's build, above the narrow one
        assert window(indexing) == SQLITE_MMAP_BYTES
    finally:
        indexing.close()


def test_context_is_two_sentences_either_side_of_the_shown_one(tmp_path: Path) -> None:
    # enough of the passage's setting to judge it by, and no more: two sentences before it and two after
    lines = ["The ferry leaves the harbour at dawn.", "Gulls follow it past the lighthouse.",
             "Passengers drink coffee on the upper deck.", "The captain announces a storm warning at noon.",
             "Waves break over the bow for an hour.", "The ship reaches the island by evening.",
             "Porters carry the luggage up the hill."]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ferry.txt").write_text(" ".join(lines), encoding="utf-8")
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as index:
        index.add([tmp_path / "docs"])
        best = index.search(lines[3], k=1, mode="semantic").results[0]
    assert best.sentence == lines[3]
    assert (best.context_before, best.context_after) == (tuple(lines[1:3]), tuple(lines[4:6]))
