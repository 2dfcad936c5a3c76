"""Web pages as documentation sites and wikis lay them out, with their chrome marked (issue 57, item 3).

A Sphinx page as the Python documentation writes it (a related bar above and below, a sidebar with the table of
contents, "Previous topic" / "Next topic" and "This Page", a search box, a footer), the same page as an older
theme writes it (no ARIA roles), and a wiki article (personal tools, a side panel, a table of contents, an
infobox, references, a navigation box, categories, a footer). Every region a person would call navigation,
sidebar or footer carries ``data-chrome``, which no reader looks at: :func:`chrome_text` and :func:`content_text`
tell the two apart for tests and for ``bench/html_main_text.py``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

CHROME = ' data-chrome="1"'


@dataclass(frozen=True)
class Module:
    """One page of a Python-documentation-like site: a module's reference."""

    name: str
    summary: str
    paragraphs: tuple[str, ...]
    functions: tuple[tuple[str, str], ...]
    code: str
    table: tuple[tuple[str, ...], ...]  # the header row, then the body rows


MODULES = (
    Module("bisect", "Array bisection algorithm", (
        "This module provides support for maintaining a list in sorted order without having to sort the list after "
        "each insertion. For long lists of items with expensive comparison operations, this can be an improvement "
        "over linear searches or frequent resorting.",
        "The module is called bisect because it uses a basic bisection algorithm to do its work. Unlike other "
        "bisection tools that search for a specific value, the functions in this module are designed to locate an "
        "insertion point.",
    ), (
        ("bisect_left(a, x, lo=0, hi=len(a), *, key=None)",
         "Locate the insertion point for x in a to maintain sorted order. If x is already present in a, the "
         "insertion point will be before any existing entries."),
        ("insort_left(a, x, lo=0, hi=len(a), *, key=None)",
         "Insert x in a in sorted order. Keep in mind that the search is logarithmic but the insertion step is "
         "linear."),
    ), "import bisect\nscores = [33, 99, 77, 70, 89, 90, 100]\nbisect.insort(scores, 85)\nprint(scores)",
        (("Function", "Finds"), ("bisect_left", "the leftmost insertion point for a value"),
         ("bisect_right", "the insertion point after any equal entries"))),
    Module("heapq", "Heap queue algorithm", (
        "This module provides an implementation of the heap queue algorithm, also known as the priority queue "
        "algorithm. Heaps are binary trees for which every parent node has a value less than or equal to any of "
        "its children.",
        "A priority queue is common use for a heap, and it presents several implementation challenges such as "
        "sort stability and changing the priority of an existing task.",
    ), (
        ("heappush(heap, item)", "Push the value item onto the heap, maintaining the heap invariant."),
        ("heappop(heap)", "Pop and return the smallest item from the heap, maintaining the heap invariant."),
    ), "import heapq\nheap = []\nheapq.heappush(heap, (5, 'write code'))\nheapq.heappush(heap, (7, 'release'))\n"
       "Task = heapq.heappop(heap)",
        (("Operation", "Cost"), ("heappush", "logarithmic time in the size of the heap"),
         ("heapify", "linear time to transform a list into a heap in place"))),
    Module("collections", "Container datatypes", (
        "This module implements specialized container datatypes providing alternatives to the general purpose "
        "built-in containers, dict, list, set, and tuple.",
        "A Counter is a dict subclass for counting hashable objects. Elements are stored as dictionary keys and "
        "their counts are stored as dictionary values.",
    ), (
        ("namedtuple(typename, field_names)", "Returns a new tuple subclass named typename with fields accessible "
         "by attribute lookup as well as being indexable and iterable."),
        ("deque(iterable, maxlen)", "Returns a new deque object initialized left-to-right with data from "
         "iterable, supporting thread-safe appends and pops from either side."),
    ), "from collections import Counter\nWords = ['red', 'blue', 'red']\nCounter(Words).most_common(1)",
        (("Type", "Purpose"), ("deque", "list-like container with fast appends and pops on either end"),
         ("OrderedDict", "dict subclass that remembers the order entries were added"))),
    Module("json", "JSON encoder and decoder", (
        "JSON, the JavaScript Object Notation, is a lightweight data interchange format inspired by JavaScript "
        "object literal syntax.",
        "Serializing a Python object to a JSON formatted string uses a conversion table, and decoding a document "
        "parses it back into dictionaries, lists, strings and numbers.",
    ), (
        ("dumps(obj, *, indent=None, sort_keys=False)", "Serialize obj to a JSON formatted str using this "
         "conversion table."),
        ("loads(s)", "Deserialize s, a str or bytes instance containing a JSON document, to a Python object."),
    ), "import json\nData = json.loads('{\"a\": [1, 2]}')\nText = json.dumps(Data, indent=2)",
        (("JSON", "Python"), ("object", "dict"), ("array", "list"), ("number (real)", "float"))),
    Module("itertools", "Functions creating iterators for efficient looping", (
        "This module implements a number of iterator building blocks inspired by constructs from functional "
        "programming languages, each recast in a form suitable for Python.",
        "The module standardizes a core set of fast, memory efficient tools that are useful by themselves or in "
        "combination, forming an iterator algebra.",
    ), (
        ("chain(*iterables)", "Make an iterator that returns elements from the first iterable until it is "
         "exhausted, then proceeds to the next iterable."),
        ("groupby(iterable, key=None)", "Make an iterator that returns consecutive keys and groups from the "
         "iterable."),
    ), "from itertools import groupby\nfor Key, Group in groupby('AAAABBBCCD'):\n    print(Key, list(Group))",
        (("Iterator", "Arguments"), ("count", "start, step"), ("cycle", "an iterable to repeat endlessly"))),
    Module("re", "Regular expression operations", (
        "This module provides regular expression matching operations similar to those found in Perl. Both "
        "patterns and strings to be searched can be Unicode strings as well as 8-bit strings.",
        "Regular expressions use the backslash character to indicate special forms or to allow special "
        "characters to be used without invoking their special meaning.",
    ), (
        ("compile(pattern, flags=0)", "Compile a regular expression pattern into a regular expression object, "
         "which can be used for matching."),
        ("findall(pattern, string, flags=0)", "Return all non-overlapping matches of pattern in string, as a list "
         "of strings or tuples."),
    ), "import re\nPattern = re.compile(r'\\d+')\nNumbers = Pattern.findall('12 drummers, 11 pipers')",
        (("Flag", "Meaning"), ("IGNORECASE", "perform case-insensitive matching"),
         ("MULTILINE", "caret and dollar match at the beginning and end of each line"))),
    Module("functools", "Higher-order functions and operations on callable objects", (
        "The functools module is for higher-order functions: functions that act on or return other functions.",
        "A least recently used cache saves time when an expensive or input output bound function is periodically "
        "called with the same arguments.",
    ), (
        ("lru_cache(maxsize=128)", "Decorator to wrap a function with a memoizing callable that saves up to the "
         "maxsize most recent calls."),
        ("partial(func, *args, **keywords)", "Return a new partial object which when called will behave like "
         "func called with the positional arguments args."),
    ), "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef Fib(n):\n    return n if n < 2 else "
       "Fib(n - 1) + Fib(n - 2)",
        (("Tool", "Use"), ("reduce", "apply a function of two arguments cumulatively to a sequence"),
         ("wraps", "update a wrapper function to look like the wrapped function"))),
    Module("datetime", "Basic date and time types", (
        "The datetime module supplies classes for manipulating dates and times. While date and time arithmetic "
        "is supported, the focus of the implementation is on efficient attribute extraction.",
        "Aware objects carry time zone information, so that they can locate themselves relative to other aware "
        "objects, while naive objects do not.",
    ), (
        ("timedelta(days=0, seconds=0)", "A duration expressing the difference between two datetime or date "
         "instances to microsecond resolution."),
        ("strftime(format)", "Return a string representing the date and time, controlled by an explicit format "
         "string."),
    ), "from datetime import datetime, timedelta\nNow = datetime.now()\nTomorrow = Now + timedelta(days=1)",
        (("Directive", "Meaning"), ("%Y", "year with century as a decimal number"),
         ("%m", "month as a zero-padded decimal number"))),
    Module("sqlite3", "DB-API 2.0 interface for SQLite databases", (
        "SQLite is a C library that provides a lightweight disk-based database that does not require a separate "
        "server process and allows accessing the database using a nonstandard variant of SQL.",
        "A connection object represents the on-disk database; call its cursor method to execute statements and "
        "commit to save a transaction.",
    ), (
        ("connect(database, timeout=5.0)", "Open a connection to an SQLite database file."),
        ("Cursor.executemany(sql, parameters)", "For every item in parameters, repeatedly execute the "
         "parameterized SQL statement."),
    ), "import sqlite3\nCon = sqlite3.connect('tutorial.db')\nCur = Con.cursor()\nCur.execute('CREATE TABLE "
       "movie(title, year)')",
        (("SQLite type", "Python type"), ("INTEGER", "int"), ("TEXT", "str"), ("BLOB", "bytes"))),
    Module("pathlib", "Object-oriented filesystem paths", (
        "This module offers classes representing filesystem paths with semantics appropriate for different "
        "operating systems.",
        "Path classes are divided between pure paths, which provide purely computational operations without "
        "input output, and concrete paths, which inherit from pure paths but also provide input output operations.",
    ), (
        ("Path.glob(pattern)", "Glob the given relative pattern in the directory represented by this path, "
         "yielding all matching files."),
        ("Path.read_text(encoding=None)", "Return the decoded contents of the pointed-to file as a string."),
    ), "from pathlib import Path\nHere = Path('.')\nSources = sorted(Here.glob('**/*.py'))",
        (("os and os.path", "pathlib"), ("os.path.exists", "Path.exists"), ("os.listdir", "Path.iterdir"))),
)
DOCS = "3.12.1 Documentation"
FOOTER = (
    "© Copyright 2001-2024, Python Software Foundation.", "This page is licensed under the Python Software "
    "Foundation License Version 2.", "Examples, recipes, and other code in the documentation are additionally "
    "licensed under the Zero Clause BSD License.", "See History and License for more information.",
    "The Python Software Foundation is a non-profit corporation. Please donate.",
    "Last updated on Dec 07, 2026 (16:00 UTC).", "Found a bug?", "Created using Sphinx 7.2.6.",
)


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _title(module: Module) -> str:
    return f"{module.name} — {module.summary}"


