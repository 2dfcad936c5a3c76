"""What a reader returns, the limits it must respect, and the registry that picks a reader for a file."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Block:
    """A run of text that no sentence crosses (a paragraph, a table cell, a slide's text box).

    ``page`` is the 1-based page (PDF) or slide (PPTX) the text is on, or None where a format has no pages.
    ``verbatim``: code or other preformatted text, whose lines are not sentences: it is kept as one sentence (cut at
    line ends only where it is longer than a sentence may be), not split after every short line.
    """

    text: str
    page: int | None = None
    verbatim: bool = False


@dataclass(frozen=True)
class Document:
    """A file's text as blocks, with its title (from metadata, a heading, or the file name) and the reader's name.

    ``byline``: who wrote it and when, as a result's card shows it under the title (an e-mail's sender and date;
    "" where a format has none); ``note``: what was read only in part or guessed (a header that could not be
    decoded), for the file's record, None when all was read.
    """

    title: str
    blocks: tuple[Block, ...]
    kind: str
    byline: str = ""
    note: str | None = None


@dataclass(frozen=True)
class Limits:
    """Guards against hostile or accidental inputs; every reader checks them before doing expensive work.

    Defaults: 100 MB per file on disk (a 100 MB PDF is a large book; a bigger text file is usually a log or a dump);
    archives (DOCX, PPTX, ODT, EPUB) may expand to 300 MB and at most 200x their packed size, beyond which they are
    zip bombs for our purposes; 20 million characters of extracted text per file; 50,000 sentences per document, about
    2,000 pages (War and Peace has 25,000 sentences), past which a document is indexed up to the limit: a 20 KB PDF
    that draws one glyph run 200,000 times became 200,000 sentences, 492 MB of index and 151 s of work; 120 seconds to
    read a file, and 4 GB of resident memory for a reader process reading it (``engine.ingest.budget``,
    docs/decisions/0012-reader-time-budget.md).

    ``ocr_languages``: the Tesseract languages scanned pages and images are read in (``("eng", "deu")``); empty, the
    default, reads English and every other language Tesseract has installed (``engine.ingest.readers.ocr``).
    """

    max_file_bytes: int = 100_000_000
    max_unpacked_bytes: int = 300_000_000
    max_compression_ratio: float = 200.0
    max_chars: int = 20_000_000
    max_sentences: int = 50_000
    read_seconds: float = 120.0
    max_reader_bytes: int = 4_000_000_000
    ignore: tuple[str, ...] = field(default_factory=tuple)
    ocr_languages: tuple[str, ...] = ()


class Reader(Protocol):
    """One file format. ``read`` raises :class:`engine.errors.ReadError` for files it cannot or will not read."""

    name: str

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extensions read, lower case with the dot. Read-only here, so that a reader's class attribute of a
        fixed-length tuple, ``(".pdf",)``, meets it."""
        ...

    # True when the reader hands the file to a parser that can run in C for long or grow memory without bound
    # (pdfium, lxml, expat): such a file is always read in a reader process, which can be ended, however few files
    # a run has. False for readers in Python of our own, which the time budget interrupts in any process
    # (``engine.ingest.pool``, docs/decisions/0012-reader-time-budget.md).
    isolate: bool

    def read(self, path: Path, limits: Limits) -> Document:
        """Extract the text of ``path``."""
        ...


_BY_EXTENSION: dict[str, Reader] = {}
_READERS: list[Reader] = []


def register(reader: Reader) -> Reader:
    """Add a reader; later registrations of an extension win (so a plug-in can override a built-in)."""
    _READERS.append(reader)
    for ext in reader.extensions:
        _BY_EXTENSION[ext.lower()] = reader
    return reader


def readers() -> list[Reader]:
    """Registered readers in registration order."""
    return list(_READERS)


def reader_for_extension(path: Path) -> Reader | None:
    """The reader registered for the file's extension (multi-part ones like ``.tar.gz`` are not formats we read)."""
    return _BY_EXTENSION.get(path.suffix.lower())


def supported_extensions() -> Iterable[str]:
    """Every extension some reader claims."""
    return sorted(_BY_EXTENSION)
