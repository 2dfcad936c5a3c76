"""How likely a result is to be what the person asked for: a calibrated probability, learned, not hand-set.

A logistic model over a few features of each candidate document (its cosine against the query's own null, its margin
over the other candidates, its words, the second look's cosine: ``engine.search.features``) gives the probability that
the document answers the query. It is fitted by ``python bench/fit_confidence.py`` on judged queries of training
splits only (the classic collections' judgments, STS paraphrase sets, small generated folders, off-topic queries)
and shipped as JSON in ``resources/confidence/<method>.json``; docs/decisions/0040-calibrated-confidence.md has the data, the
features and the reliability on held-out splits. The same number is shown on the card (0-100), names its strength,
and decides the answer's verdict.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from engine.errors import ConfigError
from engine.resources import resource_path

log = logging.getLogger(__name__)

# A result this likely to answer is called strong, below POSSIBLE unlikely: a person reads "strong" as "this is it"
# and "possible" as "worth a look" (docs/decisions/0040-calibrated-confidence.md).
STRONG = 0.7
POSSIBLE = 0.3
FOLDER = "confidence"


class Strength(str, Enum):
    """What a result's probability says in words."""

    STRONG = "strong"
    POSSIBLE = "possible"
    UNLIKELY = "unlikely"


def strength(probability: float) -> Strength:
    """The word for a probability (STRONG and POSSIBLE are the lower bounds)."""
    if probability >= STRONG:
        return Strength.STRONG
    return Strength.POSSIBLE if probability >= POSSIBLE else Strength.UNLIKELY


@dataclass(frozen=True)
class ConfidenceModel:
    """A logistic model: ``features`` by name, standardised by ``mean`` and ``scale``, then ``weights`` and ``bias``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def probability(self, values: np.ndarray, names: Sequence[str] | None = None) -> np.ndarray:
        """The probability of each row of ``values``, whose columns are the features ``names`` (None: this model's
        ``features``, in order); the model reads those it was fitted on."""
        values = np.asarray(values, dtype=np.float64)
        if names is not None and tuple(names) != self.features:
            values = values[:, [list(names).index(n) for n in self.features]]
        z = (values - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.weights) + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -40.0, 40.0)))

    def to_json(self) -> dict:
        """The model as its JSON file holds it."""
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias}

    @staticmethod
    def from_json(data: dict) -> ConfidenceModel:
        """The model a JSON file holds; its feature names must be known (``known``)."""
        model = ConfidenceModel(tuple(data["features"]), tuple(map(float, data["mean"])),
                                tuple(map(float, data["scale"])), tuple(map(float, data["weights"])),
                                float(data["bias"]))
        if not len(model.features) == len(model.mean) == len(model.scale) == len(model.weights):
            raise ConfigError("a confidence model's features, means, scales and weights differ in number")
        return model


@dataclass(frozen=True)
class ConfidenceModels:
    """A method's confidence models of the two stages, and how the second look re-orders the documents it read: the
    first ranking's fused score (as a share of the first screen's best) plus ``opening`` times the sentence model's
    cosine with the document's opening and ``sentence`` times that with its shown sentence (both fitted with the
    models on the training splits)."""

    first: ConfidenceModel
    refined: ConfidenceModel
    opening: float
    sentence: float

    def to_json(self) -> dict:
        """The models as their JSON file holds them."""
        return {"first": self.first.to_json(), "refined": self.refined.to_json(),
                "ranking": {"opening": self.opening, "sentence": self.sentence}}

    @staticmethod
    def from_json(data: dict) -> ConfidenceModels:
        """The models a JSON file holds."""
        return ConfidenceModels(ConfidenceModel.from_json(data["first"]), ConfidenceModel.from_json(data["refined"]),
                                float(data["ranking"]["opening"]), float(data["ranking"]["sentence"]))


def model_path(method: str) -> Path:
    """Where the shipped models of ``method`` are."""
    return resource_path(f"{FOLDER}/{method}.json")


@functools.cache
def shipped(method: str) -> ConfidenceModels:
    """The shipped models of ``method``; a method without models of its own is judged by the static method's (the
    features are on scales of the query's own null, which carry over between methods)."""
    path = model_path(method)
    if not path.is_file():
        log.info("no confidence model of the %s method; using the static method's", method)
        path = model_path("static")
    try:
        return ConfidenceModels.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"the confidence model {path} cannot be read ({e}); reinstall quire") from e
