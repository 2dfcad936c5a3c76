"""Refuses zip bombs before a zip-based format (DOCX, PPTX, ODT, EPUB) is handed to its parser.

Two checks. The central directory states each entry's unpacked size, so an honest bomb costs one small read. A lying
directory is caught by the second: every entry is inflated once, a chunk at a time, counting the bytes that actually
come out, and the count stops at the limit. The declared sizes cannot be trusted for memory either: zipfile inflates
up to 1 GB in one call before it cuts an entry at its declared size, so a 1 MB DOCX whose headers said its text was
small cost 2.37 GB of memory before its checksum failed.
"""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import megabytes

# Below this an archive cannot hurt, whatever its ratio (small XML parts can compress 300:1).
_HARMLESS_BYTES = 1_000_000
# Inflated per read while counting: the most memory the count needs.
_CHUNK = 1 << 20
# Stored and deflated are what Office, OpenDocument and EPUB files use. zipfile inflates bzip2 and LZMA entries a
# whole compressed chunk at once, with no bound on what comes out, so they cannot be counted safely.
_COUNTABLE = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)

# The first bytes of an OLE compound file.
_COMPOUND_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")


def allowance(packed: int, limits: Limits) -> int:
    """The bytes ``packed`` compressed bytes may unpack to: the archive limits, and never less than harmless."""
    return int(min(limits.max_unpacked_bytes, max(_HARMLESS_BYTES, limits.max_compression_ratio * max(packed, 1))))


def check_declared(entries: list[zipfile.ZipInfo], packed: int, limits: Limits, fmt: str) -> None:
    """Raise ReadError when the sizes ``entries`` declare already pass the allowance of ``packed`` bytes."""
    declared = sum(info.file_size for info in entries)
    if declared > allowance(packed, limits):
        raise _bomb(fmt, declared, max(packed, 1))


def check_zip(path: Path, limits: Limits, fmt: str) -> None:
    """Raise ReadError unless ``path`` is a zip archive that unpacks within ``limits``; ``fmt`` names the format."""
    packed = max(path.stat().st_size, 1)
    allowed = allowance(packed, limits)
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
            check_declared(entries, packed, limits, fmt)
            inflated = 0
            for info in entries:
                inflated = _inflate(archive, info, inflated, allowed, fmt)
                if inflated > allowed:
                    raise _bomb(fmt, inflated, packed, counted=True)
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError) as e:
        if _compound_file(path):
            # Office saves a password-protected document as an OLE compound file holding the encrypted package
            raise ReadError(f"encrypted {fmt}: it is protected by a password") from e
        raise ReadError(f"corrupt {fmt}: not a valid zip archive") from e


def _compound_file(path: Path) -> bool:
    """Whether ``path`` starts as an OLE compound file (the container of an encrypted Office document)."""
    try:
        with path.open("rb") as f:
            return f.read(len(_COMPOUND_MAGIC)) == _COMPOUND_MAGIC
    except OSError:
        return False


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, inflated: int, allowed: int, fmt: str) -> int:
    """``inflated`` plus the bytes ``info`` really unpacks to, counted until the total passes ``allowed``."""
    if info.compress_type not in _COUNTABLE:
        raise ReadError(f"unusual {fmt}: {info.filename} is packed with a method {fmt} files do not use",
                        status=FileState.SKIPPED)
    # Read as if the entry declared more than the limit, so that zipfile does not stop where the header says, and
    # had no checksum, which would fail where the count stops (the parser still checks it).
    counted = copy.copy(info)
    # typeshed types CRC as int; zipfile skips the check when it is None
    counted.file_size, counted.CRC = allowed + 1, None  # type: ignore[assignment]
    with archive.open(counted) as member:
        while inflated <= allowed and (chunk := member.read(_CHUNK)):
            inflated += len(chunk)
    return inflated


def _bomb(fmt: str, unpacked: int, packed: int, counted: bool = False) -> ReadError:
    more = "more than " if counted else ""
    return ReadError(f"zip bomb? {fmt} expands to {more}{megabytes(unpacked)} MB, {unpacked / packed:,.0f} times its "
                     "size", status=FileState.SKIPPED)
