"""How much of what the HTML reader makes of web pages is boilerplate (issue 57, item 3), before and after it reads
a page's main text only (docs/decisions/0044-html-main-text.md).

Pages: the generated ones of ``tests/htmlpages.py`` (the Python documentation as Sphinx 7 writes it and as a theme
without ARIA roles does, wiki articles), whose navigation, sidebar and footer regions are marked as they are made,
and real documentation installed on this machine where it is there (Node.js's API reference, libffi's Texinfo
manual, Valgrind's DocBook manual), whose chrome is marked here by the CSS selectors of its generator's layout.
A sentence (what a result shows) is boilerplate when its text is a marked region's and not the rest's
(``htmlpages.is_chrome``). Recall: the share of the unmarked text's characters still found in the sentences.

"Before" is the reader at BASE, read from git; "after" is this checkout's, at each link density threshold of
THRESHOLDS (``html_main.LINK_DENSITY``). Prints a table and writes bench/results/html_main_text.json.

    python bench/html_main_text.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import htmlpages  # noqa: E402  (the test suite's page generators)

from engine.eval.report import stamp  # noqa: E402
from engine.ingest.extract import sentences_of  # noqa: E402
from engine.ingest.readers import html, html_main  # noqa: E402
from engine.ingest.readers.base import Block, Document  # noqa: E402

RESULTS = REPO / "bench" / "results" / "html_main_text.json"
BASE = "f865f90"  # main before this change: its reader kept everything but <nav> and <footer>
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
PAGES_PER_SITE = 12
# Real pages larger than this are left out: Node.js's all.html (the whole reference, 5 MB) would take minutes of the
# substring tests below, and says nothing the module pages do not.
MAX_PAGE_BYTES = 200_000
# Real documentation: (name, folder, file pattern, selectors of its chrome).
REAL = (
    ("nodejs-api", Path("/usr/share/doc/nodejs/api"), "*.html",
     ("a.skip-to-content", "#column2", "#column1 > header", "#column1 > :not(#apicontent)")),
    ("libffi-texinfo", Path("/usr/share/doc/libffi8/html"), "*.html", ("div.header", "div.contents")),
    ("valgrind-docbook", Path("/usr/share/doc/valgrind/html"), "*.html", ("table.nav", "div.toc")),
)
Reader = Callable[[str], list[Block]]


def before_reader() -> Reader | None:
    """The reader's markup_texts at BASE, as a function of markup to blocks; None without git."""
    try:
        source = subprocess.run(["git", "show", f"{BASE}:engine/ingest/readers/html.py"], cwd=REPO, check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("html_before")
    exec(compile(source.replace("register(HtmlReader())", ""), "html_before.py", "exec"), module.__dict__)
    return lambda markup: [Block(text) for text in module.markup_texts(markup)[1]]


def after_reader(markup: str) -> list[Block]:
    return html.markup_texts(markup)[1]


def marked(markup: str, selectors: tuple[str, ...]) -> str:
    """``markup`` with the elements ``selectors`` match marked as chrome."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "lxml")
    for selector in selectors:
        for tag in soup.select(selector):
            tag["data-chrome"] = "1"
    return str(soup)


def sites() -> Iterator[tuple[str, list[str]]]:
    """(site, its pages' markup, chrome marked), generated and real."""
    count = len(htmlpages.MODULES)
    yield "python-docs (Sphinx 7)", [htmlpages.sphinx_page(i) for i in range(count)]
    yield "python-docs (no roles)", [htmlpages.sphinx_page(i, roles=False) for i in range(count)]
    yield "wiki", [htmlpages.wiki_page(title) for title in ("Binary heap", "Heap", "Priority queue")]
    for name, folder, pattern, selectors in REAL:
        paths = [p for p in sorted(folder.glob(pattern)) if p.stat().st_size <= MAX_PAGE_BYTES][:PAGES_PER_SITE]
        if paths:
            yield name, [marked(p.read_text(encoding="utf-8", errors="replace"), selectors) for p in paths]


def measure(pages: list[str], read: Reader) -> dict:
    """Sentences, boilerplate sentences and content recall over ``pages`` read by ``read``."""
    sentences = chrome = found = total = 0
    for markup in pages:
        chrome_text, content_text = htmlpages.chrome_text(markup), htmlpages.content_text(markup)
        texts = [s.text for s in sentences_of(Document("", tuple(read(markup)), "html"))]
        sentences += len(texts)
        chrome += sum(htmlpages.is_chrome(text, chrome_text, content_text) for text in texts)
        extracted = "".join(htmlpages.squeezed(text) for text in texts)
        at = 0
        for node in htmlpages.content_nodes(markup):  # in page order, as the sentences are
            total += len(node)
            where = extracted.find(node, at)
            if where >= 0:
                found += len(node)
                at = where + len(node)
            elif node in extracted:  # out of order: a table's header cell, named again in every row
                found += len(node)
    return {"sentences": sentences, "boilerplate": chrome, "share": chrome / max(sentences, 1),
            "recall": found / max(total, 1)}


def main() -> None:
    """Measure every site before and at each threshold; print the table, write the JSON."""
    before = before_reader()
    rows = []
    chosen = html_main.LINK_DENSITY
    for site, pages in sites():
        row: dict = {"site": site, "pages": len(pages)}
        if before is not None:
            row["before"] = measure(pages, before)
        for threshold in THRESHOLDS:
            html_main.LINK_DENSITY = threshold
            row[f"after@{threshold}"] = measure(pages, after_reader)
        html_main.LINK_DENSITY = chosen
        rows.append(row)
    header = f"{'site':<24} {'pages':>5} {'before':>16} " + " ".join(f"{'@' + str(t):>16}" for t in THRESHOLDS)
    print("boilerplate share of sentences / content recall, before and after at each link density threshold")
    print(header)
    for row in rows:
        cells = [row.get("before")] + [row[f"after@{t}"] for t in THRESHOLDS]
        shown = " ".join(f"{c['share']:6.1%} / {c['recall']:6.1%}" if c else f"{'-':>16}" for c in cells)
        print(f"{row['site']:<24} {row['pages']:>5} {shown}")
    RESULTS.write_text(json.dumps({**stamp(REPO), "base": BASE, "chosen_threshold": chosen, "sites": rows},
                                  indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
