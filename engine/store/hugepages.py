"""Ask Linux to back large anonymous memory (the HNSW graph) with 2 MB pages.

Inserting into a graph of millions of vectors is bound by memory latency, and with 4 KB pages most of its random
reads also miss the TLB. In Linux's usual "madvise" mode only memory marked with madvise(MADV_HUGEPAGE) gets huge
pages, and hnswlib's malloc'd graph is not marked: marking it made a 1M-vector build insert 14-25% more vectors per
CPU second (docs/decisions/0007-huge-pages-for-the-graph.md). Elsewhere (other systems, THP off) this does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

MADV_HUGEPAGE = 14  # linux/mman.h
# Mappings smaller than this are left alone: a large graph's are hundreds of MB, and glibc's per-thread malloc arenas
# (64 MB each, mostly unused) must not be backed by huge pages, which would make their sparse pages resident.
MIN_BYTES = 128 << 20


def advise_large_mappings() -> int:
    """Mark every writable anonymous mapping of at least MIN_BYTES for huge pages; returns how many were marked.

    Pages touched after the call (a new graph's, as inserts fill it) come as huge pages at once; pages touched before
    are merged later by the kernel's khugepaged, if at all. Marking a mapping twice, or one that numpy marked, is
    harmless, and a failure only costs the speed-up.
    """
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        with open("/proc/self/maps", encoding="ascii") as maps:
            lines = maps.readlines()
    except OSError as e:
        log.debug("huge pages not requested: %s", e)
        return 0
    marked = 0
    for line in lines:
        fields = line.split()
        if len(fields) != 5 or "w" not in fields[1]:
            continue  # a file, the stack, the heap or read-only: not a large malloc'd block
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if end - start >= MIN_BYTES and libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_HUGEPAGE) == 0:
            marked += 1
    return marked
