"""Files compressed whole with gzip, bzip2 or xz (``notes.txt.gz``, a man page's ``ls.1.gz``, ``report.pdf.xz``),
read as the file inside, as Recoll reads them.

The inner file is unpacked into a private temporary folder under its own name (the compressed name without the
compression's extension), and read there by the reader for that name, or as text when its content is text. Unpacking
stops at the allowance the zip-based formats have (``zipguard.allowance``: bytes out, and bytes out per byte in
beyond a harmless size), counted as they are written, never taken from a header. A ``.tar.gz`` holds a tar file, declined as binary.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import tempfile
import zlib
from collections.abc import Callable
from io import BufferedIOBase
from pathlib import Path

from engine.errors import ReadError
from engine.ingest.readers.base import Document, Limits, register
from engine.ingest.readers.guard import short_cause
from engine.ingest.readers.unpack import copy_within
from engine.ingest.readers.zipguard import allowance

_OPENERS: dict[str, Callable[[Path], BufferedIOBase]] = {
    ".gz": lambda p: gzip.open(p, "rb"), ".bz2": lambda p: bz2.open(p, "rb"), ".xz": lambda p: lzma.open(p, "rb"),
}
_DAMAGE = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


class CompressedReader:
    """Files compressed whole with gzip, bzip2 or xz, read as the file inside."""

    name = "compressed"
    isolate = True  # the file inside may be any format; unpacking runs in C
    extensions = tuple(_OPENERS)

    def read(self, path: Path, limits: Limits) -> Document:
        """Unpack the file inside, within the archive limits, and read it as its own name says."""
        from engine.ingest.readers import read  # the package reads the inner file as it reads any other

        with tempfile.TemporaryDirectory(prefix="quire-unpacked-") as folder:
            document = read(unpack_into(path, Path(folder), limits), limits)
        return Document(title=document.title, blocks=document.blocks, kind=self.name)


def is_compressed(path: Path) -> bool:
    """Whether ``path`` is a file compressed whole that this reader reads (by its extension)."""
    return path.suffix.lower() in _OPENERS


def unpack_into(path: Path, folder: Path, limits: Limits) -> Path:
    """The file inside ``path`` written into ``folder`` under its own name, within the archive limits: what is read,
    and what is opened when a person opens the result (a viewer knows no .gz). Raises ReadError."""
    inner = folder / (path.stem or "unpacked")
    _unpack(path, inner, allowance(path.stat().st_size, limits))
    return inner


def _unpack(path: Path, target: Path, allowed: int) -> None:
    """Write the decompressed content of ``path`` to ``target``; stops with a ReadError past ``allowed`` bytes."""
    try:
        with _OPENERS[path.suffix.lower()](path) as source:
            copy_within(source, target, allowed, "compressed file")
    except _DAMAGE as e:
        raise ReadError(f"corrupt {path.suffix.lower().lstrip('.')} data: {short_cause(e)}") from e


register(CompressedReader())
