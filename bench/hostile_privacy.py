"""Privacy and a full disk (issue 58, items 2, 3 and 10). Under umask 022 an index folder is 0700 and its files
0600 (the default index folder and its parents included) and another account cannot read it; after `quire remove`,
or a file deleted or changed and the folder indexed again, no file of the index folder holds the removed words. On
a small file system (a tmpfs mounted for the case; root only) a full disk is one line saying what was kept, and the
same command goes on to the end once space is freed."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import ondisk
from hostile_verdicts import CaseResult, Outcome, Ran, environment, judge, quire, timed

PRIVACY, DISK = "privacy", "full disk"
# Words no stemmer changes and no other file holds.
MARKERS = ("zqxvaultpin", "hunterquux")
SECRET = f"The vault PIN is {MARKERS[0]} and the password is {MARKERS[1]}, kept in the drawer.\n"
# The CLI building a graph at any size, so that the graph files are written (and searched for the words) too.
GRAPH_CLI = (sys.executable, "-c",
             "from engine.store import vectors; vectors.EXACT_BELOW = 0; from app.cli import main; main()")
WORDS = "alpha river stone cloud ember north violet anchor meadow quartz".split()
# Files of words of their own, so that the index outgrows the small disk; the disk's sizes, each filled at another
# point of the run; the size it is grown to once "space is freed".
DISK_FILES = 200
DISK_SIZES = ("1m", "2m", "3m")
FREED = "64m"


def notes(docs: Path, secret: bool) -> Path:
    """Thirty notes (and the secret file) in ``docs``."""
    docs.mkdir(parents=True)
    for n in range(30):
        (docs / f"note{n}.txt").write_text(f"Note {n}. The ferryman rowed travellers across the misty river. "
                                           f"The tide was high on day {n}.\n" * 4)
    if secret:
        (docs / "secret.txt").write_text(SECRET * 3)
    return docs


def _loose(found: dict[str, int], top: str) -> dict[str, str]:
    return {name: oct(mode) for name, mode in found.items() if mode != (0o700 if name == top else 0o600)}


def private_case(root: Path, default_db: bool, into: list[CaseResult]) -> None:
    """`quire index` under umask 022, into the default index folder or a --db one: 0700 and 0600 throughout."""
    name = f"umask 022, {'the default index' if default_db else '--db FOLDER'}"
    with timed(PRIVACY, name, into) as verdict:
        home = root / name.split(", ")[1].replace(" ", "_")
        docs = notes(home / "docs", False)
        env = environment(HOME=str(home), XDG_DATA_HOME=str(home / "data"))
        index = home / "data" / "quire" / "index" if default_db else home / "index"
        ran = quire("index", str(docs), *(() if default_db else ("--db", str(index))), "--workers", "0",
                    env=env, umask=0o022, prefix=GRAPH_CLI)
        loose = _loose(ondisk.modes(index), index.name) if index.is_dir() else {"index": "missing"}
        if default_db:
            loose |= {p.name: oct(p.stat().st_mode & 0o777) for p in (home / "data", home / "data" / "quire")
                      if p.stat().st_mode & 0o077}
        verdict(judge([ran], f"readable by others: {loose}" if loose else None,
                      f"{len(ondisk.modes(index)) - 1} files 0600 in a 0700 folder"))


def other_user_case(root: Path, into: list[CaseResult]) -> None:
    """As root: `nobody` can read the documents in an open folder but neither list nor read the index."""
    with timed(PRIVACY, "another account reads the index", into) as verdict:
        if os.geteuid() != 0:
            verdict((Outcome.NOT_RUN, "needs root to act as another account"))
            return
        shared = Path(tempfile.mkdtemp(prefix="quire-privacy-"))  # the run's own folder is 0700: one anyone may pass
        try:
            shared.chmod(0o755)
            docs = notes(shared / "docs", True)
            ran = quire("index", str(docs), "--db", str(shared / "index"), "--workers", "0", umask=0o022)
            read = [subprocess.run(command, capture_output=True, user="nobody").returncode == 0 for command in
                    (["cat", str(docs / "secret.txt")], ["cat", str(shared / "index" / "index.db")],
                     ["ls", str(shared / "index")])]
        finally:
            shutil.rmtree(shared)
        wrong = None if read == [True, False, False] else f"nobody could read (document, index.db, folder): {read}"
        verdict(judge([ran], wrong, "the documents readable by nobody, the index neither listed nor read"))


def removed_words_case(root: Path, how: str, into: list[CaseResult]) -> None:
    """A secret file's words gone from every file of the index folder after ``how``; the rest still found."""
    with timed(PRIVACY, f"removed words: {how}", into) as verdict:
        base = root / how.replace(" ", "_").replace(",", "")
        docs = notes(base / "docs", True)
        db = base / "index"
        runs = [quire("index", str(docs), "--db", str(db), "--workers", "0", prefix=GRAPH_CLI)]
        before = ondisk.traces(db, MARKERS)
        secret = docs / "secret.txt"
        if how == "quire remove":
            runs.append(quire("remove", str(secret), "--db", str(db), prefix=GRAPH_CLI))
        else:
            if how.startswith("deleted"):
                secret.unlink()
            else:
                secret.write_text("The drawer is empty now.\n")
            runs.append(quire("index", "--db", str(db), "--workers", "0", prefix=GRAPH_CLI))
        left = ondisk.traces(db, MARKERS)
        runs.append(quire("search", "ferryman on the misty river", "--db", str(db), "--json", "--no-explain"))
        found = json.loads(runs[-1].stdout)["results"] if runs[-1].returncode == 0 else []
        wrong = (None if before else "the words were never on disk: the check cannot tell") or (
            f"still on disk: {left}" if left else None) or (None if found else "the notes kept are not found")
        verdict(judge(runs, wrong, f"held by {sorted(before)} before, by no file after; the rest still found"))


