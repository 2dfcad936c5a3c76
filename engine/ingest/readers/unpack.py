"""Unpack a compressed stream to a file, counting the bytes as they are written rather than trusting a header: a
lying header (a zip entry that declares 1 KB and inflates to gigabytes) stops at the limit all the same."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers.guard import megabytes

if TYPE_CHECKING:
    from _typeshed import SupportsRead  # a zip member and a gzip, bz2 or xz stream: anything with read(n)

_CHUNK = 1 << 20


def copy_within(source: SupportsRead[bytes], target: Path, allowed: int, what: str) -> int:
    """Write ``source`` to ``target``; returns the bytes written, or raises ReadError past ``allowed`` bytes (``what``
    names the source in its reason: "compressed file", "archive member")."""
    written = 0
    with target.open("wb") as out:
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            if written > allowed:
                raise ReadError(f"{what} unpacks to more than {megabytes(allowed)} MB "
                                "(a decompression bomb, or too large to index)", status=FileState.SKIPPED)
            out.write(chunk)
    if written == 0:
        raise ReadError("empty file", status=FileState.SKIPPED)
    return written
