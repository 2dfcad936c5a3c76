"""One indexing run (``Index.add``): plan which files to read, read them in workers, embed and write in batches.

The run talks to its index through :class:`RunHost`, the part of :class:`engine.index.Index` it needs (its store and
configuration, its vector index, its methods' records), so that it sits below the facade
(tests/test_layers.py) and the facade's private state stays its own.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.config import IndexConfig
from engine.embed import context
from engine.embed.base import Embedder
from engine.embed.static import StaticEmbedder
from engine.errors import CancelFlag, ReadError
from engine.facets.service import FacetWriter
from engine.filestate import FileState
from engine.indexing.methods import Methods
from engine.indexing.openings import read_openings
from engine.indexing.prepare import StaticPreparer
from engine.ingest.archive import is_archive, members
from engine.ingest.documents import NewDocument, SentenceRecord
from engine.ingest.extract import Extracted
from engine.ingest.pool import Extractor, extract_all
from engine.ingest.readers import ocr
from engine.ingest.readers.guard import short_cause
from engine.ingest.walk import IgnoreRules, walk
from engine.store.database import Store
from engine.store.documents import DocumentRecord
from engine.store.vectors import VectorIndex


@dataclass(frozen=True)
class Progress:
    """Indexing progress for a progress bar; ``eta_seconds`` is None until there is a rate to go by. ``files_done``
    and ``files_total`` count ``unit`` (files while reading; sentences or passages in phases that work on those)."""

    phase: str
    files_done: int
    files_total: int
    sentences: int
    current: str | None = None
    eta_seconds: float | None = None
    unit: str = "files"


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class FileIssue:
    """A file that is not (fully) searchable, and why."""

    path: str
    status: FileState
    reason: str


class RunHost(Protocol):
    """What an indexing run needs of its index (:class:`engine.index.Index` is one)."""

    store: Store
    config: IndexConfig
    methods: Methods

    def vector_index(self, embedder: Embedder, *, load: bool = True) -> VectorIndex:
        """The index's vectors of ``embedder``'s method (its graph, or the rows scanned exactly)."""
        ...


def _joined(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Several texts' (flat ids, CSR offsets) as one."""
    lengths = np.concatenate([np.diff(offsets) for _, offsets in parts])
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.concatenate([flat for flat, _ in parts]), offsets


def _carrying_hashes(docs: list[NewDocument], made: context.Spans) -> list[NewDocument]:
    """``docs`` with each short line's hash replaced by that of the sentence its vector mostly stands for
    (:meth:`engine.embed.context.Spans.sources`): boilerplate is counted, and the relevance calibration leaves out
    copies, by what a vector says, so a heading above a repeated footer is boilerplate as the footer is."""
    hashes = np.fromiter((s.hash for d in docs for s in d.sentences), dtype=np.int64)
    carried = hashes[made.sources()]
    changed = np.flatnonzero(carried != hashes)
    if not changed.size:
        return docs
    starts = np.cumsum([0, *(len(d.sentences) for d in docs)])
    records: dict[int, list] = {}
    for k, i in zip(changed.tolist(), (np.searchsorted(starts, changed, side="right") - 1).tolist()):
        sentences = records.setdefault(i, list(docs[i].sentences))
        s = sentences[k - starts[i]]  # not dataclasses.replace: a third of the time, on the indexer's thread
        sentences[k - starts[i]] = SentenceRecord(s.text, s.start, s.end, s.page, int(carried[k]))
    out = list(docs)
    for i, sentences in records.items():
        out[i] = replace(docs[i], sentences=tuple(sentences))
    return out


