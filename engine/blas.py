"""BLAS on one thread while quire indexes.

An indexing run already keeps both cores of a small machine busy with threads of its own (reader processes,
hnswlib's inserts, the facets' clustering), and its matrix products are small: a batch's projection into the graph's
dimensions, a batch's facet codes. OpenBLAS's worker threads spin for a while after each product before they sleep,
on the cores those threads need. Measured here, a 4096 x 256 by 256 x 128 product every 0.2 s cost 149 ms of CPU
per call with two BLAS threads (15 ms back to back); indexing 46k Wikipedia sentences (bench/index_wiki.py
--files 6) took 29.8 CPU-s and 18.9 s with two BLAS threads, 21.2 CPU-s and 13.7 s with one. Queries keep every
BLAS thread: explaining results did better with two (semantic with explanations p50 41.8 against 46.4 ms).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def one_blas_thread() -> threadpool_limits:
    """A context in which the BLAS libraries loaded so far (numpy's) use one thread; process-wide, so searches that
    run beside an indexing run (the app) get one thread until it ends."""
    return threadpool_limits(limits=1, user_api="blas")
