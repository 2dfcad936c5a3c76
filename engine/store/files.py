"""Files beside the database (the graphs and their sidecars): replaced whole, and checked before they are trusted.

Several processes read an index while one writes it, so a file is never rewritten in place: it is written under a
temporary name of its own in the same folder and renamed over the old one, which a reader sees entirely or not at
all. hnswlib trusts the bytes it loads (a damaged graph crashed every search), so a graph's digest is recorded when
it is written and compared before it is loaded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# Temporary files end so; a writer killed mid-write leaves one, and the next run removes it (remove_leftovers).
TMP_SUFFIX = ".tmp"
# A digest hashes the file in segments of this size on several threads (hashlib releases the GIL) and then hashes
# the segments' digests: one core takes seconds over a large graph
# (docs/decisions/0050-store-reads-on-the-query-path.md).
DIGEST_SEGMENT = 64 * 1024 * 1024
DIGEST_THREADS = max(1, min(4, os.cpu_count() or 1))
_READ_BLOCK = 4 * 1024 * 1024


def replace_file(path: Path, write: Callable[[Path], object]) -> None:
    """Write ``path`` through ``write(temporary path)`` and rename the result over it (atomic on one file system).

    The temporary name is unique (another writer's, or a file of another kind, never collides with it), and it is
    removed when ``write`` fails. No fsync: after a power cut a graph may be short or empty, which its digest
    reveals, and the database it is rebuilt from is the source of truth.
    """
    fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """:func:`replace_file` for a small text file."""
    replace_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def remove_leftovers(folder: Path, pattern: str) -> list[Path]:
    """Delete temporary files matching ``pattern`` (a glob ending in :data:`TMP_SUFFIX`) that a killed writer left;
    the caller holds the index's write lock, so no writer is using them. Returns those deleted."""
    removed = []
    for path in folder.glob(pattern):
        try:
            path.unlink()
            removed.append(path)
        except OSError as e:
            log.warning("could not remove leftover %s (%s)", path, e)
    return removed


def file_digest(path: Path) -> str:
    """A SHA-256 digest of the file's bytes (hex): of its segments' digests, hashed in parallel. OSError when
    it cannot be read."""
    size = path.stat().st_size
    starts = range(0, max(size, 1), DIGEST_SEGMENT)
    with ThreadPoolExecutor(min(DIGEST_THREADS, len(starts)), thread_name_prefix="quire-digest") as pool:
        parts = list(pool.map(lambda start: _segment_digest(path, start), starts))
    return hashlib.sha256(b"".join(parts)).hexdigest()


def _segment_digest(path: Path, start: int) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        f.seek(start)
        left = DIGEST_SEGMENT
        while left and (block := f.read(min(_READ_BLOCK, left))):
            digest.update(block)
            left -= len(block)
    return digest.digest()


def bytes_on_disk(folder: Path) -> int:
    """The size of the index folder's files; one a run renamed away while listed (graphs are saved by rename, and the
    app asks for the status while runs write) counts nothing."""
    total = 0
    for f in folder.iterdir():
        try:
            total += f.stat().st_size if f.is_file() else 0
        except FileNotFoundError:
            continue
    return total


def array_digest(values: np.ndarray) -> str:
    """A short digest of an array's float32 bytes (a graph's projection basis, which its sidecar records)."""
    return hashlib.sha1(np.ascontiguousarray(values, dtype=np.float32).tobytes()).hexdigest()[:16]
