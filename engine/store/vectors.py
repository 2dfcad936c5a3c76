"""The vectors of one embedding method, in memory, kept consistent with the database (settings:
engine.store.scansettings). Below EXACT_BELOW sentences every vector is scored; from there each also has a sign code
(engine.store.signcodes), and a query scores exactly only the candidates its code is nearest. The vectors in SQLite
are the truth; the saved rows' sidecar records the database generation they match and the file's size and count,
so rows missing, damaged, of another method or index, or behind are caught up or rebuilt and a crash between a
commit and a save loses nothing. Only the index's writer saves (engine.index).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from engine.errors import GraphUnavailableError
from engine.store.database import Store
from engine.store.files import write_text
from engine.store.fullrows import FullRows
from engine.store.scansettings import CODE_CANDIDATES, EXACT_BELOW, REBUILD_DELETED_SHARE
from engine.store.signcodes import SignProjection

log = logging.getLogger(__name__)

# A search catches the rows up by at most this many vectors (a fraction of a second of the static model's); rows
# further behind are caught up by the next indexing run (docs/decisions/0030-graph-repaired-by-the-indexer.md).
READER_CATCH_UP = 20_000
# Loading retries once when the files fail their checks but the sidecar changed meanwhile: a writer replaced them.
LOAD_ATTEMPTS = 2
# Temporary files of the saved rows (engine.store.files), which a run removes when a killed one left them; and the
# files of the HNSW graphs an earlier quire kept, which the next save removes.
LEFTOVERS = ("vectors-*.tmp", "hnsw-*.tmp")
LEGACY = ("hnsw-{}.bin", "hnsw-{}.reduced.bin", "hnsw-{}.rows.npz", "hnsw-{}.json")


class VectorIndex:
    """One method's vectors in memory, saved beside the database once they have codes.

    Reading never writes: :meth:`open` catches the rows up, or rebuilds them, in memory, and only the holder of the
    index's write lock calls :meth:`save` (searches that rewrote the files raced each other and the writer).
    """

    def __init__(self, folder: Path, method: str, fingerprint: str, dim: int, *, owner: str | None = None) -> None:
        self.folder = folder
        self.path = folder / f"vectors-{method}.npz"
        self.sidecar = folder / f"vectors-{method}.json"
        self.method, self.fingerprint, self.dim = method, fingerprint, dim
        # the database's id (Store.index_id): rows whose sidecar names another were copied from another index
        self.owner = owner
        self._lock = threading.Lock()
        # every vector: without codes below EXACT_BELOW (read from the database on open, never saved), with them
        # from there (saved)
        self._rows: FullRows | None = None
        self._queued: Future | None = None
        # whether the rows in memory differ from their file: saving large ones unchanged takes seconds (decision 0050)
        self._unsaved = False
        # the file as loaded or last written: {"size", "mtime_ns"}, recorded in the sidecar
        self._file: dict | None = None
        self._opened = False
        # (what the files and database were, why) when a search last found the rows unusable (open, repair=False)
        self._refused: tuple[tuple, str] | None = None

    # -- lifecycle --------------------------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` has loaded (or built) the vectors."""
        return self._opened

    @property
    def coded(self) -> bool:
        """Whether the vectors have sign codes (a large index) rather than being all scored."""
        return self._rows is not None and self._rows.projection is not None

    def open(self, store: Store, *, repair: bool = True) -> None:
        """Load the vectors and bring them in line with ``store`` in memory (catch up or rebuild); writes nothing.

        Without ``repair`` (a search), rows that would have to be rebuilt, or caught up by more than READER_CATCH_UP
        vectors, are not: that took minutes inside the first search. GraphUnavailableError says why, and the next
        indexing run repairs them (docs/decisions/0030-graph-repaired-by-the-indexer.md).
        """
        generation = store.meta.generation()
        if store.sentences.count() < EXACT_BELOW:
            self._load_exact(store)
            self._opened = True
            return
        if not repair and self._refused is not None and self._refused[0] == self._files_now(generation):
            raise GraphUnavailableError(self._refused[1])  # as the last search found it: not loaded again
        info = self._load_saved()
        if info is None:
            self._refuse(repair, generation, "missing or damaged")
            log.warning("rebuilding the meanings index %s from the %d sentences in the database (it was missing or "
                        "damaged); searches rank by words until it is saved", self.sidecar.stem, store.sentences.count())
            self._rebuild(store)
        elif info.get("generation") != generation:
            log.info("vectors %s are behind the database; catching up", self.sidecar.stem)
            self._catch_up(store, None if repair else READER_CATCH_UP)
        rows = self._rows
        if repair and rows is not None and rows.dropped > REBUILD_DELETED_SHARE * max(1, rows.live_count):
            with self._lock:
                self._rows, self._unsaved = rows.compacted(), True
        self._opened = True

    def _files_now(self, generation: int) -> tuple:
        """What a refusal of the rows depends on: their files' stats and the database generation."""
        def stat(path: Path) -> tuple | None:
            try:
                st = path.stat()
            except OSError:
                return None
            return st.st_size, st.st_mtime_ns, st.st_ino
        return generation, stat(self.sidecar), stat(self.path)

    def _refuse(self, repair: bool, generation: int, why: str) -> None:
        """Unless repairing, raise GraphUnavailableError, and remember it until the files or database change."""
        if repair:
            return
        self._rows = None
        reason = f"the meanings index {self.sidecar.stem} is {why}"
        self._refused = (self._files_now(generation), reason)
        raise GraphUnavailableError(reason)

    def is_saved(self, store: Store) -> bool:
        """Whether the files hold these vectors as of ``store``'s generation: the sidecar says so, and the rows'
        file has the size and time it was written with, or, below EXACT_BELOW, the sidecar says there is none. A
        run that changed nothing loads and saves the rows only when they do not (its last save was killed, the file
        was replaced, or files are left from an earlier form)."""
        if self._unsaved:
            return False
        generation = store.meta.generation()
        info = self._read_sidecar()
        if (info is not None and bool(info.get("exact"))) != (store.sentences.count() < EXACT_BELOW):
            return False
        if info is None or not self._same_vectors(info) or info.get("generation") != generation:
            return False
        if any((self.folder / name.format(self.method)).exists() for name in LEGACY):
            return False
        if info.get("exact"):
            return True
        try:
            st = self.path.stat()
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == (info.get("size"), info.get("mtime_ns"))

    def _read_sidecar(self) -> dict | None:
        try:
            info = json.loads(self.sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def _same_vectors(self, info: dict) -> bool:
        """Whether sidecar ``info`` was written for this index's vectors (method fingerprint, dimensions, index)."""
        same_index = None in (self.owner, info.get("owner")) or info.get("owner") == self.owner
        return info.get("fingerprint") == self.fingerprint and info.get("dim") == self.dim and same_index

    def _load_saved(self) -> dict | None:
        """Load the rows the sidecar names and return the sidecar; None when there are none to load (missing, of
        another method or index, or damaged: logged)."""
        for _ in range(LOAD_ATTEMPTS):
            info = self._read_sidecar()
            if info is None or info.get("exact") or not self._same_vectors(info) or not self.path.exists():
                return None
            problem = self._load(info)
            if problem is None:
                return info
            if self._read_sidecar() == info:
                break  # not a writer replacing the files meanwhile: they are damaged
        log.warning("vectors %s are damaged (%s); the next `quire index` rebuilds them from the database",
                    self.sidecar.stem, problem)
        return None

    def _load(self, info: dict) -> str | None:
        """Load the rows of sidecar ``info``; what is wrong with their file, or None when they loaded. The file is
        a numpy zip: reading it checks each array's CRC-32, so damaged bytes fail here rather than rank."""
        try:
            before = self.path.stat()
            if before.st_size != info.get("size"):
                return f"{self.path.name} holds {before.st_size:,} bytes, {info.get('size')} were written"
            rows = FullRows.load(self.path, self.dim)
            if rows.live_count != info.get("count"):
                return f"{self.path.name} holds {rows.live_count:,} vectors, {info.get('count')} were written"
            after = self.path.stat()
        except (OSError, ValueError, MemoryError) as e:
            return f"{self.path.name} unreadable: {e}"
        if (after.st_ino, after.st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
            return f"{self.path.name} was replaced while it loaded"
        self._rows, self._unsaved = rows, False
        self._file = {"size": before.st_size, "mtime_ns": before.st_mtime_ns}
        return None

    def _load_exact(self, store: Store) -> None:
        """Hold every stored vector, for an exact scan; the saved rows, if any, are left as they are (a writer's
        save deletes them)."""
        self._rebuild(store)
        if self._rows is None:  # no vectors yet: still an exact index, whose sidecar says so
            self._rows = FullRows(self.dim)

    def _rebuild(self, store: Store) -> None:
        """Every stored vector read again from the database (coded once they reach EXACT_BELOW)."""
        self.wait()
        with self._lock:
            self._rows = None
            self._unsaved = True  # the sidecar, at least, may be older
        for ids, vectors in store.vectors.batches(self.method):
            self._insert(ids, vectors)

    def _catch_up(self, store: Store, most: int | None = None) -> None:
        """Add the vectors the database has and the rows lack, and hide those it no longer has; with ``most``, rows
        lacking more than that many are refused instead (:meth:`open`)."""
        wanted = store.vectors.ids(self.method)
        with self._lock:
            assert self._rows is not None  # called after saved rows loaded
            present = self._rows.live_labels()
        missing = np.setdiff1d(wanted, present)
        if most is not None and missing.size > most:
            self._refuse(False, store.meta.generation(),
                         f"{missing.size:,} sentences behind the database (an indexing run was stopped)")
        extra = np.setdiff1d(present, wanted)
        if missing.size:
            ids, vectors = store.vectors.read(self.method, missing.tolist())
            self.add(ids, vectors)
        self.remove(extra)

    def save(self, generation: int) -> None:
        """Write the rows if they changed, then the sidecar naming the database generation they match (atomic
        renames); only under the index's write lock. Rows that did not change match the new generation as well as
        the old: the database changed no vectors of this method in between, or the rows would have changed with
        them."""
        self.wait()
        self._write(generation)

    def _write(self, generation: int) -> None:
        """:meth:`save`, on the thread that inserts (nothing queued behind it can run meanwhile)."""
        with self._lock:
            if self._rows is None:
                return
            info = {"method": self.method, "fingerprint": self.fingerprint, "dim": self.dim, "owner": self.owner,
                    "generation": generation}
            if self.coded:
                if self._unsaved or self._file is None:
                    self._rows.save(self.path)
                    st = self.path.stat()
                    self._file = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
                info |= {"count": self._rows.live_count, **self._file}
            else:
                info["exact"] = True
            self._unsaved = False
        write_text(self.sidecar, json.dumps(info))
        stale = [self.folder / name.format(self.method) for name in LEGACY] + ([] if self.coded else [self.path])
        for path in stale:  # files the sidecar no longer names: of an earlier form, or rows now read from the database
            path.unlink(missing_ok=True)

    # -- changes ----------------------------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Insert vectors (unit length) under their sentence ids (after any queued by :meth:`add_later`)."""
        self.wait()
        self._insert(ids, vectors)

    def add_later(self, ids: np.ndarray, vectors: np.ndarray, *, then_save: int | None = None) -> None:
        """Queue an insert on a background thread and return at once; :meth:`wait` (and save, remove) wait for it.

        Coding a batch is numpy's work, which releases the GIL, so it overlaps the indexer's next batch. At most one
        batch waits: a second call waits for the first, which bounds the memory held by vectors not yet added.

        With ``then_save``, the same thread then saves the rows as matching that database generation (the one these
        vectors were committed in): at full size a save writes gigabytes, which the indexer would otherwise spend
        waiting rather than on its next batch.
        """
        self.wait()
        if ids.size or then_save is not None:
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quire-vectors")
            self._queued = worker.submit(self._insert_then_save, ids, vectors, then_save)
            worker.shutdown(wait=False)  # the thread ends with its one insert

    def _insert_then_save(self, ids: np.ndarray, vectors: np.ndarray, generation: int | None) -> None:
        self._insert(ids, vectors)
        if generation is not None:
            self._write(generation)

    def wait(self) -> None:
        """Finish the queued insert, if any (raising what it raised)."""
        if self._queued is not None:
            queued, self._queued = self._queued, None
            queued.result()

    def _insert(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if ids.size == 0:
            return
        with self._lock:
            self._unsaved = True
            if self._rows is None:  # a fresh index: exact until it reaches EXACT_BELOW
                self._rows = FullRows(self.dim)
            self._rows.add(ids, vectors)
            if not self.coded and self._rows.live_count >= EXACT_BELOW:
                self._rows = self._with_codes(self._rows)

    @staticmethod
    def _with_codes(rows: FullRows) -> FullRows:
        """``rows`` as int8 rows with sign codes, the projection fitted on them (under the lock)."""
        labels, held = rows.live()
        order = np.argsort(labels, kind="stable")
        coded = FullRows(held.shape[1], SignProjection.fitted(held))
        coded.add(labels[order], held[order])
        return coded

    def remove(self, ids: np.ndarray | list[int]) -> None:
        """Hide sentences from search; already-hidden or unknown ids are ignored."""
        if len(ids) == 0:
            return
        self.wait()  # a queued insert may hold some of them
        if self._rows is not None:
            with self._lock:
                self._rows.drop(ids)
            self._unsaved = True

    # -- queries ----------------------------------------------------------------------------------------------
    @property
    def live_count(self) -> int:
        """Searchable vectors."""
        return 0 if self._rows is None else self._rows.live_count

    def vectors(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of those ``ids`` held, leaving out removed and not yet added ones.

        A hybrid query needs the cosines of its lexical hits too; reading their vectors from the database costs a
        random read each (50 ms for a query's ~300 sentences on a 10 GB index whose pages are not cached), while
        these rows hold every vector in memory, the very ones its searches score.
        """
        wanted = np.asarray(ids, dtype=np.int64)
        if self._rows is None or wanted.size == 0:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        with self._lock:
            return self._rows.get(wanted)

    def search(self, query: np.ndarray, k: int, candidates: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(sentence ids, cosine similarities) of the ``k`` nearest sentences, best first. With codes, the
        ``candidates`` (CODE_CANDIDATES by default, at least 4 ``k``) nearest by code are scored exactly."""
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        with self._lock:
            if self._rows is None:
                return np.zeros(0, np.int64), np.zeros(0, np.float32)
            return self._rows.nearest(query, k, max(candidates or CODE_CANDIDATES, 4 * k))
