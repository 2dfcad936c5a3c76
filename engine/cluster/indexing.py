"""Index files into a sharded collection: the manifest first, then every shard's ordinary indexing run over the
files routed to it. Each shard is a resumable index (unchanged files are skipped by size and time, then by content
hash), so a run stopped anywhere, a killed worker or a killed driver, is finished by running it again."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engine import embed
from engine.cluster import calibration
from engine.cluster import manifest as manifests
from engine.cluster.routing import Route
from engine.config import IndexConfig
from engine.embed.centre import wants_centring
from engine.errors import ConfigError
from engine.index import Index
from engine.reports import IndexReport
from engine.text.paths import readable

log = logging.getLogger(__name__)


def index_collection(folder: Path, paths: Sequence[Path | str], shards: int | None = None, *,
                     method: str | None = None, config: IndexConfig = IndexConfig(),
                     cluster: str | None = None) -> IndexReport:
    """Index ``paths`` (files and folders) into the collection at ``folder`` of ``shards`` shards (None: as many as
    it has), on the Ray cluster at ``cluster`` ("local": one started on this machine) or, without one, shard after
    shard in this process with its reader processes. The report adds up the shards'."""
    started = time.monotonic()
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        raise ConfigError(f"{readable(os.fspath(missing[0]))} does not exist; check the path")
    if not paths:
        raise ConfigError("give the files and folders to index into the collection")
    if shards is None:
        shards = manifests.read(folder).shards
    if method is None:  # a rerun keeps the collection's method, as one index keeps its own
        method = manifests.read(folder).method if manifests.is_collection(folder) else embed.DEFAULT_METHOD
    if wants_centring(embed.load(method)):
        raise ConfigError(f"the {method} method centres its vectors on each index's own mean, so shards' cosines "
                          f"would not compare; make a collection with another method")
    made = manifests.create_or_check(folder, shards, method)
    roots = [os.path.abspath(p) for p in paths]
    folders = made.shard_folders(folder)
    if cluster is None:
        reports = []
        for i, shard in enumerate(folders):
            with Index(shard, method=made.method, config=config) as index:
                reports.append(index.add(roots, keep=Route(i, shards)))
    else:
        from engine.cluster import remote  # ray is imported only when a cluster is asked for

        remote.connect(cluster)
        reports = remote.index_shards(folders, roots, made.method, config)
    log.info("indexed %d shards: %s", shards, [r.documents for r in reports])
    calibration.calibrate(folder, folders, made.method)
    return replace(
        reports[0], documents=sum(r.documents for r in reports), sentences=sum(r.sentences for r in reports),
        unchanged=sum(r.unchanged for r in reports), removed=sum(r.removed for r in reports),
        issues=tuple(i for r in reports for i in r.issues), seconds=time.monotonic() - started,
        cancelled=any(r.cancelled for r in reports),
    )


def remove_from_collection(folder: Path, paths: Sequence[Path | str]) -> int:
    """Forget files, or everything under folders, in every shard (a folder's files are spread over all of them);
    the number of files removed."""
    made = manifests.read(folder)
    removed = 0
    for shard in made.shard_folders(folder):
        with Index(shard, create=False) as index:
            removed += index.remove(paths)
    calibration.calibrate(folder, made.shard_folders(folder), made.method)
    return removed
