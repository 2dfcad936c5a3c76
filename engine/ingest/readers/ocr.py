"""Text of scanned pages and images through the Tesseract program, where it is installed
(docs/decisions/0043-ocr-through-tesseract.md).

Tesseract is run as a program, one call per page image written to a temporary PNG, rather than through a Python
binding: nothing to install beside the program the user installs anyway, and a page that hangs or crashes it costs
a child process, ended at the file's time budget, not the reader. Its TSV output gives paragraphs and a confidence
per word; a paragraph read with low confidence (the texture of a photo taken for letters) is dropped.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers.base import Limits
from engine.ingest.readers.guard import short_cause

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

INSTALL = ("install Tesseract (apt install tesseract-ocr / brew install tesseract / the UB Mannheim installer on "
           "Windows)")
NO_TEXT_LAYER = f"no text layer; {INSTALL} to read scanned pages"
IMAGE_WITHOUT_OCR = f"image not read; {INSTALL} to read text in images"
NO_TEXT_IN_IMAGE = "image with no text found"
# An image is a document only when it holds text: a folder of photos must not fill the run's report with a line per
# photo, so these two are recorded on the file (`quire status` lists them) but left out of the run's report.
QUIET_REASONS = frozenset((IMAGE_WITHOUT_OCR, NO_TEXT_IN_IMAGE))

# 300 dpi is what Tesseract is trained for: letters of body text some 30 pixels high.
DPI = 300
# The most pixels one page image may have: an A3 page scanned at 600 dpi is 70 million. Above it a PDF page is rendered
# smaller, and an image is declined (a decompression bomb: a 100 KB PNG can declare 10 billion pixels).
MAX_PIXELS = 80_000_000
# Below this width or height an image is an icon, a bullet or a rule, never worth starting Tesseract for.
MIN_SIDE = 24
# Words Tesseract is less sure of than this, on average over a paragraph, are the texture of a photo, not text.
MIN_CONFIDENCE = 50.0
# OCR ends this long before the watchdog's deadline for the file (a quarter of a budget under 8 s), so that a Tesseract
# still running is ended by its timeout, in Python, and the pages read so far are split into sentences in time.
_MARGIN_SECONDS = 2.0
_LIST_SECONDS = 10.0
# Tesseract runs one page on one thread: the reader processes already use every core, and its OpenMP threads made a
# page 5.6 times slower on two cores (docs/decisions/0043-ocr-through-tesseract.md).
_THREADS = {"OMP_THREAD_LIMIT": "1"}


class OcrTimeUp(ReadError):
    """The file's time budget ran out while Tesseract read a page (it was ended)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"took longer than {seconds:g} s to read (OCR)", status=FileState.SKIPPED)


def quiet(reason: str | None) -> bool:
    """Whether a file's reason is left out of a run's report (an image with no text to index)."""
    return reason in QUIET_REASONS


def now_readable(reason: str | None) -> bool:
    """Whether a file left unread for want of Tesseract can be read now that it is installed (read it again)."""
    return reason is not None and INSTALL in reason and executable() is not None


def executable() -> str | None:
    """The Tesseract program on PATH, or None."""
    return shutil.which("tesseract")


