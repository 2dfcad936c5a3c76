"""Symbolic links: indexing never leaves the folder through one, and each odd link gets its own reason.

A link inside the folder to ``/etc/hostname`` used to index that file, and a link to ``/dev/zero`` was reported
as a broken link.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from engine.filestate import FileState

SECRET = "The vault combination is kept by the night porter."


def run(*args: str) -> dict:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    (docs / "notes").mkdir(parents=True)
    outside.mkdir()
    (docs / "notes" / "tides.txt").write_text("Spring tides follow the new and the full moon.")
    (outside / "secret.txt").write_text(SECRET)
    os.symlink(outside / "secret.txt", docs / "secret-link.txt")
    os.symlink(outside, docs / "outside-folder")
    os.symlink("notes/tides.txt", docs / "tides-link.txt")  # inside: the same file, indexed once
    os.symlink("notes", docs / "notes-link")
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", docs / "zero")
    return docs, outside


def test_links_do_not_leave_the_folder(folders: tuple[Path, Path], tmp_path: Path) -> None:
    docs, _ = folders
    db = str(tmp_path / "index")
    report = run("index", str(docs), "--db", db, "--workers", "0")
    assert report["documents"] == 1
    files = {Path(f["path"]).name: f for f in run("status", "--db", db)["files"]}
    for name in ("secret-link.txt", "outside-folder"):
        assert (files[name]["status"], files[name]["reason"]) == (
            FileState.SKIPPED, "symbolic link leads outside the indexed folder"
        )
    assert "secret.txt" not in files and files["tides.txt"]["status"] == FileState.INDEXED
    assert run("search", "vault combination night porter", "--db", db, "--mode", "lexical")["results"] == []


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_link_to_a_device_is_not_called_broken(folders: tuple[Path, Path], tmp_path: Path) -> None:
    docs, _ = folders
    db = str(tmp_path / "index")
    run("index", str(docs), "--db", db, "--workers", "0")
    zero = next(f for f in run("status", "--db", db)["files"] if Path(f["path"]).name == "zero")
    assert zero["status"] == FileState.SKIPPED
    assert "not a regular file" in zero["reason"] and "broken" not in zero["reason"]


def test_a_link_into_another_indexed_folder_is_followed(folders: tuple[Path, Path], tmp_path: Path) -> None:
    docs, outside = folders
    db = str(tmp_path / "index")
    report = run("index", str(docs), str(outside), "--db", db, "--workers", "0")
    assert report["documents"] == 2
    found = run("search", "vault combination night porter", "--db", db, "--mode", "lexical", "-k", "1")["results"]
    assert found and Path(found[0]["path"]).read_text() == SECRET
    assert not any("outside the indexed folder" in s["reason"] for s in report["skipped"])
