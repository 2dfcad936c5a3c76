"""Memory kept ready for the next query (engine/heap.py): a query's large arrays reuse the last one's pages, and
what a searching process holds is out of the garbage collector's full collections until it closes its index. The
entry points that keep searching opt into it (`quire search`, the app's search thread); ``engine.Index`` itself
leaves the process as it found it.

Each check runs in a fresh interpreter, whose C library and collector start from their own defaults.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.heap import SEARCHES_BEFORE_FREEZING

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")

ROOT = Path(__file__).resolve().parents[1]

# arrays of a query's sizes (MB) made, written and freed ten times after a warm-up; prints the page faults they caused
# and the pages they wrote
CYCLES = """
import resource
import numpy as np

SIZES = [3, 25, 6, 12, 2, 18]

def cycle():
    arrays = [np.ones(size * 131072) for size in SIZES]
    del arrays

for _ in range(3):
    cycle()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    cycle()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, 10 * sum(SIZES) * 256)
"""


def _run(script: str, cwd: Path) -> str:
    """What ``script`` (dedented) prints, run in a fresh interpreter that imports quire from this checkout."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=cwd, capture_output=True, text=True,
                          check=True, env={"PYTHONPATH": str(ROOT), "PATH": ""}).stdout


def _faults(setup: str, cwd: Path) -> tuple[int, int]:
    out = _run(textwrap.dedent(setup) + CYCLES, cwd).split()
    return int(out[-2]), int(out[-1])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding docs/night.txt, one sentence to index."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "night.txt").write_text("The night train to Vienna leaves at 22:10 from platform 4.\n")
    return tmp_path


def test_arrays_freed_by_one_query_are_reused_by_the_next_without_page_faults(tmp_path: Path):
    faults, pages = _faults("from engine.heap import keep_freed_memory\nassert keep_freed_memory()\n", tmp_path)
    assert faults < pages // 100


def test_the_cli_search_keeps_freed_memory(folder: Path):
    setup = f"""
        from click.testing import CliRunner
        from app.cli import cli
        index, docs = {str(folder / 'index')!r}, {str(folder / 'docs')!r}
        assert CliRunner().invoke(cli, ["index", docs, "--db", index]).exit_code == 0
        done = CliRunner().invoke(cli, ["search", "overnight rail service to Austria", "--db", index])
        assert done.exit_code == 0 and "night.txt" in done.output, done.output
        """
    faults, pages = _faults(setup, folder)
    assert faults < pages // 100


def test_the_cli_keeps_what_a_searching_process_holds_out_of_full_collections(folder: Path):
    out = _run(f"""
        import gc, json
        from click.testing import CliRunner
        from app.cli import cli
        from engine.heap import SEARCHES_BEFORE_FREEZING, YOUNG_COLLECTION_OBJECTS
        default = gc.get_threshold()
        index, docs = {str(folder / 'index')!r}, {str(folder / 'docs')!r}
        assert CliRunner().invoke(cli, ["index", docs, "--db", index]).exit_code == 0
        queries = {str(folder / 'queries.jsonl')!r}
        with open(queries, "w") as f:
            for n in range(SEARCHES_BEFORE_FREEZING):
                f.write(json.dumps({{"id": n, "text": "overnight rail service to Austria"}}) + "\\n")
        assert CliRunner().invoke(cli, ["search", "--queries", queries, "--db", index]).exit_code == 0
        assert gc.get_threshold() == (YOUNG_COLLECTION_OBJECTS, *default[1:])
        print(gc.get_freeze_count())
        """, folder)
    assert int(out) > 10_000  # the model, the word space and the index: thousands of objects


def test_the_engine_leaves_the_process_alone_and_closing_one_index_leaves_another_as_it_was(tmp_path: Path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "night.txt").write_text("The night train to Vienna leaves at 22:10 from platform 4.\n")
    out = _run(f"""
        import gc
        from engine import Index
        from engine.heap import SEARCHES_BEFORE_FREEZING, freeze_long_lived, keep_freed_memory
        default = gc.get_threshold()
        one, two = Index({str(tmp_path / 'one.idx')!r}), Index({str(tmp_path / 'two.idx')!r})
        one.add([{str(tmp_path / 'one')!r}])
        two.add([{str(tmp_path / 'two')!r}])
        for _ in range(2 * SEARCHES_BEFORE_FREEZING):  # the engine's own searches tune nothing
            assert one.search("overnight rail service to Austria").results
            assert two.search("the night train", explain=False).results
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == default
        assert keep_freed_memory.cache_info().currsize == 0  # mallopt never called
        for _ in range(SEARCHES_BEFORE_FREEZING):  # the process opts in, as an entry point does
            freeze_long_lived()
        frozen, tuned = gc.get_freeze_count(), gc.get_threshold()
        assert frozen > 0 and tuned != default
        two.close()  # one index closed: the process's state, and the other index's, are as they were
        # (the closed index's own frozen objects that reference counting frees leave the count: a hundred or so)
        assert gc.get_freeze_count() > frozen // 2 and gc.get_threshold() == tuned
        assert one.search("overnight rail service to Austria").results
        one.close()
        print(gc.get_freeze_count() > frozen // 2, gc.get_threshold() == tuned)
        """, tmp_path)
    assert out.split() == ["True", "True"]


