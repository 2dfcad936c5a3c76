"""Damaged indexes (issues 33 and 58): random bytes at several offsets, damaged and zeroed pages, dropped tables,
deleted rows, a flipped byte in a sentence, the database replaced by a folder, settings quire never wrote, and a
damaged graph. `quire status`, `quire search` (hybrid and lexical) and `quire index` must each report the damage in
a plain line (going on as if nothing happened is undetected damage) and `quire index --rebuild` must make the index
whole again; a damaged graph must be named by the search it slows and rebuilt by the next `quire index`."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import damage
from hostile_verdicts import CaseResult, Outcome, Ran, judge, quire, timed

from engine.store.meta import Key

KLASS = "damaged indexes"
FILES = 40
QUERY = "lighthouse keeper"
# The CLI building a graph at any size (a small index has none), for the graph's cases (conftest.graph_always).
GRAPH_CLI = ("-c", "from engine.store import vectors; vectors.EXACT_BELOW = 0; from app.cli import main; main()")
GRAPH_NOTE = "ranked by their words alone until `quire index` rebuilds it"


def _truncate(db: Path) -> None:
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 2)


def _header(db: Path) -> None:
    damage.overwrite(db, 16, random.Random(16).randbytes(84))  # the header's fields after its magic string


# Each damage of the database beyond the test suite's (tests/damage.py), by name: random damage where a disk fails,
# the rest where a tool or a hand changed what quire wrote.
MORE: dict[str, Callable[[Path], None]] = {
    **{f"random bytes at {share:.0%}": damage.random_bytes_at(share) for share in (0.1, 0.25, 0.5, 0.9)},
    "header fields random": _header,
    "every byte random": lambda db: db.write_bytes(random.Random(1).randbytes(db.stat().st_size)),
    "truncated to half": _truncate,
    "empty file": lambda db: db.write_bytes(b""),
    "a flipped byte in a sentence": damage.flip_in_text(b"climbed the stairs"),
    "index.db replaced by a folder": damage.replace_by_folder,
    "table documents dropped": lambda db: damage.sql(db, "DROP TABLE documents"),
    "table meta dropped": lambda db: damage.sql(db, "DROP TABLE meta"),
    "every setting deleted": lambda db: damage.sql(db, "DELETE FROM meta"),
    "a setting deleted (method)": lambda db: damage.sql(db, f"DELETE FROM meta WHERE key = '{Key.METHOD.value}'"),
}
QUICK = ("random bytes at 75%", "table sentences dropped", "schema_version 'abc'")
GRAPH: dict[str, Callable[[bytes], bytes]] = {
    "graph: random bytes": lambda data: data[:len(data) // 3] + os.urandom(len(data) // 3) + data[2 * len(data) // 3:],
    "graph: empty": lambda data: b"",
    "graph: truncated": lambda data: data[:len(data) // 2],
}


def sound_index(root: Path) -> tuple[Path, Path]:
    """(documents, a sound index of them with a graph) made once; each case damages a copy."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    for n in range(FILES):
        (docs / f"note{n:02d}.txt").write_text(
            f"Note {n}. The lighthouse keeper of island {n} climbed the stairs at dusk. "
            f"Fishing boats of harbour {n} came home before the storm. " * 6, encoding="utf-8")
    done = quire("index", str(docs), "--db", str(root / "sound"), "--workers", "0", prefix=_graph_cli())
    if done.returncode != 0:
        raise RuntimeError(f"indexing the damage corpus failed: {done.said()}")
    return docs, root / "sound"


def _graph_cli() -> tuple[str, ...]:
    return (sys.executable, *GRAPH_CLI)


def structural(db: Path) -> bool:
    """Whether SQLite's own full check finds the damage (on a copy, so that the check changes nothing)."""
    if not db.is_file():
        return True
    copy = db.with_name("checked.db")
    shutil.copyfile(db, copy)
    try:
        with sqlite3.connect(copy) as conn:
            return conn.execute("PRAGMA integrity_check").fetchall() != [("ok",)]
    except sqlite3.DatabaseError:
        return True
    finally:
        copy.unlink()


def _reported(ran: Ran) -> bool:
    return ran.returncode != 0 and len(ran.stderr.strip().splitlines()) == 1


