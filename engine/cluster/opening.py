"""Open a folder for searching, whichever it holds: one index, or a sharded collection's manifest and shards."""

from __future__ import annotations

from pathlib import Path

from engine.cluster import manifest
from engine.cluster.collection import Collection
from engine.errors import ConfigError
from engine.index import Index
from engine.locations import default_index_dir
from engine.searchable import Searchable


def open_index(folder: Path | None = None, *, cluster: str | None = None) -> Searchable:
    """The index at ``folder`` (None: the default one) opened read-only, or the sharded collection there when it
    holds a manifest, its shards worked on by the Ray cluster at ``cluster`` or, without one, on threads here.

    Raises :class:`engine.errors.IndexNotFoundError` where nothing is indexed, and ConfigError for a cluster asked
    to work on one index.
    """
    if manifest.is_collection(folder):
        return Collection(folder, cluster=cluster)
    if cluster is not None:
        raise ConfigError(f"{folder or default_index_dir()} holds one index, not a sharded collection: a cluster "
                          f"works on a collection")
    return Index(folder, create=False)
