"""Document readers: :func:`read` turns any file into a :class:`Document` or says, in a ReadError, why it won't.

Importing this package registers every built-in reader. :func:`read` does what is common to all formats: it
declines files that are empty, too large, unreadable or binary before any parser sees them, picks the reader by
extension (or reads a file of unknown type as plain text when its content is text), notices files that change
while they are being read, and removes escape sequences and control characters from every format's text
(:mod:`engine.ingest.readers.clean`).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers import compressed, epub, html, image, message, office, pdf, rtf, text  # noqa: F401 - importing registers them
from engine.ingest.readers.base import Block, Document, Limits, Reader, reader_for_extension, readers, register
from engine.ingest.readers.clean import clean_document
from engine.ingest.readers.guard import megabytes

__all__ = [
    "BINARY_EXTENSIONS",
    "DEFAULT_LIMITS",
    "Block",
    "Document",
    "Limits",
    "Reader",
    "check_size",
    "isolated",
    "read",
    "reader_for_extension",
    "readers",
    "register",
]

log = logging.getLogger(__name__)

DEFAULT_LIMITS = Limits()
_SNIFF_BYTES = 8192
# Formats that are binary by definition: declined by name, without opening the file.
BINARY_EXTENSIONS = frozenset(
    (
        # images (PNG, JPEG and TIFF are read through OCR: readers/image.py)
        ".gif .bmp .webp .ico .icns .heic .heif .psd .raw .cr2 .nef .dng .xcf"
        # audio and video
        " .mp3 .wav .flac .ogg .oga .m4a .aac .wma .opus .aiff .mid .mp4 .m4v .mkv .avi .mov .wmv .webm .flv .mpg"
        " .mpeg .3gp"
        # archives and disk images
        " .zip .tgz .zst .7z .rar .tar .lz .lzma .cab .iso .dmg .img"
        # executables, libraries, bytecode, packages
        " .exe .dll .so .dylib .bin .o .a .lib .class .jar .war .pyc .pyo .pyd .wasm .msi .deb .rpm .apk"
        # fonts
        " .ttf .otf .woff .woff2 .eot"
        # databases and data dumps
        " .db .sqlite .sqlite3 .mdb .accdb .dbf .npy .npz .pkl .pickle .parquet .h5 .hdf5 .onnx .pt .safetensors"
    ).split()
)
# Printer code: PostScript reads as text (its words are drawing commands and font data), so /usr/share/doc's
# manual.ps.gz was read as 50,000 "sentences". Declined by name, or by PostScript's "%!" at the start of the file.
PRINTER_EXTENSIONS = frozenset(".ps .eps .pcl .prn .dvi".split())
PRINTER_CODE = "printer code (PostScript, PCL or DVI), not text; a PDF of it would be read"


def _stat(path: Path) -> os.stat_result:
    try:
        return os.stat(path)
    except PermissionError as e:
        raise ReadError("permission denied") from e
    except FileNotFoundError as e:
        raise ReadError("file disappeared", status=FileState.SKIPPED) from e
    except OSError as e:
        raise ReadError(f"cannot read: {e.strerror or e}") from e


def check_size(size: int, limits: Limits) -> None:
    """Raise ReadError for a file of ``size`` bytes over ``limits.max_file_bytes``: checked before the file is even
    hashed, so that a huge (or sparse) file costs one stat, not a read of every byte."""
    if size > limits.max_file_bytes:
        raise ReadError(
            f"too large: {megabytes(size)} MB over the {megabytes(limits.max_file_bytes)} MB limit",
            status=FileState.SKIPPED,
        )


def _check_file(path: Path, limits: Limits) -> os.stat_result:
    """The file's stat, if it is a regular file worth reading."""
    st = _stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ReadError("not a regular file", status=FileState.SKIPPED)
    if st.st_size == 0:
        raise ReadError("empty file", status=FileState.SKIPPED)
    check_size(st.st_size, limits)
    return st


def _head(path: Path) -> bytes:
    # Opening the file here also tells an unreadable file from a parser failure, whatever the format.
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except PermissionError as e:
        raise ReadError("permission denied") from e
    except OSError as e:
        raise ReadError(f"cannot read: {e.strerror or e}") from e


def _pick(path: Path) -> Reader:
    extension = path.suffix.lower()
    if extension in BINARY_EXTENSIONS:
        raise ReadError(f"binary file ({extension})", status=FileState.SKIPPED)
    head = _head(path)
    if extension in PRINTER_EXTENSIONS or head.startswith(b"%!"):
        raise ReadError(PRINTER_CODE, status=FileState.SKIPPED)
    reader = reader_for_extension(path)
    if reader is not None:
        return reader
    if text.looks_binary(head):
        raise ReadError("binary file", status=FileState.SKIPPED)
    return text.PLAIN


def isolated(path: Path) -> bool:
    """Whether ``path`` goes to a reader that must run in a reader process (``Reader.isolate``): a parser in C that
    the time budget cannot interrupt, or whose memory only a reader process's watchdog bounds. A file of no known
    format is read as text, or declined, in any process."""
    reader = reader_for_extension(path)
    return reader is not None and getattr(reader, "isolate", True)  # a plug-in that does not say is isolated


def read(path: Path, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Read one file. Raises ReadError (never anything else for a bad file) when it cannot or should not be read.

    A file that changes while it is read (a download in progress, a document being saved) is read once more; if
    it changes again it fails, and the next scan will pick it up when it has settled.
    """
    for attempt in (1, 2):
        before = _check_file(path, limits)
        doc = _pick(path).read(path, limits)
        after = _stat(path)
        if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            break
        log.info("%s changed while being read (attempt %d)", path, attempt)
    else:
        raise ReadError("changed while reading")
    doc = clean_document(doc)
    chars = sum(len(block.text) for block in doc.blocks)
    if chars > limits.max_chars:
        raise ReadError(f"too much text: {chars:,} characters over the {limits.max_chars:,} limit",
                        status=FileState.SKIPPED)
    return doc