def _related(module: Module, before: Module, after: Module, roles: bool) -> str:
    role = ' role="navigation" aria-label="Related"' if roles else ""
    return (
        f'<div class="related"{role}{CHROME}><h3>Navigation</h3><ul>'
        '<li class="right"><a href="../genindex.html" title="General Index">index</a></li>'
        '<li class="right"><a href="../py-modindex.html" title="Python Module Index">modules</a> |</li>'
        f'<li class="right"><a href="{after.name}.html" title="{_e(_title(after))}">next</a> |</li>'
        f'<li class="right"><a href="{before.name}.html" title="{_e(_title(before))}">previous</a> |</li>'
        '<li><a href="https://www.python.org/">Python</a> &#187;</li>'
        f'<li><a href="../index.html">{DOCS}</a> &#187;</li>'
        '<li class="nav-item"><a href="index.html">The Python Standard Library</a> &#187;</li>'
        '<li class="nav-item"><a href="datatypes.html">Data Types</a> &#187;</li>'
        f'<li class="nav-item nav-item-this"><a href="">{_e(_title(module))}</a></li></ul></div>'
    )


def _sidebar(module: Module, before: Module, after: Module, roles: bool) -> str:
    role = ' role="navigation" aria-label="main navigation"' if roles else ""
    search = ' role="search"' if roles else ""
    return (
        f'<div class="sphinxsidebar"{role}{CHROME}><div class="sphinxsidebarwrapper">'
        f'<h3><a href="../contents.html">Table of Contents</a></h3><ul><li><a href="#">{_e(_title(module))}</a><ul>'
        f'<li><a href="#functions">Functions</a></li><li><a href="#examples">Examples</a></li></ul></li></ul>'
        f'<h4>Previous topic</h4><p class="topless"><a href="{before.name}.html">{_e(_title(before))}</a></p>'
        f'<h4>Next topic</h4><p class="topless"><a href="{after.name}.html">{_e(_title(after))}</a></p>'
        '<div role="note" aria-label="source link"><h3>This Page</h3><ul class="this-page-menu">'
        '<li><a href="../bugs.html">Report a Bug</a></li>'
        f'<li><a href="../_sources/library/{module.name}.rst.txt" rel="nofollow">Show Source</a></li></ul></div>'
        f'<div id="searchbox"{search}><h3 id="searchlabel">Quick search</h3><div class="searchformwrapper">'
        '<form class="search" action="../search.html" method="get"><input type="text" name="q"/>'
        '<input type="submit" value="Go"/></form></div></div></div></div>'
    )


