"""Facet re-ranking (SC of Eq. 5 over the head of a ranking) and short queries borrowing their results' words."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from engine import embed
from engine.facets import rerank
from engine.facets.extract import SHORT_QUERY_WORDS, query_facets, text_facets
from engine.facets.service import load_space
from engine.index import Index, IndexConfig
from engine.store.sentences import SentenceRow

SPACE = load_space()
META = embed.load("static").model.meta if SPACE is not None else {}
TOY_MODEL = SPACE is None or SPACE.dim < 128 or META.get("frequent_words", 0) < 10_000
pytestmark = pytest.mark.skipif(SPACE is None, reason="the static model is not installed")

HOSPITAL = "Patients can now book hospital appointments by sending a text message to the clinic."
REPLY = "The doctor reviews each request and replies by SMS with a time for the consultation."


# -- fusion of the ranking with the facet ranking ------------------------------------------------------------------
def test_without_a_facet_vote_the_order_is_kept():
    distances = np.array([3.0, 1.0, 2.0, np.nan, 0.5])
    assert rerank.fuse(distances, weight=0.0) == [0, 1, 2, 3, 4]
    assert rerank.fuse(np.full(3, np.nan), weight=5.0) == [0, 1, 2]  # no document has facets


def test_the_head_is_reordered_by_reciprocal_ranks_and_the_tail_kept():
    distances = np.array([5.0, 4.0, 3.0, 2.0, 0.1, 9.0, 0.0])
    order = rerank.fuse(distances, depth=5, weight=2.0)
    k = rerank.RRF_K
    by_distance = [5, 4, 3, 2, 1]  # facet rank of head documents 0..4
    score = [1 / (k + i + 1) + 2 / (k + r) for i, r in enumerate(by_distance)]
    assert order[:5] == sorted(range(5), key=lambda i: -score[i])
    assert order[0] == 4  # the closest document of the head rises to the top
    assert order[5:] == [5, 6]  # below the depth nothing moves, however close


def test_a_document_without_facets_gets_no_facet_vote():
    assert rerank.fuse(np.array([np.nan, 1.0]), weight=10.0) == [1, 0]
    assert rerank.fuse(np.array([1.0, np.nan]), weight=10.0) == [0, 1]


# -- through the index ---------------------------------------------------------------------------------------------
def _rows_of(index: Index, path_part: str) -> list[SentenceRow]:
    doc = next(d for d in index.store.documents.listing() if path_part in d.path)
    return index.store.sentences.of_document(doc.id)


def test_set_distance_prefers_the_passage_about_the_query(corpus, index_dir):
    with Index(index_dir, config=IndexConfig(workers=0)) as index:
        index.add([corpus])
        rows = [_rows_of(index, "budget"), _rows_of(index, "appointments"), _rows_of(index, "porpoise")]
        distances = rerank.document_distances(index.store, SPACE, "book a hospital appointment by text message", rows)
    assert np.all(np.isfinite(distances))
    assert distances[1] < distances[0] and distances[1] < distances[2]


def test_search_with_rerank_is_a_deterministic_permutation(corpus, index_dir, monkeypatch):
    query = "whales caught in fishing nets"
    with Index(index_dir, config=IndexConfig(workers=0)) as index:
        index.add([corpus])

        def paths(flag: bool | None) -> list[str]:
            response = index.search(query, k=5, include_weak=True, explain=False, rerank_facets=flag)
            return [r.path for r in response.results]

        plain, ranked, again = paths(False), paths(True), paths(True)
        default = paths(None)
        monkeypatch.setattr(rerank, "WEIGHT", 0.0)
        no_vote = paths(True)
    assert ranked == again and sorted(ranked) == sorted(plain)
    assert default == (ranked if rerank.ENABLED else plain)
    assert no_vote == plain
    assert ranked[0].endswith("porpoise.md")


def test_cli_takes_the_rerank_flag(corpus, index_dir):
    runner = CliRunner()
    done = runner.invoke(cli, ["index", str(corpus), "--db", str(index_dir), "--workers", "0", "--json"])
    assert done.exit_code == 0, done.output
    for flag in ("--rerank-facets", "--no-rerank-facets"):
        out = runner.invoke(cli, ["search", "porpoise fishing nets", "--db", str(index_dir), flag, "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["results"][0]["path"].endswith("porpoise.md")


# -- query facets: short queries borrow ----------------------------------------------------------------------------
@pytest.mark.skipif(TOY_MODEL, reason="the shipped static model is a toy build (too few words/dimensions for labels)")
def test_a_short_query_borrows_the_words_of_its_top_results():
    alone = query_facets(SPACE, "hospital appointments")
    borrowed = query_facets(SPACE, "hospital appointments", [HOSPITAL, REPLY])
    assert alone.k <= 2 < borrowed.k
    labels = {w for words in SPACE.labels(borrowed.centres, top=3) for w, _ in words}
    assert labels & {"message", "messages", "messaging", "text", "texts", "sms", "texting"}, labels
    hospital = SPACE.unit[SPACE.tokenizer.word_id("hospital")]
    assert float((borrowed.centres @ hospital).max()) > 0.5  # the query's own words stay a facet


def test_only_short_queries_with_content_words_borrow():
    borrowed = [HOSPITAL, REPLY]
    words = ["clinic", "doctor", "consultation", "appointments", "patients"]
    short = " ".join(words[:SHORT_QUERY_WORDS])
    long = " ".join(words[: SHORT_QUERY_WORDS + 1])
    assert not _same(query_facets(SPACE, short, borrowed), text_facets(SPACE, [short])[0])
    assert _same(query_facets(SPACE, long, borrowed), text_facets(SPACE, [long])[0])
    assert query_facets(SPACE, "the of and", borrowed).k == 0  # nothing of its own to borrow for
    assert _same(query_facets(SPACE, short, borrowed), query_facets(SPACE, short, borrowed))  # deterministic


def _same(a, b) -> bool:
    return a.k == b.k and np.array_equal(a.centres, b.centres) and np.array_equal(a.mass, b.mass)
