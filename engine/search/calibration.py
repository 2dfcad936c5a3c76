"""What a cosine means on this index: the distribution of similarities between random sentence pairs.

Each embedding method has its own scale (static vectors of unrelated sentences sit near 0.2, a transformer's
nearer 0.05), and each collection its own topic spread. Comparing a hit with the null distribution of the same
method on the same index turns "0.41" into "higher than 99.9% of random pairs", which is what lets search say
"nothing relevant" instead of listing the least bad sentences.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from engine.resources import resource_path
from engine.store.database import Store

log = logging.getLogger(__name__)

CALIBRATION_PAIRS = 20_000
PAIR_SLICE = 2048  # pairs scored at a time (calibrate)
# (ids, vectors) of the sentence ids asked for: ``store.vectors.read`` of a method, or what a writer holds in memory
Reader = Callable[[list[int]], tuple[np.ndarray, np.ndarray]]
# Percentiles stored: the body coarsely, the upper tail finely (that is where thresholds live).
_PROBS = np.concatenate([np.linspace(0.0, 0.99, 100), np.linspace(0.991, 0.9999, 20)])
# A best sentence is "relevant" when random pairs exceed its similarity at most this often. 1 in 1000 keeps
# the top hit of an on-topic query and drops the best of thousands of off-topic sentences.
RELEVANT_TAIL = 1e-3
# Below this many sentences the 1-in-1000 tail is the most similar pair of a few hundred, mostly two sentences of one
# document: such an index is not calibrated, and its method's prior stands in (:func:`prior`).
MIN_SENTENCES = 200
# Bundled priors: each method's random-pair distribution measured on general text (Wikipedia articles), one file
# per fingerprint, made by bench/prior_calibration.py (docs/decisions/0003-a-prior-for-small-folders.md).
PRIOR_FOLDER = "calibration"


@dataclass(frozen=True)
class Calibration:
    """Quantiles of random-pair cosine for one method on one index."""

    method: str
    pairs: int
    probs: tuple[float, ...]
    values: tuple[float, ...]
    mean: float
    std: float

    def percentile(self, cosine: float) -> float:
        """Share of random pairs less similar than ``cosine`` (beyond the stored tail: a normal-tail estimate)."""
        values = np.asarray(self.values)
        if cosine <= values[-1]:
            return float(np.interp(cosine, values, self.probs))
        from math import erf, sqrt

        z = (cosine - self.mean) / max(self.std, 1e-6)
        return float(max(self.probs[-1], 0.5 * (1 + erf(z / sqrt(2)))))

    @cached_property
    def threshold(self) -> float:
        """The cosine that random pairs exceed with probability RELEVANT_TAIL (asked of every candidate document)."""
        return float(np.interp(1.0 - RELEVANT_TAIL, self.probs, self.values))

    def to_meta(self) -> dict:
        """JSON-able form stored in the index's meta table."""
        return asdict(self)

    @classmethod
    def from_meta(cls, data: dict | None) -> Calibration | None:
        """Inverse of :meth:`to_meta`; None when nothing was stored."""
        if not data:
            return None
        return cls(**{**data, "probs": tuple(data["probs"]), "values": tuple(data["values"])})