def _table(rows: tuple[tuple[str, ...], ...]) -> str:
    head = "".join(f'<th class="head"><p>{_e(cell)}</p></th>' for cell in rows[0])
    body = "".join("<tr>" + "".join(f"<td><p>{_e(cell)}</p></td>" for cell in row) + "</tr>" for row in rows[1:])
    return f'<table class="docutils align-default"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _body(module: Module, roles: bool) -> str:
    functions = "".join(
        f'<dl class="py function"><dt class="sig sig-object py" id="{module.name}.{sig.split("(")[0]}">'
        f'<span class="sig-prename descclassname">{module.name}.</span><span class="sig-name descname">'
        f'{_e(sig)}</span><a class="headerlink" href="#{module.name}.{sig.split("(")[0]}" '
        f'title="Link to this definition">¶</a></dt><dd><p>{_e(text)}</p></dd></dl>'
        for sig, text in module.functions
    )
    paragraphs = "".join(f"<p>{_e(p)}</p>" for p in module.paragraphs)
    role = ' role="main"' if roles else ""
    return (
        f'<div class="body"{role}><section id="module-{module.name}">'
        f'<h1><code class="xref py py-mod docutils literal notranslate"><span class="pre">{module.name}</span>'
        f'</code> — {_e(module.summary)}<a class="headerlink" href="#module-{module.name}">¶</a></h1>'
        f'<p><strong>Source code:</strong> <a class="reference external" href="https://github.com/python/cpython/'
        f'tree/3.12/Lib/{module.name}.py">Lib/{module.name}.py</a></p><hr class="docutils"/>{paragraphs}'
        f'<section id="functions"><h2>Functions<a class="headerlink" href="#functions">¶</a></h2>{functions}'
        f'{_table(module.table)}</section><section id="examples"><h2>Examples<a class="headerlink" '
        f'href="#examples">¶</a></h2><div class="highlight-python3 notranslate"><div class="highlight"><pre>'
        f'<span></span>{_e(module.code)}\n</pre></div></div></section></section></div>'
    )


