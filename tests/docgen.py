"""Generate real documents of every supported format for the reader tests.

Nothing binary is committed: each test writes what it needs into its own ``tmp_path``. Every document carries a
distinctive sentence (the ``*_SENTENCE`` constants) so a test can check that the text came through whole, and
PDFs are written by hand so that their layout (columns, hyphenation, paragraph gaps) is exactly what a test expects.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docx
import pptx
from ebooklib import epub
from odf import dc, text
from odf.opendocument import OpenDocumentText

from engine.filestate import FileState

# Real sentences (Wikipedia), one a line: what tests that need a corpus of some size index.
TOY_CORPUS = Path(__file__).parent / "data" / "toy_corpus.txt"


def write_toy_corpus(folder: Path, *, per_file: int = 10, lines: int | None = None) -> list[str]:
    """The toy corpus's sentences (its first ``lines``; None: all) as text files of ``per_file`` sentences, a blank
    line between them, named by their first sentence's number (part0000.txt, part0010.txt, ...); returns the
    sentences written."""
    sentences = TOY_CORPUS.read_text(encoding="utf-8").splitlines()[:lines]
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(0, len(sentences), per_file):
        (folder / f"part{n:04d}.txt").write_text("\n\n".join(sentences[n : n + per_file]), encoding="utf-8")
    return sentences


TEXT_SENTENCE = "The lighthouse keeper counted forty gulls on the northern pier every Tuesday."
TITLE = "Notes on Coastal Lighthouses"
LATIN1_SENTENCE = "Grüße aus München: der Bäcker verkauft Käse, Äpfel und süße Brötchen für die Gäste."
UTF16_SENTENCE = "Le garçon a mangé une crème brûlée très sucrée à côté de la fenêtre."
SHELL_SENTENCE = "configure checks whether the quantum flux capacitor is installed"
SCRIPT_TEXT = "this text comes from a script and must never be indexed"

PDF_TITLE = "Tidal Energy in Northern Estuaries"
PDF_PAGE1_SENTENCE = "Tidal turbines in the estuary produced enough power for four hundred homes."
PDF_SECOND_PARAGRAPH = "A second paragraph starts after a wider gap and talks about maintenance costs."
PDF_PAGE2_SENTENCE = "The harbour master recorded a spring tide of seven metres in March."
LEFT_COLUMN = (
    "The left column opens with a story about migrating cranes that fly south every autumn across the wide valley."
)
COLUMNS_HEADING = "A Heading That Runs Across Both Columns of the Page"
COLUMNS_FOOTER = "A footnote at the bottom of the page that also runs across both of the columns above it."
RIGHT_COLUMN = "The right column explains how the engineers rebuilt the old stone bridge after the spring flood."
DEHYPHENATED = "The committee reviewed every example carefully before the annual meeting began."
COMPOUND_KEPT = "Historians study the Anglo-Saxon chronicle."

# Many lines of one column: word spaces must never line up into a false gutter.
LONG_PARAGRAPH = " ".join(
    f"Sentence {n} of the long paragraph mentions {word} and ends here."
    for n, word in enumerate(
        "anchors barrels compasses dinghies estuaries ferries galleys harbours islands jetties keels lanterns"
        " moorings nautical oars pilots quays rudders sails tides".split()
    )
)

DOCX_SENTENCE = "The orchard produced three tons of russet apples during the dry summer."
DOCX_CELL = "Quince harvest figures"
PPTX_SENTENCE = "Our quarterly roadmap focuses on offline semantic search for desktop users."
PPTX_SLIDE2_SENTENCE = "Second slide bullet about encrypted backups."
ODT_SENTENCE = "The glacier retreated by twelve metres during the unusually warm decade."
EPUB_TITLE = "The Voyage of the Marigold"
EPUB_SENTENCE = "The Marigold left Lisbon at dawn with a cargo of cork and olive oil."
EPUB_CHAPTER2_SENTENCE = "In the second chapter the crew sighted whales near the Azores."
RTF_SENTENCE = "The violin maker seasoned spruce for eleven years before carving."
HTML_SENTENCE = "Copper kettles were polished every morning in the old inn."


def _write(path: Path, data: str | bytes, encoding: str = "utf-8") -> Path:
    path.write_bytes(data.encode(encoding) if isinstance(data, str) else data)
    return path


def make_txt(folder: Path) -> Path:
    return _write(folder / "notes.txt", f"{TITLE}\n\nFirst paragraph about lamps.\n\n{TEXT_SENTENCE}\nIt wraps here.\n")


def make_latin1_txt(folder: Path) -> Path:
    body = "\n\n".join([LATIN1_SENTENCE, "Die Straße führt über die Brücke zum großen Platz.", "Schöne Grüße!"])
    return _write(folder / "latin1.txt", f"Ein Brief\n\n{body}\n", "latin-1")


def make_utf16_txt(folder: Path) -> Path:
    # The "utf-16" codec writes a byte-order mark, as Windows Notepad's "Unicode" does.
    return _write(folder / "utf16.txt", f"Une lettre\n\n{UTF16_SENTENCE}\n", "utf-16")


def make_md(folder: Path) -> Path:
    text = (
        f"# {TITLE}\n\n"
        "Some **bold claims** and a [useful link](https://example.com/page) plus ![a logo](logo.png).\n\n"
        "## Details\n\n"
        f"{TEXT_SENTENCE}\n\n"
        "<div>inline html</div>\n\n"
        "```python\nprint('kept code')\n```\n"
    )
    return _write(folder / "notes.md", text)


TABLE_ROW = "Quince jelly,12 jars,\"labelled in October, stored in the cellar\""


def make_csv(folder: Path) -> Path:
    """A table whose header row is no title and one of whose quoted cells spans two lines."""
    text = f"preserve,amount,notes\nDamson jam,two pots,\"set too firm\nin August\"\n{TABLE_ROW}\n"
    return _write(folder / "pantry.csv", text)


def make_rst(folder: Path) -> Path:
    text = (
        f"{'=' * len(TITLE)}\n{TITLE}\n{'=' * len(TITLE)}\n\n"
        ".. contents:: Table of Contents\n\n"
        "Introduction\n------------\n\n"
        f"{TEXT_SENTENCE}\n\n"
        ".. note::\n\n   Directive bodies are kept as text.\n"
    )
    return _write(folder / "notes.rst", text)


def make_html(folder: Path) -> Path:
    text = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>The Old Inn</title>"
        "<style>p { color: red }</style></head><body>"
        f"<h1>Kitchen</h1><p>{HTML_SENTENCE}</p>"
        f"<script>var x = '{SCRIPT_TEXT}';</script>"
        "<table><tr><td>Cell one</td><td>Cell two</td></tr></table>"
        "<div>Direct div text<p>nested paragraph</p></div>"
        "<ul><li>First item</li><li>Second item</li></ul>"
        "</body></html>"
    )
    return _write(folder / "inn.html", text)


# --- PDF, written by hand -----------------------------------------------------------------------------------


def _pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def _text_ops(lines: list[tuple[float, float, str]], size: float = 11) -> bytes:
    """One text object per line at absolute positions, in the given order (which need not be reading order)."""
    ops = [f"BT /F1 {size:g} Tf {x:g} {y:g} Td {_pdf_string(text)} Tj ET" for x, y, text in lines]
    return "\n".join(ops).encode("latin-1")


def build_pdf(pages: list[bytes], title: str | None = None) -> bytes:
    """A minimal valid PDF: US Letter pages with the given content streams, Helvetica as font F1."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    kids = []
    for i, content in enumerate(pages):
        page_id, content_id = 4 + 2 * i, 5 + 2 * i
        kids.append(f"{page_id} 0 R")
        objects[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
            f" /Contents {content_id} 0 R >>"
        ).encode()
        objects[content_id] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    info_id = 4 + 2 * len(pages)
    objects[info_id] = f"<< /Title {_pdf_string(title or '')} /Producer (docgen) >>".encode("latin-1")
    return _pdf_file(objects, info_id)


