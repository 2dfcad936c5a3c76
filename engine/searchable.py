"""What the command line and the window search: one index (:class:`engine.Index`) or a sharded collection
(:class:`engine.cluster.collection.Collection`), both opened by :func:`engine.open_index` (docs/decisions/0052).

Only the reads the edges make are here; writing (``add``, ``remove``) belongs to :class:`engine.Index` and to
:mod:`engine.cluster.indexing`, as a collection is written shard by shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from engine.reports import IndexStatus
    from engine.search.like import LikeSource
    from engine.search.results import Mode, SearchResponse, SearchResult
    from engine.store.filters import Filters


@runtime_checkable
class Searchable(Protocol):
    """An index or a collection opened for reading: a context manager that searches, explains and reports."""

    def __enter__(self) -> Searchable: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None:
        """Let go of the database files (and a collection's shards)."""

    def search(self, query: str, *, k: int = 10, mode: Mode | str = ..., method: str | None = None,
               include_weak: bool = False, explain: bool = True, rerank_facets: bool | None = None,
               exclude: Sequence[str] = (), within: Filters = ..., second_look: bool = True,
               correct: bool = True) -> SearchResponse:
        """The ``k`` best documents for ``query`` (:meth:`engine.Index.search`)."""

    def search_like(self, source: LikeSource, *, k: int = 10, mode: Mode | str = ..., method: str | None = None,
                    include_weak: bool = False, explain: bool = True, rerank_facets: bool | None = None,
                    within: Filters = ..., second_look: bool = True) -> SearchResponse:
        """Other documents like an indexed one (:meth:`engine.Index.search_like`)."""

    def explain(self, query: str, results: Sequence[SearchResult]) -> list[SearchResult]:
        """``results`` of ``search(query, explain=False)`` explained (:meth:`engine.Index.explain`)."""

    def status(self, *, files: bool = False, check: bool = False) -> IndexStatus:
        """Counts, roots and (with ``files``) every file's status (:meth:`engine.Index.status`)."""

    def is_current(self) -> bool:
        """Whether what was opened still matches the files on disk (:meth:`engine.Index.is_current`)."""