def _restored(db: Path, docs: Path, runs: list[Ran]) -> str | None:
    """`quire index --rebuild` (given the folder where it asks for it); why the index is not whole after, if not."""
    rebuilt = quire("index", "--rebuild", "--db", str(db), "--workers", "0", "--json")
    if rebuilt.returncode != 0 and "give them" in rebuilt.stderr:
        runs.append(rebuilt)
        rebuilt = quire("index", "--rebuild", str(docs), "--db", str(db), "--workers", "0", "--json")
    runs.append(rebuilt)
    status = quire("status", "--check", "--db", str(db), "--json")
    found = quire("search", QUERY, "--db", str(db), "--json", "--no-explain")
    runs += [status, found]
    if status.returncode != 0 or json.loads(status.stdout)["indexed"] != FILES:
        return f"after `quire index --rebuild`: {status.said()[:100]!r}"
    return None if found.returncode == 0 and json.loads(found.stdout)["results"] else "rebuilt, but nothing found"


def database_case(name: str, make: Callable[[Path], None], docs: Path, sound: Path, root: Path,
                  into: list[CaseResult]) -> None:
    """Damage a copy of the sound index; each command must report it, and the rebuild must make it whole."""
    with timed(KLASS, name, into) as verdict:
        db = root / name.replace(" ", "_").replace("%", "").replace("'", "")
        shutil.copytree(sound, db)
        make(db / "index.db")
        harmful = structural(db / "index.db") or not name.startswith("random bytes")
        runs = [quire(*command, "--db", str(db)) for command in
                (("status",), ("search", QUERY), ("search", QUERY, "--mode", "lexical"), ("index",))]
        unreported = [" ".join(r.args[:1 + (r.args[0] == "search") * 3]) for r in runs if not _reported(r)]
        if unreported and not harmful:  # bytes where nothing reads them: the index must simply go on working
            verdict(judge(runs, None if all(r.returncode == 0 for r in runs) else f"{runs[0].said()!r}",
                          "harmless where it fell (SQLite's integrity_check finds nothing); every command works"))
            return
        if unreported:
            verdict(judge(runs, f"not reported by {unreported}: {runs[0].said()[:80]!r}",
                          "", wrong_is=Outcome.UNDETECTED))
            return
        wrong = _restored(db, docs, runs)
        verdict(judge(runs, wrong, f"reported: {runs[0].said()[:90]}; rebuilt whole"))


def graph_case(name: str, make: Callable[[bytes], bytes], sound: Path, root: Path, into: list[CaseResult]) -> None:
    """Damage a copy's graph file: a search names it and answers by words, `quire index` rebuilds it."""
    with timed(KLASS, name, into) as verdict:
        db = root / name.replace(" ", "_").replace(":", "")
        shutil.copytree(sound, db)
        graph = db / "vectors-static.npz"
        graph.write_bytes(make(graph.read_bytes()))
        args = ("search", QUERY, "--db", str(db), "--mode", "semantic", "--json", "--no-explain")
        runs = [quire(*args, prefix=_graph_cli())]
        runs.append(quire("index", "--db", str(db), "--workers", "0", prefix=_graph_cli()))
        runs.append(quire(*args, prefix=_graph_cli()))
        notes = [" ".join(json.loads(r.stdout)["notes"]) if r.returncode == 0 else "" for r in (runs[0], runs[2])]
        if GRAPH_NOTE not in notes[0]:
            verdict(judge(runs, f"the search did not say the graph was damaged: {notes[0][:80]!r}", "",
                          wrong_is=Outcome.UNDETECTED))
            return
        wrong = None if runs[2].returncode == 0 and GRAPH_NOTE not in notes[1] else "not rebuilt by `quire index`"
        verdict(judge(runs, wrong, "the search said so and ranked by words; `quire index` rebuilt it"))


def run_damage(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """Every damage of the database, then of the graph."""
    docs, sound = sound_index(root)
    cases = {**damage.DAMAGE, **MORE}
    for name, make in cases.items():
        if not quick or name in QUICK:
            database_case(name, make, docs, sound, root, into)
    for name, graph in GRAPH.items():
        if not quick:
            graph_case(name, graph, sound, root, into)
