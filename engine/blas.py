"""BLAS on one thread while quire indexes.

An indexing run's own threads (reader processes, hnswlib's inserts, the facets' clustering) keep a small machine's
cores busy, and OpenBLAS's workers spin after each of the run's small matrix products on those cores: with one BLAS
thread indexing took 29% less CPU. Queries keep every BLAS thread. Measurements:
docs/decisions/0006-blas-one-thread-while-indexing.md.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def one_blas_thread() -> threadpool_limits:
    """A context in which the BLAS libraries loaded so far (numpy's) use one thread; process-wide, so searches that
    run beside an indexing run (the app) get one thread until it ends."""
    return threadpool_limits(limits=1, user_api="blas")
