"""Turn one file into what the store needs: sentences with offsets and pages, passages, content hash.

Runs in reader worker processes, so it must be picklable in and out and never touch the database.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.archive import describe, member_of, unpacked
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.ingest.readers.base import Block, Document, Limits
from engine.text.paths import readable
from engine.text.sentences import iter_spans, verbatim_spans

# Passages are what BM25 scores: long enough to hold a query's words when they are spread over neighbouring
# sentences, short enough that the best passage of a long document is still a readable snippet. 250 words keep
# the abstracts of the classic retrieval collections whole and cut Wikipedia articles into one or two paragraphs.
PASSAGE_WORDS = 250
_HASH_JUNK = re.compile(r"[\W\d_]")


class _JunkTable(dict):
    """``str.translate`` table mapping each character :data:`_HASH_JUNK` matches to a space, filled on first sight.

    Translating, then splitting on whitespace, gives the same key as a regex substitution of junk runs at about
    half the cost (the regex tried its character class at every character of every sentence).
    """

    def __missing__(self, code: int) -> str:
        value = self[code] = " " if _HASH_JUNK.match(chr(code)) else chr(code)
        return value


_JUNK = _JunkTable()


@dataclass(frozen=True)
class Extracted:
    """Outcome for one file: a document to store, or a status and reason; ``unchanged`` when the bytes match."""

    path: str
    size: int
    mtime: float
    hash: str
    document: NewDocument | None = None
    status: FileState = FileState.INDEXED
    reason: str | None = None
    unchanged: bool = False
    # what the static model makes of the document, when the readers prepared it (``engine.indexing.prepare``): its
    # sentences' word ids (flat, CSR offsets) and facets (``FacetBatch.packed`` rows, one per sentence)
    words: tuple[np.ndarray, np.ndarray] | None = None
    facets: list[tuple[int, bytes, bytes, bytes]] | None = None


def content_hash(path: Path) -> str:
    """BLAKE2b of the file's bytes: tells a touched file from a changed one without parsing it."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sentence_hash(text: str) -> int:
    """Hash of a sentence with case, digits and punctuation removed: page footers differ only in their numbers."""
    key = " ".join(text.lower().translate(_JUNK).split())
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def sentences_of(doc: Document, limit: int | None = None) -> tuple[SentenceRecord, ...]:
    """Split a document's blocks into at most ``limit`` sentences; offsets are into the blocks joined by blank lines.

    A run of one sentence repeated is kept once: it adds nothing to find, and "Go now." written 500,000 times in a
    4 MB file became 500,000 sentences and 1.2 GB of memory.
    """
    blocks = [block for block in doc.blocks if block.text.strip()]
    starts: list[int] = []
    position = 0
    for block in blocks:
        starts.append(position)
        position += len(block.text) + 2
    pages = [block.page for block in blocks]
    text = "\n\n".join(block.text for block in blocks)
    out: list[SentenceRecord] = []
    for start, end in _spans(text, blocks, starts):
        clean = " ".join(text[start:end].split())  # spans are trimmed: this only collapses inner whitespace
        if out and out[-1].text == clean:
            continue
        if len(out) == limit:
            break
        page = pages[bisect.bisect_right(starts, start) - 1] if starts else None
        out.append(SentenceRecord(text=clean, start=start, end=end, page=page, hash=sentence_hash(clean)))
    return tuple(out)


def _spans(text: str, blocks: list[Block], starts: list[int]) -> Iterator[tuple[int, int]]:
    """The sentence spans of the blocks joined as ``text``: a verbatim block (code) is one sentence
    (:func:`verbatim_spans`), the runs of blocks between split by :func:`iter_spans`, in one call over the whole text
    where no block is verbatim."""
    run_start = 0
    for block, start in zip(blocks, starts):
        if not block.verbatim:
            continue
        if start > run_start:
            yield from ((run_start + a, run_start + b) for a, b in iter_spans(text[run_start:start]))
        yield from verbatim_spans(text, start, start + len(block.text))
        run_start = start + len(block.text) + 2
    if run_start == 0:
        yield from iter_spans(text)
    elif run_start < len(text):
        yield from ((run_start + a, run_start + b) for a, b in iter_spans(text[run_start:]))


