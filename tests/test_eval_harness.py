"""The benchmark harness end to end on tiny fixture data: static method through the real CLI, BM25 baseline, and a
method that cannot load (it must be reported as failed, not dropped); retrieval scored on what the default search
shows (the relevance gate included) beside the ungated ranking, with the share of queries answered nothing relevant."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.eval import harness, product
from engine.eval.datasets import Collection, load_collection

BENCH = Path(__file__).parent / "data" / "bench"

# Generated beside the fixture's "tiny" collection. Query 1 shares its words with its relevant documents; query 2
# shares neither a word nor a meaning with any document, so no search can find its judged one; query 3 shares one
# word in five with its judged document: word matching finds it, and the default search shows it.
OFFTOPIC_DOCS = {
    "o1": ("Porpoises", "Porpoises are small toothed whales. They hunt fish with echolocation in coastal water."),
    "o2": ("Dolphin behaviour", "Dolphins are social marine mammals that hunt fish in groups."),
    "o3": ("Bread baking", "Knead the dough, let it rise for an hour, then bake the loaf in a hot oven."),
    "o4": ("Orion", "Rigel is a blue supergiant star in the constellation Orion, visible in winter."),
}
OFFTOPIC_QUERIES = {"1": "porpoises hunt fish with echolocation", "2": "qzxv blorpt wuggafn",
                    "3": "zorbly quennet fradish plimsy dough"}
OFFTOPIC_QRELS = {"1": {"o1": 2, "o2": 1}, "2": {"o4": 1}, "3": {"o3": 1}}


def write_offtopic(folder: Path) -> Path:
    """The collection above in BEIR layout under ``folder``."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n"
                                                 for d, (t, x) in OFFTOPIC_DOCS.items()), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                                                  for q, t in OFFTOPIC_QUERIES.items()), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in OFFTOPIC_QRELS.items() for d, g in docs.items()), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("results")
    data = tmp_path_factory.mktemp("data") / "bench"
    shutil.copytree(BENCH, data)
    write_offtopic(data / "retrieval" / "offtopic")
    plan = harness.Plan(data=data, methods=("static", "no-such-method"), baselines=("bm25",), timeout=300,
                        work=tmp_path_factory.mktemp("work"))
    found, _, _ = harness.run_and_report(plan, out)
    return found, out


def test_writes_json_and_markdown_with_stamp(results):
    found, out = results
    on_disk = json.loads((out / "latest.json").read_text())
    assert on_disk == json.loads(json.dumps(found))
    stamp = on_disk["stamp"]
    assert stamp["date"] and stamp["cores"] >= 1 and stamp["cpu"]
    md = (out / "latest.md").read_text()
    assert "| static |" in md and "Retrieval nDCG@10" in md and stamp["date"] in md
    assert list(on_disk["collections"]) == ["offtopic", "tiny"]


def test_markdown_has_the_default_search_the_ungated_ranking_and_the_nothing_relevant_share(results):
    _, out = results
    md = (out / "latest.md").read_text()
    sections = {s.split("\n", 1)[0]: s for s in md.split("## ")[1:]}
    headline = sections["Retrieval nDCG@10 x100: default search (what a user gets, relevance gate included)"]
    assert "Retrieval Recall@100 x100: default search (what a user gets, relevance gate included)" in sections
    ungated = sections["Retrieval nDCG@10 x100: ungated ranking (diagnostic)"]
    nothing = sections["Queries answered nothing relevant (% of judged queries)"]
    assert "| system | mode | offtopic | tiny | all queries |" in nothing
    for table in (headline, ungated, nothing):
        assert "| quire | lexical |" in table and "| static | hybrid |" in table
    assert "| BM25 (bm25s, whole documents) | lexical |" in ungated
    assert "BM25" not in nothing  # a baseline has no gate, so it never answers "nothing relevant"
    lexical = next(r for r in json.loads((out / "latest.json").read_text())["retrieval"] if r["mode"] == "lexical")
    shares = lexical["nothing_relevant"]
    assert (f"| quire | lexical | {shares['offtopic']:.2f} | {shares['tiny']:.2f} | "
            f"{lexical['nothing_relevant_overall']:.2f} |") in nothing
    assert f"| {lexical['ndcg10_all']['tiny']:.2f} | {lexical['mean_ndcg10_all']:.2f} |" in ungated


