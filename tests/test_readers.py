"""Document readers: a contract every registered reader must meet, then what is particular to each format.

Every document is generated into ``tmp_path`` by ``tests/docgen.py`` (importable as ``docgen`` because pytest puts
the tests folder on the path); nothing outside ``tmp_path`` is read.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import docgen
import docx
import pytest
from clock import cpu_seconds

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.readers import text as text_readers
from engine.ingest.readers.base import Document, Limits, Reader

ALL_READERS = readers.readers()


def joined(doc: Document) -> str:
    return re.sub(r"\s+", " ", " ".join(block.text for block in doc.blocks))


def read_error(path: Path, limits: Limits = readers.DEFAULT_LIMITS) -> ReadError:
    with pytest.raises(ReadError) as caught:
        readers.read(path, limits)
    return caught.value


def assert_readable(error: ReadError) -> None:
    """A reason fit for a status column: one short line, no traceback, no repr of an exception."""
    assert error.reason and len(error.reason) <= 200
    assert "\n" not in error.reason and "Traceback" not in error.reason
    assert error.status in (FileState.FAILED, FileState.SKIPPED)


# --- The contract -------------------------------------------------------------------------------------------


def test_every_reader_has_a_sample() -> None:
    assert {reader.name for reader in ALL_READERS} == set(docgen.SAMPLES) == set(docgen.EXPECTED)


def test_files_for_a_parser_in_c_are_read_in_a_reader_process() -> None:
    # every reader says where it may run (engine.ingest.pool reads a small run's isolated files in a reader process)
    assert all(isinstance(reader.isolate, bool) for reader in ALL_READERS)
    isolated = {ext for ext in (".pdf", ".docx", ".pptx", ".odt", ".epub", ".html", ".gz", ".png", ".jpg", ".tif",
                                ".txt", ".md", ".rtf", ".unknown") if readers.isolated(Path("x" + ext))}
    assert isolated == {".pdf", ".docx", ".pptx", ".odt", ".epub", ".html", ".gz", ".png", ".jpg", ".tif"}


@pytest.mark.parametrize("reader", ALL_READERS, ids=lambda r: r.name)
def test_reads_its_sample(reader: Reader, tmp_path: Path) -> None:
    if reader.name == "image" and shutil.which("tesseract") is None:
        pytest.skip("images are read through Tesseract, which is not installed (apt install tesseract-ocr)")
    sentence, title = docgen.EXPECTED[reader.name]
    doc = readers.read(docgen.SAMPLES[reader.name](tmp_path))
    assert doc.kind == reader.name
    assert doc.title == title
    assert sentence in joined(doc)
    assert all(block.text.strip() for block in doc.blocks)


@pytest.mark.parametrize("reader", ALL_READERS, ids=lambda r: r.name)
def test_empty_file_is_skipped(reader: Reader, tmp_path: Path) -> None:
    error = read_error(docgen.make_empty(tmp_path, "empty" + reader.extensions[0]))
    assert (error.status, error.reason) == (FileState.SKIPPED, "empty file")


@pytest.mark.parametrize("reader", ALL_READERS, ids=lambda r: r.name)
def test_corrupt_file_raises_read_error(reader: Reader, tmp_path: Path) -> None:
    path = docgen.make_binary(tmp_path, "corrupt" + reader.extensions[0])
    # The reader itself, not only read(), must turn every failure into a ReadError.
    with pytest.raises(ReadError) as caught:
        reader.read(path, Limits())
    assert_readable(caught.value)
    assert_readable(read_error(path))


@pytest.mark.parametrize("reader", ALL_READERS, ids=lambda r: r.name)
def test_truncated_sample_reads_or_raises_read_error(reader: Reader, tmp_path: Path) -> None:
    path = docgen.SAMPLES[reader.name](tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    try:
        readers.read(path)
    except ReadError as e:  # text formats read fine when cut; containers must fail cleanly
        assert_readable(e)


# --- Checks common to all files -------------------------------------------------------------------------------


def test_size_limit(tmp_path: Path) -> None:
    error = read_error(docgen.make_txt(tmp_path), Limits(max_file_bytes=10))
    assert error.status == FileState.SKIPPED
    assert error.reason.startswith("too large: ") and error.reason.endswith(" MB limit")


def test_text_limit(tmp_path: Path) -> None:
    error = read_error(docgen.make_txt(tmp_path), Limits(max_chars=20))
    assert error.status == FileState.SKIPPED and error.reason.startswith("too much text")


def test_binary_without_extension_is_skipped(tmp_path: Path) -> None:
    error = read_error(docgen.make_binary(tmp_path, "blob"))
    assert (error.status, error.reason) == (FileState.SKIPPED, "binary file")


def test_known_binary_extension_is_skipped_by_name(tmp_path: Path) -> None:
    error = read_error(docgen.make_txt(tmp_path).rename(tmp_path / "photo.GIF"))
    assert (error.status, error.reason) == (FileState.SKIPPED, "binary file (.gif)")


def test_printer_code_is_declined_by_name_by_its_start_and_inside_gzip(tmp_path: Path) -> None:
    import gzip

    postscript = b"%!PS-Adobe-3.0\n%%Title: manual\n/Times-Roman findfont 12 scalefont setfont\n72 720 moveto\n" * 50
    (tmp_path / "manual.ps").write_bytes(postscript)
    (tmp_path / "MANUAL").write_bytes(postscript)
    (tmp_path / "guide.ps.gz").write_bytes(gzip.compress(postscript))
    (tmp_path / "draft.dvi").write_bytes(b"\xf7\x02\x01\x83\x92\xc0\x1c;")
    for name in ("manual.ps", "MANUAL", "draft.dvi"):
        error = read_error(tmp_path / name)
        assert (error.status, error.reason) == (FileState.SKIPPED, readers.PRINTER_CODE), name
    assert readers.PRINTER_CODE in read_error(tmp_path / "guide.ps.gz").reason


def test_source_file_without_extension_is_read_as_text(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_configure(tmp_path))
    assert doc.kind == "text"
    assert docgen.SHELL_SENTENCE in joined(doc)


def test_directory_is_not_a_regular_file(tmp_path: Path) -> None:
    error = read_error(tmp_path)
    assert (error.status, error.reason) == (FileState.SKIPPED, "not a regular file")


def test_missing_file(tmp_path: Path) -> None:
    assert_readable(read_error(tmp_path / "gone.txt"))


@pytest.mark.parametrize(("kind", "library"), [("html", "bs4"), ("pdf", "pypdfium2"), ("epub", "ebooklib")])
def test_a_missing_parser_library_is_a_broken_install_not_a_corrupt_file(
    kind: str, library: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Readers import their parser when they read (docs/decisions/0008), some inside parser_errors: a missing library
    # must not make every such file "corrupt" (before, it stopped `import engine` itself)
    path = docgen.SAMPLES[kind](tmp_path)
    monkeypatch.setitem(sys.modules, library, None)  # what `import` finds for a package that is not installed
    with pytest.raises(ImportError):
        readers.read(path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file")
def test_permission_denied(tmp_path: Path) -> None:
    path = docgen.make_txt(tmp_path)
    path.chmod(0)
    try:
        error = read_error(path)
    finally:
        path.chmod(0o644)
    assert (error.status, error.reason) == (FileState.FAILED, "permission denied")


def _rewrite_during_read(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """Make the plain-text reader append to its file on its first ``times`` calls, as an editor saving would."""
    calls: list[int] = []
    original = text_readers.PLAIN.read

    def read_and_rewrite(path: Path, limits: Limits) -> Document:
        calls.append(1)
        if len(calls) <= times:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"\nAppended while reading, pass {len(calls)}.\n")
        return original(path, limits)

    monkeypatch.setattr(text_readers.PLAIN, "read", read_and_rewrite)
    return calls


def test_changed_while_reading_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rewrite_during_read(monkeypatch, times=1)
    doc = readers.read(docgen.make_txt(tmp_path))
    assert len(calls) == 2
    assert "Appended while reading, pass 1." in joined(doc)


def test_changing_all_the_time_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _rewrite_during_read(monkeypatch, times=99)
    error = read_error(docgen.make_txt(tmp_path))
    assert (error.status, error.reason) == (FileState.FAILED, "changed while reading")
    assert len(calls) == 2


# --- Text ---------------------------------------------------------------------------------------------------------


def test_latin1_text_is_decoded(tmp_path: Path) -> None:
    text = joined(readers.read(docgen.make_latin1_txt(tmp_path)))
    assert docgen.LATIN1_SENTENCE in text
    assert "Straße" in text and "Grüße" in text


def test_utf16_text_is_decoded(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_utf16_txt(tmp_path))
    assert docgen.UTF16_SENTENCE in joined(doc)
    assert doc.title == "Une lettre"


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfCaf\xc3\xa9 notes\n\nBody.\n")
    assert readers.read(path).title == "Café notes"


def test_text_blocks_are_paragraphs(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_txt(tmp_path))
    assert [block.text for block in doc.blocks] == [
        docgen.TITLE,
        "First paragraph about lamps.",
        f"{docgen.TEXT_SENTENCE}\nIt wraps here.",
    ]


@pytest.mark.parametrize(("head", "title"), [
    # a new user's note was titled by its two sentences, which its card then showed again as the passage
    ("The night train to Vienna leaves at 22:10. Tickets are sold at the counter.", "notes"),  # running text
    ("Chapter 1. Introduction", "Chapter 1. Introduction"),  # a heading with a full stop inside
    ("Plans for April.", "Plans for April."),
    # a hard-wrapped paragraph's first line, cut mid-sentence (a README a new user indexed)
    ("These are the GNU core utilities.  This package is the union of\nthe GNU fileutils packages.", "notes"),
    ("Written for the spring fair,\nMaple Street, in May", "notes"),
    # a title with a line under it that is no continuation
    ("GNU Aspell English Dictionary Package\nVersion 2020.12.07-0", "GNU Aspell English Dictionary Package"),
    # a saved e-mail a new user indexed was titled by its "To:" line
    ("To: environmental.health@leeds.gov.uk\nSubject: Loud music from the flat below", "Loud music from the flat below"),
    ("From: Ann\nDate: 3 May 2024\nre: the allotment rota", "the allotment rota"),
    ("Date: 3 May 2024", "notes"),  # a header without a subject: no line of it is a title
    ("To do: paint the fence", "To do: paint the fence"),  # no header field
    # a letter: its addresses and date above the salutation are no title; its subject line beside it is
    ("12 Elm Road\nBristol BS1 4AB\n\n3 March 2025\n\nDear Ms Okafor,\n\nRe: Notice of rent increase",
     "Notice of rent increase"),
    ("Subject: the boiler\nDear Sam,", "the boiler"),
    ("12 Elm Road\nBristol BS1 4AB\n\nDear Sir or Madam", "notes"),
    ("Dear Sam,\nthanks for the plums", "notes"),  # a salutation with nothing above it: a note's first line
])
def test_a_text_is_titled_by_a_first_line_that_is_a_title(tmp_path: Path, head: str, title: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(f"{head}\n\nPlatform 4 is at the far end of the hall.\n", encoding="utf-8")
    assert readers.read(path).title == title


def test_long_first_line_is_no_title(tmp_path: Path) -> None:
    path = tmp_path / "essay.txt"
    path.write_text("word " * 40 + "\n\nMore.\n", encoding="utf-8")
    assert readers.read(path).title == "essay"


# A terminal's output saved as text: bold and colour escapes, a window title, a bell, nroff's overstruck bold.
TERMINAL_TEXT = (
    "\x1b]0;build log\x07\x1b[1mSed\x1b[0m one-liners\n\n"
    "Use \x1b[31;1msed -i\x1b[0m to edit\x07 files in place.\fN\x08NA\x08AM\x08ME\x08E sed \x1b(Bstream editor.\n"
)


TERMINAL_TITLE, TERMINAL_BODY = TERMINAL_TEXT.split("\n\n")


@pytest.mark.parametrize(("name", "header", "body", "title"), [
    ("notes.txt", "-*- mode: outline -*-\n", TERMINAL_TEXT, "Sed one-liners"),
    ("run.sh", "#!/bin/sh\n# -*- coding: utf-8 -*-\n", TERMINAL_TEXT, "#!/bin/sh"),
    ("notes.md", "<!-- -*- mode: markdown -*- -->\n", TERMINAL_TEXT, "Sed one-liners"),
    ("log.html", "", f"<html><body><h1>{TERMINAL_TITLE}</h1><p>{TERMINAL_BODY}</p></body></html>", "Sed one-liners"),
])
def test_escape_sequences_control_characters_and_modelines_are_removed(tmp_path: Path, name: str, header: str,
                                                                        body: str, title: str) -> None:
    path = tmp_path / name
    path.write_text(header + body, encoding="utf-8")
    doc = readers.read(path)
    text = "\n".join(block.text for block in doc.blocks)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text + doc.title)
    assert "-*-" not in text + doc.title and "[1m" not in text and "build log" not in text
    assert doc.title == title
    # words on either side of a form feed stay apart; struck-over letters are read once
    assert "Use sed -i to edit files in place. NAME sed stream editor." in joined(doc)


def test_a_modeline_is_dropped_only_at_the_start_and_keeps_the_words_on_its_line() -> None:
    from engine.ingest.readers.clean import drop_modeline

    assert drop_modeline(";;; tides.el --- Tide tables -*- lexical-binding: t -*-\nBody") == (
        ";;; tides.el --- Tide tables\nBody")
    assert drop_modeline("Title\n-*- not a modeline here -*-\n") == "Title\n-*- not a modeline here -*-\n"
    assert drop_modeline("-*- text -*-") == ""


def test_a_docx_letterhead_in_the_page_header_is_read_once(tmp_path: Path) -> None:
    # a new user searched a reference letter for its architects' phone number, which only its letterhead held
    import docx

    letter = docx.Document()
    letter.add_heading("Reference for Tamsin Rowe", level=1)
    letter.add_paragraph("Tamsin has worked with us for three years.")
    letter.add_section()  # a second section that keeps the first one's header: not read twice
    letter.sections[0].header.paragraphs[0].text = "Tanner Street Architects"
    letter.sections[0].header.add_paragraph("12 Tanner Street, London, 020 7946 0000")
    letter.sections[0].footer.paragraphs[0].text = "Registered in England No. 1234"
    path = tmp_path / "reference.docx"
    letter.save(str(path))
    doc = readers.read(path)
    assert doc.title == "Reference for Tamsin Rowe"
    assert [b.text for b in doc.blocks] == ["Tanner Street Architects", "12 Tanner Street, London, 020 7946 0000",
                                            "Reference for Tamsin Rowe", "Tamsin has worked with us for three years."]


def test_a_saved_email_threads_quote_marks_are_dropped(tmp_path: Path) -> None:
    # a reply's sentences ran across its quoted paragraphs: "... about £900. > The earliest fitting date ... > > P"
    thread = tmp_path / "thread.txt"
    thread.write_text("Subject: Kitchen\n\nGo ahead.\n\n> On Wed, Priya wrote:\n>\n> The quote is £13,900.\n"
                      "> Fitting takes a week.\n>\n>> On Tue, Sam wrote:\n>>\n>> Too much.\n", encoding="utf-8")
    doc = readers.read(thread)
    assert doc.title == "Kitchen"
    assert [b.text for b in doc.blocks] == ["Subject: Kitchen", "Go ahead.", "On Wed, Priya wrote:",
                                            "The quote is £13,900.\nFitting takes a week.", "On Tue, Sam wrote:",
                                            "Too much."]


def test_a_tables_rows_are_paragraphs_of_their_own(tmp_path: Path) -> None:
    # a new user's budget ran its rows together into one passage and was titled by its header row
    doc = readers.read(docgen.make_csv(tmp_path))
    assert [b.text for b in doc.blocks] == [
        "preserve,amount,notes", 'Damson jam,two pots,"set too firm\nin August"', docgen.TABLE_ROW]
    tsv = tmp_path / "t.tsv"
    tsv.write_text("a\tb\n\n1\t2 \"quoted\"\n3\t\"open\n", encoding="utf-8")  # a quote never closed: one last row
    assert [b.text for b in readers.read(tsv).blocks] == ["a\tb", '1\t2 "quoted"', '3\t"open']
    inches = tmp_path / "desk.csv"
    inches.write_text('item,size\nMonitor,27" screen\nDesk,oak\n', encoding="utf-8")  # a quote that opens no cell
    assert [b.text for b in readers.read(inches).blocks] == ["item,size", 'Monitor,27" screen', "Desk,oak"]


def test_markdown_markup_is_stripped(tmp_path: Path) -> None:
    text = joined(readers.read(docgen.make_md(tmp_path)))
    assert "Some bold claims and a useful link" in text
    for markup in ("**", "](", "logo.png", "<div>", "# ", "```"):
        assert markup not in text
    assert "print('kept code')" in text


def test_rst_adornments_and_directives_are_dropped(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_rst(tmp_path))
    text = joined(doc)
    assert "===" not in text and "---" not in text and ".. " not in text
    assert "Directive bodies are kept as text." in text
    assert "Introduction" in [block.text for block in doc.blocks]


# --- HTML and EPUB ------------------------------------------------------------------------------------------------


def test_html_blocks_and_dropped_elements(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_html(tmp_path))
    blocks = [block.text for block in doc.blocks]
    assert doc.title == "The Old Inn"
    assert docgen.SCRIPT_TEXT not in joined(doc) and "color" not in joined(doc)
    # Headings, cells, list items and a div's own text never run into each other.
    for block in ("Kitchen", "Cell one", "Cell two", "Direct div text", "nested paragraph", "First item"):
        assert block in blocks


def test_a_saved_pages_menu_and_footer_are_no_passages_and_its_heading_titles_it(tmp_path: Path) -> None:
    # a new user's saved blog post had "Cookie settings | Privacy policy" as a passage, and the site's name in its title
    page = tmp_path / "post.html"
    page.write_text(
        "<html><head><title>Why my sourdough has an ear | Crumb &amp; Crust - a baking blog</title></head><body>"
        "<header><nav><a href='/'>Home</a> | <a href='/recipes'>Recipes</a></nav></header>"
        "<h1>Why my sourdough has an ear</h1><p>Preheat the pot for 45 minutes.</p>"
        "<footer><p>Cookie settings | Privacy policy</p></footer></body></html>", encoding="utf-8")
    doc = readers.read(page)
    assert doc.title == "Why my sourdough has an ear"
    assert [b.text for b in doc.blocks] == ["Why my sourdough has an ear", "Preheat the pot for 45 minutes."]
    # a page that is all menu (a site map) keeps it
    links = tmp_path / "sitemap.html"
    links.write_text("<html><head><title>Site map</title></head><body><nav><ul><li>Recipes</li><li>About us</li>"
                     "</ul></nav></body></html>", encoding="utf-8")
    assert [b.text for b in readers.read(links).blocks] == ["Recipes", "About us"]
    welcome = tmp_path / "welcome.html"
    welcome.write_text("<title>Welcome to Bob's Plumbing</title><h1>Welcome</h1><p>We fix leaks.</p>", encoding="utf-8")
    assert readers.read(welcome).title == "Welcome to Bob's Plumbing"  # the heading is no title, only a greeting


def test_html_declared_charset(tmp_path: Path) -> None:
    path = tmp_path / "old.htm"
    path.write_bytes(
        '<html><head><meta charset="windows-1252"></head><body><p>Café crème</p></body></html>'.encode("cp1252")
    )
    doc = readers.read(path)
    assert joined(doc) == "Café crème"
    assert doc.title == "old"


def test_epub_chapters_in_spine_order_without_navigation(tmp_path: Path) -> None:
    text = joined(readers.read(docgen.make_epub(tmp_path)))
    assert text.index(docgen.EPUB_SENTENCE) < text.index(docgen.EPUB_CHAPTER2_SENTENCE)
    assert text.count("Chapter 1") == 1


# --- PDF ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def pdf_doc(tmp_path: Path) -> Document:
    return readers.read(docgen.make_pdf(tmp_path))


def _block_with(doc: Document, sentence: str) -> readers.Block:
    return next(block for block in doc.blocks if sentence in re.sub(r"\s+", " ", block.text))


def test_pdf_page_numbers(pdf_doc: Document) -> None:
    assert all(block.page is not None for block in pdf_doc.blocks)
    assert _block_with(pdf_doc, docgen.PDF_PAGE1_SENTENCE).page == 1
    assert _block_with(pdf_doc, docgen.PDF_PAGE2_SENTENCE).page == 2
    assert _block_with(pdf_doc, docgen.LEFT_COLUMN).page == 3


def test_pdf_paragraphs_are_blocks(pdf_doc: Document) -> None:
    first = _block_with(pdf_doc, docgen.PDF_PAGE1_SENTENCE)
    assert docgen.PDF_SECOND_PARAGRAPH not in first.text
    assert _block_with(pdf_doc, docgen.PDF_TITLE).text == docgen.PDF_TITLE


def test_pdf_two_columns_come_out_column_by_column(pdf_doc: Document) -> None:
    text = joined(pdf_doc)
    assert docgen.LEFT_COLUMN in text and docgen.RIGHT_COLUMN in text
    assert text.index(docgen.LEFT_COLUMN) < text.index(docgen.RIGHT_COLUMN)
    assert text.index(docgen.COLUMNS_HEADING) < text.index(docgen.LEFT_COLUMN)
    assert text.index(docgen.RIGHT_COLUMN) < text.index(docgen.COLUMNS_FOOTER)


@pytest.mark.parametrize(("page", "texts"), [(1, docgen.THREE_COLUMNS), (2, docgen.SIDEBAR_PAGE)])
def test_pdf_column_layouts(tmp_path: Path, page: int, texts: tuple[str, ...]) -> None:
    doc = readers.read(docgen.make_layouts_pdf(tmp_path))
    text = re.sub(r"\s+", " ", " ".join(block.text for block in doc.blocks if block.page == page))
    positions = [text.find(part) for part in texts]
    assert -1 not in positions and positions == sorted(positions)


def test_pdf_single_column_stays_in_order(pdf_doc: Document) -> None:
    assert docgen.LONG_PARAGRAPH in joined(pdf_doc)


def test_pdf_dehyphenation(pdf_doc: Document) -> None:
    text = joined(pdf_doc)
    assert docgen.DEHYPHENATED in text
    assert docgen.COMPOUND_KEPT in text  # a capital after the break: the hyphen is part of the word


def test_pdf_title_wrapped_onto_two_lines_is_one_paragraph(tmp_path: Path) -> None:
    # a new user's guarantee was shown by "Lumenta WM8400 Washing Machine — Guarantee and": an 18-point title spaced
    # 24 points, wider than the text's lines, was cut into two paragraphs
    page = (docgen._text_ops([(72, 720, "Washing Machine Guarantee and"), (72, 696, "Registration")], size=18) + b"\n"
            + docgen._text_ops([(72, 660, "Model WM8400, bought in May."), (72, 646, "Kept in the kitchen."),
                                (72, 632, "Serviced once."), (72, 618, "No faults.")])
            + b"\n" + docgen._text_ops([(72, 600, "Your guarantee"), (72, 576, "lasts two years.")], size=18))
    path = tmp_path / "guarantee.pdf"
    path.write_bytes(docgen.build_pdf([page]))
    assert [b.text for b in readers.read(path).blocks] == [
        "Washing Machine Guarantee and Registration",
        "Model WM8400, bought in May. Kept in the kitchen. Serviced once. No faults.", "Your guarantee",
        "lasts two years."]


def test_pdf_junk_metadata_title_falls_back_to_first_line(tmp_path: Path) -> None:
    assert readers.read(docgen.make_untitled_pdf(tmp_path)).title == docgen.PDF_TITLE


def test_encrypted_pdf(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    error = read_error(docgen.make_encrypted_pdf(tmp_path))
    assert (error.status, error.reason) == (FileState.FAILED, "encrypted PDF (password required)")


def test_pdf_with_permissions_only_is_read(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    doc = readers.read(docgen.make_encrypted_pdf(tmp_path, user_password=""))
    assert docgen.PDF_PAGE2_SENTENCE in joined(doc)


def test_pdf_without_text_layer_is_skipped(tmp_path: Path) -> None:
    error = read_error(docgen.make_image_only_pdf(tmp_path))
    assert error.status == FileState.SKIPPED and error.reason.startswith("no text layer")


def test_truncated_pdf(tmp_path: Path) -> None:
    error = read_error(docgen.make_truncated_pdf(tmp_path))
    assert error.status == FileState.FAILED and error.reason.startswith("corrupt PDF: ")
    assert error.__cause__ is not None


# --- Office formats -----------------------------------------------------------------------------------------------


def test_docx_table_cells_are_blocks(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_docx(tmp_path))
    blocks = [block.text for block in doc.blocks]
    assert docgen.DOCX_CELL in blocks
    assert blocks.index(docgen.DOCX_SENTENCE) < blocks.index(docgen.DOCX_CELL) < blocks.index("12 tons")
    assert blocks[-1] == "A closing paragraph after the table."


def test_a_long_docx_reads_in_linear_time_with_its_styles(tmp_path: Path) -> None:
    # python-docx walks every style of the document to name a paragraph's: 10,000 paragraphs took 11 s uncached
    doc = docx.Document()
    doc.add_heading("The Long Report", level=1)
    for n in range(10_000):
        doc.add_paragraph(f"Paragraph {n} of the long report.")
    doc.save(str(tmp_path / "long.docx"))
    read, seconds = cpu_seconds(lambda: readers.read(tmp_path / "long.docx"))
    assert seconds < 4
    assert read.title == "The Long Report" and len(read.blocks) == 10_001


def test_pptx_slides_are_pages(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_pptx(tmp_path))
    assert _block_with(doc, docgen.PPTX_SENTENCE).page == 1
    assert _block_with(doc, docgen.PPTX_SLIDE2_SENTENCE).page == 2


def test_odt_nested_spans_are_kept(tmp_path: Path) -> None:
    doc = readers.read(docgen.make_odt(tmp_path))
    assert docgen.ODT_SENTENCE in [block.text for block in doc.blocks]


def test_an_rtf_letter_is_titled_by_its_subject_not_its_senders_address(tmp_path: Path) -> None:
    """A new user's RTF letter was titled by its sender's street."""
    lines = ["14 Tanner Street", "London SE1 3LD", "2 June 2025", "Dear Mr Hale,", "Re: Reference for Ana Costa",
             "I am pleased to recommend Ana for the post of junior architect."]
    body = "".join(line + r"\par" + "\n" for line in lines)
    path = tmp_path / "reference.rtf"
    path.write_text(r"{\rtf1\ansi{\fonttbl{\f0 Arial;}}\f0 " + body + "}", encoding="ascii")
    assert readers.read(path).title == "Reference for Ana Costa"
    path.write_text(r"{\rtf1\ansi{\fonttbl{\f0 Arial;}}\f0 " + body.replace("Re: ", "") + "}", encoding="ascii")
    assert readers.read(path).title == "reference"


def test_rtf_escapes_are_decoded(tmp_path: Path) -> None:
    assert "Café au lait was served." in joined(readers.read(docgen.make_rtf(tmp_path)))


def test_corrupt_docx_reason(tmp_path: Path) -> None:
    error = read_error(docgen.make_binary(tmp_path, "broken.docx"))
    assert (error.status, error.reason) == (FileState.FAILED, "corrupt DOCX: not a valid zip archive")
    assert error.__cause__ is not None


def test_zip_bomb_by_ratio_is_skipped(tmp_path: Path) -> None:
    error = read_error(docgen.make_zip_bomb(tmp_path))
    assert error.status == FileState.SKIPPED
    assert error.reason.startswith("zip bomb? DOCX expands to 52.4 MB")


def test_zip_bomb_by_size_is_skipped(tmp_path: Path) -> None:
    limits = Limits(max_unpacked_bytes=5_000_000, max_compression_ratio=float("inf"))
    error = read_error(docgen.make_zip_bomb(tmp_path, "big.epub", megabytes=6), limits)
    assert error.status == FileState.SKIPPED and error.reason.startswith("zip bomb? EPUB expands to 6.3 MB")


# --- Compressed files ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_file_is_read_as_the_file_inside(tmp_path: Path, suffix: str) -> None:
    import bz2
    import gzip
    import lzma

    pack = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    inner = docgen.make_md(tmp_path)
    packed = tmp_path / (inner.name + suffix)
    packed.write_bytes(pack(inner.read_bytes()))
    doc = readers.read(packed)
    assert doc.title == docgen.EXPECTED["markdown"][1] and docgen.TEXT_SENTENCE in joined(doc)
    man = tmp_path / ("ls.1" + suffix)  # a man page: an unknown inner extension, text content
    man.write_bytes(pack(b"ls lists the files of a directory.\n"))
    assert "ls lists the files" in joined(readers.read(man))


def test_a_compressed_bomb_stops_at_the_archive_limits(tmp_path: Path) -> None:
    import gzip

    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"all work and no play " * 2_000_000))  # 42 MB from about 100 kB
    error = read_error(bomb)
    assert error.status == FileState.SKIPPED and error.reason.startswith("compressed file unpacks to more than")
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("quire-unpacked-*/bomb.txt"))  # nothing left behind
    tar = tmp_path / "backup.tar.gz"
    tar.write_bytes(gzip.compress(b"\0" * 4096))
    assert (read_error(tar).status, read_error(tar).reason) == (FileState.SKIPPED, "binary file (.tar)")


def test_odt_paragraphs_keep_their_spaces_tabs_lists_tables_and_links(tmp_path: Path) -> None:
    """ODT is read with lxml (odfpy has no wheel): what odfpy's own extractText gives, from a file odfpy wrote."""
    from odf import table, teletype
    from odf import text as odt
    from odf.opendocument import OpenDocumentText

    doc = OpenDocumentText()
    heading = odt.H(outlinelevel=1)
    teletype.addTextToElement(heading, "Tide  tables")
    doc.text.addElement(heading)
    spaced = odt.P()
    teletype.addTextToElement(spaced, "high   water\tat noon\nlow at six")
    doc.text.addElement(spaced)
    listed, item = odt.List(), odt.ListItem()
    item.addElement(odt.P(text="spring tides"))
    listed.addElement(item)
    doc.text.addElement(listed)
    grid, row, cell = table.Table(), table.TableRow(), table.TableCell()
    cell.addElement(odt.P(text="neap tides"))
    row.addElement(cell)
    grid.addElement(row)
    doc.text.addElement(grid)
    linked = odt.P()
    linked.addElement(odt.Span(text="see "))
    linked.addElement(odt.A(href="https://example.org", text="the almanac"))
    doc.text.addElement(linked)
    doc.save(str(tmp_path / "tides.odt"))
    read = readers.read(tmp_path / "tides.odt")
    assert [b.text for b in read.blocks] == ["Tide  tables", "high   water\tat noon\nlow at six", "spring tides",
                                             "neap tides", "see the almanac"]
    assert read.title == "Tide  tables"


def test_an_odt_with_entities_expands_none_and_one_without_a_body_is_corrupt(tmp_path: Path) -> None:
    import zipfile

    laughs = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
              '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
              'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
              '<text:p>Storm &b; warning</text:p></office:text></office:body></office:document-content>')
    for name, content in (("laughs.odt", laughs), ("empty.odt", "<a/>")):
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
            z.writestr("content.xml", content)
    read = readers.read(tmp_path / "laughs.odt")
    assert "lol" not in " ".join(b.text for b in read.blocks) and "Storm" in read.blocks[0].text
    with pytest.raises(ReadError, match="corrupt ODT"):
        readers.read(tmp_path / "empty.odt")
