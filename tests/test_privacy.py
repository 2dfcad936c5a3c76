"""An index is its owner's alone (issue 58, item 2): folders 0700 and every file quire writes 0600 whatever the umask,
the default index folder's parents that quire makes included, and an index made with looser modes tightened when it
is next written. The engine never changes the umask itself (an entry point's business)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_corpus
from ondisk import modes

from engine import Index, IndexConfig

REPO = Path(__file__).resolve().parent.parent
# the CLI building a graph at any size, so that the graph files are written too (conftest.graph_always)
GRAPH_CLI = "from engine.store import vectors; vectors.EXACT_BELOW = 0; from app.cli import main; main()"


def quire(*args: str, umask: int, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    return subprocess.run([sys.executable, "-c", GRAPH_CLI, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env, preexec_fn=lambda: os.umask(umask))


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_the_default_index_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    docs = write_corpus(tmp_path / "docs")
    home = tmp_path / "home"
    home.mkdir()
    done = quire("index", str(docs), "--workers", "0", umask=umask, home=home)
    assert done.returncode == 0, done.stderr
    index = home / "data" / "quire" / "index"  # platformdirs' user data folder under XDG_DATA_HOME
    found = modes(index)
    assert {"index.db", "write.lock", "schema.lock", "vectors-static.npz", "vectors-static.json"} <= set(found)
    assert found == {name: 0o700 if name == index.name else 0o600 for name in found}  # was 755 and 644
    for made in (home / "data", home / "data" / "quire"):  # the parents quire made
        assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_the_log_and_shared_memory_files_are_private_while_the_index_is_open(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
            idx.add([write_corpus(tmp_path / "docs")])
            found = modes(tmp_path / "index")
            assert {"index.db-wal", "index.db-shm"} <= set(found)
            assert {name: mode for name, mode in found.items() if mode & 0o077} == {}
    finally:
        assert os.umask(old) == 0o022  # the engine left the process's umask as it found it


def test_an_index_made_with_loose_modes_is_tightened_when_written(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    home = tmp_path / "home"
    home.mkdir()
    index = tmp_path / "index"
    assert quire("index", str(docs), "--db", str(index), "--workers", "0", umask=0o022, home=home).returncode == 0
    index.chmod(0o755)
    for path in index.iterdir():
        path.chmod(0o644)  # as an earlier quire left them under umask 022
    (docs / "new.txt").write_text("A new note about lighthouses.", encoding="utf-8")
    done = quire("index", "--db", str(index), "--workers", "0", umask=0o022, home=home)
    assert done.returncode == 0, done.stderr
    found = modes(index)
    assert found == {name: 0o700 if name == index.name else 0o600 for name in found}


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any account may pass through, as home folders often are (pytest's own are 0700): in the system's
    temporary folder, removed after."""
    folder = Path(tempfile.mkdtemp(prefix="quire-privacy-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
def test_another_user_cannot_read_the_index(open_folder: Path) -> None:
    docs = write_corpus(open_folder / "docs")
    old = os.umask(0o022)
    try:
        with Index(open_folder / "index", config=IndexConfig(workers=0)) as idx:
            idx.add([docs])
    finally:
        os.umask(old)
    assert subprocess.run(["cat", str(docs / "finance" / "budget.txt")], capture_output=True, user="nobody"
                          ).returncode == 0  # the documents are anyone's here: only the index is private
    for command in (["cat", str(open_folder / "index" / "index.db")], ["ls", str(open_folder / "index")]):
        done = subprocess.run(command, capture_output=True, user="nobody")
        assert done.returncode != 0 and b"Permission denied" in done.stderr
