"""Index the same folder with quire and with Recoll, back to back, and compare what each costs (issue 35).

For each folder, quire indexes it through the product (``python -m app.cli index FOLDER --db DIR --json``, default
settings) and Recoll with ``recollindex -c CONFDIR`` under a generated recoll.conf whose only top directory is the
folder (nothing outside it is read or written; the index lives in CONFDIR). Each tool runs as a child process and is
measured by ``os.wait4``: CPU seconds (user + system, its own and its reaped children's: quire's reader processes,
Recoll's filters), wall time, and peak RSS (``ru_maxrss``: the largest single process of the tree, not a sum).
The index's size is every file in its folder (quire: the database, its WAL, the saved vectors; Recoll:
CONFDIR less recoll.conf, i.e. the Xapian database and its spelling dictionary), over the folder's bytes on disk.

Folders:
- ``wiki``: the articles of the first ``--files`` WikiExtractor files, one ``.txt`` each (bench/index_wiki.py);
- ``mixed``: ``--mixed`` of those articles written as PDF, HTML, Markdown, DOCX and text in turn (with the test
  suite's generators, tests/docgen.py), plus one sample of every format the readers know.

Then where quire's bytes go: SQLite's ``dbstat`` per table (its indexes and FTS5 shadow tables folded into the table
they serve) and the files beside the database; and what ``quire remove`` of nine files in ten of the wiki folder
gives back.

Recoll is never a dependency of quire; this benchmark needs it installed (as root; poppler-utils gives Recoll the
pdftotext its PDF filter runs):
    apt-get install recoll poppler-utils

Each folder is indexed ``--rounds`` times by each tool, alternating, each time into a new index; the table gives each
tool's median (CPU, wall, peak RSS) and the ratios of the medians, with every round's CPU ratio beside them (small
folders take a second or two, which the load of a shared machine moves by a fifth).

Usage: python bench/vs_recoll.py [--files 2] [--mixed 40] [--rounds 5] [--corpus DIR] [--keep DIR] [--output FILE]
Prints a markdown table and writes bench/results/vs_recoll.json (or FILE) (stamped, engine.eval.report.stamp).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import docgen  # noqa: E402  (the test suite's document generators)
from index_wiki import DEFAULT_CORPUS, write_articles  # noqa: E402

from engine.eval.report import stamp  # noqa: E402

RESULTS = REPO / "bench" / "results" / "vs_recoll.json"
# PDF pages as the test generator lays them out: Helvetica 11 on US Letter, one line per 14 points.
PDF_LINE_CHARS = 95
PDF_LINES_PER_PAGE = 48
MIXED_FORMATS = ("pdf", "html", "md", "docx", "txt")


@dataclass(frozen=True)
class Run:
    """One tool's indexing of one folder."""

    tool: str
    index_bytes: int
    cpu_seconds: float
    wall_seconds: float
    peak_rss_mb: float
    files_indexed: int
    not_indexed: int  # files the tool skipped or failed on (Recoll: those its --diagsfile names)


def measured(cmd: list[str], log: Path, cwd: Path | None = None) -> tuple[resource.struct_rusage, float, str]:
    """Run ``cmd`` as a child and wait for it with ``os.wait4``: (its rusage, wall seconds, its stdout)."""
    started = time.perf_counter()
    with log.open("wb") as err:
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=cwd)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {child.returncode}; its log: {log}")
    return usage, wall, out.decode("utf-8", "replace")


