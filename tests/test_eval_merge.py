"""Joining benchmark results measured in parts (one collection per run)."""

from __future__ import annotations

import pytest

from engine.eval.harness import _load_method
from engine.eval.merge import merge
from engine.eval.report import markdown


def part(collection: str, ndcg: float | None, *, errors: tuple[str, ...] = (), sts: float | None = 80.0) -> dict:
    row = {"system": "sbert", "mode": "hybrid", "ndcg10": {collection: ndcg},
           "recall100": {collection: None if ndcg is None else ndcg + 10}, "errors": list(errors)}
    return {
        "stamp": {"date": "2026-11-23", "cpu": "x", "cores": 16, "gpu": "H100", "commit": "abc", "python": "3.12",
                  "quire": "0.1.0", "command": f"run.py --collections {collection}"},
        "quick": False, "sizes": {}, "collections": {collection: {"documents": 10, "queries": 2}},
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
