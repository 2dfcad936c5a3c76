"""The last phase of an indexing run: every new document's opening read by the second look's sentence model and
stored (engine.store.openings), so that a query reads only its shown sentences (docs/decisions/0051-openings-indexed.md).

It runs after the documents are written and searchable, a chunk at a time, each chunk its own transaction: a run
stopped in it loses nothing, and the next run reads the documents it did not reach. Until then a query reads those
documents' openings itself, as it did before they were stored.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.embed import onnx
from engine.errors import CancelFlag
from engine.search import secondlook
from engine.store.database import Store
from engine.store.openings import Openings

# Documents read per transaction: a stop waits for at most one chunk (a few tenths of a second on two cores).
CHUNK = 32


def read_openings(store: Store, cancel: CancelFlag | None, progress: Callable[[int, int], None]) -> int:
    """Read and store the openings of the documents that have none; returns how many. ``progress(done, total)``
    before the first chunk and after each; stops between chunks once ``cancel`` is set."""
    if not onnx.available():
        return 0
    table = Openings(store.db.conn, secondlook.reader())
    with store.db.atomic():  # rows read by another model are dropped here
        todo = table.missing(limit=-1)
    done = 0
    if todo:
        progress(0, len(todo))
    for start in range(0, len(todo), CHUNK):
        if cancel is not None and cancel.is_set():
            break
        chunk = todo[start : start + CHUNK]
        ids = [doc_id for doc_id, _ in chunk]
        first = table.first_sentences(ids, secondlook.OPENING_SENTENCES)
        vectors = secondlook.encode_openings(onnx.bundled(), [secondlook.opening_text(title, first.get(doc_id, []))
                                                              for doc_id, title in chunk])
        with store.db.atomic():
            table.put(ids, vectors)
        done += len(chunk)
        progress(done, len(todo))
    return done