def test_static_method_measured_everywhere(results):
    found, _ = results
    static = next(r for r in found["encoders"] if r["system"] == "static")
    assert static["status"] == "ok", static["errors"]
    for key in ("sts_dev", "sts_test", "evalrank_mrr", "evalrank_hits1", "evalrank_hits3"):
        assert static[key] is not None and -100 <= static[key] <= 100
    assert static["evalrank_hits1"] <= static["evalrank_hits3"] and static["sentences_per_s"] > 0
    modes = {(r["system"], r["mode"]): r for r in found["retrieval"]}
    for key in (("quire", "lexical"), ("static", "semantic"), ("static", "hybrid")):
        row = modes[key]
        assert row["status"] == "ok", row["errors"]
        for metric in ("ndcg10", "recall100", "ndcg10_all", "nothing_relevant"):
            assert set(row[metric]) == {"tiny", "offtopic"} and all(0 <= v <= 100 for v in row[metric].values())
        assert row["mean_ndcg10"] == pytest.approx((row["ndcg10"]["tiny"] + row["ndcg10"]["offtopic"]) / 2, abs=0.01)
        # three judged queries in each collection: the overall share is their mean
        assert row["nothing_relevant_overall"] == pytest.approx(sum(row["nothing_relevant"].values()) / 2, abs=0.01)
    # each tiny query shares distinctive words with its relevant documents: word matching ranks them all, in order
    assert modes[("quire", "lexical")]["ndcg10_all"]["tiny"] == 100.0
    prod = next(p for p in found["product"] if p["method"] == "static")
    assert prod["status"] == "ok" and prod["sentences"] > 8
    assert prod["index_bytes_per_sentence"] > 0 and prod["query_latency_p95_ms"] >= prod["query_latency_p50_ms"] > 0
    assert prod["queries_timed"] == 6


def test_the_default_search_is_scored_apart_from_the_ungated_ranking(results):
    found, _ = results
    lexical = next(r for r in found["retrieval"] if r["mode"] == "lexical")
    # offtopic query 2 shares no word with any document: lexical search answers it with nothing, gated or not
    assert lexical["nothing_relevant"]["offtopic"] >= 100 / 3 - 0.01 and lexical["nothing_relevant_overall"] > 0
    # query 3's one-word-in-five match shares a word with it: the default search shows it (labelled unlikely), as
    # the ungated ranking does
    assert lexical["nothing_relevant"]["offtopic"] == pytest.approx(100 / 3, abs=0.01)
    assert lexical["ndcg10_all"]["offtopic"] == lexical["ndcg10"]["offtopic"]


def test_bm25_baseline_ranks_whole_documents(results):
    found, _ = results
    bm25 = next(r for r in found["retrieval"] if r["system"].startswith("BM25"))
    assert bm25["status"] == "ok" and bm25["ndcg10"]["tiny"] > 50
    # no gate: its one ranking is both what it shows and its ungated one, and it has no nothing-relevant share
    assert bm25["ndcg10_all"] == bm25["ndcg10"] and bm25["nothing_relevant"] == {}
    assert bm25["nothing_relevant_overall"] is None
    # no stemming in this baseline: query 3 asks about "stars", and d7 only says "star"
    assert bm25["recall100"]["tiny"] == pytest.approx(100 * (1 + 1 + 0.5) / 3, abs=0.01)


def test_failing_method_is_reported_not_dropped(results):
    found, out = results
    row = next(r for r in found["encoders"] if r["system"] == "no-such-method")
    assert row["status"] == "failed" and "unknown embedding method" in row["errors"][0]
    assert row["sts_test"] is None
    semantic = next(r for r in found["retrieval"] if r["system"] == "no-such-method" and r["mode"] == "semantic")
    assert semantic["status"] == "failed" and semantic["mean_ndcg10"] is None
    assert "| no-such-method | FAILED |" in (out / "latest.md").read_text()


def test_a_method_too_slow_for_its_budget_is_skipped_with_the_estimate():
    """A slow encoder (0.1 ms per character) with a 10 ms budget: each part is priced first, and the ones that would
    overrun are reported as skipped with their estimated cost, while a speed figure is still measured."""
    import time

    import numpy as np

    def slow(texts):
        time.sleep(1e-4 * sum(map(len, texts)))
        return np.ones((len(texts), 4), dtype=np.float32)

    bench = harness.load_benchmarks(BENCH, harness.FULL)
    said = []
    row, _, allowance = harness._encoder_row("slow", "test", lambda: (slow, "CPU"), bench, harness.FULL,
                                             said.append, budget=0.01)
    assert row.sts_dev is None and row.sts_test is None and row.evalrank_mrr is None
    skipped = [e for e in row.errors if "skipped" in e]
    assert any(e.startswith("STS-B test: skipped, needs ~") for e in skipped)
    assert any(e.startswith("EvalRank: skipped") for e in skipped) and "characters/s on CPU" in skipped[0]
    assert row.sentences_per_s is not None and 0 < row.sentences_per_s < 1000
    assert allowance.left is not None and allowance.left < 0.01
    assert harness._encoder_json(row)["status"] == "skipped"


