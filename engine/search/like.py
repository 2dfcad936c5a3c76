""""More like this": an indexed document, one page of it or one sentence of it, made into a query.

The source is named as ``FILE``, ``FILE:PAGE`` or ``FILE#SENTENCE`` (:meth:`LikeSource.parse`). Its query is built
from the sentences the index stored for it (:func:`like_query`), so the file need not be read again, nor even be
still on disk; ``Index.search_like`` then searches with that query and leaves the source out of the ranking. A file
that is not indexed (one dropped on the window) is read with the engine's readers instead (:func:`query_from_file`).

Numbering follows what a search prints: ``PAGE`` is the 1-based ``page`` of a result (as a PDF viewer counts),
``SENTENCE`` the 0-based ``ordinal`` of `quire search --json` (0 is the document's first sentence), so a number
copied from a result names that result's sentence.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import ConfigError, QueryError, ReadError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.extract import sentences_of
from engine.search.query import MAX_QUERY_CHARS, MAX_QUERY_SENTENCES
from engine.store.database import Store
from engine.store.documents import DocumentRecord
from engine.store.sentences import SentenceRow

log = logging.getLogger(__name__)

# Fragments (headings, figure labels, page numbers) say little about what a document is about.
MIN_WORDS = 4
SEPARATOR = "\n\n"  # a paragraph break: the engine's splitter never joins sentences across it
# Every picked sentence fits, so the query stays under the searcher's length limit whatever the document.
MAX_SENTENCE_CHARS = MAX_QUERY_CHARS // MAX_QUERY_SENTENCES - len(SEPARATOR)

# A page or sentence number at the end of a spec; parsed from the right because a path may hold ':' or '#' itself.
_SUFFIX = re.compile(r"(?P<path>.+)(?P<kind>[:#])(?P<number>-?\d+)", re.DOTALL)


@dataclass(frozen=True)
class LikeSource:
    """What to find documents like: the document at ``path``, or only its ``page`` (1-based, as results print it),
    or only its sentence ``sentence`` (the 0-based ``ordinal`` of a result). At most one of the two is set."""

    path: str
    page: int | None = None
    sentence: int | None = None

    def __post_init__(self) -> None:
        if self.page is not None and self.sentence is not None:
            raise ConfigError("give a page or a sentence of the document, not both")
        if self.page is not None and self.page < 1:
            raise ConfigError(f"page {self.page} does not exist: pages are numbered from 1")
        if self.sentence is not None and self.sentence < 0:
            raise ConfigError(f"sentence {self.sentence} does not exist: sentences are numbered from 0")

    @classmethod
    def parse(cls, spec: str, *, exists: Callable[[str], bool] = os.path.exists) -> LikeSource:
        """``FILE``, ``FILE:PAGE`` or ``FILE#SENTENCE`` as a source.

        A trailing ``:N`` or ``#N`` is a page or sentence number when the path before it exists, or when the whole
        spec is not an existing path (a file deleted since it was indexed is still found by its stored sentences).
        So a file really named ``notes#2`` is taken whole, unless a file ``notes`` sits beside it; then the number
        wins, as that is what a person typing the suffix means far more often.
        """
        if not spec:
            raise QueryError("give the file to find documents like: FILE, FILE:PAGE or FILE#SENTENCE")
        match = _SUFFIX.fullmatch(spec)
        if match is None or not (exists(match["path"]) or not exists(spec)):
            return cls(spec)
        number = int(match["number"])
        if match["kind"] == ":":
            return cls(match["path"], page=number)
        return cls(match["path"], sentence=number)

    def __str__(self) -> str:
        """The spec this source parses from."""
        if self.page is not None:
            return f"{self.path}:{self.page}"
        if self.sentence is not None:
            return f"{self.path}#{self.sentence}"
        return self.path


@dataclass(frozen=True)
class LikeQuery:
    """The query for a source: ``text`` (its picked sentences, one paragraph each), and ``exclude``, the paths of the
    source and of every file with the same content (each is trivially most like itself)."""

    source: LikeSource
    path: str
    text: str
    exclude: tuple[str, ...]


def like_query(store: Store, source: LikeSource) -> LikeQuery:
    """The query for ``source`` from its stored sentences: for a whole document or a page, up to
    ``MAX_QUERY_SENTENCES`` informative ones spread through it (:func:`spread`); for a sentence, that sentence.

    Raises :class:`QueryError` when the path is not an indexed document or the page or sentence does not exist.
    """
    record = _document(store, source.path)
    name = Path(record.path).name
    rows = store.sentences.of_document(record.id)
    if not rows:
        raise QueryError(f"{record.path} holds no sentences to compare with; it may be empty")
    if source.sentence is not None:
        picked = [_sentence(rows, source.sentence, name)]
    elif source.page is not None:
        picked = spread(_page(rows, source.page, name, record.path))
    else:
        picked = spread([r.text for r in rows])
    # a sentence longer than the searcher takes (a table flattened into one line) is cut, not refused
    text = SEPARATOR.join(picked)[:MAX_QUERY_CHARS]
    copies = store.documents.duplicates_of(record.hash) if record.hash is not None else []
    exclude = tuple(dict.fromkeys([record.path, *copies]))
    log.debug("like %s: %d sentences, %d characters, leaving out %s", source, len(picked), len(text), exclude)
    return LikeQuery(source, record.path, text, exclude)


def spread(sentences: Sequence[str]) -> list[str]:
    """Up to ``MAX_QUERY_SENTENCES`` of ``sentences``, evenly spaced through them.

    The searcher takes only the first ``MAX_QUERY_SENTENCES`` sentences of a long query, and a document's first ones
    are often its title page, abstract or boilerplate: spaced out, the query stands for the whole document. Short
    fragments are passed over while longer sentences remain, and over-long ones are cut to ``MAX_SENTENCE_CHARS``.
    """
    telling = [s for s in sentences if len(s.split()) >= MIN_WORDS and len(s) <= MAX_SENTENCE_CHARS]
    pool = telling or [s[:MAX_SENTENCE_CHARS] for s in sentences]
    if not pool:
        return []
    picked = np.unique(np.linspace(0, len(pool) - 1, min(len(pool), MAX_QUERY_SENTENCES)).round().astype(int))
    return [pool[i] for i in picked]


def query_from_file(path: Path) -> str:
    """The query for a file that need not be indexed: up to ``MAX_QUERY_SENTENCES`` of its sentences, read with the
    engine's readers and picked as :func:`like_query` picks an indexed document's (:func:`spread`), as one passage.

    Raises :class:`engine.errors.ReadError` (with a reason a person can read) when the file has no usable text.
    """
    sentences = [s.text for s in sentences_of(readers.read(path))]
    if not sentences:
        raise ReadError("no text found", status=FileState.SKIPPED)
    return SEPARATOR.join(spread(sentences))


def _document(store: Store, path: str) -> DocumentRecord:
    """The indexed record of ``path``, as given or made absolute (the index keeps absolute paths, symlinks not
    followed) or with symlinks resolved (as the app names dropped files)."""
    candidates = dict.fromkeys([path, os.path.abspath(path), str(Path(path).resolve())])
    record = next((r for r in map(store.documents.get, candidates) if r is not None), None)
    if record is None:
        raise QueryError(
            f"{path} is not in the index: index it first (`quire index {path}`), "
            "or give the path of an indexed file (`quire status --files` lists them)"
        )
    if record.status != FileState.INDEXED:
        reason = f" ({record.reason})" if record.reason else ""
        raise QueryError(f"{record.path} was {record.status}{reason} when indexed, so it has no sentences "
                         "to compare with")
    return record


def _sentence(rows: list[SentenceRow], ordinal: int, name: str) -> str:
    row = next((r for r in rows if r.ordinal == ordinal), None)
    if row is None:
        raise QueryError(
            f"{name} has no sentence {ordinal}: its sentences are numbered 0 to {rows[-1].ordinal} "
            "(the `ordinal` that `quire search --json` prints)"
        )
    return row.text


def _page(rows: list[SentenceRow], page: int, name: str, path: str) -> list[str]:
    pages = sorted({r.page for r in rows if r.page is not None})
    if not pages:
        raise QueryError(f"{name} has no pages (only PDFs, slides and the like do); search like the whole file, "
                         f"or like one sentence of it with {path}#N")
    texts = [r.text for r in rows if r.page == page]
    if not texts:
        raise QueryError(f"{name} has no page {page} with text; its pages with text are {_ranges(pages)}")
    return texts


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` as ``"1-3, 5"``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
