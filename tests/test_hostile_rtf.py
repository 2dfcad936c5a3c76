"""RTF: a hostile 1 MB file is read in linear time, and ordinary files still give the right text and title."""

from __future__ import annotations

from pathlib import Path

from engine.ingest import readers
from engine.ingest.readers.rtf import rtf_text
from tests import docgen
from tests.clock import cpu_seconds


def test_megabyte_of_unfinished_hyperlinks_reads_in_seconds(tmp_path: Path) -> None:
    # striprtf's hyperlink regular expression took cubic time on these (13 KB of them 1.5 s): this would take days
    path = docgen.make_unfinished_links_rtf(tmp_path)
    assert path.stat().st_size > 1_000_000
    doc, seconds = cpu_seconds(lambda: readers.read(path))
    assert seconds < 5
    assert [block.text for block in doc.blocks] == ["Visible words first."]


def test_megabyte_of_ordinary_paragraphs_reads_in_seconds() -> None:
    paragraph = r"The \b quick\b0  brown fox jumps over the lazy dog at the caf\'e9.\par" + "\n"
    data = (r"{\rtf1\ansi " + paragraph * (1_000_000 // len(paragraph)) + "}").encode("ascii")
    (text, _), seconds = cpu_seconds(lambda: rtf_text(data))
    assert seconds < 5
    assert text.splitlines()[-1] == "The quick brown fox jumps over the lazy dog at the café."


def test_ordinary_rtf_gives_its_text_and_title(tmp_path: Path) -> None:
    path = tmp_path / "letter.rtf"
    path.write_bytes(
        rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fcharset0 Arial;}{\f1\fcharset204 Arial Cyr;}}"
        rb"{\colortbl;\red255\green0\blue0;}{\*\generator Writer 1.0;}{\info{\title A Winter Letter}{\author Ann}}"
        rb"{\header Page header}"
        b"\r\n"
        rb"\pard\f0\fs24 Dear \b Marta\b0 ,\par"
        b"\r\n"
        rb"The caf\'e9 served cr\u232\'e8me br\u251?l\'e9e \u8212? and \'93tea\'94.\par"
        rb'{\field{\*\fldinst{HYPERLINK "http://example.com"}}{\fldrslt{our menu}}} online\par'
        b"\r\n"
        rb"In Moscow: \f1 \'cc\'ee\'f1\'ea\'e2\'e0\f0 .\line A smile: \u-10179?\u-8704?\par"
        rb"{\pict\pngblip\bin4 {{{}\par}"
        rb"\trowd name\cell price\cell\row}"
        b"after the end"
    )
    doc = readers.read(path)
    assert doc.title == "A Winter Letter"
    assert [block.text for block in doc.blocks] == [
        "Dear Marta,",
        "The café served crème brûlée \u2014 and \u201ctea\u201d.",
        "our menu online",
        "In Moscow: Москва.",
        "A smile: \U0001f600",
        "name",
        "price",
    ]


def test_title_falls_back_to_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "plain.rtf"
    path.write_bytes(rb"{\rtf1\ansi Short heading\par Body text follows here.\par}")
    assert readers.read(path).title == "Short heading"
