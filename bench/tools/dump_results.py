"""Dump the full answers of many queries, so that two versions of the engine can be compared byte for byte.

A refactor of the query path must not move a single result. ``build`` indexes a few real folders once: the five
classic retrieval collections written as files (``engine.eval.product.write_files``), Wikipedia articles in
subfolders, the same articles as a sharded collection (two shards, in this process) and a folder of a handful of
files of several types (a folder too small to calibrate takes another branch of the relevance gate). ``dump``
asks every index its queries and writes one JSON line per query: the ``SearchResponse`` as ``quire search --json``
prints it, without its ``seconds``. The queries: each collection's own, STS-B sentences, the three modes,
explanations on and off, weak results kept (``--all``), filters (``--in``, ``--type``), "more like this"
(``--like``), misspelt words, quoted phrases, stop words alone and re-ranking by facets.

Usage:
    python bench/tools/dump_results.py build WORK [--articles 2] [--data DIR]
    python bench/tools/dump_results.py dump WORK OUT.jsonl [--tree DIR]
    cmp OUT_A.jsonl OUT_B.jsonl

``--tree`` imports the engine from another checkout (a ``git worktree`` of main), so both dumps read the same
indexes. ``WORK`` holds the folders and their indexes; build once, dump with each version.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
CLASSIC = ("cranfield", "cisi", "medline", "lisa", "npl")
# Queries of each classic collection asked in every mode; the rest of its queries in hybrid mode only.
EVERY_MODE = 40
STS_QUERIES = 60
# Words long enough to misspell by swapping two inner letters.
MISSPELT_MIN = 7

SMALL_FILES = {
    "notes/trains.txt": "The night train to Vienna leaves at 22:10 from platform 4.\nSleeper cabins hold two or four "
                        "berths.\nTickets bought a day before cost less.\n",
    "notes/garden.md": "# Garden\n\nTomatoes need six hours of sun a day.\n\n## Watering\n\nWater them at the roots "
                       "in the morning, never on the leaves.\n- Mulch keeps the soil moist.\n- Prune the side shoots."
                       "\n",
    "recipes/bread.html": "<html><head><title>Sourdough bread</title></head><body><h1>Sourdough bread</h1><p>Feed the "
                          "starter the night before baking.</p><p>Bake at 230 degrees for forty minutes with steam."
                          "</p></body></html>",
    "recipes/soup.txt": "Lentil soup\n\nFry an onion, add red lentils and stock, and simmer for twenty minutes.\nBlend "
                        "half of it for a thicker soup.\n",
    "lease.txt": "Term and ending the tenancy\n\nEither party may end it by giving two months' written notice.\nThe "
                 "deposit is returned within ten days of the end of the tenancy.\n",
}
SMALL_QUERIES = ("overnight rail service to Austria", "how much sun do tomatoes need", "sourdough baking temperature",
                 "how do I end my lease", "lentil soup", "quantum chromodynamics of gluons", "the", "\"the night\"",
                 "watering", "notice period", "tomatos", "deposit returned")
STOP_WORDS = ("the", "of the", "to be or not to be", "\"to be or not to be\"", "and", "it is what it is")


@dataclass(frozen=True)
class Ask:
    """One search: its arguments to ``Index.search`` (or, with ``like``, ``Index.search_like``)."""

    text: str
    mode: str = "hybrid"
    k: int = 10
    include_weak: bool = False
    explain: bool = False
    rerank_facets: bool | None = None
    folders: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    like: dict[str, Any] | None = None
    then_explain: bool = False  # the app's way: a ranking without explanations, then Index.explain on it

    def key(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ((), None, False)}


@dataclass
class Plan:
    """The indexes to ask and each one's searches."""

    asks: dict[str, list[Ask]] = field(default_factory=dict)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _sts_sentences(data: Path, n: int) -> list[str]:
    rows = (data / "benchmarks" / "sts" / "sts-dev.csv").read_text(encoding="utf-8").splitlines()
    sentences = [cells[5] for cells in (r.split("\t") for r in rows) if len(cells) > 6]
    return sentences[:: max(1, len(sentences) // n)][:n]


def _misspelt(text: str, rng: random.Random) -> str | None:
    """``text`` with two inner letters of one long word swapped (None: no word long enough)."""
    words = text.split()
    long = [i for i, w in enumerate(words) if len(w) >= MISSPELT_MIN and w.isalpha()]
    if not long:
        return None
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _phrase(text: str, rng: random.Random) -> str | None:
    """Three words of ``text`` in a row, quoted, beside one more word of it."""
    words = [w for w in text.split() if w.isalpha()]
    if len(words) < 5:
        return None
    at = rng.randrange(0, len(words) - 3)
    return f"\"{' '.join(words[at:at + 3])}\" {words[-1]}"


def classic_asks(queries: list[str], sts: list[str], seed: str) -> list[Ask]:
    """A classic collection's searches: every query in hybrid mode with and without explanations, the first
    EVERY_MODE in the other modes and with weak results, and variants (misspelt, phrases, STS-B sentences)."""
    rng = random.Random(seed)
    asks = [Ask(q) for q in queries] + [Ask(q, explain=True) for q in queries]
    for q in queries[:EVERY_MODE]:
        asks += [Ask(q, mode="semantic"), Ask(q, mode="lexical"), Ask(q, include_weak=True, k=30),
                 Ask(q, mode="lexical", include_weak=True, explain=True), Ask(q, mode="semantic", explain=True)]
    for q in queries[:EVERY_MODE:4]:
        asks += [Ask(q, rerank_facets=True), Ask(q, then_explain=True, include_weak=True)]
    for q in queries[:EVERY_MODE]:
        for variant in (_misspelt(q, rng), _phrase(q, rng)):
            if variant:
                asks += [Ask(variant), Ask(variant, mode="lexical", explain=True)]
    asks += [Ask(s) for s in sts[:20]] + [Ask(s, mode="semantic", include_weak=True) for s in sts[:10]]
    asks += [Ask(s, mode=m) for s in STOP_WORDS for m in ("hybrid", "lexical")]
    return asks


def wiki_asks(folder: Path, sts: list[str], titles: list[str], sentences: list[str]) -> list[Ask]:
    """The Wikipedia folder's searches: titles and sentences of its articles, STS-B sentences, filters and "more like
    this" of a few articles."""
    subfolders = sorted(str(p) for p in folder.iterdir() if p.is_dir())
    leaves = sorted(str(p) for p in folder.rglob("wiki_*") if p.is_dir())
    asks = []
    for text in [*titles, *sentences, *sts]:
        asks += [Ask(text), Ask(text, mode="semantic"), Ask(text, mode="lexical")]
    for text in [*titles[:15], *sts[:15]]:
        asks += [Ask(text, explain=True), Ask(text, include_weak=True, k=20),
                 Ask(text, folders=(leaves[0],)), Ask(text, folders=tuple(leaves[1:2]), mode="semantic"),
                 Ask(text, folders=(subfolders[0], leaves[-1]), include_weak=True, explain=True),
                 Ask(text, types=("md",)), Ask(text, types=("txt",), mode="lexical")]
    files = sorted(str(p) for p in folder.rglob("*.txt"))
    for path in files[:: max(1, len(files) // 8)][:8]:
        asks += [Ask("", like={"path": path}), Ask("", like={"path": path}, mode="hybrid", explain=True),
                 Ask("", like={"path": path, "sentence": 2}, include_weak=True)]
    asks += [Ask(s, mode=m) for s in STOP_WORDS for m in ("hybrid", "semantic", "lexical")]
    return asks


def _articles(folder: Path) -> tuple[list[str], list[str]]:
    """Titles (first lines) and third sentences of a sample of the articles written under ``folder``."""
    files = sorted(folder.rglob("*.txt"))
    picked = files[:: max(1, len(files) // 40)][:40]
    titles, sentences = [], []
    for path in picked:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        titles.append(lines[0])
        if len(lines) > 2:
            sentences.append(" ".join(lines[2].split()[:12]))
    return titles, sentences


def build(work: Path, data: Path, articles: int) -> None:
    """Write the folders under ``work`` and index each (static method), the sharded collection too."""
    from bench.index_wiki import write_articles
    from engine import Index
    from engine.cluster.indexing import index_collection
    from engine.eval.datasets import load_collection
    from engine.eval.product import write_files

    work.mkdir(parents=True, exist_ok=False)
    for name in CLASSIC:
        collection = load_collection(data / "benchmarks" / "retrieval" / name)
        files = write_files(collection, work / name / "files")
        _index(Index, work / name / "index", files.folder)
    wiki = work / "wiki" / "files"
    write_articles(data / "corpora" / "enwiki", articles, wiki)
    for n, path in enumerate(sorted(wiki.rglob("*.txt"))[:30]):  # some Markdown, for --type
        if n % 3 == 0:
            path.rename(path.with_suffix(".md"))
    _index(Index, work / "wiki" / "index", wiki)
    index_collection(work / "shards" / "index", [wiki], 2)
    small = work / "small" / "files"
    for relative, text in SMALL_FILES.items():
        (small / relative).parent.mkdir(parents=True, exist_ok=True)
        (small / relative).write_text(text, encoding="utf-8")
    _index(Index, work / "small" / "index", small)


def _index(index_class: Any, db: Path, folder: Path) -> None:
    started = time.perf_counter()
    with index_class(db) as idx:
        report = idx.add([folder])
    print(f"{db}: {report.documents} documents in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def plan(work: Path, data: Path) -> Plan:
    """Every index's searches, in a fixed order."""
    sts = _sts_sentences(data, STS_QUERIES)
    out = Plan()
    for name in CLASSIC:
        queries = [r["text"] for r in _jsonl(data / "benchmarks" / "retrieval" / name / "queries.jsonl")]
        out.asks[name] = classic_asks(queries, sts[name in CLASSIC[1:3]::2], name)
    titles, sentences = _articles(work / "wiki" / "files")
    wiki = wiki_asks(work / "wiki" / "files", sts, titles, sentences)
    out.asks["wiki"] = wiki
    # the collection answers as one index would: its shards count with the collection's statistics
    out.asks["shards"] = [a for a in wiki if a.like is None and not a.folders][::2]
    out.asks["small"] = [Ask(q, mode=m, include_weak=w, explain=e) for q in SMALL_QUERIES
                         for m in ("hybrid", "semantic", "lexical") for w in (False, True) for e in (False, True)]
    out.asks["small"] += [Ask(q, types=("md",)) for q in SMALL_QUERIES] + [
        Ask(q, folders=(str(work / "small" / "files" / "recipes"),), include_weak=True) for q in SMALL_QUERIES]
    return out


def answer(index: Any, ask: Ask) -> dict[str, Any]:
    """The response to ``ask`` as ``quire search --json`` prints it, without ``seconds``; a refused query's error."""
    from engine.errors import QuireError
    from engine.search.like import LikeSource
    from engine.store.filters import Filters

    within = Filters(folders=ask.folders, types=ask.types)
    options = dict(k=ask.k, mode=ask.mode, include_weak=ask.include_weak, explain=ask.explain,
                   rerank_facets=ask.rerank_facets, within=within)
    try:
        if ask.like is not None:
            response = index.search_like(LikeSource(**ask.like), **options)
        else:
            response = index.search(ask.text, **options)
        if ask.then_explain:
            response = replace(response, results=tuple(index.explain(ask.text, response.results)))
    except QuireError as e:
        return {"error": f"{type(e).__name__}: {e}"}
    out = response.to_json()
    out.pop("seconds")
    return out


def dump(work: Path, out: Path, data: Path) -> int:
    """Ask every index its searches; one line per search. Returns how many."""
    from engine import Index
    from engine.cluster.collection import Collection

    asked = 0
    with out.open("w", encoding="utf-8") as handle:
        for name, asks in plan(work, data).asks.items():
            started = time.perf_counter()
            folder = work / name / "index"
            index = Collection(folder) if name == "shards" else Index(folder, create=False)
            with index:
                for ask in asks:
                    line = {"index": name, "ask": ask.key(), "response": answer(index, ask)}
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")
                    asked += 1
            print(f"{name}: {len(asks)} searches in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write and index the folders")
    b.add_argument("work", type=Path)
    b.add_argument("--articles", type=int, default=2, help="Wikipedia files (of about 150 articles each)")
    b.add_argument("--data", type=Path, default=DEFAULT_DATA)
    d = sub.add_parser("dump", help="ask every index its searches")
    d.add_argument("work", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose engine answers (default: this one)")
    d.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    tree = getattr(args, "tree", ROOT).resolve()
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(ROOT))  # bench.index_wiki
    import engine

    assert engine.__file__ is not None and engine.__file__.startswith(str(tree)), engine.__file__
    if args.command == "build":
        build(args.work, args.data, args.articles)
    else:
        print(f"{dump(args.work, args.out, args.data)} searches written to {args.out} by {engine.__file__}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
