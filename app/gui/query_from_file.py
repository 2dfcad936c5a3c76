"""The query for "more like this file": sentences of a dropped file, read with the engine's own readers.

The engine searches a long query sentence by sentence but only up to ``MAX_QUERY_SENTENCES`` of them, taken from
the start. A file's first sentences are often its title page, abstract or boilerplate, so the sentences are picked
evenly across the whole file instead: the query then stands for the document, not its opening.

Runs on a worker thread (reading a large PDF takes seconds); imported there, after the engine has loaded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import ReadError
from engine.ingest import readers
from engine.ingest.extract import sentences_of
from engine.search.searcher import MAX_QUERY_CHARS, MAX_QUERY_SENTENCES

# Fragments (headings, figure labels, page numbers) say little about what a document is about.
MIN_WORDS = 4
SEPARATOR = "\n\n"  # a paragraph break: the engine's splitter never joins sentences across it
# Every picked sentence fits, so the query stays under the engine's length limit whatever the file.
MAX_SENTENCE_CHARS = MAX_QUERY_CHARS // MAX_QUERY_SENTENCES - len(SEPARATOR)


def query_from_file(path: Path) -> str:
    """Up to ``MAX_QUERY_SENTENCES`` sentences of ``path``, evenly spaced through it, as one passage.

    Raises :class:`engine.errors.ReadError` (with a reason a person can read) when the file has no usable text.
    """
    sentences = [s.text for s in sentences_of(readers.read(path))]
    if not sentences:
        raise ReadError("no text found", status="skipped")
    telling = [s for s in sentences if len(s.split()) >= MIN_WORDS and len(s) <= MAX_SENTENCE_CHARS]
    pool = telling or [s[:MAX_SENTENCE_CHARS] for s in sentences]
    picked = np.unique(np.linspace(0, len(pool) - 1, min(len(pool), MAX_QUERY_SENTENCES)).round().astype(int))
    return SEPARATOR.join(pool[i] for i in picked)