def _pdf_file(objects: dict[int, bytes], info_id: int) -> bytes:
    """Objects 1 to ``info_id`` (1: the catalog, ``info_id``: the document information) as a PDF file."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (info_id + 1)
    for number in range(1, info_id + 1):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (info_id + 1, info_id, xref)
    return bytes(out)


def make_glyph_bomb_pdf(folder: Path, depth: int = 5, fanout: int = 10) -> Path:
    """A PDF of a few KB whose one page draws a line of text ``fanout ** depth`` times: each of ``depth`` nested
    forms draws the one below it ``fanout`` times, shifted, as a "glyph bomb" does."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X 10 0 R >> >>"
           b" /Contents 5 0 R >>",
    }
    page = b"/X Do"
    objects[5] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(page), page)
    for level in range(depth):  # object 10 is the outermost form, 10 + depth - 1 the line of text
        if level == depth - 1:
            content, resources = b"BT /F1 2 Tf 0 0 Td (Go now, the bomb said.) Tj ET", b"/Font << /F1 3 0 R >>"
        else:
            step = 60 / fanout ** (level + 1)
            content = b"\n".join(b"q 1 0 0 1 %.4f %.4f cm /X Do Q" % (i * step * 5, i * step * 10) for i in range(fanout))
            resources = b"/XObject << /X %d 0 R >>" % (11 + level)
        objects[10 + level] = (b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << %s >>"
                               b" /Length %d >>\nstream\n%s\nendstream" % (resources, len(content), content))
    info_id = 10 + depth
    objects[info_id] = b"<< /Producer (docgen) >>"
    for number in range(6, 10):
        objects[number] = b"null"
    return _write(folder / "glyphs.pdf", _pdf_file(objects, info_id))


