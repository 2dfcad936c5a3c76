"""A sharded collection opened for reading: the facade the CLI uses where a folder holds a manifest.

Each query asks every shard for its statistics of the query's words, then every shard for its ranking under the
collection's statistics, merges (:mod:`engine.cluster.search`), and has the shards that hold the shown documents
explain them. The shards are reached through :class:`Shards`: threads over :class:`engine.Index` objects in this
process, or Ray actors that keep a shard open on a cluster (:mod:`engine.cluster.remote`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from engine.cluster import calibration
from engine.cluster import manifest as manifests
from engine.cluster.routing import shard_of
from engine.cluster.search import merge, shard_depth
from engine.errors import MethodMismatchError, QueryError
from engine.index import Index
from engine.reports import IndexStatus
from engine.search import confidence
from engine.search.correction import with_correction
from engine.search.like import LikeQuery, LikeSource
from engine.search.results import Mode, SearchResponse, SearchResult
from engine.search.statistics import CollectionStatistics
from engine.store.filters import Filters

Calls = Mapping[int, tuple[tuple, dict]]  # shard -> (args, keyword args) of one method call


class Shards(Protocol):
    """Calls one :class:`engine.Index` method on some shards at once; the results by shard."""

    def call(self, method: str, calls: Calls) -> dict[int, Any]:
        """Run ``method`` of each shard named in ``calls`` with its (args, kwargs); the answers by shard."""

    def close(self) -> None:
        """Let go of the shards."""


class LocalShards:
    """The shards opened in this process, called on one thread each (their searches release the GIL in
    numpy and SQLite)."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self._indexes = [Index(folder, create=False) for folder in folders]
        self._pool = ThreadPoolExecutor(len(folders), thread_name_prefix="quire-shard")

    def call(self, method: str, calls: Calls) -> dict[int, Any]:
        """Run ``method`` of each shard named in ``calls`` on a thread each; the answers by shard."""
        futures = {shard: self._pool.submit(getattr(self._indexes[shard], method), *args, **kwargs)
                   for shard, (args, kwargs) in calls.items()}
        return {shard: future.result() for shard, future in futures.items()}

    def close(self) -> None:
        """Stop the threads; the shard indexes stay open until the collection closes them."""
        self._pool.shutdown()
        for index in self._indexes:
            index.close()


