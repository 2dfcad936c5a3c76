"""Word (DOCX), PowerPoint (PPTX) and OpenDocument text (ODT) files.

All three are zip archives of XML, so each is checked for a zip bomb before its library unpacks anything. Each
library is imported when the first file of its format is read: a process that reads none does not pay for them
(docs/decisions/0008-reader-pool-sizes.md). ODT's two XML files are read with lxml itself: odfpy, the library for
it, publishes no wheel.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors
from engine.ingest.readers.zipguard import check_zip

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.section import _Header
    from docx.table import _Cell
    from lxml.etree import _Element
    from pptx.shapes.autoshape import Shape
    from pptx.shapes.base import BaseShape
    from pptx.shapes.graphfrm import GraphicFrame

# Titles that word processors fill in by themselves.
_JUNK_TITLES = frozenset(("", "untitled", "powerpoint presentation", "presentation", "document", "title"))


def _meta_title(title: str | None) -> str:
    title = (title or "").strip()
    return "" if title.lower() in _JUNK_TITLES else title


def _docx_paragraphs(container: DocxDocument | _Cell | _Header, styles: dict[str | None, str]
                     ) -> Iterator[tuple[str, str]]:
    """(style name, text) of each paragraph in body order, descending into table cells (merged cells once).

    ``styles`` caches style names by style id: python-docx finds a paragraph's style by walking every style of the
    document, 1 ms a paragraph, which made a 20,000-paragraph DOCX take 21 s to read (the slowest reader per
    sentence, docs/decisions/0012-reader-time-budget.md).
    """
    from docx.table import Table

    for item in container.iter_inner_content():
        if isinstance(item, Table):
            for row in item.rows:
                seen: set[int] = set()
                for cell in row.cells:
                    if id(cell._tc) not in seen:  # a merged cell is repeated once per grid column it spans
                        seen.add(id(cell._tc))
                        yield from _docx_paragraphs(cell, styles)
        else:
            style_id = item._p.style
            if style_id not in styles:
                style = item.style
                styles[style_id] = (style.name if style is not None else "") or ""
            yield styles[style_id], item.text


def _docx_headers(doc: DocxDocument, styles: dict[str | None, str]) -> list[tuple[str, str]]:
    """(style name, text) of the distinct paragraphs of every section's page headers, the first page's and even
    pages' included: a letter's letterhead, which a new user searched for ("Tanner Street architects phone number")
    and the body never says."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for section in doc.sections:
        for header in (section.first_page_header, section.header, section.even_page_header):
            if header.is_linked_to_previous:  # no header of its own
                continue
            for style, text in _docx_paragraphs(header, styles):
                if text.strip() and text not in seen:
                    seen.add(text)
                    out.append((style, text))
    return out


class DocxReader:
    """Word documents: the page headers' paragraphs, then body paragraphs and table cells in order; footers (page
    numbers, legal lines) and comments are left out."""

    name = "docx"
    isolate = True  # python-docx parses with lxml, in C
    extensions = (".docx",)

    def read(self, path: Path, limits: Limits) -> Document:
        """Paragraphs and table cells in document order; the title from the properties or first heading."""
        import docx

        with parser_errors("DOCX"):
            check_zip(path, limits, "DOCX")
            doc = docx.Document(str(path))
            styles: dict[str | None, str] = {}
            paragraphs = [(style, text) for style, text in _docx_paragraphs(doc, styles) if text.strip()]
            title = _meta_title(doc.core_properties.title) or next(
                (text for style, text in paragraphs if style.startswith(("Title", "Heading"))), ""
            )
            headers = _docx_headers(doc, styles)
        return Document(
            title=title.strip() or path.stem,
            blocks=tuple(Block(text) for _, text in headers + paragraphs),
            kind=self.name,
        )