def run_privacy(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """Modes under umask 022, another account, removed words."""
    root.mkdir(parents=True)
    private_case(root, True, into)
    if not quick:
        private_case(root, False, into)
        other_user_case(root, into)
    for how in ("quire remove",) if quick else ("quire remove", "deleted, then indexed", "changed, then indexed"):
        removed_words_case(root, how, into)


@contextmanager
def small_disk(folder: Path, size: str) -> Iterator[str | None]:
    """A tmpfs of ``size`` mounted at ``folder``; gives why it cannot be mounted here, or None once it is."""
    folder.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        yield mounted.stderr.strip() or f"mount exited {mounted.returncode}"
        return
    try:
        yield None
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def disk_docs(docs: Path) -> None:
    """Files of random words, so that the index outgrows the disk."""
    docs.mkdir(parents=True)
    rng = random.Random(7)
    for n in range(DISK_FILES):
        (docs / f"d{n:03d}.txt").write_text(
            " ".join(f"{rng.choice(WORDS)}{rng.randrange(100_000)}" for _ in range(800)) + ".\n", encoding="utf-8")


def _full_disk_wrong(first: Ran, status: Ran) -> str | None:
    lines = first.stderr.strip().splitlines()
    if first.returncode != 1 or len(lines) != 1 or "is full" not in lines[0]:
        return f"the full disk gave exit {first.returncode}: {first.said()!r}"
    indexed = json.loads(status.stdout)["indexed"] if status.returncode == 0 else None
    return None if indexed == DISK_FILES else f"{indexed} of {DISK_FILES} indexed once space was freed"


def full_disk_case(root: Path, docs: Path, size: str, into: list[CaseResult]) -> None:
    """`quire index` onto a disk of ``size``: one line; then, the disk grown, the same command to the end."""
    with timed(DISK, f"a {size[:-1]} MB disk", into) as verdict, small_disk(root / f"disk{size}", size) as why:
        if why:
            verdict((Outcome.NOT_RUN, f"cannot mount a tmpfs here ({why})"))
            return
        db = root / f"disk{size}" / "index"
        runs = [quire("index", str(docs), "--db", str(db), "--workers", "0")]
        subprocess.run(["mount", "-o", f"remount,size={FREED}", str(root / f"disk{size}")], check=True)
        runs.append(quire("index", "--db", str(db), "--workers", "0"))
        runs.append(quire("status", "--check", "--db", str(db), "--json"))
        verdict(judge(runs, _full_disk_wrong(runs[0], runs[2]), f"{runs[0].said()[:100]}; then all indexed"))


def run_full_disk(root: Path, quick: bool, into: list[CaseResult]) -> None:
    """The index onto disks of a few sizes, each full at another point of the run."""
    docs = root / "docs"
    disk_docs(docs)
    for size in DISK_SIZES[1:2] if quick else DISK_SIZES:
        full_disk_case(root, docs, size, into)
