"""The sharded collection's layout without a cluster: the manifest and the routing of documents to shards."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.cluster import manifest
from engine.cluster.routing import Route, shard_of
from engine.errors import ConfigError


def test_routing_is_stable_and_spreads_documents() -> None:
    paths = [f"/data/docs/file-{i}.txt" for i in range(2000)]
    first = [shard_of(p, 4) for p in paths]
    assert first == [shard_of(p, 4) for p in paths]  # no per-process salt: the same in every run
    counts = Counter(first)
    assert set(counts) == {0, 1, 2, 3} and min(counts.values()) > 400
    assert shard_of("docs/a.txt", 4) == shard_of(str(Path("docs/a.txt").absolute()), 4)
    assert [Route(s, 4)(paths[0]) for s in range(4)].count(True) == 1


def test_manifest_is_written_once_and_checked_on_rerun(tmp_path: Path) -> None:
    folder = tmp_path / "collection"
    made = manifest.create_or_check(folder, 4, "static")
    assert manifest.is_collection(folder) and not manifest.is_collection(tmp_path)
    assert json.loads((folder / manifest.MANIFEST).read_text())["shards"] == 4
    assert manifest.read(folder) == made
    assert [p.name for p in made.shard_folders(folder)] == ["shard-000", "shard-001", "shard-002", "shard-003"]
    assert manifest.create_or_check(folder, 4, "static") == made
    with pytest.raises(ConfigError, match="holds 4 shards"):
        manifest.create_or_check(folder, 2, "static")


def test_an_index_folder_is_not_made_into_a_collection(tmp_path: Path) -> None:
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "quire.db").write_bytes(b"")
    with pytest.raises(ConfigError, match="not empty"):
        manifest.create_or_check(tmp_path / "index", 2, "static")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / manifest.MANIFEST).write_text("{")
    with pytest.raises(ConfigError, match="not a readable collection manifest"):
        manifest.read(tmp_path / "bad")


def test_indexing_into_a_collection_follows_its_manifest(tmp_path: Path) -> None:
    """A folder holding only a manifest is a collection: indexing fills its shards, with the manifest's method."""
    from conftest import write_corpus

    from engine import IndexConfig
    from engine.cluster.indexing import index_collection

    docs = write_corpus(tmp_path / "docs")
    folder = tmp_path / "collection"
    folder.mkdir()
    (folder / manifest.MANIFEST).write_text(json.dumps(manifest.Manifest(2, "static").to_json()))
    report = index_collection(folder, [docs], 2, config=IndexConfig(workers=0))
    assert report.documents == len(list(docs.rglob("*.*"))) and report.method == "static"
    assert [p.name for p in sorted(folder.glob("shard-*"))] == ["shard-000", "shard-001"]