def tree_bytes(folder: Path, leave_out: tuple[str, ...] = ()) -> int:
    """Bytes of every regular file under ``folder`` (allocated size would hide SQLite's free pages' cost)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.name not in leave_out)


def index_quire(folder: Path, db: Path, logs: Path) -> Run:
    usage, wall, out = measured([sys.executable, "-m", "app.cli", "index", str(folder), "--db", str(db), "--json"],
                                logs / f"quire-{folder.name}.log", cwd=REPO)
    report = json.loads(out)
    return Run("quire", tree_bytes(db), usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024,
               report["documents"], len(report["skipped"]))


def index_recoll(folder: Path, confdir: Path, logs: Path) -> Run:
    confdir.mkdir(parents=True)
    # topdirs is the folder alone; the Xapian database defaults to CONFDIR/xapiandb; everything else is Recoll's
    # default. Its spelling dictionary is built for the locale's language, which a C locale has none of, so the
    # language is named: Recoll does the whole job a user's first run in English does.
    (confdir / "recoll.conf").write_text(f"topdirs = {folder}\naspellLanguage = en\n", encoding="utf-8")
    diags = logs / f"recoll-{folder.name}-diags.txt"
    usage, wall, _ = measured(["recollindex", "-c", str(confdir), "--diagsfile", str(diags)],
                              logs / f"recoll-{folder.name}.log")
    # one line per problem ("MissingHelper PATH | ", then "Error PATH | " for the same file)
    lines = diags.read_text(errors="replace").splitlines() if diags.exists() else []
    skipped = len({line.split(" ", 1)[1].rsplit(" | ", 1)[0] for line in lines if " " in line})
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    return Run("Recoll", tree_bytes(confdir, leave_out=("recoll.conf",)), usage.ru_utime + usage.ru_stime, wall,
               usage.ru_maxrss / 1024, files - skipped, skipped)


def median_run(runs: list[Run]) -> Run:
    """One tool's runs of one folder as one: the median of each measure (the index is the same every round)."""
    return Run(runs[0].tool, runs[-1].index_bytes, *(statistics.median(getattr(r, m) for r in runs)
                                                      for m in ("cpu_seconds", "wall_seconds", "peak_rss_mb")),
               runs[-1].files_indexed, runs[-1].not_indexed)


def recoll_missing(confdir: Path) -> str:
    """The helpers Recoll looked for and did not find (its CONFDIR/missing file)."""
    missing = confdir / "missing"
    return missing.read_text(errors="replace").strip() if missing.exists() else ""