def passages_of(sentences: tuple[SentenceRecord, ...]) -> tuple[tuple[int, int], ...]:
    """Group consecutive sentences into passages of at most PASSAGE_WORDS words (a longer sentence stands alone)."""
    out: list[tuple[int, int]] = []
    first, words = 0, 0
    for i, s in enumerate(sentences):
        n = len(s.text.split())
        if i > first and words + n > PASSAGE_WORDS:
            out.append((first, i - 1))
            first, words = i, 0
        words += n
    if sentences:
        out.append((first, len(sentences) - 1))
    return tuple(out)


def extract(path_str: str, limits: Limits, known_hash: str | None = None) -> Extracted:
    """Read and split one file. Never raises for a bad file: the outcome carries the reason instead."""
    path = Path(path_str)
    inside = member_of(path)
    if inside is not None:
        return _extract_member(path_str, *inside, limits, known_hash)
    try:
        st = path.stat()
        readers.check_size(st.st_size, limits)
        digest = content_hash(path) if st.st_size else ""
    except ReadError as e:
        return Extracted(path_str, st.st_size, st.st_mtime, "", status=e.status, reason=e.reason)
    except OSError as e:
        why = "permission denied" if isinstance(e, PermissionError) else f"cannot read: {e.strerror or e}"
        return Extracted(path_str, 0, 0.0, "", status=FileState.FAILED, reason=why)
    if known_hash is not None and digest == known_hash:
        return Extracted(path_str, st.st_size, st.st_mtime, digest, unchanged=True)
    try:
        doc = readers.read(path, limits)
    except ReadError as e:
        return Extracted(path_str, st.st_size, st.st_mtime, digest, status=e.status, reason=e.reason)
    # one sentence past the limit tells a document at the limit from one cut at it
    sentences = sentences_of(doc, limits.max_sentences + 1)
    if not sentences:
        return Extracted(path_str, st.st_size, st.st_mtime, digest, status=FileState.SKIPPED, reason="no text found")
    reason = doc.note  # read in part or guessed (an e-mail header that could not be decoded)
    if len(sentences) > limits.max_sentences:
        sentences = sentences[: limits.max_sentences]
        cut = f"too many sentences: only the first {limits.max_sentences:,} are indexed"
        reason = f"{reason}; {cut}" if reason else cut
    document = NewDocument(
        path=path_str, size=st.st_size, mtime=st.st_mtime, hash=digest, title=readable(doc.title or path.stem),
        kind=doc.kind, sentences=sentences, passages=passages_of(sentences), reason=reason, byline=doc.byline,
    )
    return Extracted(path_str, st.st_size, st.st_mtime, digest, document=document, reason=reason)


def _extract_member(path_str: str, archive: Path, name: str, limits: Limits, known_hash: str | None) -> Extracted:
    """A zip archive's member (``engine.ingest.archive``), unpacked and read as a file, recorded under its own path
    with the size and time stamp the archive lists, which the next run compares."""
    try:
        member = describe(archive, name, limits)
    except ReadError as e:
        return Extracted(path_str, 0, 0.0, "", status=e.status, reason=e.reason)
    try:
        with unpacked(archive, name, limits) as local:
            outcome = extract(str(local), limits, known_hash)
    except ReadError as e:
        return Extracted(path_str, member.size, member.mtime, "", status=e.status, reason=e.reason)
    document = outcome.document and replace(outcome.document, path=path_str, size=member.size, mtime=member.mtime)
    return replace(outcome, path=path_str, size=member.size, mtime=member.mtime, document=document)