class IndexingRun:
    """One indexing pass: plans which files to read, reads them in workers, embeds and writes in batches."""

    def __init__(self, index: RunHost, embedder: Embedder, progress: ProgressCallback | None,
                 cancel: CancelFlag | None, keep: Callable[[str], bool] | None = None,
                 extract: Extractor = extract_all) -> None:
        self.index, self.store, self.embedder = index, index.store, embedder
        self.keep, self.extract = keep, extract
        self._vectors: VectorIndex | None = None
        # facets live in the static model's word space whatever the index's method (engine.facets)
        self.facets = FacetWriter.open(self.store) if index.config.facets else None
        self.config = index.config
        self.progress_cb, self.cancel = progress, cancel
        self.documents = self.sentences = self.unchanged = self.removed = 0
        self.issues: list[FileIssue] = []
        self.cancelled = False
        self._preparer = self._static_preparer()
        self._pending: list[Extracted] = []  # read documents waiting for the next batch
        self._pending_sentences = 0
        self._last_save = time.monotonic()
        self._started = time.monotonic()
        self._done = 0
        self._total = 0

    @property
    def vectors(self) -> VectorIndex:
        """The method's graph, loaded when first needed: a run that finds nothing changed neither reads nor writes
        it (on the 3.09M-sentence corpus, loading took 6.5 s and saving 14 s of a 29 s run that changed nothing)."""
        if self._vectors is None:
            self._vectors = self.index.vector_index(self.embedder)
        return self._vectors

    def _remove_vectors(self, ids: list[int]) -> None:
        if len(ids):
            self.vectors.remove(ids)

    def run(self, roots: list[str]) -> None:
        """Index what changed under ``roots``: read, embed and write it; stops early when cancelled."""
        jobs = self._plan(roots)
        self._total = len(jobs)
        self._report("reading", None)
        try:
            for outcome in self.extract(jobs, self.config.limits, self.config.workers, prepare=self._preparer,
                                        cancel=self.cancel):
                self._take(outcome)
                self._done += 1
                self._report("reading", outcome.path)
                if self._stop_asked():
                    break
            # the extractor stops by itself when asked while it waits on readers
            self.cancelled = self._done < self._total and self._stop_asked()
        except KeyboardInterrupt:
            self.cancelled = True
            self._finish()
            raise
        self._finish()

    def _stop_asked(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _static_preparer(self) -> StaticPreparer | None:
        """What the readers do for the static model beside parsing (``engine.indexing.prepare``): the word ids when it
        embeds, the facets when they are on (in its word space whatever the index's method)."""
        static = self.embedder if isinstance(self.embedder, StaticEmbedder) and self.embedder.path else None
        space = self.facets.space if self.facets is not None else None
        return StaticPreparer(static, space) if static is not None or space is not None else None

    def _plan(self, roots: list[str]) -> list[tuple[str, str | None]]:
        """Walk the roots; drop vanished files; return (path, known hash) of files whose size or mtime changed."""
        rules = IgnoreRules(self.config.ignore, include_hidden=self.config.include_hidden)
        self._report("scanning", None)
        found: set[str] = set()
        jobs: dict[str, tuple[str, str | None]] = {}  # by path: a path planned twice is read once
        # every record under the roots in one read, rather than one query per file walked
        known = {d.path: d for r in roots for d in self.store.documents.listing(r)}
        for item in walk([Path(r) for r in roots], rules):
            path = str(item.path)
            if item.problem == "not found" or (self.keep is not None and not self.keep(path)):
                continue
            found.add(path)
            if item.problem:
                self._unindexed(Extracted(path, 0, 0.0, "", status=item.status, reason=item.problem))
                continue
            try:
                files = self._files_of(item.path, rules, found)
            except ReadError as e:  # nothing about one file may end the run: its record says what went wrong
                self._unindexed(Extracted(path, 0, 0.0, "", status=e.status, reason=e.reason))
                continue
            for path, size, mtime in files:
                found.add(path)
                job = self._job(path, size, mtime, known.get(path))
                if job is not None:
                    jobs[path] = job
        vanished = [path for path in known if path not in found]
        if vanished:
            self._remove_vectors(self.store.delete_paths(vanished))
            self.removed += len(vanished)
        return list(jobs.values())

    def _job(self, path: str, size: int, mtime: float,
             record: DocumentRecord | None) -> tuple[str, str | None] | None:
        """(path, known hash) when the file must be read: new, changed in size or time, or failed last time."""
        # a failed file is read again even if its bytes are the same: the cause may have been passing; so is one left
        # unread for want of Tesseract, once it is installed
        same = record is not None and record.size == size and record.mtime == mtime
        if record and same and record.status != FileState.FAILED and not ocr.now_readable(record.reason):
            self.unchanged += 1
            if (record.status != FileState.INDEXED or record.reason) and not ocr.quiet(record.reason):
                self.issues.append(FileIssue(path, record.status, record.reason or ""))
            return None
        return path, record.hash if record and record.status != FileState.FAILED and not same else None

    def _files_of(self, path: Path, rules: IgnoreRules, found: set[str]) -> list[tuple[str, int, float]]:
        """(path, size, time) of the documents a file walked holds: itself, or an archive's members. A file gone
        since it was walked holds none (its record goes with the vanished); one that could not be looked at raises
        ReadError with the reason to record. ``found`` loses the path of an archive that needs no record."""
        try:
            st = path.stat()
            if not is_archive(path):
                return [(str(path), st.st_size, st.st_mtime)]
            return self._archive_members(path, st, rules, found)
        except FileNotFoundError:
            found.discard(str(path))
            return []
        except (OSError, ValueError) as e:
            raise ReadError(f"cannot access: {short_cause(e)}") from e

    def _archive_members(self, archive: Path, st: os.stat_result, rules: IgnoreRules,
                         found: set[str]) -> list[tuple[str, int, float]]:
        """(path, size, time) of a zip archive's members, each a document (``engine.ingest.archive``). The archive
        has a record of its own only to say what was left out of it (it is kept in ``found``): the reason it
        cannot be listed, or the members that were not read."""
        try:
            listed, note = members(archive, self.config.limits, rules)
        except ReadError as e:
            self._unindexed(Extracted(str(archive), st.st_size, st.st_mtime, "", status=e.status, reason=e.reason))
            return []
        if note:
            self._unindexed(Extracted(str(archive), st.st_size, st.st_mtime, "", status=FileState.SKIPPED, reason=note))
        else:
            found.discard(str(archive))
        return [(m.path, m.size, m.mtime) for m in listed]

    def _take(self, outcome: Extracted) -> None:
        if outcome.unchanged:
            self.store.documents.touch(outcome.path, outcome.size, outcome.mtime)
            self.unchanged += 1
        elif outcome.document is None:
            self._unindexed(outcome)
        else:
            if outcome.reason:  # indexed only in part
                self.issues.append(FileIssue(outcome.path, outcome.status, outcome.reason))
            self._pending.append(outcome)
            self._pending_sentences += len(outcome.document.sentences)
            if self._pending_sentences >= self.config.batch_sentences:
                self._flush()

    def _unindexed(self, outcome: Extracted) -> None:
        removed = self.store.record_unindexed(outcome.path, outcome.size, outcome.mtime, outcome.hash,
                                              outcome.status, outcome.reason or "")
        self._remove_vectors(removed)
        if not ocr.quiet(outcome.reason):  # an image without text is recorded, not reported (readers/ocr.py)
            self.issues.append(FileIssue(outcome.path, outcome.status, outcome.reason or ""))

    def _flush(self) -> None:
        if not self._pending:
            return
        outcomes, self._pending, self._pending_sentences = self._pending, [], 0
        docs = [o.document for o in outcomes if o.document is not None]
        assert len(docs) == len(outcomes)  # _take holds only outcomes with a document
        self._report("embedding", docs[-1].path)
        words = [o.words for o in outcomes if o.words is not None]
        # a short line is embedded with the sentences after it (engine.embed.context, docs/decisions/0001)
        sizes = [len(d.sentences) for d in docs]
        if self._preparer is not None and self._preparer.embedder is self.embedder and len(words) == len(outcomes):
            vectors, made = context.embed_ids(self.embedder, *_joined(words), sizes)  # the readers tokenised
        else:
            vectors, made = context.encode(self.embedder, [s.text for d in docs for s in d.sentences], sizes)
            self.embedder, vectors = self.index.methods.centre_first_batch(self.embedder, vectors)
        docs = _carrying_hashes(docs, made)
        facets = [o.facets for o in outcomes] if self.facets is not None else None
        graph = self.vectors  # opened before the batch is written, which it would otherwise read back (or compute)
        removed, new_ids = self.store.write_documents(docs, vectors, self.embedder.name, facets)
        self._remove_vectors(removed)
        # the graph grows (and is saved, now and then) while the next batch is read and written
        save = time.monotonic() - self._last_save > self.config.save_seconds
        graph.add_later(new_ids, vectors, then_save=self._generation() if save else None)
        if save:
            self._last_save = time.monotonic()
        self.documents += len(docs)
        self.sentences += int(new_ids.size)

    def _generation(self) -> int:
        return self.store.meta.generation()

    def _save(self) -> None:
        generation = self._generation()
        if self._vectors is None:
            if self.index.vector_index(self.embedder, load=False).is_saved(self.store):
                return  # not loaded, as nothing in it changed, and its files are as the last run saved them
            # behind the database (a run killed before its last save) or damaged: caught up or rebuilt here
            self._vectors = self.index.vector_index(self.embedder)
        self._report("saving", None)
        self._vectors.save(generation)

    def _finish(self) -> None:
        self._flush()
        if not self.cancelled:  # a stopped run stops now; the next one compacts
            # while the graph takes in the last batches on its own threads
            self._report("saving", None)
            self.store.words.compact()
        self._save()
        self.index.methods.calibrate(self.embedder, self.index.vector_index(self.embedder, load=False))
        if not self.cancelled:
            read_openings(self.store, self.cancel, self._report_openings)
        self._report("done", None)

    def _report_openings(self, done: int, total: int) -> None:
        if self.progress_cb is not None:
            self.progress_cb(Progress("openings", done, total, self.sentences, unit="documents"))

    def _report(self, phase: str, current: str | None) -> None:
        if self.progress_cb is None:
            return
        elapsed = time.monotonic() - self._started
        eta = None
        if self._done and self._total > self._done and elapsed > 1:
            eta = elapsed / self._done * (self._total - self._done)
        self.progress_cb(Progress(phase, self._done, self._total, self.sentences + self._pending_sentences, current, eta))
