"""Re-embedding an index's sentences with another method, or with a new version of its own (``Index.reembed``):
resumable, whole documents at a time, and the method made the index's once every sentence has its vector."""

from __future__ import annotations

import logging

import numpy as np

from engine.embed import context
from engine.errors import CancelFlag, Cancelled
from engine.indexing.run import Progress, ProgressCallback, RunHost
from engine.ingest.extract import sentence_hash
from engine.store.sentences import StoredSentences

log = logging.getLogger(__name__)


def reembed(host: RunHost, method: str, progress: ProgressCallback | None, cancel: CancelFlag | None) -> None:
    """Embed every sentence of ``host``'s index that has no ``method`` vector yet, then make ``method`` the one
    searches use, save its graph and calibrate it. The caller holds the index's write lock."""
    store, methods = host.store, host.methods
    embedder = methods.embedder(method)
    if not methods.made_by(embedder):
        methods.start_over(embedder)
        embedder = methods.embedder(method)
    total = store.sentences.count()
    done = 0 if store.vectors.derives(method) else len(store.vectors.ids(method))
    # whole documents at a time: a short line is embedded with its neighbours (engine.embed.context)
    for part in store.vectors.documents_missing(method, host.config.batch_sentences):
        if cancel is not None and cancel.is_set():
            raise Cancelled(f"re-embedding with {method} paused at {done:,} of {total:,} sentences")
        vectors, made = context.encode(embedder, part.texts, part.doc_sizes)
        embedder, vectors = methods.centre_first_batch(embedder, vectors)
        # before the vectors: a batch stopped in between is done again
        _carry_hashes(host, part, made)
        store.vectors.add(method, part.ids[part.missing], vectors[part.missing])
        done += int(part.missing.sum())
        if progress:
            progress(Progress("embedding", done, total, done, current=f"re-embedding with {method}", unit="sentences"))
    with store.transaction():
        methods.record(embedder)
        store.meta.bump_generation()
    host.vector_index(embedder).save(store.meta.generation())
    methods.calibrate(embedder, host.vector_index(embedder, load=False), force=True)


def _carry_hashes(host: RunHost, part: StoredSentences, made: context.Spans) -> None:
    """Give each short line of ``part`` the hash of the sentence its vector stands for, as indexing does
    (engine.indexing.run._carrying_hashes); the hash it may carry already is replaced by its own text's first."""
    own, short = part.hashes.copy(), np.flatnonzero(context.is_short(made.words))
    own[short] = [sentence_hash(part.texts[i]) for i in short.tolist()]
    carried = own[made.sources()]
    changed = carried != part.hashes
    if changed.any():
        host.store.sentences.set_hashes(part.ids[changed], carried[changed])
