"""The confidence model's parts on their own: the features, the logistic fit, the reliability table, the verdict's
rules (order, numbers that never rise, what is related, the answer)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.eval.confidence_fit import balanced_weights, choose_l2, fit_logistic, log_loss, reliability
from engine.search import features as F
from engine.search import gate
from engine.search.confidence import (
    POSSIBLE,
    STRONG,
    ConfidenceModel,
    ConfidenceModels,
    Strength,
    model_path,
    shipped,
    strength,
)
from engine.search.results import Answer
from engine.search.secondlook import Look


def _evidence(zs, fused=None, coverage=0.0):
    fused = fused if fused is not None else list(np.linspace(1.0, 0.5, len(zs)))
    return [F.Evidence(z, coverage, coverage > 0, f) for z, f in zip(zs, fused)]


def test_first_features_measure_each_document_against_the_first_screen():
    context = F.QueryContext(0.1, 0.05, 123_456, True)
    rows = F.first_features(_evidence([6.0, 3.0, 2.0] + [1.0] * 9), context)
    assert rows.shape == (12, len(F.FIRST))
    col = {name: rows[:, i] for i, name in enumerate(F.FIRST)}
    assert col["z_ref"][0] == 1.0  # the tenth of the first screen
    assert col["z_margin"][0] == pytest.approx(5.0)
    assert col["z_gap"][0] == pytest.approx(3.0) and col["z_gap"][1] == pytest.approx(-3.0)
    assert col["fused_share"][0] == 1.0 and col["log_rank"][0] == 0.0
    assert col["log_sentences"][0] == pytest.approx(np.log10(123_456))
    assert col["missing_word"].all()


def test_a_lone_document_stands_out_against_chance():
    rows = F.first_features(_evidence([4.0]), F.QueryContext(0.0, 0.1, 3, False))
    assert rows[0, F.FIRST.index("z_gap")] == pytest.approx(4.0)
    refined = F.refined_features(rows, [Look(0.6, 0.5)])
    assert refined[0, F.REFINED.index("m_gap")] == pytest.approx(0.6)
    assert refined[0, F.REFINED.index("m_best")] == pytest.approx(0.6)


def test_strength_words_follow_the_number():
    assert strength(STRONG) is Strength.STRONG
    assert strength(STRONG - 1e-9) is Strength.POSSIBLE
    assert strength(POSSIBLE) is Strength.POSSIBLE
    assert strength(POSSIBLE - 1e-9) is Strength.UNLIKELY


def test_the_logistic_fit_finds_a_known_rule_and_its_table_is_reliable():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20_000, 2))
    truth = 1 / (1 + np.exp(-(2.0 * x[:, 0] - 1.0 * x[:, 1] - 0.5)))
    y = (rng.random(len(x)) < truth).astype(float)
    model = fit_logistic(x, y, np.ones(len(x)), ("a", "b"), l2=0.01)
    p = model.probability(x)
    assert np.abs(p - truth).max() < 0.05
    error, table = reliability(p, y)
    assert error < 0.02 and sum(b.count for b in table) == len(x)
    constant = np.full(len(y), y.mean())
    assert log_loss(p, y, np.ones(len(y))) < log_loss(constant, y, np.ones(len(y)))
    assert reliability(constant, y)[0] < 0.01  # a constant can be calibrated: resolution is what the tests add


def test_sources_weigh_alike_and_cross_validation_picks_a_strength_from_the_grid():
    sources = ["big"] * 90 + ["small"] * 10
    queries = [f"q{i // 10}" for i in range(100)]
    w = balanced_weights(sources, queries)
    assert w[:90].sum() == pytest.approx(w[90:].sum())
    rng = np.random.default_rng(1)
    x = rng.normal(size=(100, 1))
    y = (x[:, 0] + rng.normal(scale=0.5, size=100) > 0).astype(float)
    l2, losses = choose_l2(x, y, sources, queries, ("a",), grid=(0.1, 1000.0))
    assert l2 == 0.1 and set(losses) == {0.1, 1000.0}


def _models(weight=1.0):
    first = ConfidenceModel(F.FIRST, (0.0,) * len(F.FIRST), (1.0,) * len(F.FIRST),
                            tuple(weight if n == "z" else 0.0 for n in F.FIRST), -2.0)
    refined = ConfidenceModel(F.REFINED, (0.0,) * len(F.REFINED), (1.0,) * len(F.REFINED),
                              tuple(8.0 if n == "m_best" else 0.0 for n in F.REFINED), -4.0)
    return ConfidenceModels(first, refined, 1.0, 0.0)


def test_the_second_look_reorders_what_it_read_and_the_numbers_never_rise():
    evidence = _evidence([3.0, 2.5, 2.0, 1.0])
    looks = [Look(0.1, 0.1), Look(0.9, 0.2), Look(0.5, 0.3)]
    scored = gate.score(evidence, F.QueryContext(0.0, 1.0, 1000, False), _models(), looks, reorder=True)
    assert scored.order == (1, 2, 0, 3)  # re-ordered by fused share + opening; the unread one stays last
    assert list(scored.probability) == sorted(scored.probability, reverse=True)
    words = gate.score(evidence, F.QueryContext(0.0, 1.0, 1000, False), _models(), looks, reorder=False)
    assert words.order == (0, 1, 2, 3)  # lexical mode: the order is the words'


def test_the_answer_is_the_first_related_documents_strength():
    assert gate.answer([(False, Strength.STRONG), (True, Strength.POSSIBLE)]) is Answer.POSSIBLE
    assert gate.answer([(True, Strength.UNLIKELY)]) is Answer.CLOSEST
    assert gate.answer([(False, Strength.UNLIKELY)]) is Answer.NOTHING
    assert gate.answer([]) is Answer.NOTHING


def test_the_shipped_models_read_the_features_the_engine_computes():
    models = shipped("static")
    assert set(models.first.features) <= set(F.FIRST) and set(models.refined.features) <= set(F.REFINED)
    data = json.loads(model_path("static").read_text(encoding="utf-8"))
    assert ConfidenceModels.from_json(data) == models
    assert any(w != 0 for w in models.refined.weights)  # a fitted model, not a placeholder
    assert shipped("no-such-method") == models  # a method without its own is judged by the static one's


def test_without_a_second_look_a_later_document_never_shows_a_higher_number():
    # the first model reads each document's z on its own: one ranked lower may read higher, and is shown no higher
    evidence, context = _evidence([1.0, 3.0, 2.0]), F.QueryContext(0.0, 1.0, 1000, False)
    scored = gate.score(evidence, context, _models(), None, reorder=True)
    read = _models().first.probability(F.first_features(evidence, context), F.FIRST)
    assert scored.order == (0, 1, 2) and read[1] > read[0]  # the second reads higher than the first
    assert list(scored.probability) == sorted(scored.probability, reverse=True)
