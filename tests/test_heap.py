"""Memory kept ready for the next query (engine/heap.py): a query's large arrays reuse the last one's pages, and
what a searching process holds is out of the garbage collector's full collections until its index is closed.

Each check runs in a fresh interpreter, whose C library starts from its own defaults.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


def test_a_searcher_keeps_freed_memory(folder: Path):
    setup = f"""
        from engine import Index
        index = Index({str(folder / 'index')!r})
        index.add([{str(folder / 'docs')!r}])
        assert index.search("overnight rail service to Austria").results
        """
    faults, pages = _faults(setup, folder)
    assert faults < pages // 100


def test_what_a_searching_process_holds_is_left_out_of_full_collections_until_the_index_closes(folder: Path):
    # and its youngest objects are collected less often, until then too
    out = _run(f"""
        import gc
        from engine import Index
        from engine.heap import SEARCHES_BEFORE_FREEZING, YOUNG_COLLECTION_OBJECTS
        default = gc.get_threshold()
        index = Index({str(folder / 'index')!r})
        index.add([{str(folder / 'docs')!r}])
        for _ in range(SEARCHES_BEFORE_FREEZING - 1):
            index.search("overnight rail service to Austria")
        assert gc.get_freeze_count() == 0  # a process that searches a few times pays nothing
        assert gc.get_threshold() == default
        index.search("overnight rail service to Austria")
        held = gc.get_freeze_count()
        assert gc.get_threshold() == (YOUNG_COLLECTION_OBJECTS, *default[1:])  # young objects collected less often
        walked = len(gc.get_objects())  # what a full collection walks: the frozen objects are not among them
        index.search("the night train")
        print(held, walked, gc.get_freeze_count())
        index.close()
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
        from engine.heap import SEARCHES_BEFORE_FREEZING

        class Node:
            pass

        node = Node()
        node.self = node  # a reference cycle: only the cyclic collector frees it
        alive = weakref.ref(node)
        index = Index({str(folder / 'index')!r})
        index.add([{str(folder / 'docs')!r}])
        for _ in range(SEARCHES_BEFORE_FREEZING):
            index.search("overnight rail service to Austria")  # the node is frozen with everything else
        del node
        gc.collect()
        frozen = alive() is not None
        index.close()
        gc.collect()
        print(frozen, alive() is None)
        """, folder)
    assert out.split() == ["True", "True"]
