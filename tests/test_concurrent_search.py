"""Searches beside each other and beside an indexing run (issue 33, item 6): a search catches a graph that is behind
up in memory and never writes the graph files; only the holder of the write lock saves them."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docgen
import pytest

from engine import Index, IndexConfig
from engine.store.meta import Key

REPO = Path(__file__).resolve().parent.parent
CONFIG = IndexConfig(workers=0)
LATE = "Glaciers carve deep fjords into the granite coast over thousands of years."


def graph_files(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Each graph file's inode, modification time and bytes."""
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns, f.read_bytes()) for f in sorted(folder.glob("vectors-*"))}


@pytest.fixture
def behind(corpus: Path, tmp_path: Path) -> Path:
    """An index whose graph files are one run behind its database, as a run killed before its last save leaves
    them: the database holds ``LATE``, the graph does not."""
    folder = tmp_path / "index"
    with Index(folder, config=CONFIG) as idx:
        idx.add([corpus])
    saved = {f.name: f.read_bytes() for f in folder.glob("vectors-*")}
    (corpus / "late.txt").write_text(LATE, encoding="utf-8")
    with Index(folder, config=CONFIG) as idx:
        assert idx.add().documents == 1
    for name, data in saved.items():
        (folder / name).write_bytes(data)
    return folder


def _first(response) -> str:
    return Path(response.results[0].path).name if response.results else ""


def test_searches_in_threads_catch_up_in_memory_and_write_nothing(behind: Path) -> None:
    before = graph_files(behind)

    def search(_: int) -> list[str]:
        with Index(behind, create=False) as idx:
            return [_first(idx.search(LATE, k=1, mode=mode)) for mode in ("semantic", "hybrid")]

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(search, range(8)))
    assert answers == [["late.txt", "late.txt"]] * 8
    assert graph_files(behind) == before
    assert not list(behind.glob("*.tmp"))


def test_searches_in_processes_write_nothing_and_the_next_run_saves_the_graph(behind: Path) -> None:
    before = graph_files(behind)
    searches = [subprocess.Popen([sys.executable, "-m", "app.cli", "search", LATE, "--db", str(behind), "-k", "1",
                                  "--mode", mode, "--json", "--no-explain"],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for mode in ("semantic", "hybrid", "semantic", "hybrid")]
    for process in searches:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err  # 4 of 24 crashed with FileNotFoundError on the shared temp name
        assert Path(json.loads(out)["results"][0]["path"]).name == "late.txt"
    assert graph_files(behind) == before and not list(behind.glob("*.tmp"))

    with Index(behind, create=False, config=CONFIG) as idx:  # the writer brings the files up to date
        assert idx.add().documents == 0
        generation = idx.store.meta.get(Key.GENERATION)
    assert json.loads((behind / "vectors-static.json").read_text())["generation"] == generation
    saved = graph_files(behind)
    assert saved != before
    with Index(behind, create=False) as idx:
        assert _first(idx.search(LATE, k=1, mode="semantic")) == "late.txt"
    assert graph_files(behind) == saved


SEARCHING = """
import sys, time
from engine import Index
folder, query = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 120
done = 0
while time.monotonic() < deadline:
    try:
        with Index(folder, create=False) as idx:
            idx.search(query, k=3, mode="hybrid", explain=False)
        done += 1
    except Exception as e:  # before the first commit there is no index yet: wait for it
        if "no index" not in str(e):
            raise
    if open(sys.argv[3]).read() == "stop":
        break
print(done)
"""


def test_searches_beside_an_indexing_run_never_crash(tmp_path: Path) -> None:
    docs, folder, stop = tmp_path / "docs", tmp_path / "index", tmp_path / "stop"
    lines = docgen.write_toy_corpus(docs, per_file=20)
    with Index(folder, config=CONFIG) as idx:  # the searchers start on an index that exists
        idx.add([docs / "part0000.txt"])
    stop.write_text("")
    searchers = [subprocess.Popen([sys.executable, "-c", SEARCHING, str(folder), lines[n], str(stop)], cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in (5, 300)]
    try:
        # small batches saved at once: the graph files are replaced many times while the searches load them
        with Index(folder, config=IndexConfig(workers=0, batch_sentences=40, save_seconds=0)) as idx:
            report = idx.add([docs])
    finally:
        stop.write_text("stop")
    for process in searchers:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        assert int(out) > 0
    assert report.documents > 10 and not list(folder.glob("*.tmp"))
    with Index(folder, create=False) as idx:
        assert idx.vector_index(idx.methods.embedder()).live_count == idx.store.sentences.count()
