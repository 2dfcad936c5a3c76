"""Settings of an index run, as one plain dataclass: the CLI fills it from flags, the app from QSettings."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.ingest.readers.base import Limits


@dataclass(frozen=True)
class IndexConfig:
    """How files are found and read. ``workers`` = reader processes: 0 reads in the calling process, None chooses
    (``engine.ingest.pool.extract_all``)."""

    limits: Limits = field(default_factory=Limits)
    ignore: tuple[str, ...] = ()
    include_hidden: bool = False
    workers: int | None = None
    # Sentences embedded and written per transaction: large enough to amortise commits and keep the embedder's
    # batches full, small enough that a crash loses seconds of work.
    batch_sentences: int = 8192
    # The vector graph is saved at least this often during long runs, so a crash re-adds minutes of work at most.
    save_seconds: float = 120.0
    # Facets stored while indexing (engine.facets). Off, the results on screen compute theirs when first shown, in
    # the time stored ones take to read; storing them costs index size and indexing CPU
    # (docs/decisions/0014-facets-computed-when-shown.md). On, a search with --rerank-facets is faster.
    facets: bool = False
