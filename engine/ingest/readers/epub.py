"""EPUB e-books: the chapters in spine (reading) order, each read like a web page."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors
from engine.ingest.readers.html import html_texts
from engine.ingest.readers.zipguard import check_zip


class EpubReader:
    """EPUB 2 and 3; the navigation document (a table of contents) is left out, it only repeats headings."""

    name = "epub"
    isolate = True  # ebooklib parses with lxml, in C
    extensions = (".epub",)

    def read(self, path: Path, limits: Limits) -> Document:
        """The book's chapters in spine order, a block per paragraph; its title from the metadata."""
        # imported on first use, like every reader's parser (docs/decisions/0008-reader-pool-sizes.md)
        import ebooklib
        from ebooklib import epub

        with parser_errors("EPUB"):
            check_zip(path, limits, "EPUB")
            # The NCX is EPUB 2's table of contents, which we do not need; reading it only adds failure modes.
            book = epub.read_epub(str(path), options={"ignore_ncx": True})
            blocks: list[Block] = []
            for idref, _linear in book.spine:
                item = book.get_item_with_id(idref)
                if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
                    continue
                blocks += html_texts(item.get_content(), whole=True)[1]
            titles = book.get_metadata("DC", "title")
        title = str(titles[0][0]).strip() if titles else ""
        return Document(title=title or path.stem, blocks=tuple(blocks), kind=self.name)


register(EpubReader())
