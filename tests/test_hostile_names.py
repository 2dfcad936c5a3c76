"""File and folder names that are not valid UTF-8: indexed, found, kept exactly and shown readably.

Such a name used to crash every `quire index` run in the database write, so nothing in the folder was indexed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from engine.text.paths import from_column, readable, to_column


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """good.txt, bad_<0xff>.txt and dir_<0xfe>/inner.txt, made from bytes as a Latin-1 system would name them."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "good.txt").write_text("The lighthouse keeper polished the great lens every morning.")
    try:
        os.mkdir(os.fsencode(root) + b"/dir_\xfe")
        with open(os.fsencode(root) + b"/bad_\xff.txt", "wb") as handle:
            handle.write(b"Zebras graze on the savanna grasses at dawn.\n")
    except (OSError, UnicodeError):  # a file system that insists on UTF-8 names (APFS) cannot hold one
        pytest.skip("this file system refuses names that are not UTF-8")
    with open(os.fsencode(root) + b"/dir_\xfe/inner.txt", "wb") as handle:
        handle.write(b"Penguins huddle together through the antarctic winter.\n")
    return root


def test_bad_names_are_indexed_found_and_not_duplicated(docs: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "index")
    bad = os.fsdecode(os.fsencode(docs) + b"/bad_\xff.txt")
    code, out = run("index", str(docs), "--db", db, "--workers", "1", "--json")
    assert code == 0, out
    assert json.loads(out)["documents"] == 3

    code, out = run("search", "zebras on the savanna", "--db", db, "-k", "1", "--json")
    assert code == 0, out
    top = json.loads(out)["results"][0]["path"]
    assert top == bad
    assert Path(top).read_bytes().startswith(b"Zebras")  # the path kept is the file's own

    code, out = run("index", str(docs), "--db", db, "--workers", "0", "--json")
    assert code == 0, out
    again = json.loads(out)
    assert (again["documents"], again["unchanged"], again["removed"]) == (0, 3, 0)
    code, out = run("status", "--db", db, "--json")
    paths = [f["path"] for f in json.loads(out)["files"]]
    assert len(paths) == len(set(paths)) == 3

    os.remove(os.fsencode(bad))
    code, out = run("index", str(docs), "--db", db, "--workers", "0", "--json")
    assert json.loads(out)["removed"] == 1


def test_bad_names_are_shown_readably(docs: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "index")
    assert run("index", str(docs), "--db", db, "--workers", "0")[0] == 0
    code, out = run("status", "--db", db, "--files")
    assert code == 0, out
    assert f"{docs}/bad_\\xff.txt" in out and f"{docs}/dir_\\xfe/inner.txt" in out
    code, out = run("search", "penguins in winter", "--db", db, "-k", "1")
    assert code == 0 and "dir_\\xfe/inner.txt" in out


@pytest.mark.parametrize(
    "path",
    ["/plain/name.txt", "/caf\u00e9/bad_\udcff.txt", "/\udcfe\udcff", "/mark\ufdd0dcff", "/\ufdd0\udc80\ufdd0", "/\ud800"],
)
def test_stored_form_is_valid_utf8_and_one_to_one(path: str) -> None:
    stored = to_column(path)
    stored.encode("utf-8")  # what SQLite is given must encode
    assert from_column(stored) == path
    # a folder's stored form is a prefix of its files' (`documents(under=...)` depends on it)
    assert to_column(path + "/child\udcff").startswith(stored)
    readable(path).encode("utf-8")


def test_readable_escapes_only_the_bad_bytes() -> None:
    assert readable("/caf\u00e9/bad_\udcff.txt") == "/caf\u00e9/bad_\\xff.txt"
    assert readable("/plain.txt") == "/plain.txt"


def test_names_that_would_mislead_are_printed_escaped(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    spoofed = "invoice\u202etxt.exe.md"  # shows as "invoicedm.exe.txt": a right-to-left override
    for name in ("two\nlines.txt", spoofed, "bell\x07\x1b[2J.txt"):
        (docs / name).write_text("Otters crack shellfish open with stones.", encoding="utf-8")
    db = str(tmp_path / "index")
    assert run("index", str(docs), "--db", db, "--workers", "0")[0] == 0
    code, out = run("status", "--files", "--db", db)
    assert code == 0
    listed = [line for line in out.splitlines() if "indexed" in line and str(docs) in line]
    assert len(listed) == 3  # the name with a newline is one line, not two
    assert all(not any(ch in line for ch in "\n\u202e\x07\x1b") for line in listed)
    assert any(line.endswith("two\\nlines.txt") for line in listed)
    assert any(line.endswith("invoice\\u202etxt.exe.md") for line in listed)
    assert any(line.endswith("bell\\x07\\x1b[2J.txt") for line in listed)
    code, out = run("search", "otters crack shellfish", "--db", db, "--mode", "lexical")
    assert code == 0 and "\u202e" not in out and "\x1b[2J" not in out