def test_allowance_charges_what_ran():
    allowance = harness.Allowance(10.0, 100.0, "CPU")
    errors: list[str] = []
    assert allowance.covers(900, "small", errors, print) and not errors
    assert not allowance.covers(2000, "big", errors, print) and "needs ~20.0 s at the measured 100 characters/s on CPU, over the 10.0 s left" in errors[0]
    allowance.charge(4.0)
    assert allowance.left == 6.0 and not allowance.covers(700, "now too big", errors, print)
    assert harness.Allowance(None, 1.0, "CPU").covers(10**9, "unlimited", errors, print)


def test_the_product_reads_what_the_default_search_shows_and_the_ungated_ranking(tmp_path):
    """product.search through the CLI returns what ``Index.search`` shows a person (what shares nothing with the
    query left out) and, with Gate.ALL, what it returns with ``include_weak``; a query with no result shown is
    answered nothing relevant."""
    from engine import Index

    collection = load_collection(write_offtopic(tmp_path / "offtopic"))
    files = product.write_files(collection, tmp_path / "docs")
    built = product.build(files, tmp_path / "index", "static", timeout=300)
    answers = {gate: product.search(built, files, collection.queries, "lexical", timeout=300, gate=gate)
               for gate in product.Gate}
    with Index(built.db, create=False) as index:
        for gate, include_weak in ((product.Gate.SHOWN, False), (product.Gate.ALL, True)):
            for q, text in collection.queries.items():
                response = index.search(text, k=product.DEPTH, mode="lexical", include_weak=include_weak,
                                        explain=False)
                assert answers[gate].rankings[q] == [files.ids[r.path] for r in response.results], (gate, q)
    shown, ungated = answers[product.Gate.SHOWN], answers[product.Gate.ALL]
    assert "2" in shown.nothing_relevant and shown.nothing_relevant == {q for q, r in shown.rankings.items() if not r}
    assert ungated.rankings["3"] == shown.rankings["3"] == ["o3"]  # a one-word-in-five match is shown


def _tiny_collection() -> Collection:
    return Collection("c", {"d1": ("", "a"), "d2": ("", "b")}, {"q1": "a", "q2": "b"},
                      {"q1": {"d1": 1}, "q2": {"d2": 1}})


def test_scores_come_from_the_shown_answers_and_the_diagnostic_from_the_ungated_ones():
    row = harness.RetrievalRow("quire", "lexical")
    shown = product.Answers({"q1": [], "q2": ["d2"]}, frozenset({"q1"}))
    ungated = product.Answers({"q1": ["d2", "d1"], "q2": ["d2"]}, frozenset())
    harness._score_answers(row, _tiny_collection(), shown, ungated)
    assert row.ndcg10 == {"c": 50.0} and row.recall100 == {"c": 50.0} and row.nothing_relevant == {"c": 50.0}
    assert row.ndcg10_all == {"c": pytest.approx(100 * (1 + 1 / 1.5849625) / 2, abs=0.01)}
    failed = harness.RetrievalRow("quire", "lexical")
    harness._score_answers(failed, _tiny_collection(), None, ungated)
    assert failed.ndcg10 == failed.recall100 == failed.nothing_relevant == {"c": None} and failed.ndcg10_all["c"] > 0
    found = failed.to_json({"c": 2})
    assert found["mean_ndcg10"] is None and found["nothing_relevant_overall"] is None and found["mean_ndcg10_all"] > 0


def test_the_overall_nothing_relevant_share_weighs_each_query_the_same():
    row = harness.RetrievalRow("quire", "hybrid", nothing_relevant={"a": 50.0, "b": 0.0})
    assert row.to_json({"a": 2, "b": 6})["nothing_relevant_overall"] == 12.5
    # one query in three and one in six, rounded shares: 2 of 9, not a mean of rounded figures
    thirds = harness.RetrievalRow("quire", "hybrid", nothing_relevant={"a": 33.33, "b": 16.67})
    assert thirds.to_json({"a": 3, "b": 6})["nothing_relevant_overall"] == 22.22
    assert harness.RetrievalRow("BM25", "lexical").to_json({"a": 2})["nothing_relevant_overall"] is None
