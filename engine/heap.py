"""Memory kept ready for the next query: freed memory kept where the C library allows it (glibc), and what a process
holds for searching kept out of Python's full garbage collections.

A query on a large index makes arrays of a few to 25 MB and frees them: a common word's postings, their scores, the
count of every passage's BM25 sum. glibc serves an allocation that large with a fresh mmap and gives it back on free,
so every query writes its arrays into new pages, and page faults are dear in a virtual machine. With the limits below,
such arrays come from the heap and freed memory stays in the process for the next query
(docs/decisions/0021-freed-memory-kept-for-queries.md).

Python's cyclic collector runs a full collection every few dozen queries, and it walks every object the process
holds (the model's vocabulary, the word space, the index's wrappers), which makes those queries the slowest. A process
that keeps searching moves what it holds out of those collections (``gc.freeze``) until it closes an index, so a full
collection walks only what queries made since (docs/decisions/0022-long-lived-objects-frozen.md). Such a process
also collects its youngest objects less often: a query makes and frees thousands, and the collections due every
700 found nothing to free (docs/decisions/0025-fewer-young-collections.md).

All of it is process-wide, so the engine never calls it: ``engine.Index`` leaves the process as it found it. A program
that keeps searching opts in from its entry point: :func:`keep_freed_memory` once, :func:`freeze_long_lived` after
each search, :func:`thaw` when it closes an index it searched (``quire search``, the app's search thread, a
collection's Ray readers, the latency benchmarks). Off glibc (macOS, Windows, musl) the C library is left as it is.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import sys
import threading

log = logging.getLogger(__name__)

# mallopt's parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Allocations below this come from the heap: glibc's largest allowed value on 64-bit, above the largest array a
# whole-corpus query makes (docs/decisions/0021-freed-memory-kept-for-queries.md).
MMAP_THRESHOLD = 32 * 1024 * 1024
# Free memory at the heap's top beyond this is given back to the system: room for a query's arrays together.
TRIM_THRESHOLD = 128 * 1024 * 1024


@functools.cache  # two threads racing here both set the same limits, which is harmless
def keep_freed_memory() -> bool:
    """Set the C library's limits once per process (called by an entry point); returns whether they are in force
    (False off glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        gnu_get_libc_version = libc.gnu_get_libc_version  # glibc's alone: musl has mallopt but ignores it
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    gnu_get_libc_version.restype = ctypes.c_char_p
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    kept = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    if not kept:
        log.debug("glibc %s refused the heap limits", gnu_get_libc_version().decode())
    return kept


# Searches a process makes before it freezes what it holds, after one full collection: one that searches a few times
# (`quire search` with one query) pays nothing for it, one that keeps searching (the app, `quire search --queries`)
# pays once, before its first full collection is due (docs/decisions/0022-long-lived-objects-frozen.md).
SEARCHES_BEFORE_FREEZING = 10
# Objects made (less those freed) between two collections of the youngest generation in a process that keeps
# searching, where Python's default is 700 (docs/decisions/0025-fewer-young-collections.md).
YOUNG_COLLECTION_OBJECTS = 10_000


class _Frozen:
    """Whether what the process holds is out of the cyclic collector's full collections (:func:`freeze_long_lived`),
    and the searches made since it was last let go."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.frozen = False
        self.searches = 0
        self.thresholds = gc.get_threshold()  # the collector's own, given back by thaw()


_FROZEN = _Frozen()


def freeze_long_lived() -> None:
    """Called by an entry point after each search: at the SEARCHES_BEFORE_FREEZING-th since the process started or
    since :func:`thaw`, collect the garbage, keep every object alive then out of the cyclic collector's collections
    and collect the youngest objects every YOUNG_COLLECTION_OBJECTS, until :func:`thaw`."""
    with _FROZEN.lock:
        if _FROZEN.frozen:
            return
        _FROZEN.searches += 1
        if _FROZEN.searches >= SEARCHES_BEFORE_FREEZING:
            gc.collect()  # garbage frozen would never be freed
            gc.freeze()
            _FROZEN.thresholds = gc.get_threshold()
            gc.set_threshold(YOUNG_COLLECTION_OBJECTS, *_FROZEN.thresholds[1:])
            _FROZEN.frozen = True


def thaw() -> None:
    """Give the objects :func:`freeze_long_lived` kept back to the collector, whose next full collection frees a
    closed index's objects that sit in reference cycles, and its thresholds: called by an entry point once it has
    closed an index it searched."""
    with _FROZEN.lock:
        _FROZEN.searches = 0
        if _FROZEN.frozen:
            gc.unfreeze()
            gc.set_threshold(*_FROZEN.thresholds)
            _FROZEN.frozen = False
