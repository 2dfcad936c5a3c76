"""Full-dimension vectors beside a graph that holds fewer dimensions, or in place of a graph.

A large graph is built on its vectors' leading principal components (engine.store.vectors): inserting and walking
it read half the memory. Its answers are candidates only; these rows score them exactly, and give a hybrid query
the cosines of its lexical hits without a random database read for each. A small collection has no graph: its
rows are scanned whole (:meth:`FullRows.nearest`).
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.store.files import replace_file
from engine.store.topk import best_k
from engine.store.vectorrows import VECTOR_DTYPE
from engine.store.widen import as_float32


class FullRows:
    """Vectors by label (sentence id), appended as the graph grows, hidden as it marks labels deleted."""

    def __init__(self, dim: int, dtype: type = VECTOR_DTYPE) -> None:
        self._labels = np.zeros(0, np.int64)
        # float32 for rows that are scanned whole: numpy has no fast path for float16 arithmetic
        self._matrix: np.ndarray = np.zeros((0, dim), dtype)
        self._alive = np.zeros(0, bool)
        self._count = 0
        # rows in label order: the identity while labels only ever grew (an indexing run appends rising sentence
        # ids), else an argsort made on the first lookup after a change
        self._ascending = True
        self._order: np.ndarray | None = None
        self._ordered = self._labels
        # rising labels with no gap (one indexing run's sentence ids; dropping a row leaves its label): a label's row
        # is its distance from the first, cheaper than a binary search
        # (docs/decisions/0050-store-reads-on-the-query-path.md)
        self._dense = False

    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        """Append rows; a label added again (a catch-up after a crash) supersedes its earlier row."""
        labels = np.asarray(labels, dtype=np.int64)
        if labels.size == 0:
            return
        self._reserve(self._count + labels.size)
        end = self._count + labels.size
        rising = bool(np.all(np.diff(labels) > 0))
        if not (rising and (self._count == 0 or labels[0] > self._labels[self._count - 1])):
            self.drop(labels)  # superseded rows: hidden from get (the newest wins) and from nearest alike
            self._ascending = False
        self._labels[self._count : end] = labels
        self._matrix[self._count : end] = vectors
        self._alive[self._count : end] = True
        self._count = end
        self._order = None

    def _reserve(self, rows: int) -> None:
        if rows <= self._labels.size:
            return
        capacity = max(rows, int(self._labels.size * 1.5), 1024)
        for name in ("_labels", "_matrix", "_alive"):
            old = getattr(self, name)
            grown = np.zeros((capacity, *old.shape[1:]), old.dtype)
            grown[: self._count] = old[: self._count]
            setattr(self, name, grown)

    def drop(self, labels: Sequence[int] | np.ndarray) -> None:
        """Hide rows from :meth:`get` (unknown labels are ignored)."""
        rows = self._rows(np.asarray(labels, dtype=np.int64))
        self._alive[rows[rows >= 0]] = False

    def get(self, labels: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(labels, float32 vectors) of the live rows among ``labels``, in the order asked."""
        wanted = np.asarray(labels, dtype=np.int64)
        rows = self._rows(wanted)
        found = rows >= 0
        found[found] = self._alive[rows[found]]
        # np.take copies whole rows where indexing goes element by element: half the time for 4,096 rows
        return wanted[found], as_float32(np.take(self._matrix, rows[found], axis=0))

    @property
    def live_count(self) -> int:
        """Rows not dropped."""
        return int(np.count_nonzero(self._alive[: self._count]))

    def live(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels, float32 vectors) of every live row."""
        alive = self._alive[: self._count]
        return self._labels[: self._count][alive], as_float32(self._matrix[: self._count][alive])

    def nearest(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(labels, inner products) of the ``k`` live rows nearest ``query`` (unit vectors: cosines), best first, ties
        by row; every row is scored, so the answer is exact."""
        # numpy's own loop, one thread: a BLAS product waits for its second thread whenever the machine is busy (the
        # lexical ranking runs beside it; docs/decisions/0013-exact-scan-threshold.md)
        sims = np.einsum("ij,j->i", self._matrix[: self._count], np.asarray(query, dtype=self._matrix.dtype))
        sims[~self._alive[: self._count]] = -np.inf
        k = min(k, self.live_count)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        top = best_k(sims, np.arange(sims.size), k)
        return self._labels[top], sims[top].astype(np.float32)

    def _rows(self, labels: np.ndarray) -> np.ndarray:
        """Row of each label, -1 where absent."""
        order, ordered = self._sorted()
        if order.size == 0:
            return np.full(labels.size, -1, np.int64)
        if self._dense:
            rows = labels - ordered[0]
            return np.where((rows >= 0) & (rows < order.size), rows, -1)
        at = np.minimum(np.searchsorted(ordered, labels), order.size - 1)
        return np.where(ordered[at] == labels, order[at], -1)

    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows in label order, their labels)."""
        if self._order is None:
            if self._ascending:
                self._order = np.arange(self._count)
            else:
                # stable, and the last of equal labels kept: a re-added label's newest row wins
                order = np.argsort(self._labels[: self._count], kind="stable")
                keep = np.append(self._labels[order][1:] != self._labels[order][:-1], True)
                self._order = order[keep]
            self._ordered = self._labels[: self._count] if self._ascending else self._labels[self._order]
            count = self._count
            self._dense = self._ascending and count > 0 and int(self._ordered[-1] - self._ordered[0]) + 1 == count
        return self._order, self._ordered

    # -- persistence ------------------------------------------------------------------------------------------
    def save(self, path: Path, basis: np.ndarray) -> None:
        """Write the rows and the basis the graph was reduced with (atomically: a temporary file, then renamed)."""
        n = self._count

        def write(tmp: Path) -> None:
            with tmp.open("wb") as f:
                np.savez(f, labels=self._labels[:n], vectors=self._matrix[:n], alive=self._alive[:n], basis=basis)

        replace_file(path, write)

    @classmethod
    def load(cls, path: Path, dim: int) -> tuple[FullRows, np.ndarray]:
        """(rows, basis) as saved; OSError or ValueError when the file is missing, damaged or of another size."""
        try:
            with np.load(path) as data:
                labels, matrix, alive, basis = data["labels"], data["vectors"], data["alive"], data["basis"]
        except (zipfile.BadZipFile, KeyError, EOFError) as e:
            raise ValueError(f"{path.name} is damaged ({e})") from e
        if matrix.ndim != 2 or matrix.shape[1] != dim or not (labels.size == matrix.shape[0] == alive.size):
            raise ValueError(f"{path.name} holds vectors of another shape")
        rows = cls(dim)
        # taken as loaded, not copied: at full size the matrix is over a gigabyte
        rows._labels, rows._matrix, rows._alive, rows._count = labels, matrix, alive, labels.size
        rows._ascending = bool(np.all(np.diff(labels) > 0))
        return rows, basis.astype(np.float32)
