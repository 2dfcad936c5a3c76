"""A new user's folder: four short personal notes among 65 Wikipedia articles, and 23 questions a person might type,
each with the one file that answers it (issue 32: notes found by meaning alone sank under articles sharing one
everyday word). A probe of the ranking as the window shows it, written from what two new users of the window tried;
it is not held out, so it checks a behaviour and is no quality figure.

    python bench/notes_probe.py [--corpus DIR] [--keep DIR]

Writes the corpus's first 62 articles and three named ones, and the four notes, as text files;
indexes them with `quire index` defaults (``Index.add``); then searches every question in hybrid and semantic mode
(k = 15, weak results kept so that a rank is always read) and reads the answering file's rank and whether it is
shown (not weak). Hybrid is measured with related words (``engine.search.related``) as shipped and, beside it, off.
Prints a table and writes bench/results/notes_probe.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from index_wiki import _DOC, DEFAULT_CORPUS

from engine import Index, IndexConfig
from engine.eval import harness
from engine.eval.report import stamp
from engine.search import related

FIRST_ARTICLES = 62
NAMED = ("Defamation", "Steganography", "Sed")
NOTES = {
    "trains.txt": "The night train to Vienna leaves at 22:10 from platform 4. Tickets are sold at the counter.",
    "travel.txt": "Plans for April.\nWe fly to Lisbon on the 12th and stay four nights in a small guesthouse in the "
                  "Alfama district.\nThen we take the train to Porto for the port cellars and a boat trip on the Douro "
                  "river.\nRemember to book the Sintra day tour and to pack light: the airline allows one cabin bag "
                  "each.",
    "garden.txt": "Notes on the raised beds.\nTomatoes, courgettes and beans went into the sunny bed by the fence in "
                  "May.\nBasil, parsley and chives grow in pots near the kitchen door, where they get morning light.\n"
                  "Water the seedlings every evening in dry weeks and mulch the soil with compost to keep it moist.",
    "budget.txt": "Household spending this year.\nRent and utilities take about half of the monthly income; groceries "
                  "come next.\nWe should put a fixed sum into savings on payday before anything else is spent.\nThe "
                  "car insurance renewal is due in October and costs more than last year.",
}
QUESTIONS = (
    ("holiday trip to Portugal", "travel.txt"), ("city break in Lisbon and Porto", "travel.txt"),
    ("what to pack for the flight", "travel.txt"), ("holiday in Portugal", "travel.txt"),
    ("growing vegetables and herbs in my backyard", "garden.txt"), ("how often to water the plants", "garden.txt"),
    ("what to plant in a sunny spot", "garden.txt"), ("what to plant in the vegetable patch", "garden.txt"),
    ("how much do we spend on rent", "budget.txt"), ("saving money every month", "budget.txt"),
    ("when is the insurance renewal", "budget.txt"),
    ("overnight rail service to Austria", "trains.txt"), ("overnight rail journey to Austria", "trains.txt"),
    ("where do I buy a ticket for the train", "trains.txt"),
    ("telling untrue stories that hurt a person's standing", "Defamation.txt"),
    ("a kid who avoids eye contact and lines up toys", "Autism.txt"),
    ("hide a secret message inside a picture", "Steganography.txt"), ("edit a file in place with sed", "Sed.txt"),
    ("first men to walk on the moon", "Apollo_11.txt"), ("Lincoln assassination", "Abraham_Lincoln.txt"),
    ("Agassi Wimbledon title", "Andre_Agassi.txt"), ("analysis of variance F test", "Analysis_of_variance.txt"),
    ("Huxley Brave New World", "Aldous_Huxley.txt"),
)
K = 15


def file_name(title: str) -> str:
    return re.sub(r"\W", "_", title.replace(" ", "_")) + ".txt"


def write_folder(corpus: Path, folder: Path) -> int:
    """The articles and the notes as text files in ``folder``; returns how many articles."""
    sources = sorted(corpus.rglob("wiki_*.gz"))
    if not sources:
        raise SystemExit(f"no wiki_*.gz files under {corpus}")
    wanted, seen, written = set(NAMED), 0, 0
    for source in sources:
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            for _, title, body in _DOC.findall(handle.read()):
                seen += 1
                if seen <= FIRST_ARTICLES or title in wanted:
                    (folder / file_name(title)).write_text(body.strip() + "\n", encoding="utf-8")
                    wanted.discard(title)
                    written += 1
        if seen >= FIRST_ARTICLES and not wanted:
            break
    for name, text in NOTES.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return written


def ranks(index: Index, mode: str) -> list[dict]:
    """Each question's answering file: its rank among the first K (None: not among them) and whether it is shown."""
    out = []
    for question, answer in QUESTIONS:
        results = index.search(question, k=K, mode=mode, include_weak=True, explain=False).results
        names = [Path(r.path).name for r in results]
        rank = names.index(answer) + 1 if answer in names else None
        out.append({"question": question, "answer": answer, "rank": rank,
                    "shown": rank is not None and not results[rank - 1].weak})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--keep", type=Path, default=None, help="folder for the files and index (default: temporary)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="notes-probe-") as scratch:
        root = args.keep or Path(scratch)
        folder, db = root / "docs", root / "index"
        if not (db / "done").exists():
            folder.mkdir(parents=True, exist_ok=True)
            articles = write_folder(args.corpus, folder)
            with Index(db, config=IndexConfig()) as index:
                index.add([folder])
            (db / "done").write_text(f"{articles} articles\n")
        weight = related.WEIGHT
        with Index(db, create=False) as index:
            rows = {"hybrid": ranks(index, "hybrid"), "semantic": ranks(index, "semantic")}
            related.WEIGHT = 0.0
            try:
                rows["hybrid, related words off"] = ranks(index, "hybrid")
            finally:
                related.WEIGHT = weight
    modes = list(rows)
    print("| question | answer | " + " | ".join(modes) + " |\n|---|---|" + "---|" * len(modes))
    for i, (question, answer) in enumerate(QUESTIONS):
        cells = [f"{r['rank'] or '-'}{'' if rows[m][i]['shown'] else ' (weak)'}" for m in modes for r in [rows[m][i]]]
        print(f"| {question} | {answer} | " + " | ".join(cells) + " |")
    summary = {m: {"first": sum(r["rank"] == 1 for r in rows[m]), "top3": sum((r["rank"] or K + 1) <= 3 for r in rows[m]),
                   "shown": sum(r["shown"] for r in rows[m])} for m in modes}
    print("| **first / top 3 / shown** | | " + " | ".join(
        f"{s['first']} / {s['top3']} / {s['shown']} of {len(QUESTIONS)}" for s in summary.values()) + " |")
    out = args.out or harness.default_results_dir() / "notes_probe.json"
    out.write_text(json.dumps({"stamp": stamp(harness.REPO), "summary": summary, "questions": rows}, indent=2) + "\n",
                   encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