class Collection:
    """A folder holding a manifest and its shards, searched as one index (read-only: ``engine.cluster.indexing``
    writes it)."""

    def __init__(self, folder: Path, *, cluster: str | None = None) -> None:
        self.folder = folder
        self.manifest = manifests.read(folder)
        self.calibration = calibration.load(folder)
        folders = self.manifest.shard_folders(folder)
        if cluster is None:
            self.shards: Shards = LocalShards(folders)
        else:
            from engine.cluster.remote import RayShards  # ray is imported only when a cluster is asked for

            self.shards = RayShards(folders, cluster)

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the shards (their threads or their Ray actors)."""
        self.shards.close()

    def _each(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        found = self.shards.call(method, {i: (args, kwargs) for i in range(self.manifest.shards)})
        return [found[i] for i in range(self.manifest.shards)]

    def search(self, query: str, *, k: int = 10, mode: Mode | str = Mode.HYBRID, method: str | None = None,
               include_weak: bool = False, explain: bool = True, rerank_facets: bool | None = None,
               exclude: Sequence[str] = (), within: Filters = Filters(), second_look: bool = True,
               correct: bool = True) -> SearchResponse:
        """The collection's ``k`` best documents for ``query``, as :meth:`engine.Index.search` ranks one index's
        (re-ranking by facets excepted: it reads candidates of every shard after the merge)."""
        return with_correction(functools.partial(
            self._search, k=k, mode=mode, method=method, include_weak=include_weak, explain=explain,
            rerank_facets=rerank_facets, exclude=exclude, within=within, second_look=second_look), query, correct)

    def _search(self, query: str, *, k: int, mode: Mode | str, method: str | None, include_weak: bool,
                explain: bool, rerank_facets: bool | None, exclude: Sequence[str], within: Filters,
                second_look: bool) -> SearchResponse:
        """One search of ``query`` as written (:meth:`search`)."""
        started = time.perf_counter()
        mode = Mode(mode)
        if k < 1:
            raise QueryError("k must be at least 1")
        if method and method != self.manifest.method:
            raise MethodMismatchError(f"this collection was built with the {self.manifest.method} method, not "
                                      f"{method}; search without --method")
        if rerank_facets:
            raise QueryError("re-ranking by facets is not available on a sharded collection; search without it")
        collection = replace(CollectionStatistics.merged(self._each("statistics", query, mode=mode)),
                             calibration=self.calibration)
        responses = self._each("search", query, k=shard_depth(k), mode=mode, include_weak=True, explain=False,
                               rerank_facets=False, exclude=exclude, within=within, collection=collection,
                               second_look=second_look, correct=False)
        merged = merge(query, mode, k, include_weak, responses, collection.sentences, self._hashes(responses),
                       confidence.shipped(self.manifest.method))
        results = self.explain(query, merged.results) if explain and merged.results else merged.results
        return replace(merged, results=tuple(results), seconds=time.perf_counter() - started)

    def _hashes(self, responses: Sequence[SearchResponse]) -> dict[str, str]:
        """The content hash of every document the shards returned (not needed with one shard: it folds its own
        copies)."""
        if len(responses) < 2:
            return {}
        asked: Calls = {s: (([r.path for r in response.results],), {}) for s, response in enumerate(responses)
                 if response.results}
        return {path: h for found in self.shards.call("content_hashes", asked).values() for path, h in found.items()}

    def explain(self, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
        """``results`` of ``search(query, explain=False)`` explained (:meth:`engine.Index.explain`), each by the
        shard that holds its document."""
        mine: dict[int, list[int]] = {}
        for i, result in enumerate(results):
            mine.setdefault(shard_of(result.path, self.manifest.shards), []).append(i)
        explained = self.shards.call("explain", {s: ((query, [results[i] for i in at]), {}) for s, at in mine.items()})
        out = list(results)
        for shard, at in mine.items():
            for i, result in zip(at, explained[shard]):
                out[i] = result
        return out

    def is_current(self) -> bool:
        """Whether every shard is as it was when opened (:meth:`engine.Index.is_current`)."""
        return all(self._each("is_current"))

    def search_like(self, source: LikeSource, *, k: int = 10, mode: Mode | str = Mode.SEMANTIC,
                    method: str | None = None, include_weak: bool = False, explain: bool = True,
                    rerank_facets: bool | None = None, within: Filters = Filters(), second_look: bool = True
                    ) -> SearchResponse:
        """Other documents like an indexed one (:meth:`engine.Index.search_like`): the shard its path routes to
        makes the query, every shard answers it. Copies of the source with the same content are left out where
        they share its shard."""
        query = self._like_query(source)
        return self.search(query.text, k=k, mode=mode, method=method, include_weak=include_weak, explain=explain,
                           rerank_facets=rerank_facets, exclude=query.exclude, within=within, correct=False,
                           second_look=second_look)

    def _like_query(self, source: LikeSource) -> LikeQuery:
        """The query for ``source`` from the shard that holds it: the one its path routes to, or the one its path with
        symlinks resolved does (engine.search.like finds a document by either name)."""
        paths = dict.fromkeys((source.path, str(Path(source.path).resolve())))
        *first, last = dict.fromkeys(shard_of(p, self.manifest.shards) for p in paths)
        for shard in first:
            try:
                return self.shards.call("like_query", {shard: ((source,), {})})[shard]
            except QueryError:
                pass  # indexed under its resolved name, which routes to the last shard
        return self.shards.call("like_query", {last: ((source,), {})})[last]

    def status(self, *, files: bool = False, check: bool = False) -> IndexStatus:
        """The collection's totals over its shards (``folder``: the collection's); ``check``: every page of each
        shard checked (:meth:`engine.Index.status`)."""
        parts: list[IndexStatus] = self._each("status", files=files, check=check)
        return IndexStatus(
            folder=str(self.folder), method=self.manifest.method, fingerprint=parts[0].fingerprint,
            documents=sum(p.documents for p in parts), indexed=sum(p.indexed for p in parts),
            skipped=sum(p.skipped for p in parts), failed=sum(p.failed for p in parts),
            sentences=sum(p.sentences for p in parts), roots=tuple(dict.fromkeys(r for p in parts for r in p.roots)),
            methods_embedded=parts[0].methods_embedded, bytes_on_disk=sum(p.bytes_on_disk for p in parts),
            files=tuple(sorted((f for p in parts for f in p.files), key=lambda f: f.path)),
        )