def sphinx_page(index: int, roles: bool = True) -> str:
    """The Python documentation's page of ``MODULES[index]``; ``roles``: as Sphinx 7 writes it (ARIA roles on the
    related bar, sidebar, search box and body), else as an older theme does (classes only)."""
    module, before, after = MODULES[index], MODULES[index - 1], MODULES[(index + 1) % len(MODULES)]
    footer = f'<div class="footer"{CHROME}>' + "<br/>".join(
        f'<a href="../license.html">{_e(line)}</a>' if "License" in line and "History" in line else _e(line)
        for line in FOOTER
    ) + "</div>"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"/><title>{_e(_title(module))} — Python '
        f'{DOCS}</title><link rel="stylesheet" href="../_static/pydoctheme.css"/></head><body>'
        f'{_related(module, before, after, roles)}<div class="document"><div class="documentwrapper">'
        f'<div class="bodywrapper">{_body(module, roles)}</div></div>{_sidebar(module, before, after, roles)}'
        f'<div class="clearer"></div></div>{_related(module, before, after, roles)}{footer}</body></html>'
    )


def python_docs(folder: Path, roles: bool = True) -> list[Path]:
    """Every module's page in ``folder``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, module in enumerate(MODULES):
        path = folder / f"{module.name}.html"
        path.write_text(sphinx_page(i, roles), encoding="utf-8")
        out.append(path)
    return out


WIKI_PARAGRAPHS = (
    "A <a href='/wiki/Binary_heap'>binary heap</a> is a heap data structure that takes the form of a binary tree. "
    "Binary heaps are a common way of implementing <a href='/wiki/Priority_queue'>priority queues</a>.",
    "The binary heap was introduced by <a href='/wiki/J._W._J._Williams'>J. W. J. Williams</a> in 1964 as a data "
    "structure for the <a href='/wiki/Heapsort'>heapsort</a> sorting algorithm.",
    "Both the insert and remove operations modify the heap to conform to the shape property first, by adding or "
    "removing from the end of the heap, and then restore the heap property by sifting up or down.",
    "Building a heap from an array of n input elements can be done by starting with an empty heap, then "
    "successively inserting each element, although a bottom-up construction takes only linear time.",
)
WIKI_CHROME_LINKS = ("Main page", "Contents", "Current events", "Random article", "About Wikipedia", "Contact us",
                     "Donate", "Help", "Learn to edit", "Community portal", "Recent changes", "Upload file")
NAVBOX_GROUPS = (("Types", ("Array", "Linked list", "Hash table", "Binary tree", "Heap", "Trie")),
                 ("Abstract", ("Stack", "Queue", "Priority queue", "Double-ended queue", "Set")))


def wiki_page(title: str = "Binary heap") -> str:
    """A wiki article laid out as Wikipedia's Vector skin lays it out."""
    links = "".join(f"<li><a href='/wiki/{_e(t)}'>{_e(t)}</a></li>" for t in WIKI_CHROME_LINKS)
    tools = "".join(f"<li><a href='/x'>{t}</a></li>" for t in ("Create account", "Log in", "Talk", "Contributions"))
    navbox = "".join(
        f"<tr><th class='navbox-group'>{group}</th><td class='navbox-list'><ul>"
        + "".join(f"<li><a href='/wiki/{i}'>{i}</a></li>" for i in items) + "</ul></td></tr>"
        for group, items in NAVBOX_GROUPS
    )
    references = "".join(
        f"<li id='cite_note-{n}'><span class='mw-cite-backlink'><a href='#cite_ref-{n}'>^</a></span> "
        f"<span class='reference-text'>{author} ({year}). <a href='/r{n}'>\"{work}\"</a>. {place}.</span></li>"
        for n, (author, year, work, place) in enumerate((
            ("Williams, J. W. J.", 1964, "Algorithm 232 - Heapsort", "Communications of the ACM 7 (6): 347-348"),
            ("Cormen, Thomas H.", 2009, "Introduction to Algorithms", "MIT Press, third edition, chapter six"),
        ))
    )
    half = len(WIKI_PARAGRAPHS) // 2
    first, second = ("".join(f"<p>{p}</p>" for p in part) for part in (WIKI_PARAGRAPHS[:half], WIKI_PARAGRAPHS[half:]))
    return (
        f"<!DOCTYPE html><html><head><title>{_e(title)} - Wikipedia</title></head><body>"
        f"<a class='mw-jump-link' href='#bodyContent'{CHROME}>Jump to content</a>"
        f"<div id='mw-navigation'{CHROME}><nav id='p-personal'><ul>{tools}</ul></nav>"
        f"<div id='mw-panel'><nav id='p-navigation' role='navigation'><h3>Navigation</h3><ul>{links}</ul></nav>"
        f"</div></div>"
        f"<main id='content' class='mw-body'><h1 id='firstHeading'>{_e(title)}</h1>"
        f"<div id='bodyContent'><div id='siteSub'{CHROME}>From Wikipedia, the free encyclopedia</div>"
        f"<div id='mw-content-text'><div class='mw-parser-output'>"
        f"<table class='infobox'><caption>{_e(title)}</caption>"
        f"<tr><th>Type</th><td><a href='/wiki/Binary_tree'>binary tree</a> or heap</td></tr>"
        f"<tr><th>Invented</th><td>1964, by J. W. J. Williams</td></tr>"
        f"<tr><th>Insert time</th><td>logarithmic in the worst case, constant on average</td></tr></table>"
        f"{first}"
        f"<div id='toc' class='toc' role='navigation'{CHROME}><h2>Contents</h2><ul><li><a href='#Operations'>"
        f"1 Operations</a></li><li><a href='#See_also'>2 See also</a></li><li><a href='#References'>3 References"
        f"</a></li></ul></div>"
        f"<h2 id='Operations'>Operations</h2>{second}"
        f"<h2 id='See_also'>See also</h2><ul{CHROME}><li><a href='/wiki/Heap'>Heap (data structure)</a></li>"
        f"<li><a href='/wiki/Heapsort'>Heapsort</a></li><li><a href='/wiki/Fibonacci_heap'>Fibonacci heap</a></li>"
        f"</ul><h2 id='References'>References</h2><div class='reflist'><ol class='references'>{references}</ol>"
        f"</div><div role='navigation' class='navbox'{CHROME}><table class='nowraplinks'><tr><th colspan='2'>"
        f"<a href='/wiki/Data_structure'>Data structures</a></th></tr>{navbox}</table></div></div></div>"
        f"<div class='printfooter'{CHROME}>Retrieved from \"https://en.wikipedia.org/w/index.php?title=Binary_heap\""
        f"</div><div id='catlinks' class='catlinks' role='navigation'{CHROME}>"
        f"<a href='/wiki/Help:Category'>Categories</a>: <ul><li><a href='/c1'>Heaps (data structures)</a></li>"
        f"<li><a href='/c2'>Binary trees</a></li></ul></div></div></main>"
        f"<footer id='footer' role='contentinfo'{CHROME}><ul id='footer-info'><li>This page was last edited on 1 "
        f"December 2026, at 10:00 (UTC).</li><li>Text is available under the Creative Commons Attribution-ShareAlike "
        f"License 4.0; additional terms may apply.</li></ul><ul id='footer-places'><li><a href='/p'>Privacy policy"
        f"</a></li><li><a href='/a'>About Wikipedia</a></li><li><a href='/d'>Disclaimers</a></li></ul></footer>"
        f"</body></html>"
    )


