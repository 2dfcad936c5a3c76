"""A web page's main text (issue 57, item 3): menus, sidebars, footers and link lists are no passages, a table's
rows keep their headers, code is one block (docs/decisions/0044-html-main-text.md).

The pages are ``tests/htmlpages.py``'s: the Python documentation as Sphinx writes it, with and without ARIA roles,
and a wiki article, with their chrome marked.
"""

from __future__ import annotations

from pathlib import Path

import htmlpages
import pytest

from engine import Index, IndexConfig
from engine.ingest import readers
from engine.ingest.extract import sentences_of
from engine.ingest.readers.base import Block, Document
from engine.ingest.readers.html import html_texts, markup_texts
from engine.text.sentences import MAX_SENTENCE_CHARS

SPHINX_CHROME = ("Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source", "Quick search",
                 "The Python Standard Library", "Created using Sphinx", "Python Software Foundation License",
                 "modules", "index", "Table of Contents")
WIKI_CHROME = ("Main page", "Random article", "Log in", "Contents", "Privacy policy", "Jump to content",
               "Categories", "Data structures", "Fibonacci heap", "Double-ended queue", "last edited")
# (query, the module whose page answers it)
QUERIES = (
    ("heapq priority queue", "heapq"), ("heap invariant push pop smallest item", "heapq"),
    ("insertion point sorted list", "bisect"), ("bisection algorithm long lists", "bisect"),
    ("count hashable objects", "collections"), ("namedtuple fields attribute lookup", "collections"),
    ("serialize object to JSON string", "json"), ("JavaScript object notation data interchange", "json"),
    ("iterator building blocks functional programming", "itertools"), ("consecutive keys groups", "itertools"),
    ("regular expression matching Perl", "re"), ("non-overlapping matches of pattern", "re"),
    ("least recently used cache decorator", "functools"), ("partial object positional arguments", "functools"),
    ("difference between two dates duration", "datetime"), ("time zone aware objects", "datetime"),
    ("lightweight disk-based database SQL", "sqlite3"), ("commit to save a transaction", "sqlite3"),
    ("filesystem paths operating systems", "pathlib"), ("glob pattern matching files in a directory", "pathlib"),
)


def sentences(path: Path) -> list[str]:
    return [s.text for s in sentences_of(readers.read(path))]


def chrome_sentences(markup: str, texts: list[str]) -> list[str]:
    chrome, content = htmlpages.chrome_text(markup), htmlpages.content_text(markup)
    return [text for text in texts if htmlpages.is_chrome(text, chrome, content)]


@pytest.mark.parametrize("roles", [True, False], ids=["sphinx7", "no-roles"])
def test_a_sphinx_pages_navigation_sidebar_and_footer_are_no_passages(tmp_path: Path, roles: bool) -> None:
    page = tmp_path / "heapq.html"
    markup = htmlpages.sphinx_page(1, roles)
    page.write_text(markup, encoding="utf-8")
    doc = readers.read(page)
    texts = sentences(page)
    assert doc.title == "heapq — Heap queue algorithm — Python 3.12.1 Documentation"  # the page's <title>
    assert chrome_sentences(markup, texts) == []
    joined = "\n".join(texts)
    for line in SPHINX_CHROME:
        assert line not in joined, line
    assert "bisect — Array bisection algorithm" not in joined  # the previous topic's link
    assert texts[0] == "heapq — Heap queue algorithm"  # the heading, without its permalink's "¶"
    assert "Pop and return the smallest item from the heap, maintaining the heap invariant." in texts


def test_a_wiki_articles_menus_navbox_and_footer_are_no_passages_and_its_infobox_stays(tmp_path: Path) -> None:
    page = tmp_path / "heap.html"
    markup = htmlpages.wiki_page()
    page.write_text(markup, encoding="utf-8")
    texts = sentences(page)
    # "From Wikipedia, the free encyclopedia" is the one line left: an unmarked <div> of no links (see 0044)
    assert chrome_sentences(markup, texts) == ["From Wikipedia, the free encyclopedia"]
    for line in WIKI_CHROME:
        assert not any(line in text for text in texts), line
    assert "Invented: 1964, by J. W. J. Williams" in texts  # an infobox row, named by its header cell
    assert "Binary heaps are a common way of implementing priority queues." in texts
    assert any("Communications of the ACM" in text for text in texts)  # references are the article's


