"""An index's vectors in memory, by label (sentence id): scanned whole for a query's nearest, and read for the
cosines of a hybrid query's lexical hits without a random database read for each.

A small collection's rows are all scored (:meth:`FullRows.nearest`). A large one's rows carry sign codes
(engine.store.signcodes): a scan of the codes picks the candidates, and only those are scored exactly.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.store import signcodes
from engine.store.files import replace_file
from engine.store.signcodes import SignProjection
from engine.store.topk import best_k


class FullRows:
    """Vectors by label (sentence id), appended as an index grows, hidden as its sentences are removed."""

    def __init__(self, dim: int, codes: SignProjection | None = None) -> None:
        self._labels = np.zeros(0, np.int64)
        # float32 for rows that are scanned whole; int8 for coded rows, of which a query reads its candidates only
        self._matrix: np.ndarray = np.zeros((0, dim), np.float32 if codes is None else np.int8)
        self._alive = np.zeros(0, bool)
        self._count = 0
        # the rows' sign codes, a column each, and the projection that made them (None: every row is scored)
        self.projection = codes
        self._codes = np.zeros((signcodes.WORDS, 0), np.uint64)
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
        if self.projection is not None:
            self._matrix[self._count : end] = self.projection.narrowed(vectors)
            self._codes[:, self._count : end] = self.projection.codes(vectors)
        else:
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
        if self.projection is not None:
            codes = np.zeros((signcodes.WORDS, capacity), np.uint64)
            codes[:, : self._count] = self._codes[:, : self._count]
            self._codes = codes

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
        return wanted[found], self._widened(np.take(self._matrix, rows[found], axis=0))

    @property
    def live_count(self) -> int:
        """Rows not dropped."""
        return int(np.count_nonzero(self._alive[: self._count]))

    def live(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels, float32 vectors) of every live row."""
        alive = self._alive[: self._count]
        return self._labels[: self._count][alive], self._widened(self._matrix[: self._count][alive])

    def live_labels(self) -> np.ndarray:
        """The labels of every live row, in row order."""
        return self._labels[: self._count][self._alive[: self._count]]

    def _widened(self, rows: np.ndarray) -> np.ndarray:
        return rows if self.projection is None else self.projection.widened(rows)

    def nearest(self, query: np.ndarray, k: int, candidates: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(labels, inner products) of the ``k`` live rows nearest ``query`` (unit vectors: cosines), best first, ties
        by row. Rows with codes score the ``candidates`` (at least ``k``) whose codes are nearest the query's; others
        score every row, so the answer is exact."""
        k = min(k, self.live_count)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        rows = self._code_candidates(query, max(k, candidates)) if self.projection is not None else None
        matrix = self._matrix[: self._count] if rows is None else self._widened(np.take(self._matrix, rows, axis=0))
        # numpy's own loop, one thread: a BLAS product waits for its second thread whenever the machine is busy (the
        # lexical ranking runs beside it; docs/decisions/0013-exact-scan-threshold.md)
        sims = np.einsum("ij,j->i", matrix, np.asarray(query, dtype=matrix.dtype))
        if rows is None:
            rows = np.arange(self._count)
            sims[~self._alive[: self._count]] = -np.inf
        top = best_k(sims, rows, k)
        return self._labels[rows[top]], sims[top].astype(np.float32)

    def _code_candidates(self, query: np.ndarray, n: int) -> np.ndarray:
        """Rows of the ``n`` live codes nearest the query's (all live rows when there are no more)."""
        assert self.projection is not None  # only rows with codes are scanned by them
        dist = signcodes.distances(self._codes[:, : self._count], self.projection.codes(query[None, :]))
        alive = self._alive[: self._count]
        dist[~alive] = signcodes.BITS + 1  # past every live distance
        return signcodes.nearest(dist, min(n, int(np.count_nonzero(alive))))

    @property
    def dropped(self) -> int:
        """Rows hidden by :meth:`drop` or superseded, which still take memory and scan time."""
        return self._count - self.live_count

    def compacted(self) -> FullRows:
        """The live rows alone, with their codes, in label order."""
        live = np.flatnonzero(self._alive[: self._count])
        kept = live[np.argsort(self._labels[live], kind="stable")]
        rows = FullRows(self._matrix.shape[1], self.projection)
        rows._labels, rows._alive, rows._matrix = self._labels[kept], np.ones(kept.size, bool), self._matrix[kept]
        if self.projection is not None:
            rows._codes = np.ascontiguousarray(self._codes[:, kept])
        rows._count = kept.size
        return rows

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
    def save(self, path: Path) -> None:
        """Write the rows with their codes and projection (atomically: a temporary file, then renamed)."""
        n, projection = self._count, self.projection
        assert projection is not None  # rows without codes are read from the database, not saved

        def write(tmp: Path) -> None:
            with tmp.open("wb") as f:
                np.savez(f, labels=self._labels[:n], vectors=self._matrix[:n], alive=self._alive[:n],
                         codes=self._codes[:, :n], centre=projection.centre, projection=projection.projection,
                         scale=projection.scale)

        replace_file(path, write)

    @classmethod
    def load(cls, path: Path, dim: int) -> FullRows:
        """Rows with codes as saved; OSError or ValueError when the file is missing, damaged or of another size."""
        try:
            with np.load(path) as data:
                labels, matrix, alive, codes = data["labels"], data["vectors"], data["alive"], data["codes"]
                projection = SignProjection.checked(data["centre"], data["projection"], data["scale"])
        except (zipfile.BadZipFile, KeyError, EOFError) as e:
            raise ValueError(f"{path.name} is damaged ({e})") from e
        if (matrix.ndim != 2 or matrix.shape[1] != dim or matrix.dtype != np.int8 or projection.centre.size != dim
                or codes.shape != (signcodes.WORDS, labels.size) or not (labels.size == matrix.shape[0] == alive.size)):
            raise ValueError(f"{path.name} holds vectors of another shape")
        rows = cls(dim, codes=projection)
        # taken as loaded, not copied: at full size the matrix is over a gigabyte
        rows._labels, rows._matrix, rows._alive, rows._count = labels, matrix, alive, labels.size
        rows._codes = codes
        rows._ascending = bool(np.all(np.diff(labels) > 0))
        return rows