def _wrapped(sentence: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in sentence.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


def _column(sentence: str, x: float, top: float, width: int, leading: float = 14) -> list[tuple[float, float, str]]:
    return [(x, top - i * leading, line) for i, line in enumerate(_wrapped(sentence, width))]


def pdf_pages() -> list[bytes]:
    """Page 1: a heading and two paragraphs; page 2: one more; page 3: two columns between a heading and a
    footnote that cross the gutter; page 4: hyphenated lines; page 5: a long single-column paragraph."""
    page1 = (
        _text_ops([(72, 720, PDF_TITLE)], size=18)
        + b"\n"
        + _text_ops(_column(PDF_PAGE1_SENTENCE, 72, 680, 60) + _column(PDF_SECOND_PARAGRAPH, 72, 630, 60))
    )
    page2 = _text_ops(_column(PDF_PAGE2_SENTENCE, 72, 720, 60))
    left, right = _column(LEFT_COLUMN, 72, 700, 40), _column(RIGHT_COLUMN, 320, 700, 40)
    # Interleave the columns line by line in the content stream, as some generators do, so that only geometry
    # can put them back in reading order.
    interleaved = [line for pair in zip(left, right, strict=True) for line in pair]
    page3 = (
        _text_ops([(72, 740, COLUMNS_HEADING)], size=16) + b"\n" + _text_ops([*interleaved, (72, 100, COLUMNS_FOOTER)])
    )
    page4 = _text_ops(
        [
            (72, 720, "The committee reviewed every exam-"),
            (72, 706, "ple carefully before the annual meeting began."),
            (72, 670, "Historians study the Anglo-"),
            (72, 656, "Saxon chronicle."),
        ]
    )
    page5 = _text_ops(_column(LONG_PARAGRAPH, 72, 720, 80))
    return [page1, page2, page3, page4, page5]


def make_pdf(folder: Path) -> Path:
    return _write(folder / "tides.pdf", build_pdf(pdf_pages(), title=PDF_TITLE))


# Column texts for layouts that are written column after column, not interleaved.
THREE_COLUMNS = (
    "Alpha column text is about apples and it keeps going for quite a while until it finally stops here.",
    "Beta column text is about bananas and it also goes on for several lines before it comes to an end.",
    "Gamma column text is about cherries and it is the third and last column on this busy page of text.",
)
SIDEBAR_PAGE = (
    "A Heading Across the Whole Page Above the Main Column and the Sidebar",
    "The main column is much wider than the sidebar and holds the body of the article, which runs on for many"
    " lines of text across the page until it ends.",
    "Sidebar note: this narrow column holds remarks that belong beside the main text and not inside it at all.",
)


def make_layouts_pdf(folder: Path) -> Path:
    """Page 1: three equal columns; page 2: a full-width heading over a wide main column and a narrow sidebar."""
    three = [line for i, text in enumerate(THREE_COLUMNS) for line in _column(text, 50 + 180 * i, 700, 22)]
    heading, main, sidebar = SIDEBAR_PAGE
    with_sidebar = [(50, 740, heading), *_column(main, 50, 700, 65), *_column(sidebar, 440, 700, 22)]
    return _write(folder / "layouts.pdf", build_pdf([_text_ops(three), _text_ops(with_sidebar)]))


def make_untitled_pdf(folder: Path) -> Path:
    """Junk metadata title, so the reader must fall back to the first line of page 1."""
    return _write(folder / "report.pdf", build_pdf(pdf_pages(), title="Microsoft Word - report.doc"))


def make_image_only_pdf(folder: Path) -> Path:
    return _write(folder / "scan.pdf", build_pdf([b"0 0 1 rg 100 100 200 200 re f"]))


# What a scanner gives: letters as pixels, read only through OCR (engine/ingest/readers/ocr.py).
SCAN_SENTENCE = "The night ferry to the islands leaves the quay at eleven."
SCAN_SECOND_LINE = "Passengers buy their tickets from the purser on board."


def scanned_image(lines: tuple[str, ...] = (SCAN_SENTENCE, SCAN_SECOND_LINE), size: tuple[int, int] = (1600, 400)):
    """A white page with ``lines`` in black at a size Tesseract reads without a slip (Pillow's own font, so that no
    system font is needed); a PIL image in grey."""
    from PIL import Image, ImageDraw, ImageFont  # Pillow comes with python-pptx

    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    for number, line in enumerate(lines):
        draw.text((60, 60 + 70 * number), line, fill=0, font=font)
    return image


def make_scan_png(folder: Path, name: str = "ferry-scan.png") -> Path:
    scanned_image().save(folder / name)
    return folder / name


def make_scanned_pdf(folder: Path, name: str = "scanned.pdf", text_first: bool = False) -> Path:
    """A PDF whose page is only an image of text (150 dpi); with ``text_first``, after the text pages of
    :func:`make_pdf`, so that the scanned one is page 6."""
    import pypdfium2 as pdfium

    scan = io.BytesIO()
    scanned_image().save(scan, format="PDF", resolution=150)
    pdf = pdfium.PdfDocument(build_pdf(pdf_pages(), title=PDF_TITLE)) if text_first else pdfium.PdfDocument.new()
    pdf.import_pages(pdfium.PdfDocument(scan.getvalue()))
    out = io.BytesIO()
    pdf.save(out)
    return _write(folder / name, out.getvalue())


def make_encrypted_pdf(folder: Path, user_password: str = "secret") -> Path:
    """Encrypted with pypdf; with an empty user password only the owner's permissions are protected."""
    import pypdf  # a test requirement only: the test that needs it is skipped without it

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(build_pdf(pdf_pages()))))
    writer.encrypt(user_password, owner_password="owner")  # RC4 by default: pypdf needs no crypto library for it
    path = folder / "secret.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def make_truncated_pdf(folder: Path) -> Path:
    data = build_pdf(pdf_pages())
    return _write(folder / "truncated.pdf", data[: data.index(b"stream")])


