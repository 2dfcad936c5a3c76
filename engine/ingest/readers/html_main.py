"""A web page's main text: its menus, banners, footers, sidebars and link lists taken out before it is read.

Three steps, readability-style (docs/decisions/0044-html-main-text.md):

1. Chrome: <nav>, <aside>, <menu>, the page's own <header> and <footer> (not an article's), elements whose ARIA role
   is navigation, banner, contentinfo, complementary or search, elements whose class or id names a sidebar, a
   breadcrumb trail, a footer or a table of contents, and "skip to content" links.
2. The main element (<main>, role=main, else a page's one <article>) alone is read where it holds a good share of
   what is left: what is around it (a Sphinx page's "Previous topic", a wiki's tools) is the site's, not the page's.
3. Link lists: a list, table, paragraph or division whose text is mostly link text is a menu, a navigation box or a
   "see also" list of other pages' titles.

Each step is skipped where it would leave (nearly) nothing: a site map that is all menu keeps its menu. Every walk
is iterative, as the reader's own: hostile pages nest deeper than Python's call stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

# Elements that are chrome wherever they are; and those that are only where they are the page's, not an article's.
_CHROME_TAGS = frozenset({"nav", "aside", "menu"})
_PAGE_TAGS = frozenset({"header", "footer"})
_SECTIONS = frozenset({"article", "main"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"})
# Class or id words that name chrome: inside a word ("sphinxsidebar", "mw-footer"), or as a whole word where a short
# one would be found inside others ("nav" in "canvas", "toc" in "stock").
_CHROME_PARTS = ("sidebar", "breadcrumb", "navbar", "navbox", "navigation", "footer", "pagination", "skiplink",
                 "cookie", "catlinks")
_CHROME_WORDS = frozenset({"nav", "menu", "toc", "related", "share", "social", "skip", "pager", "printfooter"})
_WORD = re.compile(r"[a-z0-9]+")
# A "skip to content" link's text.
_SKIP = re.compile(r"\s*skip\b", re.IGNORECASE)
# A permalink's whole text, as Sphinx and wikis put one after every heading ("Functions¶").
_PERMALINKS = frozenset("¶#§")
# A class or id match is weaker evidence than a tag or a role: it is not trusted over more than this share of the
# page's text (a page wrapped whole in <div class="with-sidebar">).
_WORDS_MAX_SHARE = 0.5
# The main element is read alone when it holds at least this share of the text left after step 1; below that it is
# a misplaced tag (a <main> around the page's first paragraph only).
MAIN_SHARE = 0.3
# Link text over this share of a block's text makes it a link list (measured: bench/html_main_text.py, 0044).
LINK_DENSITY = 0.5
# Blocks the link-density test judges: those that hold lists of links on real pages.
_LINK_BLOCKS = frozenset({"ul", "ol", "dl", "table", "div", "section", "p", "form", "center"})
# A step that would leave less than this share of the text it started from is skipped: the page is its links (an
# index, a table of contents, a site map).
KEEP_SHARE = 0.1
_SPACE = re.compile(r"\s+")


def _measure(root: Tag) -> dict[int, tuple[int, int]]:
    """Characters (whitespace not counted) and characters of link text under each element, by ``id()``, in one
    pass from the leaves up."""
    from bs4 import NavigableString, Tag
    from bs4.element import PreformattedString

    tags = [root, *root.find_all(True)]  # document order: an element before everything inside it
    sizes: dict[int, tuple[int, int]] = {}
    for tag in reversed(tags):
        chars = links = 0
        for child in tag.contents:
            if isinstance(child, Tag):
                c, lk = sizes.get(id(child), (0, 0))
                chars, links = chars + c, links + lk
            elif isinstance(child, NavigableString) and not isinstance(child, PreformattedString):
                chars += len(_SPACE.sub("", child))
        sizes[id(tag)] = (chars, chars if tag.name == "a" else links)
    return sizes


def _pruned(root: Tag, stop: Callable[[Tag, bool], bool]) -> Iterator[Tag]:
    """The elements under ``root`` for which ``stop(tag, in_section)`` holds, none inside another: the walk does
    not go into them. ``in_section``: the element is inside an <article> or <main>."""
    from bs4 import Tag

    stack: list[tuple[Tag, bool]] = [(child, False) for child in reversed(root.contents) if isinstance(child, Tag)]
    while stack:
        tag, inside = stack.pop()
        if stop(tag, inside):
            yield tag
            continue
        inside = inside or tag.name in _SECTIONS or tag.get("role") == "main"
        stack.extend((child, inside) for child in reversed(tag.contents) if isinstance(child, Tag))


def _names(tag: Tag) -> str:
    """The element's classes and id, lower case."""
    return " ".join([*(str(name) for name in tag.get_attribute_list("class") if name), str(tag.get("id") or "")]).lower()


