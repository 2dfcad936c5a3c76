"""The calibration of a whole collection: what a cosine means is measured on random sentence pairs of all its
shards, as one index would measure it on all its sentences, and every shard's searcher judges by it (a shard's own
would differ from shard to shard, and a shard too small to calibrate would fall back on the method's prior while the
collection is not small)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

from engine.index import Index
from engine.search.calibration import MIN_SENTENCES, Calibration, Sample, from_sample, sample, sample_size

CALIBRATION = "calibration.json"


def calibrate(folder: Path, shards: Sequence[Path], method: str) -> Calibration | None:
    """Measure the collection's calibration from every shard's share of a random sample, and keep it in
    ``folder``."""
    indexes = [Index(shard, create=False) for shard in shards]
    try:
        counts = [index.store.sentences.count() for index in indexes]
        total = sum(counts)
        parts = [sample(index.store, method, math.ceil(sample_size() * n / total)) for index, n in
                 zip(indexes, counts) if n]
    finally:
        for index in indexes:
            index.close()
    made = from_sample(Sample.joined(parts), method) if total >= MIN_SENTENCES and parts else None
    partial = folder / (CALIBRATION + ".part")
    partial.write_text(json.dumps({"calibration": made.to_meta() if made else None, "sentences": total}),
                       encoding="utf-8")
    os.replace(partial, folder / CALIBRATION)
    return made


def load(folder: Path) -> Calibration | None:
    """The collection's calibration (None: not measured, or too small to measure)."""
    try:
        return Calibration.from_meta(json.loads((folder / CALIBRATION).read_text(encoding="utf-8"))["calibration"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