# --- Office formats and EPUB, written with the libraries that create them --------------------------------------


def make_docx(folder: Path) -> Path:
    doc = docx.Document()
    doc.add_heading("Orchard Report", level=1)
    doc.add_paragraph(DOCX_SENTENCE)
    table = doc.add_table(rows=2, cols=2)
    table.cell(0, 0).text = DOCX_CELL
    table.cell(0, 1).text = "Pear harvest figures"
    table.cell(1, 0).text = "12 tons"
    table.cell(1, 1).text = "8 tons"
    doc.add_paragraph("A closing paragraph after the table.")
    path = folder / "orchard.docx"
    doc.save(str(path))
    return path


def make_pptx(folder: Path) -> Path:
    deck = pptx.Presentation()
    for title, body in (("Roadmap 2025", PPTX_SENTENCE), ("Security", PPTX_SLIDE2_SENTENCE)):
        slide = deck.slides.add_slide(deck.slide_layouts[1])  # "Title and Content"
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
    path = folder / "roadmap.pptx"
    deck.save(str(path))
    return path


def make_odt(folder: Path) -> Path:
    doc = OpenDocumentText()
    doc.meta.addElement(dc.Title(text="Glacier Survey"))
    doc.text.addElement(text.H(outlinelevel=1, text="Measurements"))
    paragraph = text.P(text="The glacier retreated by ")
    paragraph.addElement(text.Span(text="twelve metres"))
    paragraph.addText(" during the unusually warm decade.")
    doc.text.addElement(paragraph)
    path = folder / "glacier.odt"
    doc.save(str(path))
    return path


