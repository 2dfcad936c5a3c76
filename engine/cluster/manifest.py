"""The manifest of a sharded collection: a JSON file beside the shard folders saying how many there are and what
they hold, so that every command can tell a collection from a single index and open its shards."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from engine.errors import ConfigError
from engine.store import privacy
from engine.store.schema import SCHEMA_VERSION

MANIFEST = "collection.json"
FORMAT = 1


@dataclass(frozen=True)
class Manifest:
    """``shards`` index folders named ``shard-000``...; documents are routed by path (:mod:`engine.cluster.routing`),
    every shard embeds with ``method`` and stores ``schema``."""

    shards: int
    method: str
    schema: int = SCHEMA_VERSION
    format: int = FORMAT

    def shard_folders(self, folder: Path) -> list[Path]:
        """The shard folders of a collection at ``folder``, in shard order."""
        return [folder / f"shard-{i:03d}" for i in range(self.shards)]

    def to_json(self) -> dict:
        """The manifest as written to ``collection.json``."""
        return {"format": self.format, "shards": self.shards, "method": self.method, "schema": self.schema}


def is_collection(folder: Path | None) -> TypeGuard[Path]:
    """Whether ``folder`` holds a sharded collection rather than a single index."""
    return folder is not None and (folder / MANIFEST).is_file()


def read(folder: Path) -> Manifest:
    """The manifest of the collection at ``folder``; QuireError when it is missing or unreadable."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        manifest = Manifest(int(data["shards"]), str(data["method"]), int(data["schema"]), int(data["format"]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{folder / MANIFEST} is not a readable collection manifest ({e})") from e
    if manifest.format != FORMAT:
        raise ConfigError(f"{folder / MANIFEST} is format {manifest.format}; this quire reads format {FORMAT}")
    return manifest


def create_or_check(folder: Path, shards: int, method: str) -> Manifest:
    """The collection's manifest, written if the folder holds none; a rerun must ask for the same layout, as moving
    documents between shards would re-index them all."""
    if shards < 1:
        raise ConfigError("--shards must be at least 1")
    if is_collection(folder):
        manifest = read(folder)
        if manifest.shards != shards or manifest.method != method:
            raise ConfigError(f"{folder} holds {manifest.shards} shards of {manifest.method}, not {shards} of "
                              f"{method}; index into a new folder to change the layout")
        return manifest
    privacy.make_folder(folder)  # its shards' owner's alone, as an index folder is
    if any(folder.iterdir()):
        raise ConfigError(f"{folder} is not empty and holds no collection manifest; give an empty or new folder")
    manifest = Manifest(shards, method)
    partial = folder / (MANIFEST + ".part")  # written whole or not at all: a killed run leaves no half manifest
    partial.write_text(json.dumps(manifest.to_json(), indent=1), encoding="utf-8")
    os.replace(partial, folder / MANIFEST)
    return manifest
