"""The HNSW side of an index: one hnswlib graph per embedding method, labels = sentence ids (settings:
engine.store.graphsettings). Below EXACT_BELOW sentences there is no graph: the vectors are held in memory and all
scored. The vectors in SQLite are the truth; a graph file's sidecar records the database generation it matches and
the file's size, count and digest, so a graph missing, damaged, of another method or index, or behind is caught up
or rebuilt and a crash between a commit and a save loses nothing. Only the index's writer saves (engine.index).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import hnswlib
import numpy as np

from engine.errors import GraphUnavailableError
from engine.store.database import Store
from engine.store.files import array_digest, file_digest, replace_file, write_text
from engine.store.fullrows import FullRows
from engine.store.graphsettings import (
    ADD_CHUNK,
    ADD_THREADS,
    EXACT_BELOW,
    GRAPH_DIM,
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_M,
    PROJECT_FROM,
    REBUILD_DELETED_SHARE,
    RERANK,
)
from engine.store.hugepages import advise_large_mappings

log = logging.getLogger(__name__)

# A search catches a graph up by at most this many vectors (a fraction of a second of the static model's); a graph
# further behind is caught up by the next indexing run (docs/decisions/0030-graph-repaired-by-the-indexer.md).
READER_CATCH_UP = 20_000
# Loading retries once when the files fail their checks but the sidecar changed meanwhile: a writer replaced them.
LOAD_ATTEMPTS = 2
# Temporary files of the graphs (engine.store.files), which a run removes when a killed one left them.
LEFTOVERS = "hnsw-*.tmp"


class VectorIndex:
    """A persisted hnswlib index for one method, kept consistent with the database.

    Reading never writes: :meth:`open` catches a graph up, or rebuilds it, in memory, and only the holder of the
    index's write lock calls :meth:`save` (searches that rewrote the files raced each other and the writer).
    """

    def __init__(self, folder: Path, method: str, fingerprint: str, dim: int, *, owner: str | None = None) -> None:
        self.path = folder / f"hnsw-{method}.bin"
        # a reduced graph has its own file, so that a crash between writing it and the sidecar leaves the sidecar
        # naming the graph it was written with
        self.reduced_path = folder / f"hnsw-{method}.reduced.bin"
        self.rows_path = folder / f"hnsw-{method}.rows.npz"
        self.sidecar = folder / f"hnsw-{method}.json"
        self.method, self.fingerprint, self.dim = method, fingerprint, dim
        # the database's id (Store.index_id): a graph whose sidecar names another was copied from another index
        self.owner = owner
        self._lock = threading.Lock()
        self._index: hnswlib.Index | None = None
        self._basis: np.ndarray | None = None  # (dim, GRAPH_DIM) once the graph is reduced
        # the full vectors beside a reduced graph, or, with no graph (_index None), every vector: the exact form
        self._rows: FullRows | None = None
        self._deleted = 0
        self._queued: Future | None = None
        # whether the graph in memory differs from its file: saving a large one unchanged takes seconds (decision 0050)
        self._unsaved = False
        # the graph file as loaded or last written: {"size", "mtime_ns", "digest"}, recorded in the sidecar
        self._file: dict | None = None
        self._opened = False
        # (what the files and database were, why) when a search last found the graph unusable (open, repair=False)
        self._refused: tuple[tuple, str] | None = None

    # -- lifecycle --------------------------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` has loaded (or built) the graph."""
        return self._opened

    def open(self, store: Store, *, repair: bool = True) -> None:
        """Load the graph and bring it in line with ``store`` in memory (catch up or rebuild); writes nothing.

        Without ``repair`` (a search), a graph that would have to be rebuilt, or caught up by more than
        READER_CATCH_UP vectors, is not: that took minutes inside the first search. GraphUnavailableError says why,
        and the next indexing run repairs it (docs/decisions/0030-graph-repaired-by-the-indexer.md).
        """
        generation = int(store.get_meta("generation", 0))
        if store.sentence_count() < EXACT_BELOW:
            self._load_exact(store)
            self._opened = True
            return
        if not repair and self._refused is not None and self._refused[0] == self._files_now(generation):
            raise GraphUnavailableError(self._refused[1])  # as the last search found it: not loaded again
        info = self._load_saved()
        if info is None:
            self._refuse(repair, generation, "missing or damaged")
            log.warning("rebuilding the graph of meanings %s from the %d vectors in the database (it was missing or "
                        "damaged); searches rank by words until it is saved", self.sidecar.stem, store.sentence_count())
            self._rebuild(store)
        elif info.get("generation") != generation:
            log.info("vector index %s is behind the database; catching up", self.sidecar.stem)
            self._catch_up(store, None if repair else READER_CATCH_UP)
        if (repair and self._index is not None
                and self._deleted > REBUILD_DELETED_SHARE * max(1, self._index.element_count)):
            self._rebuild(store)
        self._opened = True

    def _files_now(self, generation: int) -> tuple:
        """What a refusal of the graph depends on: its files' stats and the database generation."""
        def stat(path: Path) -> tuple | None:
            try:
                st = path.stat()
            except OSError:
                return None
            return st.st_size, st.st_mtime_ns, st.st_ino
        return generation, stat(self.sidecar), stat(self.path), stat(self.reduced_path)

    def _refuse(self, repair: bool, generation: int, why: str) -> None:
        """Unless repairing, raise GraphUnavailableError, and remember it until the files or database change."""
        if repair:
            return
        self._index = self._rows = self._basis = None
        reason = f"the graph of meanings {self.sidecar.stem} is {why}"
        self._refused = (self._files_now(generation), reason)
        raise GraphUnavailableError(reason)

    def is_saved(self, store: Store) -> bool:
        """Whether the files hold this graph as of ``store``'s generation: the sidecar says so, and the graph file
        has the size and time it was written with (cheap, unlike its digest), or, below EXACT_BELOW, the sidecar says
        there is no graph. A run that changed nothing loads and saves the graph only when they do not (its last save
        was killed, the file was replaced, or a graph is left from before small collections had none)."""
        if self._unsaved:
            return False
        generation = int(store.get_meta("generation", 0))
        info = self._read_sidecar()
        if (info is not None and bool(info.get("exact"))) != (store.sentence_count() < EXACT_BELOW):
            return False
        if info is not None and info.get("exact"):
            return self._same_vectors(info) and info.get("generation") == generation
        if info is None or not self._matches(info) or info.get("generation") != generation or "digest" not in info:
            return False
        try:
            st = self._graph_path(bool(info.get("basis"))).stat()
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == (info.get("size"), info.get("mtime_ns"))

    def _read_sidecar(self) -> dict | None:
        try:
            info = json.loads(self.sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def _graph_path(self, reduced: bool) -> Path:
        return self.reduced_path if reduced else self.path

    def _same_vectors(self, info: dict) -> bool:
        """Whether sidecar ``info`` was written for this index's vectors (method fingerprint, dimensions, index)."""
        same_index = None in (self.owner, info.get("owner")) or info.get("owner") == self.owner
        return info.get("fingerprint") == self.fingerprint and info.get("dim") == self.dim and same_index

    def _matches(self, info: dict) -> bool:
        return (not info.get("exact") and self._same_vectors(info)
                and self._graph_path(bool(info.get("basis"))).exists())

    def _load_saved(self) -> dict | None:
        """Load the graph the sidecar names and return the sidecar; None when there is none to load (missing, of
        another method or index, or damaged: logged)."""
        for _ in range(LOAD_ATTEMPTS):
            info = self._read_sidecar()
            if info is None or not self._matches(info):
                return None
            problem = self._load(info)
            if problem is None:
                return info
            if self._read_sidecar() == info:
                break  # not a writer replacing the files meanwhile: they are damaged
        log.warning("vector index %s is damaged (%s); the next `quire index` rebuilds it from the vectors in the "
                    "database", self.sidecar.stem, problem)
        return None

    def _load(self, info: dict) -> str | None:
        """Load the graph of sidecar ``info``; what is wrong with its files, or None when it loaded."""
        rows, basis, graph = None, None, self._graph_path(bool(info.get("basis")))
        try:
            before = graph.stat()
            # hnswlib trusts what it reads (random bytes in the graph crashed every search): the file must be the
            # one written. A sidecar written before digests were recorded has none: a writer adds one when it next
            # saves (VectorIndex.is_saved).
            if "digest" in info:
                if before.st_size != info.get("size"):
                    return f"{graph.name} holds {before.st_size:,} bytes, {info.get('size')} were written"
                if file_digest(graph) != info["digest"]:
                    return f"{graph.name} differs from the file written (its checksum does not match)"
            if info.get("basis"):
                rows, basis = FullRows.load(self.rows_path, self.dim)
                if array_digest(basis) != info["basis"]:
                    return "the basis differs from the one the sidecar names"
            index = hnswlib.Index(space="ip", dim=self.dim if basis is None else basis.shape[1])
            index.load_index(str(graph), max_elements=int(info.get("capacity", 0)) or 0)
            if "count" in info and index.element_count != info["count"]:
                return f"{graph.name} holds {index.element_count:,} vectors, {info['count']} were written"
            after = graph.stat()
        except (RuntimeError, OSError, ValueError, MemoryError) as e:
            return f"{graph.name} unreadable: {e}"
        if (after.st_ino, after.st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
            return f"{graph.name} was replaced while it loaded"
        index.set_ef(HNSW_EF_SEARCH)
        advise_large_mappings()  # for what the graph grows into; khugepaged may merge the loaded pages later
        self._index, self._rows, self._basis = index, rows, basis
        self._deleted = int(info.get("deleted", 0))
        self._unsaved = False
        self._file = {"size": before.st_size, "mtime_ns": before.st_mtime_ns, "digest": info.get("digest")}
        return None

    def _new_index(self, capacity: int) -> hnswlib.Index:
        index = hnswlib.Index(space="ip", dim=self.dim if self._basis is None else self._basis.shape[1])
        index.init_index(max_elements=max(1024, capacity), M=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION, random_seed=42)
        index.set_ef(HNSW_EF_SEARCH)
        advise_large_mappings()  # inserting is bound by memory latency (engine.store.hugepages)
        return index

    def _load_exact(self, store: Store) -> None:
        """Hold every stored vector, for an exact scan, and no graph; the graph files, if any, are left as they are
        (a writer's save deletes them)."""
        self.wait()
        with self._lock:
            self._index, self._basis, self._rows = None, None, FullRows(self.dim, np.float32)
            self._deleted = 0
            self._unsaved = True  # the sidecar, at least, may be older
        for ids, vectors in store.vector_batches(self.method):
            self._insert(ids, vectors)

    def _rebuild(self, store: Store) -> None:
        self.wait()
        with self._lock:
            # a basis fitted before is kept: it describes the method's vectors, not the graph
            self._index = self._new_index(int(store.sentence_count() * 1.2))  # a hint: inserts grow it as needed
            self._rows = None if self._basis is None else FullRows(self.dim)
            self._deleted = 0
            self._unsaved = True
        for ids, vectors in store.vector_batches(self.method):
            self._insert(ids, vectors)

    def _catch_up(self, store: Store, most: int | None = None) -> None:
        """Add the vectors the database has and the graph lacks, and hide those it no longer has; with ``most``, a
        graph lacking more than that many is refused instead (:meth:`open`)."""
        wanted = store.vector_ids(self.method)
        with self._lock:
            assert self._index is not None  # called after a saved graph loaded
            present = np.asarray(self._index.get_ids_list(), dtype=np.int64)
        missing = np.setdiff1d(wanted, present)
        if most is not None and missing.size > most:
            self._refuse(False, int(store.get_meta("generation", 0)),
                         f"{missing.size:,} sentences behind the database (an indexing run was stopped)")
        extra = np.setdiff1d(present, wanted)
        if missing.size:
            ids, vectors = store.vectors(self.method, missing.tolist())
            self.add(ids, vectors)
        self.remove(extra)

    def save(self, generation: int) -> None:
        """Write the graph if it changed, then the sidecar naming the database generation it matches (atomic
        renames); only under the index's write lock. A graph that did not change matches the new generation as well
        as the old: the database changed no vectors of this method in between, or the graph would have changed
        with them."""
        self.wait()
        self._write(generation)

    def _write(self, generation: int) -> None:
        """:meth:`save`, on the thread that inserts (nothing queued behind it can run meanwhile)."""
        with self._lock:
            if self._index is None:
                self._write_exact(generation)
                return
            reduced = self._basis is not None
            graph = self._graph_path(reduced)
            stale = (self.path,) if reduced else (self.reduced_path, self.rows_path)
            if self._unsaved:
                if self._rows is not None:
                    assert self._basis is not None  # a graph keeps full rows only when it is reduced
                    self._rows.save(self.rows_path, self._basis)  # before the graph: rows for all it holds
                index = self._index
                replace_file(graph, lambda tmp: index.save_index(str(tmp)))
                self._unsaved, self._file = False, None
            info = {"method": self.method, "fingerprint": self.fingerprint, "dim": self.dim, "owner": self.owner,
                    "generation": generation, "capacity": self._index.get_max_elements(), "deleted": self._deleted,
                    "count": self._index.element_count,
                    "basis": None if self._basis is None else array_digest(self._basis)}
        # hashed outside the lock, so searches go on meanwhile: only this writer replaces the file
        if self._file is None or self._file["digest"] is None:
            st = graph.stat()
            self._file = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "digest": file_digest(graph)}
        write_text(self.sidecar, json.dumps({**info, **self._file}))
        for path in stale:  # the files of the graph's other form, now that the sidecar no longer names them
            path.unlink(missing_ok=True)

    def _write_exact(self, generation: int) -> None:
        """:meth:`_write` with no graph: a sidecar that says so, and no graph files (under the lock)."""
        if self._rows is None:
            return
        write_text(self.sidecar, json.dumps({"method": self.method, "fingerprint": self.fingerprint, "dim": self.dim,
                                             "owner": self.owner, "generation": generation, "exact": True}))
        self._unsaved = False
        for path in (self.path, self.reduced_path, self.rows_path):
            path.unlink(missing_ok=True)

    # -- changes ----------------------------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Insert vectors (unit length) under their sentence ids (after any queued by :meth:`add_later`)."""
        self.wait()
        self._insert(ids, vectors)

    def add_later(self, ids: np.ndarray, vectors: np.ndarray, *, then_save: int | None = None) -> None:
        """Queue an insert on a background thread and return at once; :meth:`wait` (and save, remove) wait for it.

        hnswlib releases the GIL while it inserts, so the graph grows while the indexer tokenises, embeds and writes
        the next batch; inserting is the largest share of indexing time. At most one batch waits: a second call
        waits for the first, which bounds the memory held by vectors not yet in the graph.

        With ``then_save``, the same thread then saves the graph as matching that database generation (the one these
        vectors were committed in): at full size a save writes 3.6 GB in 8-14 s, which the indexer would otherwise
        spend waiting rather than on its next batch.
        """
        self.wait()
        if ids.size or then_save is not None:
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="quire-hnsw")
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
        self._unsaved = True
        if self._index is None:
            with self._lock:
                if self._rows is None:  # a fresh index: exact until it reaches EXACT_BELOW
                    self._rows = FullRows(self.dim, np.float32)
                self._rows.add(ids, vectors)
                if self._rows.live_count >= EXACT_BELOW:
                    labels, held = self._rows.live()
                    order = np.argsort(labels, kind="stable")
                    self._start_graph(labels[order], held[order], np.zeros((0, self.dim), np.float32),
                                      int(labels.size * 1.2))
            return
        for start in range(0, ids.size, ADD_CHUNK):
            chunk_ids = ids[start : start + ADD_CHUNK]
            chunk = np.ascontiguousarray(vectors[start : start + ADD_CHUNK], dtype=np.float32)
            with self._lock:
                needed = self._index.element_count + chunk_ids.size
                # only on crossing the threshold: a full graph that is already larger (built by an earlier quire)
                # stays as it is until it is next rebuilt, rather than hold searches for minutes re-inserting it
                if self._basis is None and self.dim > GRAPH_DIM and self._index.element_count < PROJECT_FROM <= needed:
                    labels = np.sort(np.asarray(self._index.get_ids_list(), dtype=np.int64))  # rows by label
                    self._start_graph(*self._graph_items(labels), chunk, self._index.get_max_elements())
                if needed > self._index.get_max_elements():
                    self._index.resize_index(max(needed, int(self._index.get_max_elements() * 1.5)))
                    advise_large_mappings()
                if self._rows is not None:
                    self._rows.add(chunk_ids, chunk)
                self._index.add_items(self._project(chunk), chunk_ids, num_threads=ADD_THREADS)

    def _start_graph(self, labels: np.ndarray, held: np.ndarray, incoming: np.ndarray, capacity: int) -> None:
        """A new graph of ``held`` vectors (labels in rising order), to be followed by ``incoming``: reduced, with a
        basis fitted on both, when together they reach PROJECT_FROM (under the lock)."""
        if self.dim > GRAPH_DIM and labels.size + len(incoming) >= PROJECT_FROM:
            sample = np.concatenate([held, incoming])
            # uncentred projection, renormalised: the graph's inner products rank as cosines in the reduced space
            self._basis = np.linalg.svd(sample - sample.mean(0), full_matrices=False)[2][:GRAPH_DIM].T.astype(np.float32)
            self._rows = FullRows(self.dim)
        else:
            self._basis = self._rows = None
        self._index = self._new_index(capacity)
        self._deleted = 0
        if labels.size:
            if self._rows is not None:
                self._rows.add(labels, held)
            self._index.add_items(self._project(held), labels, num_threads=ADD_THREADS)

    def _project(self, vectors: np.ndarray) -> np.ndarray:
        if self._basis is None:
            return vectors
        reduced = vectors @ self._basis
        reduced /= np.maximum(np.linalg.norm(reduced, axis=1, keepdims=True), 1e-12)
        return reduced

    def remove(self, ids: np.ndarray | list[int]) -> None:
        """Hide sentences from search (hnswlib ``mark_deleted``); already-hidden or unknown ids are ignored."""
        if len(ids) == 0:
            return
        self.wait()  # a queued insert may hold some of them
        if self._index is None:
            if self._rows is not None:
                with self._lock:
                    self._rows.drop(ids)
                self._unsaved = True
            return
        with self._lock:
            for label in ids:
                try:
                    self._index.mark_deleted(int(label))
                    self._deleted += 1
                    self._unsaved = True
                except RuntimeError:
                    pass  # not present, or deleted before
            if self._rows is not None:
                self._rows.drop(ids)

    # -- queries ----------------------------------------------------------------------------------------------
    @property
    def live_count(self) -> int:
        """Searchable elements."""
        if self._index is None:
            return 0 if self._rows is None else self._rows.live_count
        return self._index.element_count - self._deleted

    def vectors(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 vectors) of those ``ids`` the graph holds, leaving out deleted and not yet inserted ones.

        A hybrid query needs the cosines of its lexical hits too; reading their vectors from the database costs a
        random read each (50 ms for a query's ~300 sentences on a 10 GB index whose pages are not cached), while the
        graph (or a reduced graph's full rows) holds every vector in memory, the very ones its searches score.
        """
        wanted = np.asarray(ids, dtype=np.int64)
        if (self._index is None and self._rows is None) or wanted.size == 0:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        with self._lock:
            if self._rows is not None:
                return self._rows.get(wanted)
            return self._graph_items(wanted)

    def _graph_items(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, vectors) the graph holds of ``wanted`` (under the lock)."""
        index = self._index
        assert index is not None  # only called where there is a graph
        if wanted.size == 0:
            return wanted, np.zeros((0, index.dim), np.float32)
        try:
            return wanted, index.get_items(wanted, return_type="numpy").reshape(-1, index.dim)
        except RuntimeError:
            pass  # some are not in the graph: take them one at a time
        found, rows = [], []
        for label in wanted.tolist():
            try:
                rows.append(index.get_items([label], return_type="numpy")[0])
                found.append(label)
            except RuntimeError:
                continue
        return np.array(found, dtype=np.int64), np.stack(rows) if rows else np.zeros((0, index.dim), np.float32)

    def search(self, query: np.ndarray, k: int, ef: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(sentence ids, cosine similarities) of the ``k`` nearest sentences, best first."""
        k = min(k, self.live_count)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        query = np.asarray(query, dtype=np.float32).reshape(1, -1)
        with self._lock:
            if self._index is None:
                assert self._rows is not None  # no graph and k > 0: the rows are searched exactly
                return self._rows.nearest(query[0], k)
            wanted = k if self._rows is None else min(max(k, RERANK), self.live_count)
            self._index.set_ef(max(ef or HNSW_EF_SEARCH, wanted))
            while True:
                try:
                    labels, distances = self._index.knn_query(self._project(query), k=wanted)
                    break
                except RuntimeError:
                    # hnswlib refuses when it reaches fewer than k live elements: the count of deleted ones can run
                    # ahead of the graph after a crash, and a small graph asked for all its elements may not reach
                    # every one; so ask for a few fewer rather than fail the query (or lose half of them)
                    if wanted == 1:
                        return np.zeros(0, np.int64), np.zeros(0, np.float32)
                    wanted = wanted * 7 // 8
            if self._rows is None:
                # hnswlib's "ip" distance is 1 - dot product
                return labels[0].astype(np.int64), (1.0 - distances[0]).astype(np.float32)
            found, vectors = self._rows.get(labels[0].astype(np.int64))
        sims = vectors @ query[0]
        best = np.argsort(-sims, kind="stable")[:k]
        return found[best], sims[best].astype(np.float32)
