"""Scanned pages and images read through Tesseract (engine/ingest/readers/ocr.py), end to end on images drawn here.

The tests that read real text need the ``tesseract`` program and skip without it (``.ci/run`` installs it); what
happens without it, a Tesseract that hangs, and hostile images run everywhere: the first with a PATH that holds no
Tesseract, the second with a stand-in program that never answers.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
import time
import zlib
from pathlib import Path

import docgen
import pytest

from engine import Index, IndexConfig
from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.budget import within_budget
from engine.ingest.readers import ocr
from engine.ingest.readers.base import Limits

TESSERACT = shutil.which("tesseract")
needs_tesseract = pytest.mark.skipif(TESSERACT is None, reason="tesseract is not installed (apt install tesseract-ocr)")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in Tesseract is a shell script")
CONFIG = IndexConfig(workers=0)
FRAME_TWO = "The second frame lists the winter timetable for the harbour."


def read_error(path: Path, limits: Limits = readers.DEFAULT_LIMITS) -> ReadError:
    with pytest.raises(ReadError) as caught:
        readers.read(path, limits)
    return caught.value


def pages_of(response, sentence: str) -> dict[str, int | None]:
    return {Path(r.path).name: r.page for r in response.results if r.sentence == sentence}


def make_photo(folder: Path) -> Path:
    """A photo with no text in it: blurred shapes on noise, as a JPEG."""
    import random

    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(3)
    image = Image.effect_noise((1200, 900), 60).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y = rng.randrange(1200), rng.randrange(900)
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        draw.ellipse((x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)), fill=colour)
    image.filter(ImageFilter.GaussianBlur(2)).save(folder / "holiday.jpg", quality=85)
    return folder / "holiday.jpg"


def make_tiff(folder: Path) -> Path:
    first = docgen.scanned_image()
    second = docgen.scanned_image((FRAME_TWO,))
    first.save(folder / "timetable.tif", save_all=True, append_images=[second], compression="tiff_deflate")
    return folder / "timetable.tif"


def png_declaring(folder: Path, width: int, height: int) -> Path:
    """A valid PNG header declaring ``width`` x ``height`` grey pixels, with a few hundred bytes of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(10_000))) + chunk(b"IEND", b"")
    return docgen._write(folder / f"bomb-{width}.png", data)


@pytest.fixture
def no_tesseract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH on which there is no Tesseract (reader processes inherit it)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert ocr.executable() is None


def stand_in(folder: Path, langs: str = "deu\neng\nosd\nfra", answer_once: bool = False) -> Path:
    """A ``tesseract`` that lists ``langs`` and, asked to read, answers "Hello" the first time if ``answer_once``,
    then writes its process id beside itself and hangs (shell built-ins only, whatever PATH holds)."""
    folder.mkdir(exist_ok=True)
    program = folder / "tesseract"
    listing = "\\n".join(langs.splitlines())
    word = "5\\t1\\t1\\t1\\t1\\t1\\t0\\t0\\t90\\t30\\t96\\tHello"
    program.write_text("#!/bin/sh\n"
                       f"if [ \"$1\" = --list-langs ]; then printf 'List of available languages (4):\\n{listing}\\n'; "
                       "exit 0; fi\n"
                       f"if [ {int(answer_once)} = 1 ] && [ ! -e '{folder}/answered' ]; then : > '{folder}/answered'; "
                       f"printf 'level\\n{word}\\n'; exit 0; fi\n"
                       f"echo $$ > '{folder}/pid'\n"
                       "exec /bin/sleep 60\n")
    program.chmod(0o755)
    return program


# --- with Tesseract ------------------------------------------------------------------------------------------------


