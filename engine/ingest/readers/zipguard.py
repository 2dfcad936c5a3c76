"""Refuses zip bombs before a zip-based format (DOCX, PPTX, ODT, EPUB) is handed to its parser.

The central directory states each entry's unpacked size, so the check costs one small read. A lying directory
cannot get past it either: zipfile stops every entry at its declared size.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from engine.errors import ReadError
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import megabytes

# Below this an archive cannot hurt, whatever its ratio (small XML parts can compress 300:1).
_HARMLESS_BYTES = 1_000_000


def check_zip(path: Path, limits: Limits, fmt: str) -> None:
    """Raise ReadError unless ``path`` is a zip archive that unpacks within ``limits``; ``fmt`` names the format."""
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        raise ReadError(f"corrupt {fmt}: not a valid zip archive") from e
    packed = max(path.stat().st_size, 1)
    ratio = unpacked / packed
    if unpacked > limits.max_unpacked_bytes or (unpacked > _HARMLESS_BYTES and ratio > limits.max_compression_ratio):
        raise ReadError(
            f"zip bomb? {fmt} expands to {megabytes(unpacked)} MB, {ratio:,.0f} times its size", status="skipped"
        )
