"""Damage that used to go unnoticed (issue 58, items 4 and 9): random bytes in pages, a zeroed last page, a dropped
table, deleted rows, settings that are not what quire wrote. `quire status`, `quire search` and `quire index` each
refuse in one line that says what was found and what to do, and `quire index --rebuild` makes the index again from
the folders it held, with every document it had."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from damage import DAMAGE, flip_in_text, replace_by_folder

from engine import Index, IndexConfig
from engine.store.meta import Key

REPO = Path(__file__).resolve().parent.parent
FILES = 40
QUERY = "lighthouse keeper"


def quire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(documents, a sound index of them) made once; each test damages a copy."""
    root = tmp_path_factory.mktemp("damage")
    docs = root / "docs"
    docs.mkdir()
    for n in range(FILES):
        (docs / f"note{n:02d}.txt").write_text(
            f"Note {n}. The lighthouse keeper of island {n} climbed the stairs at dusk. "
            f"Fishing boats of harbour {n} came home before the storm. " * 6, encoding="utf-8")
    with Index(root / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
    return docs, root / "index"


@pytest.fixture
def index(made: tuple[Path, Path], tmp_path: Path) -> Path:
    copy = tmp_path / "index"
    shutil.copytree(made[1], copy)
    return copy


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_is_found_by_status_search_and_index(made: tuple[Path, Path], index: Path, damage: str) -> None:
    docs, _ = made
    DAMAGE[damage](index / "index.db")
    for command in (["status"], ["search", QUERY], ["search", QUERY, "--mode", "lexical"], ["index"]):
        done = quire(*command, "--db", str(index))
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"the index at {index} is damaged" in done.stderr, done.stderr
        assert f"`quire index --rebuild --db {index}`" in done.stderr
    rebuilt = quire("index", "--rebuild", "--db", str(index), "--workers", "0", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["documents"] == FILES  # read from the folders the damaged index held
    status = json.loads(quire("status", "--check", "--db", str(index), "--json").stdout)
    assert status["indexed"] == FILES and status["roots"] == [str(docs)]
    found = json.loads(quire("search", QUERY, "--db", str(index), "--json", "--no-explain").stdout)
    assert found["results"]


def test_a_byte_flipped_in_a_sentence_is_reported_not_a_traceback(index: Path) -> None:
    flip_in_text(b"climbed the stairs")(index / "index.db")
    done = quire("search", "climbed the stairs", "--db", str(index), "--mode", "lexical")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "is damaged" in done.stderr and "Could not decode to UTF-8" in done.stderr


def test_an_index_database_that_is_a_folder_is_refused_clearly(index: Path) -> None:
    replace_by_folder(index / "index.db")
    for command in (["status"], ["search", QUERY], ["index"]):
        done = quire(*command, "--db", str(index))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_rebuild_without_a_readable_list_of_folders_asks_for_them(index: Path, made: tuple[Path, Path]) -> None:
    (index / "index.db").write_bytes(os.urandom(8192))
    done = quire("index", "--rebuild", "--db", str(index))
    assert done.returncode == 1 and "give them" in done.stderr, done.stderr
    assert (index / "index.db").stat().st_size == 8192  # nothing deleted before it is known what to index
    done = quire("index", "--rebuild", str(made[0]), "--db", str(index), "--workers", "0", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["documents"] == FILES


def test_a_killed_run_has_every_page_checked_by_the_next(index: Path) -> None:
    with Index(index, create=False) as idx:
        with idx.store.transaction():
            idx.store.meta.put(Key.RUN_IN_PROGRESS, True)  # as a run killed mid-way leaves it
        assert idx.store.pages_due()
    with Index(index, create=False, config=IndexConfig(workers=0)) as idx:
        idx.add()
        assert idx.store.meta.get(Key.RUN_IN_PROGRESS) is None
        assert idx.store.meta.get(Key.PAGES_CHECKED_AT) is not None
