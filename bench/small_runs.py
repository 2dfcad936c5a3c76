"""What a small indexing run costs (issue 33): a folder of three small files, text only and with one PDF, indexed
into a new index again and again in this process; prints the median and spread of the wall time of opening the
index and adding the folder.

A run of less plain text than ``IN_PROCESS_BYTES`` reads it in the indexer's own process; what a reader process
costs such a run (starting it with ``spawn``, its imports) is the difference the PDF folder shows
(docs/decisions/0008-reader-pool-sizes.md).

    python bench/small_runs.py [--runs 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from engine import Index  # noqa: E402


def folders(root: Path) -> dict[str, Path]:
    """Two folders of three small files: text, Markdown and text; text, Markdown and the test suite's PDF sample."""
    # Imported here, not at the top: a reader process started with spawn runs this script's top level again, and
    # the generators import every parser library, which a reader process of `quire index` does not.
    import docgen  # the test suite's document generators

    made = {}
    for name, third in (("3 text files", docgen.make_txt), ("2 text files + 1 PDF", docgen.make_pdf)):
        folder = root / name.replace(" ", "_")
        folder.mkdir()
        (folder / "memo.txt").write_text(f"A note to keep. {docgen.TEXT_SENTENCE}\n", encoding="utf-8")
        docgen.make_md(folder)
        third(folder)
        made[name] = folder
    return made


def timed_run(folder: Path, index: Path) -> float:
    """Seconds to open a new index at ``index`` and add ``folder`` to it."""
    started = time.perf_counter()
    with Index(index) as idx:
        report = idx.add([folder])
    seconds = time.perf_counter() - started
    assert report.documents == 3 and not report.issues, report
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per folder, after one not counted (default 9)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quire-small-runs-") as scratch:
        root = Path(scratch)
        made = folders(root)
        print("| folder | median s | min s | max s |")
        print("|---|---|---|---|")
        for name, folder in made.items():
            timed_run(folder, root / f"{folder.name}-warm")  # imports and the model, once per process
            times = [timed_run(folder, root / f"{folder.name}-{n}") for n in range(args.runs)]
            print(f"| {name} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |")


if __name__ == "__main__":
    main()
