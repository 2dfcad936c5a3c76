"""The answerability benchmark: which STS pairs become documents and queries, how gated and ungated results are
scored, and one run of bench/answerability.py through the real CLI on a tiny generated collection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.eval import answerability as ans
from engine.eval.datasets import load_sts

REPO = Path(__file__).resolve().parents[1]

# (gold, first sentence = document side, second sentence = query side)
PAIRS = [
    (4.6, "a man is slicing a tomato .", "someone cuts up a tomato ."),  # answerable: shares 1 of 5 words
    (5.0, "a woman plays the guitar .", "a woman is playing the guitar ."),  # shares every word: a word match
    (3.0, "a boy rides a bicycle .", "a child is cycling down a road ."),  # neither answerable nor a distractor
    (4.2, "a cat is sleeping on a bed .", "napping ."),  # one content word: a keyword lookup
    (4.0, "a man is playing a flute .", "a guy plays the flute well ."),  # gold 4.0 and share 2 of 5: both kept
    (0.4, "the stock market fell sharply today .", "a dog runs across the grass ."),  # two distractors
    (1.0, "A dog  runs across the grass .", "the train arrived late in the station ."),  # one new: the other repeats
    (1.2, "the senate passed the budget bill .", "a bird sits on a wire ."),  # not unrelated enough
    (4.4, "the train arrived late in the station .", "a locomotive pulled into the depot behind schedule ."),
    (4.0, "children are playing football in a park .", "The stock market fell sharply today ."),  # query is a document
]
OFFTOPIC = {"cranfield": ["boundary layer transition on swept wings at supersonic speed",
                          "heat transfer to a blunt body in hypersonic flow", "flutter of panels"],
            "medline": ["the crystalline lens in vertebrates", "renal failure after cardiac surgery"]}


def write_data(root: Path, pairs=PAIRS, offtopic=OFFTOPIC) -> Path:
    """An STS-B-like dev csv and retrieval-like query files under ``root``."""
    (root / "sts").mkdir(parents=True)
    (root / "sts" / "sts-dev.csv").write_text(
        "".join(f"main-captions\tMSRvid\t2012test\t{i:04d}\t{gold:.3f}\t{a}\t{b}\n"
                for i, (gold, a, b) in enumerate(pairs)), encoding="utf-8")
    for name, texts in offtopic.items():
        (root / "retrieval" / name).mkdir(parents=True)
        (root / "retrieval" / name / "queries.jsonl").write_text(
            "".join(json.dumps({"_id": str(n + 1), "text": t}) + "\n" for n, t in enumerate(texts)), encoding="utf-8")
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data")


def test_pairs_selected_by_gold_and_shared_words(data):
    answers = ans.select(load_sts(data / "sts" / "sts-dev.csv"), {})
    assert sorted(answers.answerable.values()) == ["a guy plays the flute well .", "someone cuts up a tomato ."]
    by_query = {text: answers.documents[answers.answers[q]] for q, text in answers.answerable.items()}
    assert by_query["someone cuts up a tomato ."] == "a man is slicing a tomato ."
    assert ans.shared("a guy plays the flute well .", "a man is playing a flute .") == 0.4
    assert ans.content_stems("napping .") == {"nap"}


def test_documents_are_unique_and_a_pair_without_one_right_file_is_skipped(data):
    answers = ans.select(load_sts(data / "sts" / "sts-dev.csv"), {})
    docs = sorted(answers.documents.values())
    # the distractors once each (case and spacing aside), and every candidate's document, even a skipped one
    assert docs == sorted(["a man is slicing a tomato .", "a man is playing a flute .",
                           "the train arrived late in the station .", "children are playing football in a park .",
                           "the stock market fell sharply today .", "a dog runs across the grass ."])
    queries = set(answers.answerable.values())
    assert "a locomotive pulled into the depot behind schedule ." not in queries  # its document is also a distractor
    assert "The stock market fell sharply today ." not in queries  # it is a document itself
    assert len(set(answers.answers.values())) == len(answers.answers)


def test_offtopic_sample_is_seeded_and_in_file_order(data):
    first = ans.load_offtopic(data / "retrieval", per_collection=2, seed=3, collections=["cranfield", "medline"])
    assert first == ans.load_offtopic(data / "retrieval", per_collection=2, seed=3,
                                      collections=["cranfield", "medline"])
    cranfield = [q for q in first if q.startswith("cranfield:")]
    assert len(cranfield) == 2 and cranfield == sorted(cranfield, key=lambda q: int(q.split(":")[1]))
    assert [q for q in first if q.startswith("medline:")] == ["medline:1", "medline:2"]  # all it has
    assert first["medline:1"] == "the crystalline lens in vertebrates"
    with pytest.raises(Exception, match="queries.jsonl"):
        ans.load_offtopic(data / "retrieval", collections=["npl"])


def hits(*docs: str, strong: str = "", confidence: dict | None = None, similarity: dict | None = None
         ) -> tuple[ans.Hit, ...]:
    """Results in order; the docs named in ``strong`` are labelled strong, the others unlikely."""
    def level(d: str) -> str:
        return "strong" if d in strong.split() else "unlikely"

    return tuple(ans.Hit(d, (confidence or {}).get(d, 0.9 if level(d) == "strong" else 0.1), level(d),
                         (similarity or {}).get(d)) for d in docs)


@pytest.fixture
def answer_set() -> ans.AnswerSet:
    docs = {d: f"sentence {d}" for d in ("d1", "d2", "d3", "d4")}
    return ans.AnswerSet(docs, {"q1": "a", "q2": "b", "q3": "c"}, {"q1": "d1", "q2": "d2", "q3": "d3"},
                         {"cranfield:1": "x", "cranfield:2": "y", "medline:7": "z"})


def test_scores_read_listed_results_apart_from_the_ungated_ranking(answer_set):
    gated = {"q1": hits("d1", strong="d1"), "q2": hits("d4", "d2"), "q3": hits(),
             "cranfield:1": hits(), "cranfield:2": hits("d1", confidence={"d1": 0.4}), "medline:7": hits("d2", strong="d2")}
    ungated = {"q1": hits("d1", "d2"), "q2": hits("d4", "d2"), "q3": hits("d4", "d1", "d3")}
    s = ans.score(answer_set, gated, ungated, k=2)
    assert (s.shown_at_k, s.shown_top1) == (66.7, 33.3)  # q2's right document is listed, second and unlikely
    assert (s.ungated_at_k, s.ungated_top1) == (66.7, 33.3)  # q3's is third, past k
    assert s.cut_by_gate == 0.0 and s.answerable_nothing == 33.3
    assert s.first_at_least_possible == 33.3  # q1's, labelled strong
    assert s.offtopic_no_strong == 66.7  # medline:7's result is labelled strong
    assert s.offtopic_no_strong_by_collection == {"cranfield": 100.0, "medline": 0.0}
    assert s.offtopic_best_under_30 == 33.3 and s.offtopic_best_card_median == 40.0  # 0, 0.4, 0.9
    assert s.offtopic_nothing == 33.3
    assert 0 <= s.ece <= 1 and sum(b.count for b in s.reliability) == 5  # the cards listed


def test_scores_need_both_kinds_of_query(answer_set):
    empty = ans.AnswerSet(answer_set.documents, answer_set.answerable, answer_set.answers, {})
    with pytest.raises(Exception, match="off-topic"):
        ans.score(empty, {}, {})


def test_separation_compares_right_documents_with_offtopic_best(answer_set):
    sims = {"d1": 0.8, "d2": 0.6, "d3": 0.4, "d4": 0.3}
    ungated = {"q1": hits("d1", similarity=sims), "q2": hits("d2", similarity=sims), "q3": hits("d4", similarity=sims),
               "cranfield:1": hits("d3", "d2", similarity=sims), "cranfield:2": hits("d4", similarity=sims),
               "medline:7": hits("d1", similarity=sims)}
    # q1 (0.8) beats 0.6 and 0.3 and ties 0.8; q2 (0.6) ties 0.6 and beats 0.3; q3's document is missing
    assert ans.separation(answer_set, ungated) == round(100 * (2.5 + 1.5) / 9, 1)
    assert ans.separation(answer_set, {q: hits("d1") for q in answer_set.queries()}) is None


def test_benchmark_end_to_end_through_the_cli(data, tmp_path):
    out = tmp_path / "answerability.json"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "answerability.py"), "--data", str(data),
                          "--collections", "cranfield,medline", "--offtopic", "2", "--modes", "hybrid",
                          "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "| static | hybrid |" in run.stdout
    result = json.loads(out.read_text())
    assert result["split"] == "dev" and result["stamp"]["date"] and result["rules"]["k"] == 10
    assert result["counts"] == {"pairs": len(PAIRS), "documents": 6, "answerable": 2, "offtopic": 4}
    (row,) = result["rows"]
    assert "error" not in row, row.get("error")
    assert (row["method"], row["mode"], row["documents_indexed"]) == ("static", "hybrid", 6)
    # each query shares a word only with its own document: the ranking alone puts that document first
    assert row["ungated_top1"] == 100.0
    for key in ("shown_at_k", "shown_top1", "cut_by_gate", "answerable_nothing", "offtopic_nothing"):
        assert 0 <= row[key] <= 100
    assert row["shown_at_k"] + row["cut_by_gate"] == 100.0  # what the gate did not show, it cut
    assert set(row["offtopic_no_strong_by_collection"]) == {"cranfield", "medline"}
    assert row["index_seconds"] > 0 and set(row["examples"]) == {"cut_by_gate", "offtopic_shown"}
