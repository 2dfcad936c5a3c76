"""The query for "more like this file": sentences of a dropped file, read with the engine's own readers.

The sentences are picked as ``Index.search_like`` picks an indexed document's (``engine.search.like.spread``): up to
the searcher's ``MAX_QUERY_SENTENCES``, spaced through the whole file rather than taken from its start, which is
often a title page, abstract or boilerplate. A dropped file need not be indexed, so it is read here, not looked up.

Runs on a worker thread (reading a large PDF takes seconds); imported there, after the engine has loaded.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import ReadError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.extract import sentences_of
from engine.search.like import SEPARATOR, spread


def query_from_file(path: Path) -> str:
    """Up to ``MAX_QUERY_SENTENCES`` sentences of ``path``, evenly spaced through it, as one passage.

    Raises :class:`engine.errors.ReadError` (with a reason a person can read) when the file has no usable text.
    """
    sentences = [s.text for s in sentences_of(readers.read(path))]
    if not sentences:
        raise ReadError("no text found", status=FileState.SKIPPED)
    return SEPARATOR.join(spread(sentences))