def _regions(markup: str) -> tuple[list[str], list[str]]:
    """The page's text nodes in the marked regions and outside them, in order."""
    from bs4 import BeautifulSoup, NavigableString
    from bs4.element import PreformattedString

    soup = BeautifulSoup(markup, "lxml")
    for tag in soup.find_all(("script", "style", "head")):
        tag.decompose()
    chrome: list[str] = []
    content: list[str] = []
    for node in soup.descendants:
        if isinstance(node, NavigableString) and not isinstance(node, PreformattedString) and node.strip():
            marked = any(parent.get("data-chrome") for parent in node.parents if hasattr(parent, "get"))
            (chrome if marked else content).append(str(node))
    return chrome, content


def squeezed(text: str) -> str:
    """``text`` lower case with everything but letters and digits left out: what a page's text and a sentence
    made of it have in common however the reader spaces and punctuates it."""
    return re.sub(r"[\W_]+", "", text.lower())


def chrome_text(markup: str) -> str:
    """The marked regions' text, :func:`squeezed`, in page order."""
    return squeezed("".join(_regions(markup)[0]))


def content_text(markup: str) -> str:
    """The text outside the marked regions, :func:`squeezed`, in page order."""
    return squeezed("".join(_regions(markup)[1]))


def is_chrome(sentence: str, chrome: str, content: str) -> bool:
    """Whether ``sentence`` comes from a marked region: its text is the chrome's and not the content's (a sentence
    both have, as a module's title in its heading and in the next page's "Previous topic", counts as content)."""
    key = squeezed(sentence)
    return bool(key) and key in chrome and key not in content


def content_nodes(markup: str, least: int = 8) -> list[str]:
    """The text nodes outside the marked regions with at least ``least`` letters and digits, :func:`squeezed`."""
    return [key for node in _regions(markup)[1] if len(key := squeezed(node)) >= least]
