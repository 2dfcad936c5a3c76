"""Reader processes leave nothing in the temporary folder (issue 33): a reader ended mid-file cannot remove what it
unpacked there, nor can an indexer killed with SIGKILL remove its readers' folder. Each run's readers work in a folder
of the run's own, removed after them, and a later run removes the folders of indexers that were killed."""

from __future__ import annotations

import gzip
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from engine.filestate import FileState
from tests import docgen
from tests.clock import wait_until
from tests.measured import index_measured
from tests.processes import descendants, ended

# slow: fault injection (a killed process, a full disk), the tier .ci/run runs after the fast one and lint
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")]

REPO = Path(__file__).resolve().parent.parent


def gzipped_glyph_bomb(docs: Path) -> Path:
    """The glyph bomb PDF compressed with gzip: its reader unpacks it into a temporary folder, then grows in pdfium."""
    pdf = docgen.make_glyph_bomb_pdf(docs, 6, 12)
    packed = docs / "glyphs.pdf.gz"
    packed.write_bytes(gzip.compress(pdf.read_bytes()))
    pdf.unlink()
    return packed


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty temporary folder of the test's own, TMPDIR for the indexers it starts."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def test_a_reader_ended_mid_file_leaves_nothing_behind(tmp_path: Path, tmpdir_env: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keeper.txt").write_text(docgen.TEXT_SENTENCE)
    gzipped_glyph_bomb(docs)
    limits = {"read_seconds": 20.0, "max_reader_bytes": 600_000_000}
    run = index_measured(docs, tmp_path / "index", limits, workers=1)
    assert run.files["glyphs.pdf.gz"].reason == "needed more than 600 MB of memory to read"
    assert run.files["keeper.txt"].status == FileState.INDEXED
    assert sorted(p.relative_to(tmpdir_env).as_posix() for p in tmpdir_env.rglob("*")) == []


def test_the_next_run_removes_what_a_killed_indexer_left(tmp_path: Path, tmpdir_env: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keeper.txt").write_text(docgen.TEXT_SENTENCE)
    bomb = gzipped_glyph_bomb(docs)
    indexer = subprocess.Popen([sys.executable, "-m", "app.cli", "index", str(docs), "--db", str(tmp_path / "index")],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: any(tmpdir_env.rglob("glyphs.pdf")) or indexer.poll() is not None, timeout=120)
        assert any(tmpdir_env.rglob("glyphs.pdf")), "the reader never unpacked the file"
        readers = descendants(indexer.pid)
        indexer.send_signal(signal.SIGKILL)  # its reader ends with it, mid-file (the kernel's parent-death signal)
        indexer.wait(timeout=30)
    finally:
        if indexer.poll() is None:
            indexer.kill()
    assert wait_until(partial(ended, readers), timeout=60), "the reader outlived its indexer"
    left = list(tmpdir_env.iterdir())
    assert left  # removed by the run resumed at once, however new (the folders of 13 of 24 killed runs stayed)
    bomb.unlink()
    run = index_measured(docs, tmp_path / "index", {}, workers=1)
    assert run.files["keeper.txt"].status == FileState.INDEXED
    assert sorted(p.relative_to(tmpdir_env).as_posix() for p in tmpdir_env.rglob("*")) == []
