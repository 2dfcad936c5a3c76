"""Joining benchmark results measured in parts (one collection per run)."""

from __future__ import annotations

import pytest

from engine.eval.harness import _load_method
from engine.eval.merge import merge
from engine.eval.report import markdown


def part(collection: str, ndcg: float | None, *, errors: tuple[str, ...] = (), sts: float | None = 80.0,
         nothing: float | None = None, queries: int = 2) -> dict:
    """One run's results on ``collection``; with ``nothing`` (its nothing-relevant share) as the harness writes them
    now, without it as runs did before the default search was measured apart from the ungated ranking."""
    row = {"system": "sbert", "mode": "hybrid", "ndcg10": {collection: ndcg},
           "recall100": {collection: None if ndcg is None else ndcg + 10}, "errors": list(errors)}
    if nothing is not None:
        row |= {"ndcg10_all": {collection: None if ndcg is None else ndcg + 5},
                "nothing_relevant": {collection: nothing}}
    return {
        "stamp": {"date": "2026-11-23", "cpu": "x", "cores": 16, "gpu": "H100", "commit": "abc", "python": "3.12",
                  "quire": "0.1.0", "command": f"run.py --collections {collection}"},
        "quick": False, "sizes": {}, "collections": {collection: {"documents": 10, "queries": queries}},
        "encoders": [{"system": "sbert", "kind": "quire method", "sts_dev": sts, "sts_test": sts, "evalrank_mrr": sts,
                      "evalrank_hits1": sts, "evalrank_hits3": sts, "sentences_per_s": 100.0, "device": "GPU",
                      "errors": [] if sts else ["EvalRank: skipped"], "status": "ok" if sts else "skipped"}],
        "retrieval": [row],
        "product": [{"method": "sbert", "sentences": 5, "index_sentences_per_s": 1.0, "index_bytes_per_sentence": 1.0,
                     "peak_rss_mb": 1.0, "query_latency_p50_ms": 1.0, "query_latency_p95_ms": 2.0,
                     "queries_timed": 2, "errors": [], "status": "ok"}],
    }


def test_parts_join_per_collection_and_means_are_recomputed():
    merged = merge([part("cisi", 30.0, sts=None), part("npl", 50.0)])
    assert list(merged["collections"]) == ["cisi", "npl"]
    (row,) = merged["retrieval"]
    assert row["ndcg10"] == {"cisi": 30.0, "npl": 50.0}
    assert row["mean_ndcg10"] == 40.0 and row["mean_recall100"] == 50.0 and row["status"] == "ok"
    (encoder,) = merged["encoders"]
    assert encoder["status"] == "ok" and encoder["sts_test"] == 80.0  # the part that measured it
    assert [p["method"] for p in merged["product"]] == ["sbert (cisi)", "sbert (npl)"]
    assert "run.py --collections cisi ; run.py --collections npl" in markdown(merged)


def test_a_later_part_repairs_a_failure_and_its_error_goes_away():
    failed = part("medline", None, errors=("medline: no index (out of memory)",))
    merged = merge([failed, part("medline", 70.0)])
    (row,) = merged["retrieval"]
    assert row["ndcg10"] == {"medline": 70.0} and row["errors"] == [] and row["status"] == "ok"


def test_a_collection_no_part_measured_keeps_its_error_and_no_mean():
    merged = merge([part("cisi", 30.0), part("lisa", None, errors=("lisa: no index (skipped)",))])
    (row,) = merged["retrieval"]
    assert row["mean_ndcg10"] is None and row["errors"] == ["lisa: no index (skipped)"]
    with pytest.raises(ValueError):
        merge([])


def test_the_encoder_row_names_the_device_a_method_runs_on():
    assert _load_method("static")[1] == "CPU"


def test_the_default_search_and_the_ungated_ranking_join_and_the_nothing_relevant_share_pools_queries():
    cisi, npl = part("cisi", 30.0, nothing=50.0, queries=2), part("npl", 50.0, nothing=0.0, queries=6)
    bm25 = {"system": "BM25", "mode": "lexical", "ndcg10": {"npl": 40.0}, "recall100": {"npl": 60.0},
            "ndcg10_all": {"npl": 40.0}, "nothing_relevant": {}, "errors": []}
    npl["retrieval"].append(bm25)
    merged = merge([cisi, npl])
    row, baseline = merged["retrieval"]
    assert row["ndcg10"] == {"cisi": 30.0, "npl": 50.0} and row["ndcg10_all"] == {"cisi": 35.0, "npl": 55.0}
    assert row["mean_ndcg10"] == 40.0 and row["mean_ndcg10_all"] == 45.0
    assert row["nothing_relevant"] == {"cisi": 50.0, "npl": 0.0} and row["nothing_relevant_overall"] == 12.5
    assert baseline["nothing_relevant"] == {} and baseline["nothing_relevant_overall"] is None
    md = markdown(merged)
    assert "## Retrieval nDCG@10 x100: default search (what a user gets, relevance gate included)" in md
    assert "## Retrieval nDCG@10 x100: ungated ranking (diagnostic)" in md
    assert "| sbert | hybrid | 35.00 | 55.00 | 45.00 |" in md  # the ungated table reads the ungated figures
    nothing = md.split("## Queries answered nothing relevant (% of judged queries)")[1].split("## ")[0]
    assert "| sbert | hybrid | 50.00 | 0.00 | 12.50 |" in nothing and "BM25" not in nothing


def test_a_later_part_fills_a_figure_an_earlier_one_failed_to_measure():
    failed = part("npl", 50.0, nothing=10.0, errors=("search npl hybrid (all): timed out",))
    failed["retrieval"][0]["ndcg10_all"]["npl"] = None
    merged = merge([failed, part("npl", 70.0, nothing=20.0)])
    (row,) = merged["retrieval"]
    # each figure comes from the first part that has it; the failure was repaired, so its error goes
    assert row["ndcg10"] == {"npl": 50.0} and row["ndcg10_all"] == {"npl": 75.0}
    assert row["nothing_relevant"] == {"npl": 10.0}
    assert row["errors"] == [] and row["status"] == "ok"


def test_results_from_before_the_gate_was_measured_still_merge_and_say_they_are_ungated():
    merged = merge([part("cisi", 30.0), part("npl", 50.0)])
    (row,) = merged["retrieval"]
    assert row["mean_ndcg10"] == 40.0 and row["ndcg10_all"] == {} and row["nothing_relevant_overall"] is None
    md = markdown(merged)
    assert "## Retrieval nDCG@10 x100: ungated ranking (`--all`)" in md and "default search" not in md
    assert "diagnostic" not in md and "Queries answered nothing relevant" not in md