@needs_tesseract
def test_scanned_pages_and_images_are_found_by_their_words_with_their_pages(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    docgen.make_scan_png(docs)
    docgen.make_scanned_pdf(docs)  # one page, an image only
    docgen.make_scanned_pdf(docs, "mixed.pdf", text_first=True)  # five text pages, then a scanned one
    make_tiff(docs)
    with Index(tmp_path / "index", config=CONFIG) as idx:
        report = idx.add([docs])
        assert (report.documents, report.issues) == (4, ())
        found = pages_of(idx.search(docgen.SCAN_SENTENCE, k=10, mode="lexical"), docgen.SCAN_SENTENCE)
        text_page = pages_of(idx.search(docgen.PDF_PAGE2_SENTENCE, k=3), docgen.PDF_PAGE2_SENTENCE)
        second_frame = pages_of(idx.search(FRAME_TWO, k=3), FRAME_TWO)
    assert found == {"ferry-scan.png": None, "scanned.pdf": 1, "mixed.pdf": 6, "timetable.tif": 1}
    assert text_page == {"mixed.pdf": 2}  # the text layer of the same file, as before
    assert second_frame == {"timetable.tif": 2}


@needs_tesseract
def test_a_photo_without_text_is_recorded_but_not_reported(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_photo(docs)
    docgen.make_scan_png(docs)
    with Index(tmp_path / "index", config=CONFIG) as idx:
        first = idx.add([docs])
        again = idx.add([docs])
        files = {Path(f.path).name: (f.status, f.reason) for f in idx.status(files=True).files}
    assert (first.documents, first.issues, again.issues) == (1, (), ())
    assert files["holiday.jpg"] == (FileState.SKIPPED, ocr.NO_TEXT_IN_IMAGE)


@needs_tesseract
def test_languages_are_a_setting(tmp_path: Path) -> None:
    error = read_error(docgen.make_scan_png(tmp_path), Limits(ocr_languages=("xx",)))
    assert error.status == FileState.FAILED and error.reason.startswith("Tesseract has no model for xx (installed: ")
    assert docgen.SCAN_SENTENCE in readers.read(tmp_path / "ferry-scan.png", Limits(ocr_languages=("xx", "eng")))\
        .blocks[0].text


@needs_tesseract
def test_quire_index_takes_the_languages(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from app.cli import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    docgen.make_scan_png(docs)
    result = CliRunner().invoke(cli, ["index", str(docs), "--db", str(tmp_path / "index"), "--workers", "0",
                                      "--ocr-lang", "xx", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [issue] = json.loads(result.output)["skipped"]
    assert issue["reason"].startswith("Tesseract has no model for xx")


@needs_tesseract
def test_a_truncated_image_fails_with_a_reason(tmp_path: Path) -> None:
    path = docgen.make_scan_png(tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    error = read_error(path)
    assert error.status == FileState.FAILED and error.reason.startswith("corrupt image: ")


# --- without Tesseract ---------------------------------------------------------------------------------------------


def test_without_tesseract_the_reason_says_how_to_install_it(tmp_path: Path, no_tesseract: None) -> None:
    error = read_error(docgen.make_scanned_pdf(tmp_path))
    assert (error.status, error.reason) == (FileState.SKIPPED, ocr.NO_TEXT_LAYER)
    assert "apt install tesseract-ocr" in error.reason and "brew install tesseract" in error.reason
    assert len(error.reason) <= 200 and "\n" not in error.reason
    mixed = readers.read(docgen.make_scanned_pdf(tmp_path, "mixed.pdf", text_first=True))
    assert {block.page for block in mixed.blocks} == {1, 2, 3, 4, 5}  # the text pages are indexed
    assert mixed.note == f"page 6 not read: {ocr.NO_TEXT_LAYER}"
    image = read_error(docgen.make_scan_png(tmp_path))
    assert (image.status, image.reason) == (FileState.SKIPPED, ocr.IMAGE_WITHOUT_OCR)


def test_files_left_for_tesseract_are_read_once_it_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 no_tesseract: None) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    docgen.make_scan_png(docs)
    docgen.make_scanned_pdf(docs)
    (docs / "note.txt").write_text("A note that needs no OCR at all.")
    with Index(tmp_path / "index", config=CONFIG) as idx:
        report = idx.add([docs])
        # the PDF says what to install; the image, like a photo, is recorded without a line in the report
        assert [(Path(i.path).name, i.reason) for i in report.issues] == [("scanned.pdf", ocr.NO_TEXT_LAYER)]
        files = {Path(f.path).name: (f.status, f.reason) for f in idx.status(files=True).files}
        assert files["ferry-scan.png"] == (FileState.SKIPPED, ocr.IMAGE_WITHOUT_OCR)
        if TESSERACT is None:
            pytest.skip("tesseract is not installed: the files cannot be read after all")
        monkeypatch.undo()  # Tesseract is on PATH again
        again = idx.add([docs])
        found = pages_of(idx.search(docgen.SCAN_SENTENCE, k=5, mode="lexical"), docgen.SCAN_SENTENCE)
    assert (again.documents, again.issues) == (2, ())
    assert found == {"ferry-scan.png": None, "scanned.pdf": 1}


# --- hostile input -------------------------------------------------------------------------------------------------


@posix_only
def test_a_tesseract_that_hangs_is_ended_at_the_files_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    path = docgen.make_scan_png(tmp_path)
    limits = Limits(read_seconds=2)
    started = time.monotonic()
    with pytest.raises(ReadError) as caught:
        within_budget(limits, False, lambda: readers.read(path, limits))  # as a reader process reads it
    # ended by its own timeout (the watchdog's reason has no "(OCR)"), not left to hang, and the hung program is gone
    assert (caught.value.status, caught.value.reason) == ("skipped", "took longer than 2 s to read (OCR)")
    assert time.monotonic() - started < 20
    pid = int((bin_dir / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@posix_only
def test_a_pdf_whose_ocr_runs_out_of_time_keeps_the_pages_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, answer_once=True)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    scans = [docgen.scanned_image(), docgen.scanned_image(), docgen.scanned_image()]
    scans[0].save(tmp_path / "three.pdf", save_all=True, append_images=scans[1:], resolution=150)
    doc = readers.read(tmp_path / "three.pdf", Limits(read_seconds=2))
    assert [(block.text, block.page) for block in doc.blocks] == [("Hello", 1)]
    assert doc.note == "OCR took longer than 2 s: pages from 2 on not read"


@posix_only
def test_the_default_languages_are_english_and_those_installed(tmp_path: Path) -> None:
    program = str(stand_in(tmp_path / "bin"))
    assert ocr.languages(program, ()) == "eng+deu+fra"  # English first; osd is no language
    assert ocr.languages(program, ("fra", "ita")) == "fra"
    with pytest.raises(ReadError, match="no model for ita"):
        ocr.languages(program, ("ita",))


def test_a_decompression_bomb_is_declined_on_its_header(tmp_path: Path) -> None:
    over_pillows_limit = read_error(png_declaring(tmp_path, 100_000, 100_000))
    assert (over_pillows_limit.status, over_pillows_limit.reason) == (FileState.SKIPPED,
                                                                      "image too large: a decompression bomb")
    over_ours = read_error(png_declaring(tmp_path, 9_500, 9_000))
    assert over_ours.status == FileState.SKIPPED
    assert over_ours.reason == "image too large: 9,500 x 9,000 pixels, over the 80 megapixel limit"


def test_a_corrupt_image_fails_with_a_reason(tmp_path: Path) -> None:
    error = read_error(docgen.make_binary(tmp_path, "broken.png"))
    assert (error.status, error.reason) == (FileState.FAILED, "corrupt image: not an image Pillow can decode")
    assert error.__cause__ is not None