def make_epub(folder: Path) -> Path:
    book = epub.EpubBook()
    book.set_identifier("quire-test-marigold")
    book.set_title(EPUB_TITLE)
    book.set_language("en")
    chapters = []
    for number, sentence in ((1, EPUB_SENTENCE), (2, EPUB_CHAPTER2_SENTENCE)):
        chapter = epub.EpubHtml(title=f"Chapter {number}", file_name=f"chap{number}.xhtml", lang="en")
        chapter.content = f"<h1>Chapter {number}</h1><p>{sentence}</p>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *chapters]
    path = folder / "marigold.epub"
    epub.write_epub(str(path), book)
    return path


def make_rtf(folder: Path) -> Path:
    text = (
        r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times New Roman;}}"
        r"{\info{\title Tonewood}}"
        r"\f0\fs24 Tonewood\par"
        "\n"
        rf"{RTF_SENTENCE}\par"
        "\n"
        r"Caf\'e9 au lait was served.\par}"
    )
    return _write(folder / "tonewood.rtf", text, "ascii")


# --- Awkward files ----------------------------------------------------------------------------------------------


def make_configure(folder: Path) -> Path:
    """A build script with no extension: only content sniffing can tell that it is text."""
    return _write(folder / "configure", f"#!/bin/sh\n# {SHELL_SENTENCE}\n\necho checking\n")


def make_binary(folder: Path, name: str = "blob") -> Path:
    """Random bytes; under a format's extension, a corrupt file of that format."""
    rng = random.Random(7)  # fixed seed: the bytes include NULs, as any real binary's first 8 KB do
    return _write(folder / name, bytes([0, 1, 2, 3]) + rng.randbytes(4096))


def make_empty(folder: Path, name: str = "empty.txt") -> Path:
    return _write(folder / name, b"")


def make_zip_bomb(folder: Path, name: str = "bomb.docx", megabytes: int = 50) -> Path:
    """A zip whose one entry is ``megabytes`` of zeros: a few dozen KB on disk, a ratio near 1000:1."""
    path = folder / name
    chunk = bytes(1 << 20)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/document.xml", "w", force_zip64=True) as entry,
    ):
        for _ in range(megabytes):
            entry.write(chunk)
    return path