def test_what_a_searching_process_holds_is_left_out_of_full_collections_until_it_closes_its_index(folder: Path):
    # and its youngest objects are collected less often, until then too
    out = _run(f"""
        import gc
        from engine import Index
        from engine.heap import SEARCHES_BEFORE_FREEZING, YOUNG_COLLECTION_OBJECTS, freeze_long_lived, thaw
        default = gc.get_threshold()
        index = Index({str(folder / 'index')!r})
        index.add([{str(folder / 'docs')!r}])
        for _ in range(SEARCHES_BEFORE_FREEZING - 1):
            index.search("overnight rail service to Austria")
            freeze_long_lived()  # after each search, as the entry points call it
        assert gc.get_freeze_count() == 0  # a process that searches a few times pays nothing
        assert gc.get_threshold() == default
        index.search("overnight rail service to Austria")
        freeze_long_lived()
        held = gc.get_freeze_count()
        assert gc.get_threshold() == (YOUNG_COLLECTION_OBJECTS, *default[1:])  # young objects collected less often
        walked = len(gc.get_objects())  # what a full collection walks: the frozen objects are not among them
        index.search("the night train")
        freeze_long_lived()
        print(held, walked, gc.get_freeze_count())
        index.close()
        thaw()
        assert gc.get_threshold() == default
        print(gc.get_freeze_count())
        """, folder).split()
    held, walked, still, closed = map(int, out)
    assert held > 10 * walked  # the model, word space and index: thousands of objects, against what queries leave
    assert still <= held  # frozen once, not again on every query (frozen objects freed since leave the count)
    assert closed == 0


def test_garbage_frozen_with_an_index_is_collectable_once_it_closes(folder: Path):
    out = _run(f"""
        import gc
        import weakref
        from engine import Index
        from engine.heap import SEARCHES_BEFORE_FREEZING, freeze_long_lived, thaw

        class Node:
            pass

        node = Node()
        node.self = node  # a reference cycle: only the cyclic collector frees it
        alive = weakref.ref(node)
        index = Index({str(folder / 'index')!r})
        index.add([{str(folder / 'docs')!r}])
        for _ in range(SEARCHES_BEFORE_FREEZING):
            index.search("overnight rail service to Austria")
            freeze_long_lived()  # the node is frozen with everything else
        del node
        gc.collect()
        frozen = alive() is not None
        index.close()
        thaw()
        gc.collect()
        print(frozen, alive() is None)
        """, folder)
    assert out.split() == ["True", "True"]


def test_the_app_search_thread_freezes_what_it_holds_and_lets_go_when_it_reopens_the_index(folder: Path):
    pytest.importorskip("PySide6")
    out = _run(f"""
        import gc
        from pathlib import Path
        from engine import Index
        from engine.heap import SEARCHES_BEFORE_FREEZING
        from app.gui.workers import Generations, QueryRequest, SearchWorker
        index, docs = Path({str(folder / 'index')!r}), Path({str(folder / 'docs')!r})
        with Index(index) as idx:
            idx.add([docs])
        worker = SearchWorker(index, Generations())
        answers = []
        worker.answered.connect(lambda generation, response: answers.append(response))
        for _ in range(SEARCHES_BEFORE_FREEZING):
            worker.search(QueryRequest(0, "overnight rail service to Austria", "hybrid", 10))
        frozen = gc.get_freeze_count()
        (docs / "more.txt").write_text("Sleeper cabins hold two or four berths.\\\\n")
        with Index(index) as idx:  # a run adds a file: the worker reopens the index and lets the old one go
            idx.add([docs])
        worker.reload()
        print(len(answers), frozen > 10_000, gc.get_freeze_count())
        worker.close()
        """, folder)
    assert out.split() == [str(SEARCHES_BEFORE_FREEZING), "True", "0"]