def _is_chrome(tag: Tag, inside: bool, total: int, sizes: dict[int, tuple[int, int]]) -> bool:
    """Step 1's test of one element (``inside``: it is inside an article or the main element)."""
    name = tag.name
    if name in _CHROME_TAGS or (name in _PAGE_TAGS and not inside):
        return True
    role = str(tag.get("role") or "").lower()
    if role in _CHROME_ROLES:
        return True
    if name == "a":
        text = tag.get_text()
        return str(tag.get("href") or "").startswith("#") and (_SKIP.match(text) is not None
                                                                 or text.strip() in _PERMALINKS)
    names = _names(tag)
    if not names.strip() or not (_CHROME_WORDS.intersection(_WORD.findall(names))
                                 or any(part in names for part in _CHROME_PARTS)):
        return False
    return sizes.get(id(tag), (0, 0))[0] <= _WORDS_MAX_SHARE * total


def _kept(root: Tag, dropped: list[Tag], sizes: dict[int, tuple[int, int]]) -> int:
    return sizes[id(root)][0] - sum(sizes.get(id(tag), (0, 0))[0] for tag in dropped)


def _drop(root: Tag, dropped: list[Tag], sizes: dict[int, tuple[int, int]], least: int) -> bool:
    """Take ``dropped`` out of the page unless that leaves no more than ``least`` characters under ``root``."""
    if not dropped or _kept(root, dropped, sizes) <= least:
        return False
    for tag in dropped:
        tag.decompose()
    return True


def _main_element(body: Tag) -> Tag | None:
    """The page's <main> or role=main element, else its one outermost <article>; the largest where there are more."""
    mains: list[Tag] = list(body.find_all(lambda tag: tag.name == "main" or tag.get("role") == "main"))
    if not mains:
        articles = list(_pruned(body, lambda tag, _inside: tag.name == "article"))
        mains = articles if len(articles) == 1 else []
    if not mains:
        return None
    return max(mains, key=lambda tag: len(_SPACE.sub("", tag.get_text())))


def main_text(soup: BeautifulSoup) -> Tag:
    """Take a page's chrome and link lists out of ``soup`` (its <head> already gone); the element whose text is
    the page's: its main element, or the body."""
    body = soup.body or soup
    keep: set[int] = set()
    main = _main_element(body)
    if main is not None:
        keep = {id(main), *(id(parent) for parent in main.parents)}  # never chrome around the main text
    sizes = _measure(body)
    total = sizes[id(body)][0]
    chrome = list(_pruned(body, lambda tag, inside: id(tag) not in keep and _is_chrome(tag, inside, total, sizes)))
    _drop(body, chrome, sizes, 0)
    root = body
    if main is not None and main.parent is not None:  # still in the page
        sizes = _measure(body)
        if sizes[id(main)][0] >= MAIN_SHARE * sizes[id(body)][0]:
            root = main
    sizes = _measure(root)
    lists = list(_pruned(root, lambda tag, _inside: tag.name in _LINK_BLOCKS and _linked(tag, sizes)))
    _drop(root, lists, sizes, int(KEEP_SHARE * sizes[id(root)][0]))
    return root


def _linked(tag: Tag, sizes: dict[int, tuple[int, int]]) -> bool:
    chars, links = sizes.get(id(tag), (0, 0))
    return links > LINK_DENSITY * chars


def nav_and_footer_out(soup: BeautifulSoup) -> None:
    """Take out a document's <nav> and <footer> where it holds more: all the rest of :func:`main_text` spares an
    e-book's chapter (its <aside>s are footnotes, its link lists notes and indexes) and an e-mail's body (a line
    that is mostly a link, "The draft: <a>https://...</a>", is what a message says)."""
    body = soup.body or soup
    sizes = _measure(body)
    _drop(body, list(_pruned(body, lambda tag, _inside: tag.name in ("nav", "footer"))), sizes, 0)