def _shape_texts(shapes: Iterable[BaseShape]) -> Iterator[str]:
    """Paragraphs of text frames and table cells, descending into groups."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shape_texts(shape.shapes)
        elif shape.has_text_frame:
            # A bullet rarely ends with a full stop, so each paragraph is a block of its own.
            # has_text_frame and has_table say which subclass a shape is; python-pptx's types cannot say so
            frame = cast("Shape", shape).text_frame
            yield from (paragraph.text.replace("\v", "\n") for paragraph in frame.paragraphs)
        elif getattr(shape, "has_table", False):
            yield from (cell.text for row in cast("GraphicFrame", shape).table.rows for cell in row.cells)


class PptxReader:
    """PowerPoint slides, with the slide number as page; speaker notes count as the slide's text."""

    name = "pptx"
    isolate = True  # python-pptx parses with lxml, in C
    extensions = (".pptx",)

    def read(self, path: Path, limits: Limits) -> Document:
        """Each slide's text boxes and notes, a block each, with the slide number as the page."""
        import pptx

        with parser_errors("PPTX"):
            check_zip(path, limits, "PPTX")
            deck = pptx.Presentation(str(path))
            blocks: list[Block] = []
            title = ""
            for number, slide in enumerate(deck.slides, 1):
                if number == 1 and slide.shapes.title is not None:
                    title = slide.shapes.title.text_frame.text.strip()
                texts = list(_shape_texts(slide.shapes))
                if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                    texts.append(slide.notes_slide.notes_text_frame.text)
                blocks += (Block(text, number) for text in texts if text.strip())
            title = title or _meta_title(deck.core_properties.title)
        return Document(title=title or path.stem, blocks=tuple(blocks), kind=self.name)


_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_PARAGRAPHS = (f"{_TEXT}h", f"{_TEXT}p")
# What ODF writes as elements inside a paragraph's text: n spaces, a tab, a line break.
_WHITESPACE = {f"{_TEXT}tab": "\t", f"{_TEXT}line-break": "\n"}


def _odt_paragraphs(root: _Element) -> Iterator[tuple[bool, str]]:
    """(is heading, text) of each text:h and text:p in document order, inside lists, tables and frames too."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.tag in _PARAGRAPHS:
            yield node.tag == f"{_TEXT}h", "".join(_odt_text(node))
        else:
            stack.extend(reversed([child for child in node if isinstance(child.tag, str)]))


def _odt_text(node: _Element) -> Iterator[str]:
    """A paragraph's text: through spans and links, with text:s, text:tab and text:line-break as the spaces they
    stand for."""
    yield node.text or ""
    for child in node:
        if child.tag == f"{_TEXT}s":
            yield " " * int(child.get(f"{_TEXT}c", "1") or 1)
        elif isinstance(child.tag, str):
            yield _WHITESPACE.get(child.tag) or "".join(_odt_text(child))
        yield child.tail or ""


def _odt_xml(archive: zipfile.ZipFile, name: str) -> _Element | None:
    """One of the package's XML files parsed without entities or network (None where the package lacks it)."""
    from lxml import etree

    try:
        data = archive.read(name)
    except KeyError:
        return None
    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))


class OdtReader:
    """OpenDocument text (LibreOffice Writer)."""

    name = "odt"
    isolate = True  # lxml parses in C
    extensions = (".odt",)

    def read(self, path: Path, limits: Limits) -> Document:
        """Paragraphs and headings in document order; the title from the metadata or first heading."""
        with parser_errors("ODT"):
            check_zip(path, limits, "ODT")
            with zipfile.ZipFile(path) as archive:
                content, meta = _odt_xml(archive, "content.xml"), _odt_xml(archive, "meta.xml")
            body = None if content is None else content.find(f"{_OFFICE}body/{_OFFICE}text")
            if body is None:
                raise ValueError("no text body (content.xml)")
            paragraphs = [(heading, text) for heading, text in _odt_paragraphs(body) if text.strip()]
            titles = [] if meta is None else list(meta.iter(_DC_TITLE))
            title = _meta_title("".join(titles[0].itertext()) if titles else "") or next(
                (text for heading, text in paragraphs if heading), ""
            )
        return Document(
            title=title.strip() or path.stem,
            blocks=tuple(Block(text) for _, text in paragraphs),
            kind=self.name,
        )


register(DocxReader())
register(PptxReader())
register(OdtReader())
