"""Relevance a person can trust (issue 55): the best matches shown and labelled by a calibrated probability, the
second look, a misspelt query answered by its correction, nothing strong for a question the folder cannot answer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import docgen
import numpy as np
import pytest

from engine import Index
from engine.eval.confidence_fit import reliability
from engine.search.confidence import POSSIBLE, STRONG, Strength
from engine.search.results import Answer

JUDGED = json.loads((Path(__file__).parent / "data" / "judged_folder.json").read_text(encoding="utf-8"))


def _seven_files(folder: Path) -> Path:
    """The issue's folder of seven files: two text PDFs, a note, a web page, a Latin-1 text, an empty file and a
    corrupt PDF."""
    folder.mkdir()
    docgen.make_pdf(folder)
    docgen.make_layouts_pdf(folder)
    (folder / "notes.md").write_text("Tomatoes need full sun and regular watering. Prune the suckers weekly.\n",
                                     encoding="utf-8")
    (folder / "page.html").write_text("<html><head><title>Trains</title></head><body><p>The night train to Vienna "
                                      "leaves at 22:10 from platform 4.</p></body></html>", encoding="utf-8")
    docgen.make_latin1_txt(folder)
    docgen.make_empty(folder)
    docgen.make_truncated_pdf(folder)
    return folder


@pytest.fixture(scope="module")
def seven(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("seven")
    index = Index(root / "index")
    index.add([_seven_files(root / "files")])
    yield index
    index.close()


@pytest.mark.parametrize(("query", "expected"), [
    ("overnight rail service to Austria", "page.html"),
    ("how often should I cut back tomato shoots", "notes.md"),
])
def test_a_paraphrase_in_a_small_folder_is_first_and_at_least_possible(seven, query, expected):
    response = seven.search(query, explain=False)
    first = response.results[0]
    assert Path(first.path).name == expected
    assert first.confidence >= POSSIBLE and first.strength in (Strength.POSSIBLE, Strength.STRONG)
    assert first.score == pytest.approx(100 * first.confidence, abs=0.06)
    assert response.answer in (Answer.POSSIBLE, Answer.STRONG) and not response.nothing_relevant


def test_an_off_topic_question_gets_no_strong_result(seven):
    response = seven.search("symptoms of diabetes in cats", explain=False)
    assert all(r.strength is not Strength.STRONG for r in response.results)
    assert all(r.confidence < POSSIBLE for r in response.results)
    assert response.answer in (Answer.CLOSEST, Answer.NOTHING)


def test_numbers_never_rise_down_the_list_and_all_lists_everything(seven):
    shown = seven.search("train platform", k=20, explain=False)
    every = seven.search("train platform", k=20, include_weak=True, explain=False)
    scores = [r.confidence for r in every.results]
    assert scores == sorted(scores, reverse=True)
    assert {r.path for r in shown.results} <= {r.path for r in every.results}
    assert all(r.related for r in shown.results)
    assert len(every.results) >= len(shown.results)


def test_the_first_answer_comes_without_the_second_look_and_the_refined_one_with_it(seven):
    quick = seven.search("overnight rail service to Austria", explain=False, second_look=False)
    refined = seven.search("overnight rail service to Austria", explain=False)
    assert not quick.refined and refined.refined
    assert "m_best" not in quick.results[0].explanation.confidence_features
    assert "m_best" in refined.results[0].explanation.confidence_features


@pytest.mark.parametrize("typed", ["stegnography", "steganograhpy"])
def test_a_misspelt_word_returns_its_corrections_results(tmp_path, typed):
    folder = _judged_folder(tmp_path)
    (folder / "stego.txt").write_text("Steganography hides a message inside an ordinary picture or sound file. "
                                      "Unlike cryptography, it conceals that a message exists at all.\n",
                                      encoding="utf-8")
    with Index(tmp_path / "index") as index:
        index.add([folder])
        response = index.search(typed, explain=False)
        exact = index.search(typed, explain=False, correct=False)
    assert response.corrected_from == typed and response.query == "steganography"
    assert Path(response.results[0].path).name == "stego.txt"
    assert response.answer is Answer.STRONG and exact.answer is not Answer.STRONG
    assert response.confidence > exact.confidence
    assert exact.corrected_from is None and exact.did_you_mean == "steganography"


def test_a_query_spelt_right_is_not_corrected(tmp_path):
    folder = _judged_folder(tmp_path)
    with Index(tmp_path / "index") as index:
        index.add([folder])
        response = index.search("free influenza jabs for pensioners", explain=False)
    assert response.corrected_from is None


def _judged_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "judged"
    folder.mkdir()
    for name, text in JUDGED["documents"].items():
        (folder / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    return folder


def _judged_cards(tmp_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first screen's cards of every query of the judged folder: the product's confidence, what today's rule
    before it showed (the first result's evidence on the old relevance scale: 50 at the bar of 1.4, 75 at twice it,
    the others in proportion to their fused score), and whether the card is the right answer."""
    folder = _judged_folder(tmp_path)
    queries = {**{q: d for q, d in JUDGED["answerable"].items()}, **{q: None for q in JUDGED["offtopic"]}}
    ours, old, right = [], [], []
    with Index(tmp_path / "index") as index:
        index.add([folder])
        for query, answer in queries.items():
            results = index.search(query, k=10, include_weak=True, explain=False, correct=False).results
            top = results[0].explanation.contributions
            card = 1.0 - 2.0 ** (-max(top["evidence"], 0.0) / 1.4)
            for r in results:
                ours.append(r.confidence)
                old.append(card * r.explanation.contributions["fused"] / top["fused"] if top["fused"] > 0 else 0.0)
                right.append(Path(r.path).stem == answer)
    return np.array(ours), np.clip(np.array(old), 1e-6, 1 - 1e-6), np.array(right, dtype=float)


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def test_the_confidence_is_calibrated_on_a_folder_it_was_never_fitted_on(tmp_path):
    ours, old, right = _judged_cards(tmp_path)
    constant = np.full_like(ours, right.mean())  # the best constant: the share of right cards
    assert _log_loss(ours, right) < 0.8 * _log_loss(constant, right)
    assert _log_loss(ours, right) < 0.8 * _log_loss(old, right)
    error, table = reliability(ours, right)
    assert error <= 0.1, table
    # ranked by it, the right cards come first: the area under the ROC curve
    pairs = [(a > b) + 0.5 * (a == b) for a in ours[right == 1] for b in ours[right == 0]]
    assert np.mean(pairs) >= 0.9
    assert ours[right == 1].mean() > STRONG - 0.3 and ours[right == 0].mean() < 0.1
    assert not math.isnan(error)