def make_lying_zip(folder: Path, name: str = "liar.docx", megabytes: int = 100, declared: int = 1000) -> Path:
    """A zip whose one entry inflates to ``megabytes`` of zeros while its headers say ``declared`` bytes (about
    1 KB on disk per MB inflated): the declared sizes pass any check that trusts them."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = b"".join(deflate.compress(bytes(1 << 20)) for _ in range(megabytes)) + deflate.flush()
    member = b"word/document.xml"
    # version, flags, method (8: deflate), time, date, CRC-32, packed size, unpacked size (the lie), name length
    sizes = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, 0, len(data), declared)
    local = b"PK\x03\x04" + sizes + struct.pack("<HH", len(member), 0) + member
    central = (b"PK\x01\x02" + struct.pack("<H", 20) + sizes
               + struct.pack("<HHHHHII", len(member), 0, 0, 0, 0, 0, 0) + member)
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return _write(folder / name, local + data + central + end)


# --- Hostile inputs (issue 33), each at a size: the full one that was measured, or a small one for tests -----------

# A hyperlink field left unfinished: striprtf's hyperlink regular expression took cubic time on these.
UNFINISHED_LINK = r'{\field{\*\fldinst{HYPERLINK "http://example.com/x" '


def make_sparse(folder: Path, gigabytes: float = 2) -> Path:
    """A sparse file of ``gigabytes`` that takes no room on disk: nothing may read it to find it too large."""
    path = folder / "sparse.txt"
    with path.open("wb") as handle:
        handle.truncate(int(gigabytes * 1e9))
    return path


def make_repeated(folder: Path, times: int = 500_000) -> Path:
    """ "Go now." on ``times`` lines (4 MB at the full 500,000)."""
    return _write(folder / "repeated.txt", "Go now.\n" * times)


def make_many_sentences(folder: Path, count: int) -> Path:
    """``count`` different sentences, one paragraph each."""
    return _write(folder / "many.txt", "".join(f"Sentence number {n} is a different one.\n\n" for n in range(count)))


def make_unfinished_links_rtf(folder: Path, size: int = 1_000_000) -> Path:
    """An RTF file of ``size`` bytes of unfinished hyperlinks after one visible sentence."""
    body = UNFINISHED_LINK * (size // len(UNFINISHED_LINK) + 1)
    return _write(folder / "links.rtf", r"{\rtf1\ansi Visible words first.\par " + body + "}", "ascii")


@dataclass(frozen=True)
class HostileCase:
    """One hostile input: how to make it (small for tests, or at the size measured), and the record it must get:
    its status and the start of its reason ("" for an indexed file read whole)."""

    name: str
    make: Callable[[Path, bool], Path]
    status: FileState
    reason: str


# Reading and sentence limits the small cases are made for (a test or bench passes them to the indexer).
SMALL_LIMITS = {"read_seconds": 2.0, "max_sentences": 2_000}
def make_hostile_names_zip(folder: Path) -> Path:
    """A zip whose members' names are empty or lead out of it, beside one good member: the empty name ended every run
    with nothing saved (issue 58), the others were dropped without a word."""
    archive = folder / "names.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name in ("", "../../escaped.txt", "/etc/absolute.txt", "inside.txt"):
            info = zipfile.ZipInfo("x")
            info.filename = name  # as a hostile tool writes it: ZipInfo would clean a name it is given
            out.writestr(info, TEXT_SENTENCE)
    return archive


def make_encrypted_office(folder: Path) -> Path:
    """A password-protected DOCX as Office saves one: an OLE compound file (its signature, then the encrypted
    package), no zip at all."""
    path = folder / "locked.docx"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504) + random.Random(7).randbytes(4096))
    return path


def make_pipe(folder: Path) -> Path:
    """A named pipe among the files: never a document, but an entry the status must account for."""
    path = folder / "pipe"
    os.mkfifo(path)
    return path


HOSTILE = (
    HostileCase("names.zip", lambda folder, full: make_hostile_names_zip(folder), FileState.SKIPPED,
                "1 member with an empty name not read; 2 members with a name that leads out of the archive"),
    HostileCase("locked.docx", lambda folder, full: make_encrypted_office(folder), FileState.FAILED,
                "encrypted DOCX: it is protected by a password"),
    HostileCase("pipe", lambda folder, full: make_pipe(folder), FileState.SKIPPED, "not a regular file (a named pipe)"),
    HostileCase("sparse.txt", lambda folder, full: make_sparse(folder), FileState.SKIPPED, "too large: 2,000 MB"),
    # inflated to its allowance (200 times its size) before it is known for a bomb: the full one's 200 MB took more
    # than the tests' 2 s budget on a loaded machine, the small one's 20 MB a tenth of it
    HostileCase("liar.docx", lambda folder, full: make_lying_zip(folder, megabytes=1000 if full else 100), "skipped",
                "zip bomb? DOCX expands to more than"),
    HostileCase("bomb.docx", lambda folder, full: make_zip_bomb(folder), "skipped", "zip bomb? DOCX expands to"),
    # the small one's 20,000 lines take a tenth of the tests' 2 s budget to read and split, so that a loaded machine
    # does not cut it
    HostileCase("repeated.txt", lambda folder, full: make_repeated(folder, 500_000 if full else 20_000), "indexed",
                ""),
    HostileCase("many.txt", lambda folder, full: make_many_sentences(folder, 60_000 if full else 3_000), "indexed",
                "too many sentences: only the first"),
    HostileCase("links.rtf", lambda folder, full: make_unfinished_links_rtf(folder), "indexed", ""),
    # pdfium alone spends about 1.7 us and 300 bytes per glyph in C: 23 million glyphs (depth 7) took 39 s and 7.7 GB,
    # too much to run beside other work even once; 5.7 million (depth 6, 12 per form) keep it in C for 10 s
    HostileCase("glyphs.pdf", lambda folder, full: make_glyph_bomb_pdf(folder, 6, 12), FileState.SKIPPED,
                "took longer than"),
)


# Every registered reader's name maps to a generator of a good sample of its format.
def make_gz_html(folder: Path) -> Path:
    """The HTML sample compressed whole with gzip, as a saved web page often is."""
    with tempfile.TemporaryDirectory() as scratch:  # beside the HTML sample, never in its place
        page = make_html(Path(scratch))
        path = folder / "inn.html.gz"
        path.write_bytes(gzip.compress(page.read_bytes()))
    return path


EMAIL_SENTENCE = "The ferry to the northern islands sails twice a week in winter."


def make_eml(folder: Path) -> Path:
    """A saved e-mail message with an RFC 2047 subject, a plain body and a quoted line of the message it answers."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Maren Holt <maren@example.com>"
    message["To"] = "Ivo Brandt <ivo@example.com>"
    message["Date"] = "Tue, 05 Mar 2024 10:00:00 +0000"
    message["Subject"] = "=?utf-8?q?Ferry_timetable_=E2=80=93_winter?="
    message["In-Reply-To"] = "<question@example.com>"
    message.set_content(f"{EMAIL_SENTENCE}\n\nOn Mon, 4 Mar 2024, Ivo Brandt wrote:\n> When does the ferry sail?\n")
    return _write(folder / "ferry.eml", bytes(message))


