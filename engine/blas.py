"""BLAS on one thread while quire indexes, and while a query is ranked.

OpenBLAS's workers spin for a while after each matrix product before they sleep. An indexing run's own threads
(reader processes, the vectors' codes, the facets' clustering) keep a small machine's cores busy, and with one BLAS
thread indexing took 29% less CPU (docs/decisions/0006-blas-one-thread-while-indexing.md). Ranking a query is the
same: its products are small (the query against a few thousand sentences, its words against a few hundred), and the
spinning workers took the core its word thread and the code scan need: on the whole-corpus index a query ranked
without explanations cost 54 ms of CPU for 27 ms of wall time, against 28 ms of CPU with one thread (decision 0006).
Explanations keep every thread: their label search is one large product that two threads finish sooner.

The limit is process-wide: the first holder sets it, the last one out restores the library's own, so a query that ends
while an indexing run goes on (the app does both) leaves the run its one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from threadpoolctl import ThreadpoolController


class _Shared:
    """The one process-wide limit and how many hold it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holders = 0
        self.controller: ThreadpoolController | None = None  # made once numpy is loaded (engine modules import it)
        self.limiter: Any = None


_shared = _Shared()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context in which the BLAS libraries numpy loaded use one thread, for as long as any holder is inside."""
    with _shared.lock:
        if _shared.holders == 0:
            _shared.controller = _shared.controller or ThreadpoolController()
            _shared.limiter = _shared.controller.limit(limits=1, user_api="blas")
        _shared.holders += 1
    try:
        yield
    finally:
        with _shared.lock:
            _shared.holders -= 1
            if _shared.holders == 0:
                _shared.limiter.restore_original_limits()
                _shared.limiter = None
