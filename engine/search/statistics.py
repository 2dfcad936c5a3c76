"""What a shard of a collection counts over the whole collection rather than its shard (engine.cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.search.calibration import Calibration
from engine.store.bm25 import WordStatistics


@dataclass(frozen=True)
class CollectionStatistics:
    """What the searcher of one shard of a collection counts over the whole collection rather than its shard, so
    that a document is scored and judged as one index holding the collection would: BM25's statistics for the
    query's words, the indexed documents a repeated sentence is boilerplate among, and the sentences the relevance
    gate sizes a folder by, each a sum over the shards (:meth:`merged`); and the collection's ``calibration``
    (engine.cluster.calibration; None: too small to calibrate, its method's prior stands in)."""

    words: WordStatistics
    documents: int
    sentences: int
    calibration: Calibration | None = None

    @staticmethod
    def merged(parts: Sequence[CollectionStatistics]) -> CollectionStatistics:
        """The statistics of a collection made of ``parts`` (shards): counts and frequencies summed."""
        return CollectionStatistics(WordStatistics.merged([p.words for p in parts]),
                                    sum(p.documents for p in parts), sum(p.sentences for p in parts))
