"""The benchmark harness end to end on tiny fixture data: static method through the real CLI, BM25 baseline, and a
method that cannot load (it must be reported as failed, not dropped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.eval import harness

BENCH = Path(__file__).parent / "data" / "bench"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("results")
    plan = harness.Plan(data=BENCH, methods=("static", "no-such-method"), baselines=("bm25",), timeout=300,
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
        assert 0 <= row["ndcg10"]["tiny"] <= 100 and row["mean_ndcg10"] == row["ndcg10"]["tiny"]
    # each tiny query shares distinctive words with its relevant documents: word matching finds them all
    assert modes[("quire", "lexical")]["recall100"]["tiny"] == 100.0
    prod = next(p for p in found["product"] if p["method"] == "static")
    assert prod["status"] == "ok" and prod["sentences"] > 8
    assert prod["index_bytes_per_sentence"] > 0 and prod["query_latency_p95_ms"] >= prod["query_latency_p50_ms"] > 0
    assert prod["queries_timed"] == 3


def test_bm25_baseline_ranks_whole_documents(results):
    found, _ = results
    bm25 = next(r for r in found["retrieval"] if r["system"].startswith("BM25"))
    assert bm25["status"] == "ok" and bm25["ndcg10"]["tiny"] > 50
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
