"""What issue 58's safeguards cost on a large index: the damage checks (docs/decisions/0029-damage-found-on-open.md)
and taking removed words out of the file (docs/decisions/0028-removed-words-leave-the-disk.md).

The first ``--files`` enwiki files are written as one text file per article and indexed (or an index kept by an
earlier run is reused, ``--keep DIR``). Then, on that index: the cheap check every open runs, ``PRAGMA quick_check``
and ``PRAGMA integrity_check``, each timed a few times (warm page cache); and on copies of it, ``Index.remove`` of
one article and of nine articles in ten, with the time of the purge (FTS5 merged into one segment, the word index's
segments with deleted passages rewritten) measured inside it, and the same removals as quire made them before
(no purge, no ``secure_delete``).

    python bench/reliability_costs.py [--files 40] [--keep DIR]

Prints a table and writes bench/results/reliability_costs.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from index_wiki import DEFAULT_CORPUS, write_articles  # noqa: E402

from engine import Index  # noqa: E402
from engine.eval.report import stamp  # noqa: E402
from engine.store import health, meta, space  # noqa: E402
from engine.store.meta import Key  # noqa: E402

RESULTS = REPO / "bench" / "results" / "reliability_costs.json"


def timed(call: Callable[[], object], rounds: int) -> float:
    """The median seconds of ``rounds`` calls."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def checks(db: Path) -> dict:
    """Seconds of each damage check on the database at ``db`` (read-only)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        version = int(conn.execute("SELECT value FROM meta WHERE key = ?", [Key.SCHEMA_VERSION]).fetchone()[0])
        return {"cheap_check_s": timed(lambda: health.cheap_problems(conn, version), 5),
                "quick_check_s": timed(lambda: health.page_problems(conn), 3),
                "integrity_check_s": timed(lambda: conn.execute("PRAGMA integrity_check").fetchall(), 1)}
    finally:
        conn.close()


def fts_bytes(db: Path) -> int:
    """The bytes of FTS5's segments (``passages_fts_data``)."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT coalesce(sum(length(block)), 0) FROM passages_fts_data").fetchone()[0])


def _as_before(conn: sqlite3.Connection) -> None:
    """What removing did before issue 58: FTS5 merged only once a quarter of the file is free, the word index's
    deleted passages left until a merge, and deleted rows not zeroed."""
    conn.execute("PRAGMA secure_delete=OFF")
    if space.free_share(conn) >= space.VACUUM_FREE_SHARE:
        conn.execute(f"INSERT INTO {space.FTS_TABLE}({space.FTS_TABLE}) VALUES ('optimize')")
    meta.delete(conn, Key.WORDS_TO_PURGE)


def removal(index: Path, docs: Path, share: float, scratch: Path, *, before: bool = False) -> dict:
    """``Index.remove`` of ``share`` of the articles (at least one) on a copy of ``index``: seconds in all and in
    the purge, and the FTS5 segments' bytes before and after; ``before``: as quire removed before issue 58."""
    copy = scratch / f"remove-{share}-{before}"
    shutil.copytree(index, copy)
    articles = sorted(docs.rglob("*.txt"))
    doomed = articles[: max(1, int(len(articles) * share))]
    purge, spent = space.purge, []

    def timed_purge(conn: sqlite3.Connection) -> None:
        started = time.perf_counter()
        (_as_before if before else purge)(conn)
        spent.append(time.perf_counter() - started)

    space.purge = timed_purge
    fts_before = fts_bytes(copy / "index.db")
    try:
        started = time.perf_counter()
        with Index(copy, create=False) as idx:
            if before:
                idx.store.db.execute("PRAGMA secure_delete=OFF")
            idx.remove(doomed)
        seconds = time.perf_counter() - started
    finally:
        space.purge = purge
    out = {"files_removed": len(doomed), "seconds": seconds, "purge_s": sum(spent),
           "fts_bytes_before": fts_before, "fts_bytes_after": fts_bytes(copy / "index.db")}
    shutil.rmtree(copy)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=40, help="first N enwiki gz files (default 40)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--keep", type=Path, default=None, help="keep (or reuse) the articles and index here")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="quire-reliability-"))
    docs, index = root / "docs", root / "index"
    if not docs.exists():
        write_articles(args.corpus, args.files, docs)
    if not (index / "index.db").exists():
        with Index(index) as idx:
            idx.add([docs])
    with Index(index, create=False) as idx:
        sentences, documents = idx.store.sentences.count(), idx.store.documents.indexed_count()
    row = {"documents": documents, "sentences": sentences, "db_bytes": (index / "index.db").stat().st_size,
           **checks(index / "index.db")}
    with tempfile.TemporaryDirectory(prefix="quire-reliability-", dir=root) as scratch:
        for name, share in (("remove_one", 0.0), ("remove_most", 0.9)):
            row[name] = removal(index, docs, share, Path(scratch))
            row[name + "_as_before"] = removal(index, docs, share, Path(scratch), before=True)
    print(json.dumps(row, indent=1))
    RESULTS.write_text(json.dumps({**stamp(REPO), **row}, indent=2) + "\n")
    if args.keep is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
