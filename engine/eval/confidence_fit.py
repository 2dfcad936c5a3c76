"""Fitting the confidence model (engine.search.confidence) and judging it: weighted L2-regularised logistic
regression by Newton's method, sources weighed alike, the regularisation chosen by leave-one-source-out
cross-validation, and expected calibration error with its reliability table.

Pure numpy: the fit is small (tens of thousands of rows, a dozen features) and must give the same model on every
machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.search.confidence import ConfidenceModel

# Bins of the reliability table: ten equal widths, as ECE is usually reported (Guo et al., "On Calibration of Modern
# Neural Networks", ICML 2017, Section 2).
BINS = 10
# The regularisation strengths cross-validation chooses between (of the standardised weights' squared norm, against
# a summed log-loss whose weights average 1 per row).
L2_GRID = (0.1, 1.0, 10.0, 100.0)
_NEWTON_STEPS = 100


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability table: its range, how many cards fell in it, their mean probability and the share
    that were right."""

    low: float
    high: float
    count: int
    predicted: float
    observed: float


def fit_logistic(x: np.ndarray, y: np.ndarray, weights: np.ndarray, features: Sequence[str], *, l2: float = 1.0
                 ) -> ConfidenceModel:
    """The logistic model of labels ``y`` (0/1) on ``x`` (rows, columns named by ``features``), each row weighted."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    beta = np.zeros(z.shape[1])
    penalty = l2 * np.eye(z.shape[1])
    penalty[-1, -1] = 0.0  # the bias is not shrunk
    for _ in range(_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -40, 40)))
        gradient = z.T @ (weights * (p - y)) + penalty @ beta
        hessian = (z * (weights * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return ConfidenceModel(tuple(features), tuple(mean.tolist()), tuple(scale.tolist()), tuple(beta[:-1].tolist()),
                           float(beta[-1]))


def balanced_weights(sources: Sequence[str], queries: Sequence[str]) -> np.ndarray:
    """Row weights under which every source counts alike and, within a source, every query alike (a collection of
    thousands of candidates must not drown a small folder's few), averaging 1."""
    per_query = Counter(queries)
    queries_of: dict[str, set[str]] = {}
    for source, query in zip(sources, queries):
        queries_of.setdefault(source, set()).add(query)
    weights = np.array([1.0 / per_query[q] / len(queries_of[s]) for s, q in zip(sources, queries)])
    return weights / weights.mean()


def log_loss(p: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """Weighted mean negative log-likelihood."""
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(weights * (y * np.log(p) + (1 - y) * np.log(1 - p))).sum() / weights.sum())


def choose_l2(x: np.ndarray, y: np.ndarray, sources: Sequence[str], queries: Sequence[str],
              features: Sequence[str], grid: Sequence[float] = L2_GRID) -> tuple[float, dict[float, float]]:
    """The strength of ``grid`` with the least log-loss when each source is predicted by a model fitted on the
    others (so the choice favours what carries over to a collection never seen), and each strength's loss."""
    losses = {l2: source_loss(x, y, sources, queries, features, features, l2) for l2 in grid}
    return min(losses, key=lambda k: losses[k]), losses


def select_features(x: np.ndarray, y: np.ndarray, sources: Sequence[str], queries: Sequence[str],
                    features: Sequence[str], l2: float) -> tuple[tuple[str, ...], list[tuple[str, float]]]:
    """The features kept by backward elimination on leave-one-source-out log-loss (:func:`source_loss`): while
    leaving one out predicts the held-out sources better, the one whose loss helps least goes. A feature that only
    tells the training sources apart (their sizes, their share of word matches) loses to one that carries over.
    Returns the kept names and each step's (feature dropped, loss)."""
    kept = list(features)
    best = source_loss(x, y, sources, queries, kept, features, l2)
    steps: list[tuple[str, float]] = [("", best)]
    while len(kept) > 1:
        trials = {name: source_loss(x, y, sources, queries, [k for k in kept if k != name], features, l2)
                  for name in kept}
        name = min(trials, key=lambda n: trials[n])
        if trials[name] >= best:
            break
        kept.remove(name)
        best = trials[name]
        steps.append((name, best))
    return tuple(kept), steps


def source_loss(x: np.ndarray, y: np.ndarray, sources: Sequence[str], queries: Sequence[str], kept: Sequence[str],
                features: Sequence[str], l2: float) -> float:
    """The mean over sources of the log-loss of a model fitted on the other sources, reading the ``kept`` columns
    of ``x`` (whose columns are ``features``)."""
    columns = [list(features).index(k) for k in kept]
    names, asked = np.asarray(sources), np.asarray(queries)
    losses = []
    for source in sorted(set(sources)):
        held = names == source
        model = fit_logistic(x[~held][:, columns], y[~held], balanced_weights(names[~held], asked[~held]), kept,
                             l2=l2)
        losses.append(log_loss(model.probability(x[held][:, columns]), y[held],
                               balanced_weights(names[held], asked[held])))
    return float(np.mean(losses))


def reliability(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> tuple[float, list[ReliabilityBin]]:
    """Expected calibration error of probabilities ``p`` against labels ``y`` and its table (empty bins left out)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    error, table = 0.0, []
    for b in range(bins):
        inside = which == b
        if not inside.any():
            continue
        predicted, observed = float(p[inside].mean()), float(y[inside].mean())
        error += inside.mean() * abs(predicted - observed)
        table.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), int(inside.sum()), predicted, observed))
    return float(error), table