SAMPLES: dict[str, Callable[[Path], Path]] = {
    "text": make_txt,
    "markdown": make_md,
    "rst": make_rst,
    "table": make_csv,
    "html": make_html,
    "pdf": make_pdf,
    "docx": make_docx,
    "pptx": make_pptx,
    "odt": make_odt,
    "epub": make_epub,
    "rtf": make_rtf,
    "compressed": make_gz_html,
    "email": make_eml,
    "image": make_scan_png,
}
# The distinctive sentence each sample must yield, and the title its reader should find.
EXPECTED: dict[str, tuple[str, str]] = {
    "text": (TEXT_SENTENCE, TITLE),
    "markdown": (TEXT_SENTENCE, TITLE),
    "rst": (TEXT_SENTENCE, TITLE),
    "table": (TABLE_ROW, "pantry"),
    "html": (HTML_SENTENCE, "The Old Inn"),
    "pdf": (PDF_PAGE1_SENTENCE, PDF_TITLE),
    "docx": (DOCX_SENTENCE, "Orchard Report"),
    "pptx": (PPTX_SENTENCE, "Roadmap 2025"),
    "odt": (ODT_SENTENCE, "Glacier Survey"),
    "epub": (EPUB_SENTENCE, EPUB_TITLE),
    "rtf": (RTF_SENTENCE, "Tonewood"),
    "compressed": (HTML_SENTENCE, "The Old Inn"),
    "email": (EMAIL_SENTENCE, "Ferry timetable – winter"),
    "image": (SCAN_SENTENCE, "ferry-scan"),
}
