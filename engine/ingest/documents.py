"""What the ingest step hands the store for one file: its sentences with offsets, and the document that holds them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Listed:
    """A document as its container lists it (a zip archive's member, a mailbox's message or attachment): its name
    inside ("notes/a.txt", "3", "3/report.pdf"), unpacked size, time stamp, and whether it is encrypted."""

    name: str
    size: int
    mtime: float
    encrypted: bool = False


@dataclass(frozen=True)
class SentenceRecord:
    """A sentence as the ingest step produced it; offsets are into the document's extracted text."""

    text: str
    start: int
    end: int
    page: int | None
    hash: int


@dataclass(frozen=True)
class NewDocument:
    """Everything needed to (re)write one indexed document; ``passages`` are (first, last) sentence ordinals;
    ``reason`` says why it is indexed only in part (cut at the sentence limit), None when it is whole; ``byline``: who
    wrote it and when, for a result's card (an e-mail's sender and date), "" where the format has none."""

    path: str
    size: int
    mtime: float
    hash: str
    title: str
    kind: str
    sentences: tuple[SentenceRecord, ...]
    passages: tuple[tuple[int, int], ...]
    reason: str | None = None
    byline: str = ""
