"""Hostile and accidental inputs: each one becomes a recorded status and reason, and the run goes on.

Everything runs through the command line, the way a user meets it: `quire index --json`, then `quire status
--json`, whose ``files`` list must name every bad file with its status and a readable reason.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import docgen
import pytest
from click.testing import CliRunner

from app.cli import cli
from engine.filestate import FileState
from engine.search.query import MAX_QUERY_CHARS

GOOD = "The ferryman rowed travellers across the misty river every evening."
# name -> (status, words the reason must contain)
EXPECTED = {
    "corrupt.pdf": (FileState.FAILED, "corrupt pdf"),
    "secret.pdf": (FileState.FAILED, "encrypted"),
    "truncated.pdf": (FileState.FAILED, "pdf"),
    "scan.pdf": (FileState.SKIPPED, "no text layer"),
    "bomb.docx": (FileState.SKIPPED, "zip bomb"),
    "bomb.epub": (FileState.SKIPPED, "zip bomb"),
    "empty.txt": (FileState.SKIPPED, "empty"),
    "blob": (FileState.SKIPPED, "binary"),
    "image.png": (FileState.FAILED, "corrupt image"),
    "huge.txt": (FileState.SKIPPED, "too large"),
    "self-loop": (FileState.FAILED, "symbolic link"),
    "broken-link.txt": (FileState.FAILED, "broken symbolic link"),
    "sub/up": (FileState.SKIPPED, "symbolic link"),
}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def bad_folder(root: Path) -> Path:
    """One good file, every kind of bad file, and enough padding that reading goes through worker processes."""
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "good.txt").write_text(GOOD)
    for n in range(16):
        (docs / "sub" / f"pad{n:02d}.txt").write_text(f"Padding note number {n} about nothing in particular.")
    docgen.make_binary(docs, "corrupt.pdf")
    docgen.make_encrypted_pdf(docs)
    docgen.make_truncated_pdf(docs)
    docgen.make_image_only_pdf(docs)
    docgen.make_zip_bomb(docs, "bomb.docx", megabytes=20)
    docgen.make_zip_bomb(docs, "bomb.epub", megabytes=20)
    docgen.make_empty(docs)
    docgen.make_binary(docs)
    docgen.make_binary(docs, "image.png")
    (docs / "huge.txt").write_text("A very long line of words repeated. " * 40_000)  # ~1.4 MB, over a 1 MB limit
    os.symlink("self-loop", docs / "self-loop")
    os.symlink("nowhere.txt", docs / "broken-link.txt")
    os.symlink("..", docs / "sub" / "up")  # a folder loop
    return docs


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path, dict, dict]:
    root = tmp_path_factory.mktemp("bad")
    docs = bad_folder(root)
    db = root / "index"
    code, out = run("index", str(docs), "--db", str(db), "--max-size", "1", "--workers", "1", "--json")
    assert code == 0, out
    report = json.loads(out)
    code, out = run("status", "--db", str(db), "--json")
    assert code == 0, out
    return docs, db, report, json.loads(out)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_is_recorded_with_a_reason(indexed, name: str) -> None:
    docs, _, report, status = indexed
    status_word, reason_words = EXPECTED[name]
    by_path = {f["path"]: f for f in status["files"]}
    record = by_path[str(docs / name)]
    assert record["status"] == status_word, record
    assert reason_words in record["reason"].lower(), record
    assert "\n" not in record["reason"] and "Traceback" not in record["reason"]
    # the run's own summary names it too
    assert any(s["path"] == str(docs / name) and s["reason"] == record["reason"] for s in report["skipped"])


def test_the_run_goes_on_past_bad_files(indexed) -> None:
    docs, db, report, status = indexed
    assert report["documents"] == 17 and status["indexed"] == 17
    assert status["skipped"] + status["failed"] == len(EXPECTED)
    # the folder loop did not index anything twice
    assert not any("/up/" in f["path"] for f in status["files"])
    code, out = run("search", GOOD, "--db", str(db), "-k", "1", "--json")
    assert code == 0 and json.loads(out)["results"][0]["path"] == str(docs / "good.txt")


def test_second_run_keeps_the_reasons(indexed) -> None:
    docs, db, _, status = indexed
    code, out = run("index", "--db", str(db), "--max-size", "1", "--workers", "0", "--json")
    assert code == 0, out
    again = json.loads(out)
    assert again["documents"] == 0
    code, out = run("status", "--db", str(db), "--json")
    assert {(f["path"], f["status"], f["reason"]) for f in json.loads(out)["files"]} == {
        (f["path"], f["status"], f["reason"]) for f in status["files"]
    }


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_recorded(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text(GOOD)
    locked = docs / "locked.txt"
    locked.write_text("Nobody may read this.")
    locked.chmod(0)
    try:
        code, out = run("index", str(docs), "--db", str(tmp_path / "i"), "--workers", "0", "--json")
        assert code == 0, out
        code, out = run("status", "--db", str(tmp_path / "i"), "--json")
        record = next(f for f in json.loads(out)["files"] if f["path"] == str(locked))
        assert (record["status"], record["reason"]) == (FileState.FAILED, "permission denied")
    finally:
        locked.chmod(0o644)


def test_a_password_protected_office_file_is_called_encrypted_not_corrupt(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text(GOOD)
    # Office writes a password-protected DOCX as an OLE compound file (its signature, then the encrypted package)
    (docs / "locked.docx").write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504) + os.urandom(4096))
    code, out = run("index", str(docs), "--db", str(tmp_path / "i"), "--workers", "0", "--json")
    assert code == 0, out
    code, out = run("status", "--db", str(tmp_path / "i"), "--json")
    records = {Path(f["path"]).name: (f["status"], f["reason"]) for f in json.loads(out)["files"]}
    assert records["locked.docx"] == (FileState.FAILED, "encrypted DOCX: it is protected by a password")


def test_pipes_and_sockets_are_recorded_not_passed_over(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text(GOOD)
    os.mkfifo(docs / "pipe")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(docs / "sock"))
    try:
        code, out = run("index", str(docs), "--db", str(tmp_path / "i"), "--workers", "0", "--json")
        assert code == 0, out
        code, out = run("status", "--db", str(tmp_path / "i"), "--json")
    finally:
        listening.close()
    records = {Path(f["path"]).name: (f["status"], f["reason"]) for f in json.loads(out)["files"]}
    assert records["pipe"] == (FileState.SKIPPED, "not a regular file (a named pipe)")
    assert records["sock"] == (FileState.SKIPPED, "not a regular file (a socket)")
    assert records["good.txt"][0] == FileState.INDEXED


def test_a_path_through_a_regular_file_is_refused_before_indexing(tmp_path: Path) -> None:
    """Works as root too: a path through a regular file is unreadable for everyone. A path that cannot be a folder
    or file is a typing mistake: the run says so and indexes nothing, rather than reporting "0 documents"."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text(GOOD)
    code, out = run("index", str(docs), str(docs / "good.txt" / "inside"), "--db", str(tmp_path / "i"),
                    "--workers", "0", "--json")
    assert code == 1 and "good.txt/inside does not exist; check the path" in out and "Traceback" not in out
    code, out = run("index", str(docs), "--db", str(tmp_path / "i"), "--workers", "0", "--json")
    assert code == 0 and json.loads(out)["documents"] == 1


@pytest.fixture
def small_index(corpus: Path, tmp_path: Path) -> Path:
    db = tmp_path / "index"
    assert run("index", str(corpus), "--db", str(db), "--workers", "0", "--json")[0] == 0
    return db


@pytest.mark.parametrize(
    ("query", "message"),
    [("", "query is empty"), ("   \n\t ", "query is empty"), ("word " * (MAX_QUERY_CHARS // 4), "characters long")],
    ids=["empty", "blank", "enormous"],
)
def test_unusable_queries_get_a_clear_message(small_index: Path, query: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["search", query, "--db", str(small_index), "--json"])
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("query", ['"unbalanced', "NOT AND OR", "title:star*", "(((", "-rigel ^ near/3"])
def test_query_syntax_never_reaches_fts5(small_index: Path, query: str) -> None:
    for mode in ("lexical", "hybrid"):
        # "--" as a user would type it, so that a leading "-" is not read as an option
        code, out = run("search", "--db", str(small_index), "--mode", mode, "--json", "--", query)
        assert code == 0, out
        assert json.loads(out)["query"] == query.strip()
