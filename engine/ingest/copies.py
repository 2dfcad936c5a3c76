"""Files a viewer can open for indexed paths that exist on disk only packed: a zip archive's or a mailbox's member
(:mod:`engine.ingest.archive`) and the file inside a compressed one (``FAQ.gz`` opens as ``FAQ``: no viewer opens a
.gz). Opening such a result unpacks a copy of it; showing it in its folder shows the file that holds it."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.ingest.archive import member_of, unpacked
from engine.ingest.readers.base import Limits
from engine.ingest.readers.compressed import is_compressed, unpack_into


def file_holding(path: Path) -> Path:
    """The file on disk that holds ``path``: its archive for a member, else ``path`` itself."""
    inside = member_of(path)
    return path if inside is None else inside[0]


def is_packed(path: Path) -> bool:
    """Whether ``path`` opens only unpacked: an archive's member, or a compressed file."""
    return member_of(path) is not None or (is_compressed(path) and path.is_file())


def unpacked_copy(path: Path, folder: Path) -> Path:
    """``path`` unpacked into ``folder`` under its own name, read-only, as edits to a copy would not reach the
    archive. Raises :class:`engine.errors.ReadError` when it can no longer be unpacked."""
    inside = member_of(path)
    if inside is None:
        copy = unpack_into(path, folder, Limits())
    else:
        with unpacked(*inside, Limits()) as member:
            copy = Path(shutil.copy2(member, folder / member.name))
    copy.chmod(0o444)
    return copy
