"""Freed memory kept for the next query, where the C library allows it (glibc).

A query on a large index makes arrays of a few to 25 MB and frees them: a common word's postings, their scores, the
count of every passage's BM25 sum. glibc serves an allocation that large with a fresh mmap and gives it back on free,
so every query writes its arrays into new pages, and page faults are dear in a virtual machine. With the limits below,
such arrays come from the heap and freed memory stays in the process for the next query
(docs/decisions/0021-freed-memory-kept-for-queries.md).

Process-wide and set once, by the first searcher; elsewhere (macOS, Windows, musl) nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys

log = logging.getLogger(__name__)

# mallopt's parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Allocations below this come from the heap: glibc's largest allowed value on 64-bit, above a whole-corpus query's
# 25 MB count of every passage's BM25 sum.
MMAP_THRESHOLD = 32 * 1024 * 1024
# Free memory at the heap's top beyond this is given back to the system: room for a query's arrays together.
TRIM_THRESHOLD = 128 * 1024 * 1024


@functools.cache  # two threads racing here both set the same limits, which is harmless
def keep_freed_memory() -> bool:
    """Set the C library's limits once per process; returns whether they are in force (False off glibc)."""
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