@functools.cache
def prior(fingerprint: str) -> Calibration | None:
    """The bundled calibration of the method that makes ``fingerprint`` (None when none ships for it): what a cosine
    means in a folder too small to calibrate itself. Read once per process: every search of a small folder asks."""
    path = resource_path(f"{PRIOR_FOLDER}/{fingerprint}.json")
    try:
        return Calibration.from_meta(json.loads(path.read_text(encoding="utf-8"))["calibration"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if path.exists():
            log.warning("ignoring the calibration prior %s: %s", path, exc)
        return None


@dataclass(frozen=True)
class Sample:
    """Random sentences of an index: their vectors, sentence hashes and documents (ids that tell documents apart
    within the sample)."""

    vectors: np.ndarray
    hashes: np.ndarray
    docs: np.ndarray

    @staticmethod
    def joined(parts: Sequence[Sample]) -> Sample:
        """Samples of several indexes (a collection's shards) as one; their documents kept apart."""
        offsets = np.cumsum([0, *(int(p.docs.max()) + 1 if p.docs.size else 0 for p in parts)])
        return Sample(np.concatenate([p.vectors for p in parts]), np.concatenate([p.hashes for p in parts]),
                      np.concatenate([p.docs + offset for p, offset in zip(parts, offsets)]))


def sample(store: Store, method: str, size: int, *, seed: int = 0, read: Reader | None = None) -> Sample:
    """Up to ``size`` random sentences of the index that have ``method``'s vectors.

    ``read`` gives (ids, vectors) of sentence ids, by default ``store.vectors.read``: a writer that holds the vectors in
    memory (its graph or exact rows) passes its own reader, rather than have the static ones computed again."""
    ids = store.sentences.random_ids(size, seed=seed)
    found, vectors = (read or functools.partial(store.vectors.read, method))(ids.tolist())
    hashes, docs = store.sentences.hashes_and_documents(found.tolist())
    return Sample(vectors, hashes, docs)


def sample_size(pairs: int = CALIBRATION_PAIRS) -> int:
    """Sentences sampled to draw ``pairs`` random pairs from."""
    return min(2 * pairs, 200_000)


def calibrate(store: Store, method: str, *, pairs: int = CALIBRATION_PAIRS, seed: int = 0,
              read: Reader | None = None) -> Calibration | None:
    """Sample random sentence pairs of the index and record their cosine quantiles (None for tiny indexes); ``read``
    as for :func:`sample`."""
    if store.sentences.count() < MIN_SENTENCES:
        return None
    return from_sample(sample(store, method, sample_size(pairs), seed=seed, read=read), method, pairs=pairs, seed=seed)


def from_sample(drawn: Sample, method: str, *, pairs: int = CALIBRATION_PAIRS, seed: int = 0) -> Calibration | None:
    """The random-pair cosine quantiles of sentences ``drawn`` from an index, or from a collection's shards."""
    if drawn.docs.size < 20:
        return None
    rng = np.random.default_rng(seed)
    a = rng.integers(0, drawn.docs.size, size=pairs)
    b = rng.integers(0, drawn.docs.size, size=pairs)
    # Two copies of one sentence (a repeated heading, the same paragraph in two files) are not a random pair: on
    # a small index they would push the threshold to 1.0 and turn every exact match into a weak one. Nor are two
    # sentences of one document: a query is a new text, and sentences of one article, one in 170 pairs of a
    # Wikipedia folder, set the 1-in-1000 tail by themselves (docs/decisions/0003-a-prior-for-small-folders.md).
    keep = (drawn.hashes[a] != drawn.hashes[b]) & (drawn.docs[a] != drawn.docs[b])
    if keep.sum() < 20:
        return None
    left, right, rows = a[keep], b[keep], drawn.vectors
    # a slice of pairs at a time: the pairs' rows gathered whole were 40 MB, a small folder's run's largest allocation
    sims = np.concatenate([np.einsum("ij,ij->i", rows[left[i : i + PAIR_SLICE]], rows[right[i : i + PAIR_SLICE]])
                           for i in range(0, left.size, PAIR_SLICE)])
    values = np.quantile(sims, _PROBS)
    # quantiles must increase strictly for interpolation to be a function
    values = np.maximum.accumulate(values + np.arange(values.size) * 1e-9)
    cal = Calibration(method=method, pairs=int(keep.sum()), probs=tuple(map(float, _PROBS)),
                      values=tuple(map(float, values)), mean=float(sims.mean()), std=float(sims.std()))
    log.info("calibration %s: random-pair cosine mean %.3f, relevance threshold %.3f", method, cal.mean, cal.threshold)
    return cal
