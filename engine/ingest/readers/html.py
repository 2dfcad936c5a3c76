"""HTML pages, and the XHTML extraction that EPUB chapters share.

Every block-level element becomes its own block, so that a sentence never runs from a heading into the paragraph
below it or from one table cell into the next; text directly inside a block (a div with loose text) is a block
too. Scripts, styles and everything in <head> but the title are dropped. A web page is read for its main text
(``html_main``: no menus, sidebars, footers or link lists); a data table row by row, each row naming its cells by
their headers (``html_tables``); code (<pre>) as one verbatim block (docs/decisions/0044-html-main-text.md).

BeautifulSoup is imported when the first page is read: a process that reads none does not pay for it
(docs/decisions/0008-reader-pool-sizes.md).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from engine.ingest.readers.base import Block, Document, Limits, register
from engine.ingest.readers.guard import parser_errors
from engine.ingest.readers.html_main import main_text, nav_and_footer_out
from engine.ingest.readers.html_tables import table_rows
from engine.ingest.readers.text import decode

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

_BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset figcaption"
    " figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu nav ol p section summary table"
    " tbody td tfoot th thead tr ul".split()
)
_DROPPED_TAGS = ("script", "style", "noscript", "template", "svg")
# What sets a site's name off from a page's own title ("Post | Site", "Site - Post", "Site » Post").
_TITLE_SEPARATORS = frozenset("|-–—·:»/")
_SPACE = re.compile(r"\s+")


def _soup(markup: str) -> BeautifulSoup:
    from bs4 import BeautifulSoup, FeatureNotFound, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():
        # XHTML (EPUB chapters) goes through the HTML parser on purpose: it forgives what an XML parser rejects.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        try:
            return BeautifulSoup(markup, "lxml")
        except FeatureNotFound:  # lxml is optional: the standard library's parser is slower but enough
            return BeautifulSoup(markup, "html.parser")


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class _Blocks:
    """Collects the text between block boundaries; <br> starts a new line within the block."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._lines: list[list[str]] = [[]]

    def add(self, text: str) -> None:
        self._lines[-1].append(text)

    def line_break(self) -> None:
        self._lines.append([])

    def end(self) -> None:
        text = "\n".join(line for line in (_clean("".join(parts)) for parts in self._lines) if line)
        if text:
            self.blocks.append(Block(text))
        self._lines = [[]]

    def verbatim(self, text: str) -> None:
        """Code, whose whitespace is the point: kept as it is, one block (not a sentence per short line)."""
        self.end()
        text = text.strip("\n")
        if text.strip():
            self.blocks.append(Block(text, verbatim=True))


# Pushed on the walk's stack after a block element's children, to close that block.
_END_OF_BLOCK = object()


def _code_block(tag: Tag) -> bool:
    """A <code> of lines with nothing beside it in its parent: a listing written without <pre>."""
    if tag.name != "code" or "\n" not in tag.get_text().strip() or tag.parent is None:
        return False
    return all(sibling is tag or not str(sibling).strip() for sibling in tag.parent.contents)


def _cell_text(cell: Tag) -> str:
    return _clean(" ".join(block.text for block in _walk(cell)))


def _walk(root: Tag) -> list[Block]:
    # An explicit stack rather than recursion: hostile or generated pages nest deeper than Python's call stack.
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    out = _Blocks()
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        if node is _END_OF_BLOCK:
            out.end()
        elif isinstance(node, NavigableString):
            if not isinstance(node, PreformattedString):  # comments, doctypes, processing instructions
                out.add(str(node))
        elif isinstance(node, Tag):
            if node.name == "br":
                out.line_break()
            elif node.name == "pre" or _code_block(node):
                out.verbatim(node.get_text())
            elif node.name == "table" and (rows := table_rows(node, _cell_text)) is not None:
                out.end()
                out.blocks += (Block(row) for row in rows)
            else:
                if node.name in _BLOCK_TAGS:
                    out.end()
                    stack.append(_END_OF_BLOCK)
                stack.extend(reversed(node.contents))
    out.end()
    return out.blocks


def _title(soup: BeautifulSoup) -> str:
    """The page's <title>, or its first <h1> where the title is that heading and the site's name beside it: a saved
    blog post's "Why my sourdough finally has an ear | Crumb & Crust - a home baking blog" is titled by its heading
    ("Welcome" does not title "Welcome to Bob's Plumbing")."""
    title, heading = (_clean(tag.get_text()) if (tag := soup.find(name)) else "" for name in ("title", "h1"))
    if not title:
        return heading
    rest = title.replace(heading, "", 1).strip() if heading else ""
    return heading if rest and (rest[0] in _TITLE_SEPARATORS or rest[-1] in _TITLE_SEPARATORS) else title


def html_texts(data: bytes, whole: bool = False) -> tuple[str, list[Block]]:
    """The title ("" if the page has none) and the blocks of an HTML or XHTML document: a web page's main text, or
    with ``whole`` all of it but its <nav> and <footer> (an e-book's chapter, an e-mail's body:
    :func:`html_main.nav_and_footer_out`)."""
    from bs4.dammit import EncodingDetector

    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    return markup_texts(decode(data, declared), whole)


def markup_texts(markup: str, whole: bool = False) -> tuple[str, list[Block]]:
    """:func:`html_texts` of markup already decoded (an e-mail's HTML body, decoded by its MIME charset)."""
    soup = _soup(markup)
    for tag in soup.find_all(_DROPPED_TAGS):
        tag.decompose()
    title = _title(soup)
    if soup.head:
        soup.head.decompose()
    if whole:
        nav_and_footer_out(soup)
        return title, _walk(soup)
    return title, _walk(main_text(soup))


class HtmlReader:
    """Web pages saved to disk."""

    name = "html"
    # lxml and BeautifulSoup: nested tags grow their time and memory without bound
    # (docs/decisions/0008-reader-pool-sizes.md)
    isolate = True
    extensions = (".html", ".htm", ".xhtml", ".shtml")

    def read(self, path: Path, limits: Limits) -> Document:
        """The page's visible text, a block per paragraph or cell; its <title> or first heading."""
        with parser_errors("HTML"):
            title, texts = html_texts(path.read_bytes())
        return Document(title=title or path.stem, blocks=tuple(texts), kind=self.name)


register(HtmlReader())
