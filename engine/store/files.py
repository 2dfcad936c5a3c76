"""Files beside the database (the saved vectors and their sidecars): replaced whole.

Several processes read an index while one writes it, so a file is never rewritten in place: it is written under a
temporary name of its own in the same folder and renamed over the old one, which a reader sees entirely or not at
all.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

# Temporary files end so; a writer killed mid-write leaves one, and the next run removes it (remove_leftovers).
TMP_SUFFIX = ".tmp"


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
