"""PDF text in reading order, with page numbers, through pypdfium2.

pdfium hands out characters in content-stream order, which is reading order only when the generator was kind:
some write two-column pages line by line across both columns. So the reader takes every character's box and
rebuilds the layout itself: characters become pieces of lines, a vertical gutter that no line crosses splits
columns (recursively, so three columns work too), lines are put back together top to bottom within a column, and
larger gaps or a change of font size separate paragraphs. Hyphenation at line ends is undone.

pdfium is not thread-safe; the engine reads files in worker processes, one document at a time each.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, groupby, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest.readers import ocr
from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors, short_cause
from engine.ingest.readers.text import short_title
from engine.text.sentences import carries_on

if TYPE_CHECKING:
    import pypdfium2 as pdfium
    from PIL import Image

# A character with its loose box (font ascent to descent, so all glyphs of a line share top and bottom):
# (text, left, bottom, right, top) in PDF points, y growing upwards.
Glyph = tuple[str, float, float, float, float]

_LINE_BREAK = "\n"
# pdfium marks a hyphen it sees at a line end as U+0002 and inserts CR LF between lines it recognises.
_CHAR_MAP = {0x02: "-", 0x0D: _LINE_BREAK, 0x0A: _LINE_BREAK, 0x09: " ", 0xA0: " "}
_NOT_TEXT = frozenset((0xFEFF, 0xFFFE, 0xFFFF))
_LIGATURES = str.maketrans({chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)})
_HYPHENS = "-\u2010"
_SPACES = re.compile(r"[ \t]+")
_SURROGATES = re.compile("[\ud800-\udfff]")

# Layout thresholds, in line heights unless said otherwise.
_SAME_LINE = 0.5  # baselines closer than this belong to one line (superscripts included)
_BACKWARDS = 0.1  # a glyph this far left of the previous one starts a new piece (next line, next column)
_MIN_GUTTER = 0.8  # wider than any word space, narrower than any real column gap
_GUTTER_ZONE = (0.15, 0.85)  # gutters are looked for in this share of the text's width, not at its margins
# Lines that may cross a gutter (titles, footnotes): this many, or this share of all lines if that is more.
_SPANNING_LINES = 2
_SPANNING_SHARE = 0.1
_MIN_COLUMN_LINES = 3  # consecutive lines on each side of a gutter
_NEXT_LINE = 3.0  # the most a line may be below the previous one in the same column (index headings included)
_PARAGRAPH_GAP = 0.3  # space between lines beyond the usual line spacing that separates paragraphs
_FONT_CHANGE = 0.2  # relative change of line height that ends a paragraph (a heading)
_MAX_PAGE_WIDTH = 14_400  # points: PDF's own limit (200 inches); beyond it coordinates are garbage
_LISTED_PAGES = 5  # pages named in a note on pages not read; the others are counted
_MIN_GLYPHS_PER_PIECE = 2  # below this the text is not horizontal and pdfium's own order is used

_JUNK_TITLE = re.compile(
    r"(untitled\S*|document\s*\d*|title|microsoft (word|powerpoint|excel) - .*"
    r"|.*\.(docx?|pdf|tex|dvi|rtf|odt|pptx?|indd|qxd|e?ps))",
    re.IGNORECASE,
)


@dataclass
class _Piece:
    """Glyphs in stream order on one baseline, moving right: a line, or the part of one in a column."""

    glyphs: list[Glyph]
    ink: list[Glyph] = field(init=False)  # the glyphs that are not spaces
    left: float = field(init=False)
    right: float = field(init=False)
    bottom: float = field(init=False)
    height: float = field(init=False)

    def __post_init__(self) -> None:
        self.ink = ink = [g for g in self.glyphs if not g[0].isspace()]
        self.left = min([g[1] for g in ink])
        self.right = max([g[3] for g in ink])
        self.bottom = ink[0][2]
        self.height = max(ink[0][4] - ink[0][2], 1.0)

    @property
    def center(self) -> float:
        return self.bottom + self.height / 2

    def text(self) -> str:
        return _SPACES.sub(" ", "".join(g[0] for g in self.glyphs)).strip()

    @cached_property
    def spans(self) -> list[tuple[float, float]]:
        """Horizontal extents of the words: touching glyph boxes merged, gaps where the spaces are."""
        spans: list[tuple[float, float]] = []
        for _, left, _, right, _ in self.ink:
            if spans and left <= spans[-1][1] + 0.5:
                spans[-1] = (spans[-1][0], max(spans[-1][1], right))
            else:
                spans.append((left, right))
        return spans

    @property
    def widest_gap(self) -> float:
        return max((after[0] - before[1] for before, after in pairwise(self.spans)), default=0.0)

    def crosses(self, gutter: tuple[float, float]) -> bool:
        return any(start < gutter[1] and end > gutter[0] for start, end in self.spans)

    def split(self, middle: float) -> tuple[_Piece | None, _Piece | None]:
        """The parts left and right of ``middle``; a space goes with the glyph before it."""
        left: list[Glyph] = []
        right: list[Glyph] = []
        side = left
        for glyph in self.glyphs:
            if not glyph[0].isspace():
                side = left if (glyph[1] + glyph[3]) / 2 < middle else right
            side.append(glyph)
        # Each part starts with ink: spaces only follow a glyph on their side.
        return (_Piece(left) if left else None), (_Piece(right) if right else None)


def _codes(handle: Any, count: int) -> list[int]:
    """The code point of each of a page's ``count`` characters: the page's text in one call, where it gives one
    UTF-16 unit per character; a character it writes otherwise (beyond the BMP, or a code it does not write as
    itself, such as pdfium's 0x02 hyphen) is asked for alone."""
    import pypdfium2.raw as pdfium_c

    buffer = ctypes.create_string_buffer(2 * (count + 1))
    written = pdfium_c.FPDFText_GetText(handle, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
    codes = memoryview(buffer.raw[: 2 * max(written - 1, 0)]).cast("H").tolist()
    if len(codes) != count:
        return [pdfium_c.FPDFText_GetUnicode(handle, index) for index in range(count)]
    for index, code in enumerate(codes):
        if 0xD800 <= code <= 0xDFFF or code in _NOT_TEXT or code == 0:
            codes[index] = pdfium_c.FPDFText_GetUnicode(handle, index)
    return codes


def _glyphs(textpage: pdfium.PdfTextPage) -> list[Glyph]:
    # The raw API: the page's codes in one call, then one ctypes call per character for its box. The loop runs for
    # every character of every page (the most CPU of a PDF's reading): the call, the box's reference and the tables
    # are bound once outside it.
    import pypdfium2.raw as pdfium_c

    handle = textpage.raw
    box = pdfium_c.FS_RECTF()
    ref = ctypes.byref(box)
    box_of = pdfium_c.FPDFText_GetLooseCharBox
    out: list[Glyph] = []
    for index, code in enumerate(_codes(handle, pdfium_c.FPDFText_CountChars(handle))):
        char = _CHAR_MAP.get(code)
        if char is None:
            if code < 0x20 or code in _NOT_TEXT:
                continue
            char = chr(code)
        box_of(handle, index, ref)
        left, bottom, right, top = box.left, box.bottom, box.right, box.top
        # Boxes of vertical or mirrored text come with right < left; the layout code needs them the right way up.
        if right < left:
            left, right = right, left
        if top < bottom:
            bottom, top = top, bottom
        out.append((char, left, bottom, right, top))
    return out


def _continues(previous: Glyph, glyph: Glyph) -> bool:
    height = max(previous[4] - previous[2], 1.0)
    same_line = abs(previous[2] - glyph[2]) <= _SAME_LINE * height
    return same_line and glyph[1] >= previous[1] - _BACKWARDS * height


def _pieces(glyphs: list[Glyph]) -> list[_Piece]:
    pieces: list[_Piece] = []
    current: list[Glyph] = []
    last: Glyph | None = None
    for glyph in glyphs:
        if glyph[0] == _LINE_BREAK:
            last = None
        elif glyph[0].isspace():
            if current:
                current.append(glyph)
        else:
            if current and (last is None or not _continues(last, glyph)):
                pieces.append(_Piece(current))
                current = []
            current.append(glyph)
            last = glyph
    if current:
        pieces.append(_Piece(current))
    return pieces


def _count_ink(changes: list[int], piece: _Piece, origin: float, sign: int) -> None:
    # A difference array: +1 where a word starts, -1 one point after it ends; summed up it counts pieces per point.
    for start, end in piece.spans:
        changes[int(start - origin)] += sign
        changes[int(end - origin) + 1] -= sign


def _empty_strips(changes: list[int], width: float, min_width: float) -> list[tuple[int, int]]:
    """Strips at least ``min_width`` points wide, inside the gutter zone, where no counted piece has ink."""
    coverage = list(accumulate(changes))
    zone = range(int(_GUTTER_ZONE[0] * width), int(_GUTTER_ZONE[1] * width) + 1)
    strips = []
    for empty, group in groupby(zone, key=lambda x: coverage[x] == 0):
        xs = list(group)
        if empty and len(xs) >= min_width:
            strips.append((xs[0], xs[-1] + 1))
    return sorted(strips, key=lambda strip: strip[0] - strip[1])  # widest first


def _column_like(pieces: list[_Piece]) -> bool:
    """Whether some of the pieces are lines following each other at line spacing, as a column's are.

    This tells columns from a few indented lines scattered down a page (notes in a code listing, a page number).
    """
    run = 0
    previous: _Piece | None = None
    for piece in sorted(pieces, key=lambda p: -p.center):
        step = previous.center - piece.center if previous else None
        if previous is None or step is None or step > _NEXT_LINE * max(previous.height, piece.height):
            run = 1
        elif step >= _SAME_LINE * previous.height:
            run += 1
        if run >= _MIN_COLUMN_LINES:
            return True
        previous = piece
    return False


def _gutter(pieces: list[_Piece]) -> tuple[float, float] | None:
    """The widest strip between columns that no line has ink in, but for a few full-width ones (titles, notes)."""
    if not pieces:
        return None
    origin = min(p.left for p in pieces)
    width = max(p.right for p in pieces) - origin
    if width > _MAX_PAGE_WIDTH:
        return None
    min_width = _MIN_GUTTER * statistics.median(p.height for p in pieces)
    allowed = max(_SPANNING_LINES, int(_SPANNING_SHARE * len(pieces)))
    changes = [0] * (int(width) + 3)
    for piece in pieces:
        _count_ink(changes, piece, origin, 1)
    # Lines that may span the columns: wider than half the text and without a gap wide enough to be a gutter
    # (one with such a gap may be two columns' lines in one piece). They are taken out one by one, widest first.
    solid = [p for p in pieces if p.right - p.left > width / 2 and p.widest_gap < min_width]
    spanning = sorted(solid, key=lambda p: p.left - p.right)[:allowed]
    for taken_out in [None, *spanning]:
        if taken_out is not None:
            _count_ink(changes, taken_out, origin, -1)
        for start, end in _empty_strips(changes, width, min_width):
            gutter = (origin + start, origin + end)
            sides = [p for p in pieces if not p.crosses(gutter)]
            left = [p for p in sides if p.spans[0][1] <= gutter[0]]
            right = [p for p in sides if p.spans[-1][0] >= gutter[1]]
            if len(pieces) - len(sides) <= allowed and _column_like(left) and _column_like(right):
                return gutter
    return None


def _merge(row: list[_Piece]) -> _Piece:
    glyphs = list(row[0].glyphs)
    for before, after in pairwise(row):
        glyphs.append((" ", before.right, before.bottom, after.left, before.bottom + before.height))
        glyphs.extend(after.glyphs)
    return _Piece(glyphs)


def _lines(pieces: list[_Piece]) -> list[_Piece]:
    """Pieces of one column merged into lines, top to bottom."""
    rows: list[list[_Piece]] = []
    for piece in sorted(pieces, key=lambda p: -p.center):
        if rows and abs(rows[-1][0].center - piece.center) < _SAME_LINE * rows[-1][0].height:
            rows[-1].append(piece)
        else:
            rows.append([piece])
    return [_merge(sorted(row, key=lambda p: p.left)) for row in rows]


def _order(pieces: list[_Piece]) -> list[_Piece]:
    """Lines in reading order: between lines that cross the gutter, the left column, then the right one."""
    gutter = _gutter(pieces)
    if gutter is None:
        return _lines(pieces)
    middle = (gutter[0] + gutter[1]) / 2
    spanning = sorted((p for p in pieces if p.crosses(gutter)), key=lambda p: -p.center)
    cuts = [-p.center for p in spanning]
    bands: list[tuple[list[_Piece], list[_Piece]]] = [([], []) for _ in range(len(spanning) + 1)]
    for piece in pieces:
        if piece.crosses(gutter):
            continue
        band = bands[bisect_right(cuts, -piece.center)]
        for side, part in zip(band, piece.split(middle), strict=True):
            if part is not None:
                side.append(part)
    out: list[_Piece] = []
    for index, (left, right) in enumerate(bands):
        out += _order(left) + _order(right)
        if index < len(spanning):
            out.append(spanning[index])
    return out


def _join(lines: list[str]) -> str:
    """Lines of a paragraph as running text: "exam-" + "ple" is "example", "Anglo-" + "Saxon" is "Anglo-Saxon"."""
    parts = [lines[0]]
    for line in lines[1:]:
        previous = parts[-1]
        if len(previous) > 1 and previous[-1] in _HYPHENS and previous[-2].isalpha():
            if line[:1].islower():
                parts[-1] = previous[:-1]
        else:
            parts.append(" ")
        parts.append(line)
    return "".join(parts)


def _paragraphs(lines: list[_Piece]) -> list[str]:
    # The usual line spacing is the commonest step from one baseline to the next (to half a point).
    steps = [
        round(2 * (a.bottom - b.bottom)) / 2 for a, b in pairwise(lines) if 0.5 < (a.bottom - b.bottom) / a.height < 3
    ]
    spacing = statistics.mode(steps) if steps else 0.0
    paragraphs: list[str] = []
    current = [lines[0].text()]
    for previous, line in pairwise(lines):
        # A step upwards is the move to the next column, where a paragraph usually goes on.
        gap = previous.bottom - line.bottom > spacing + _PARAGRAPH_GAP * line.height
        new_font = abs(line.height - previous.height) > _FONT_CHANGE * max(line.height, previous.height)
        # a title set larger than the text is spaced wider: its first line ending "and" is no paragraph of its own
        if (gap and not carries_on(current[-1])) or new_font:
            paragraphs.append(_join(current))
            current = []
        current.append(line.text())
    paragraphs.append(_join(current))
    return paragraphs


def _clean(text: str) -> str:
    text = text.translate(_LIGATURES).replace("\xad", "")
    if _SURROGATES.search(text):  # where wchar_t is 16 bits, pdfium returns characters beyond the BMP in halves
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text.strip()


def _page_texts(textpage: pdfium.PdfTextPage) -> list[str]:
    pieces = _pieces(_glyphs(textpage))
    if not pieces:
        return []
    if sum(len(piece.ink) for piece in pieces) < _MIN_GLYPHS_PER_PIECE * len(pieces):
        # Text set vertically or at an angle falls apart into one piece per glyph.
        texts = [textpage.get_text_range().replace("\r\n", "\n").replace("\ufffe", "")]
    else:
        texts = _paragraphs(_order(pieces))
    return [text for text in map(_clean, texts) if text]


def _open(data: bytes) -> pdfium.PdfDocument:
    # pypdfium2 is imported on first use: a process that reads no PDF does not pay for it (docs/decisions/0008)
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        if e.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise ReadError("encrypted PDF (password required)") from e
        if e.err_code == pdfium_c.FPDF_ERR_SECURITY:
            raise ReadError("encrypted PDF (unsupported encryption)") from e
        known = {
            pdfium_c.FPDF_ERR_FORMAT: "not a PDF or damaged beyond repair",
            pdfium_c.FPDF_ERR_FILE: "cannot be opened",
            pdfium_c.FPDF_ERR_PAGE: "page tree missing or damaged",
        }.get(e.err_code)
        raise ReadError(f"corrupt PDF: {known or short_cause(e)}") from e


def _read_pages(pdf: pdfium.PdfDocument) -> tuple[list[list[str]], list[int]]:
    """Each page's paragraphs, and the indexes of the pages with none that have something drawn on them: scanned
    pages, or text drawn as curves, for OCR. A blank page is not one."""
    import pypdfium2.raw as pdfium_c

    pages, scanned = [], []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                pages.append(_page_texts(textpage))
            finally:
                textpage.close()
            if not pages[-1] and pdfium_c.FPDFPage_CountObjects(page.raw) > 0:
                scanned.append(index)
        finally:
            page.close()
    return pages, scanned


def _render(pdf: pdfium.PdfDocument, index: int) -> Image.Image:
    """Page ``index`` as a grey image at OCR's resolution, or smaller where that would pass its pixel limit."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = min(ocr.DPI / 72, math.sqrt(ocr.MAX_PIXELS / max(width * height, 1.0)))
        return page.render(scale=scale, grayscale=True).to_pil().copy()  # a copy outlives pdfium's bitmap
    finally:
        page.close()


def _page_list(indexes: list[int]) -> str:
    """"page 3", "pages 3, 5, 9", "pages 3, 5, 9, 12, 14 and 7 more" for 0-based ``indexes``."""
    shown = ", ".join(str(i + 1) for i in indexes[:_LISTED_PAGES])
    more = f" and {len(indexes) - _LISTED_PAGES} more" if len(indexes) > _LISTED_PAGES else ""
    return f"page{'s' if len(indexes) > 1 else ''} {shown}{more}"


def _read_scans(pdf: pdfium.PdfDocument, pages: list[list[str]], scanned: list[int], limits: Limits) -> str | None:
    """The ``scanned`` pages' paragraphs through Tesseract, put into ``pages``; a note on what was not read."""
    tesseract = ocr.Tesseract.for_file(limits)
    if tesseract is None:
        return f"{_page_list(scanned)} not read: {ocr.NO_TEXT_LAYER}" if any(pages) else ocr.NO_TEXT_LAYER
    read, note = tesseract.pages((index + 1, _render(pdf, index)) for index in scanned)
    for number, texts in read:
        pages[number - 1] = texts
    return note


class PdfReader:
    """PDF files: the text layer, and pages without one read through Tesseract where it is installed."""

    name = "pdf"
    isolate = True  # pdfium can spend minutes and gigabytes in C on a tiny file (decision 0012)
    extensions = (".pdf",)

    def read(self, path: Path, limits: Limits) -> Document:
        """Each page's text in reading order, a block per paragraph with its page number."""
        with parser_errors("PDF"):
            pdf = _open(path.read_bytes())
            try:
                pages, scanned = _read_pages(pdf)
                note = _read_scans(pdf, pages, scanned, limits) if scanned else None
                title = (pdf.get_metadata_dict().get("Title") or "").strip()
            finally:
                pdf.close()
        blocks = tuple(Block(text, number) for number, texts in enumerate(pages, 1) for text in texts)
        if not blocks:
            raise ReadError(note or f"no text layer{', and OCR found no text' if scanned else ''}",
                            status=FileState.SKIPPED)
        if not title or _JUNK_TITLE.fullmatch(title):
            title = short_title(pages[0][0] if pages[0] else None, path)
        return Document(title=title, blocks=blocks, kind=self.name, note=note)


register(PdfReader())