@functools.lru_cache(maxsize=4)
def installed_languages(program: str) -> tuple[str, ...]:
    """The language models ``tesseract --list-langs`` names (``osd`` included), in its order."""
    try:
        done = subprocess.run([program, "--list-langs"], capture_output=True, timeout=_LIST_SECONDS, env={**os.environ, **_THREADS},
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ReadError(f"Tesseract could not be run: {short_cause(e)}") from e
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return tuple(line.strip() for line in lines[1:] if line.strip())  # the first line says where they are


def languages(program: str, wanted: tuple[str, ...]) -> str:
    """``-l``'s argument: the ``wanted`` languages that are installed, or by default English and every other
    language installed (not ``osd``, the orientation model, nor ``script/...`` models, which are asked for by name)."""
    installed = installed_languages(program)
    if wanted:
        chosen = [lang for lang in wanted if lang in installed]
        if len(chosen) < len(wanted):
            log.info("OCR languages not installed: %s", ", ".join(sorted(set(wanted) - set(installed))))
    else:
        chosen = [lang for lang in installed if lang != "osd" and "/" not in lang]
        chosen.sort(key=lambda lang: lang != "eng")
    if not chosen:
        asked = ", ".join(wanted) or "any language"
        raise ReadError(f"Tesseract has no model for {asked} (installed: {', '.join(installed) or 'none'})")
    return "+".join(chosen)


@dataclass(frozen=True)
class Tesseract:
    """Tesseract with the languages to read, for one file whose reading ends at ``deadline`` (time.monotonic)."""

    program: str
    languages: str
    deadline: float
    seconds: float  # the file's budget, for the reason when it runs out

    @classmethod
    def for_file(cls, limits: Limits) -> Tesseract | None:
        """Tesseract for a file read from now on within ``limits`` (its languages, its budget), or None where it is
        not installed. Raises ReadError when it cannot run or has none of the languages asked for."""
        program = executable()
        if program is None:
            return None
        return cls(program, languages(program, limits.ocr_languages), _deadline(limits), limits.read_seconds)

    def paragraphs(self, image: Image.Image) -> list[str]:
        """The paragraphs Tesseract reads in ``image`` with confidence; raises :class:`OcrTimeUp` past the
        deadline, ReadError when Tesseract fails."""
        if min(image.size) < MIN_SIDE:
            return []
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OcrTimeUp(self.seconds)
        with tempfile.TemporaryDirectory(prefix="quire-ocr-") as folder:
            png = Path(folder) / "page.png"
            image.save(png, compress_level=1)  # written fast: the file is read once, at once
            try:
                done = subprocess.run([self.program, str(png), "stdout", "-l", self.languages, "tsv"],
                                      capture_output=True, timeout=left, env={**os.environ, **_THREADS},
                                      stdin=subprocess.DEVNULL, check=False)
            except subprocess.TimeoutExpired as e:  # subprocess.run has ended it
                raise OcrTimeUp(self.seconds) from e
            except OSError as e:
                raise ReadError(f"Tesseract could not be run: {e.strerror or short_cause(e)}") from e
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ReadError(f"Tesseract failed: {said[-1][:100] if said else f'exit status {done.returncode}'}")
        return tsv_paragraphs(done.stdout.decode("utf-8", "replace"))

    def pages(self, images: Iterable[tuple[int, Image.Image]]) -> tuple[list[tuple[int, list[str]]], str | None]:
        """(page number, paragraphs) of each of ``images`` (made as they are asked for) read before the deadline,
        and a note on those left unread when it came first; raises :class:`OcrTimeUp` if it came before any text."""
        out: list[tuple[int, list[str]]] = []
        for number, image in images:
            try:
                out.append((number, self.paragraphs(image)))
            except OcrTimeUp:
                if not any(texts for _, texts in out):
                    raise
                return out, f"OCR took longer than {self.seconds:g} s: pages from {number} on not read"
        return out, None


def _deadline(limits: Limits) -> float:
    from engine.ingest import budget  # budget sits above the readers: imported when a file is read

    watched = budget.deadline()
    own = time.monotonic() + limits.read_seconds
    return min(own, watched if watched is not None else math.inf) - min(_MARGIN_SECONDS, limits.read_seconds / 4)


def tsv_paragraphs(tsv: str) -> list[str]:
    """Paragraphs of Tesseract's TSV output (a row per word with its block, paragraph and line number and its
    confidence) whose words have a mean confidence of at least :data:`MIN_CONFIDENCE`; a word hyphenated at a line
    end is joined again."""
    paragraphs: dict[tuple[str, str, str], list[tuple[str, str, float]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5" or not cells[11].strip():
            continue  # level 5 rows are words; the others are pages, blocks, paragraphs and lines
        try:
            confidence = float(cells[10])
        except ValueError:
            continue
        paragraphs.setdefault((cells[1], cells[2], cells[3]), []).append((cells[4], cells[11].strip(), confidence))
    out = []
    for words in paragraphs.values():
        if sum(w[2] for w in words) / len(words) < MIN_CONFIDENCE or not any(c.isalnum() for w in words for c in w[1]):
            continue
        text = words[0][1]
        for (line, _, _), (next_line, word, _) in zip(words, words[1:], strict=False):
            if next_line != line and text.endswith("-") and text[-2:-1].isalpha() and word[:1].islower():
                text = text[:-1] + word
            else:
                text += " " + word
        out.append(text)
    return out


def too_large(width: int, height: int) -> ReadError:
    """The reason for an image over :data:`MAX_PIXELS`."""
    return ReadError(f"image too large: {width:,} x {height:,} pixels, over the {MAX_PIXELS // 1_000_000} megapixel "
                     "limit", status=FileState.SKIPPED)
