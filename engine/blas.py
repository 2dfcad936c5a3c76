"""BLAS runs on one thread in quire.

quire already keeps both cores of a small machine busy with threads of its own (reader processes, hnswlib's inserts,
the facets' clustering, the lexical ranking beside the graph walk), and its matrix products are small: a batch's
projection, a query's candidates. OpenBLAS's worker threads spin for a while after each product before they sleep,
on the cores those threads need. Measured here, a 4096 x 256 by 256 x 128 product every 0.2 s cost 149 ms of CPU
per call with two BLAS threads (15 ms back to back); indexing 46k Wikipedia sentences (bench/index_wiki.py
--files 6) took 29.8 CPU-s and 18.9 s with two BLAS threads, 21.2 CPU-s and 13.7 s with one.
"""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits


@functools.cache
def use_one_blas_thread() -> None:
    """Limit the BLAS libraries loaded so far (numpy's) to one thread, for the rest of the process."""
    threadpool_limits(limits=1, user_api="blas")