def write_mixed(articles: Path, count: int, folder: Path) -> None:
    """``count`` articles as PDF, HTML, Markdown, DOCX and text in turn, and one sample of every reader's format."""
    import docx

    folder.mkdir(parents=True)
    for i, source in enumerate(sorted(articles.rglob("*.txt"))[:count]):
        text = source.read_text(encoding="utf-8")
        title, _, body = text.partition("\n")
        paragraphs = [p.strip() for p in body.split("\n") if p.strip()]
        fmt = MIXED_FORMATS[i % len(MIXED_FORMATS)]
        out = folder / f"{source.stem}.{fmt}"
        if fmt == "pdf":
            out.write_bytes(docgen.build_pdf(pdf_pages(title, paragraphs), title=latin1(title)))
        elif fmt == "html":
            body_html = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
            out.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title></head>"
                           f"<body><h1>{escape(title)}</h1>{body_html}</body></html>", encoding="utf-8")
        elif fmt == "md":
            out.write_text(f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        elif fmt == "docx":
            document = docx.Document()
            document.add_heading(title, level=1)
            for p in paragraphs:
                document.add_paragraph(p)
            document.save(str(out))
        else:
            out.write_text(text, encoding="utf-8")
    samples = folder / "samples"
    samples.mkdir()
    for make in docgen.SAMPLES.values():
        make(samples)


def pdf_pages(title: str, paragraphs: list[str]) -> list[bytes]:
    """The article laid out as the test generator lays out PDF text: wrapped lines, a gap between paragraphs."""
    lines = [latin1(title), ""]
    for p in paragraphs:
        lines += [*docgen._wrapped(latin1(p), PDF_LINE_CHARS), ""]
    pages = [lines[i:i + PDF_LINES_PER_PAGE] for i in range(0, len(lines), PDF_LINES_PER_PAGE)]
    return [docgen._text_ops([(54, 740 - 14 * n, line) for n, line in enumerate(page) if line], size=10)
            for page in pages]


def latin1(text: str) -> str:
    """What a Helvetica (WinAnsi) PDF can show: other characters become '?'."""
    return text.encode("latin-1", "replace").decode("latin-1")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def where_bytes_go(db: Path) -> dict[str, int]:
    """quire's index bytes by table (indexes and FTS5 shadow tables counted with their table; SQLite's free pages
    as their own row) and by the files beside the database."""
    parts: dict[str, int] = {}
    # read-write, so that closing removes the WAL files it opened (read-only, it would leave them behind)
    with closing(sqlite3.connect(db / "index.db")) as conn:
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
        try:
            rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:
            rows = []  # a SQLite built without dbstat: the database counts as one part
        for name, size in rows:
            table = owner.get(name, name)
            for fts in ("passages_fts", "lexical_"):  # FTS5 shadow tables; the word index's tables
                if table.startswith(fts):
                    table = f"{fts.rstrip('_')}*"
            parts[f"sqlite: {table}"] = parts.get(f"sqlite: {table}", 0) + size
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        parts["sqlite: free pages"] = conn.execute("PRAGMA freelist_count").fetchone()[0] * page
        parts["sqlite: database file"] = (db / "index.db").stat().st_size
    for path in sorted(db.iterdir()):
        if path.is_file() and path.name != "index.db":
            parts[f"file: {path.name}"] = path.stat().st_size
    return parts


def remove_most(folder: Path, db: Path, logs: Path) -> dict:
    """``quire remove`` nine files in ten of ``folder`` from its index: the index's bytes before and after."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    doomed = [p for i, p in enumerate(files) if i % 10]
    before = {p.name: p.stat().st_size for p in db.iterdir() if p.is_file()}
    _, wall, _ = measured([sys.executable, "-m", "app.cli", "remove", *map(str, doomed), "--db", str(db), "--json"],
                          logs / f"quire-remove-{folder.name}.log", cwd=REPO)
    after = {p.name: p.stat().st_size for p in db.iterdir() if p.is_file()}
    return {"files_removed": len(doomed), "files_left": len(files) - len(doomed), "seconds": wall,
            "bytes_before": before, "bytes_after": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2, help="WikiExtractor files whose articles make the folders")
    parser.add_argument("--mixed", type=int, default=40, help="articles written as PDF/HTML/MD/DOCX/text")
    parser.add_argument("--rounds", type=int, default=5, help="times each tool indexes each folder, alternating")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--keep", type=Path, help="keep the folders and indexes here (default: a scratch folder)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if shutil.which("recollindex") is None:
        raise SystemExit("recollindex not found: apt-get install recoll poppler-utils (as root)")

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="vs_recoll_"))
    if args.keep and scratch.exists():
        raise SystemExit(f"{scratch} exists; give a new folder to --keep")
    logs = scratch / "logs"
    logs.mkdir(parents=True)
    wiki = scratch / "wiki"
    articles, _ = write_articles(args.corpus, args.files, wiki)
    mixed = scratch / "mixed"
    write_mixed(wiki, args.mixed, mixed)

    results: dict = {"stamp": stamp(REPO), "folders": {}}
    try:
        for folder in (wiki, mixed):
            source = tree_bytes(folder)
            files = sum(1 for p in folder.rglob("*") if p.is_file())
            rounds = []
            for n in range(args.rounds):
                # every round but the last into a folder of its own, removed after it; the last one is kept
                last = n == args.rounds - 1
                quire_db, recoll_conf = (scratch / (f"{tool}-{folder.name}" if last else f"{tool}-{folder.name}-{n}")
                                         for tool in ("quire", "recoll"))
                rounds.append((index_quire(folder, quire_db, logs), index_recoll(folder, recoll_conf, logs)))
                if not last:
                    shutil.rmtree(quire_db)
                    shutil.rmtree(recoll_conf)
            quire, recoll = (median_run([r[i] for r in rounds]) for i in (0, 1))
            results["folders"][folder.name] = {
                "files": files, "source_bytes": source, "runs": [asdict(quire), asdict(recoll)],
                "rounds": [[asdict(q), asdict(r)] for q, r in rounds],
                "quire_bytes": where_bytes_go(scratch / f"quire-{folder.name}"),
                "recoll_missing_helpers": recoll_missing(scratch / f"recoll-{folder.name}"),
            }
        results["remove"] = remove_most(wiki, scratch / "quire-wiki", logs)
        results["articles"] = articles
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(table(results))
        print(f"\nwrote {args.output}")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


def table(results: dict) -> str:
    s = results["stamp"]
    lines = [f"Measured {s['date']} on {s['cpu']} ({s['cores']} cores), commit {s['commit']}. "
             f"Command: `{s['command']}`.", "",
             f"Medians of {len(next(iter(results['folders'].values()))['rounds'])} rounds per tool and folder.", "",
             "| folder | tool | index / source | index MB | CPU s | wall s | peak RSS MB | files indexed | not indexed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, folder in results["folders"].items():
        label = f"{name} ({folder['files']} files, {folder['source_bytes'] / 1e6:.1f} MB)"
        quire, recoll = (Run(**r) for r in folder["runs"])
        for run in (quire, recoll):
            lines.append(f"| {label} | {run.tool} | {run.index_bytes / folder['source_bytes']:.2f}x | "
                         f"{run.index_bytes / 1e6:.1f} | {run.cpu_seconds:.1f} | {run.wall_seconds:.1f} | "
                         f"{run.peak_rss_mb:.0f} | {run.files_indexed} | {run.not_indexed} |")
        lines.append(f"| {label} | quire / Recoll | {quire.index_bytes / recoll.index_bytes:.1f}x | | "
                     f"{quire.cpu_seconds / recoll.cpu_seconds:.1f}x | {quire.wall_seconds / recoll.wall_seconds:.1f}x"
                     f" | {quire.peak_rss_mb / recoll.peak_rss_mb:.1f}x | | |")
    lines.append("")
    for name, folder in results["folders"].items():
        ratios = [q["cpu_seconds"] / r["cpu_seconds"] for q, r in folder["rounds"]]
        lines.append(f"CPU, quire / Recoll, round by round ({name}): " + ", ".join(f"{x:.2f}x" for x in ratios))
    for name, folder in results["folders"].items():
        if folder["recoll_missing_helpers"]:
            lines += ["", f"Recoll's missing helpers ({name}): " + "; ".join(folder["recoll_missing_helpers"].splitlines())]
    removal = results["remove"]
    before, after = (sum(removal[k].values()) for k in ("bytes_before", "bytes_after"))
    db_before, db_after = (removal[k].get("index.db", 0) for k in ("bytes_before", "bytes_after"))
    lines += ["", f"`quire remove` of {removal['files_removed']} of the wiki folder's files "
              f"({removal['files_left']} left, {removal['seconds']:.1f} s): the index {before / 1e6:.1f} MB -> "
              f"{after / 1e6:.1f} MB, of which the database {db_before / 1e6:.1f} MB -> {db_after / 1e6:.1f} MB."]
    for name, folder in results["folders"].items():
        lines += ["", f"Where quire's bytes go ({name}):", "", "| part | MB | share of the index |", "|---|---|---|"]
        total = folder["runs"][0]["index_bytes"]
        parts = folder["quire_bytes"]
        for part, size in sorted(parts.items(), key=lambda kv: -kv[1]):
            if size < 10_000:
                continue  # lock files, the sidecar, SQLite's bookkeeping tables
            share = "" if part == "sqlite: database file" else f"{100 * size / total:.1f}%"
            lines.append(f"| {part} | {size / 1e6:.2f} | {share} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