def test_a_tables_rows_come_with_their_headers_and_its_header_row_is_no_passage(tmp_path: Path) -> None:
    page = tmp_path / "heapq.html"
    page.write_text(htmlpages.sphinx_page(1), encoding="utf-8")
    texts = sentences(page)
    assert "Operation: heappush; Cost: logarithmic time in the size of the heap" in texts
    assert not any(htmlpages.squeezed(text) == "operationcost" for text in texts)
    assert "Operation" not in texts and "Cost" not in texts
    # a table without header cells is a layout: its cells stay blocks of their own
    _, blocks = markup_texts("<table><tr><td>Left column</td><td>Right column</td></tr></table>")
    assert [b.text for b in blocks] == ["Left column", "Right column"]
    _, blocks = markup_texts("<table><caption>Sizes</caption><tr><th>Size</th><th colspan='2'>Price</th></tr>"
                             "<tr><td>Small</td><td>3 euros</td><td>each</td></tr></table>")
    assert [b.text for b in blocks] == ["Sizes", "Size: Small; Price: 3 euros; Price: each"]


def test_a_code_block_is_one_sentence_not_a_sentence_per_line(tmp_path: Path) -> None:
    page = tmp_path / "heapq.html"
    page.write_text(htmlpages.sphinx_page(1), encoding="utf-8")
    code = [text for text in sentences(page) if "import heapq" in text]
    assert code == [" ".join(htmlpages.MODULES[1].code.split())]
    assert [b.verbatim for b in markup_texts("<p>Run:</p><pre>a = 1\nB = 2</pre>")[1]] == [False, True]
    # a listing longer than a sentence may be is cut at its line ends
    lines = [f"Value{n} = compute({n})" for n in range(60)]
    doc = Document("", (Block("Intro line."), Block("\n".join(lines), verbatim=True), Block("After.")), "html")
    pieces = [s.text for s in sentences_of(doc)]
    assert pieces[0] == "Intro line." and pieces[-1] == "After."
    assert all(len(piece) <= MAX_SENTENCE_CHARS for piece in pieces) and len(pieces) < 10
    assert " ".join(pieces[1:-1]) == " ".join(lines)
    assert all(piece.endswith(")") for piece in pieces[1:-1])  # whole lines only


def test_pages_that_are_all_links_and_e_book_chapters_keep_their_text() -> None:
    index = "<html><body><div role='main'><h1>Index</h1><ul>" + "".join(
        f"<li><a href='p{n}.html'>Topic number {n}</a></li>" for n in range(20)) + "</ul></div></body></html>"
    assert "Topic number 7" in [b.text for b in markup_texts(index)[1]]
    chapter = (b"<html><body><p>The ship sailed at dawn.<a href='#n1'>1</a></p><aside epub:type='footnote' "
               b"id='n1'><p>Dawn on the fourth of May.</p></aside><nav><ol><li>Chapter 1</li></ol></nav></body></html>")
    assert [b.text for b in html_texts(chapter, whole=True)[1]] == ["The ship sailed at dawn.1",
                                                                      "Dawn on the fourth of May."]


def test_twenty_queries_on_python_docs_never_show_navigation_or_a_table_header(tmp_path: Path) -> None:
    # the done-when: no navigation or table-header line is the passage shown for 20 queries
    docs = tmp_path / "library"
    pages = htmlpages.python_docs(docs)
    markup = {path.stem: path.read_text(encoding="utf-8") for path in pages}
    headers = {htmlpages.squeezed("".join(module.table[0])) for module in htmlpages.MODULES}
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        assert idx.add([docs]).documents == len(pages)
        for query, module in QUERIES:
            response = idx.search(query, k=3, include_weak=True, explain=False)
            assert response.results, query
            for result in response.results:
                page = markup[Path(result.path).stem]
                assert chrome_sentences(page, [result.sentence]) == [], (query, result.sentence)
                assert htmlpages.squeezed(result.sentence) not in headers, (query, result.sentence)
            assert Path(response.results[0].path).stem == module, (query, [r.path for r in response.results])
