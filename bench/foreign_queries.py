"""Questions from another field: how often the relevance gate says "nothing relevant" when a collection of abstracts
is asked another collection's queries, beside how often it says so to the collection's own queries.

bench/answerability.py asks its off-topic questions of one-sentence documents (STS-B captions and news). A person's
folder holds long documents whose words an unrelated question shares ("tax deductions for a home office" against
an article on inflation that mentions taxes and homes), where chance matches are likelier. Here each of the five
classic collections (multi-sentence abstracts: aeronautics, medicine, physics and electronics, library and
information science) is indexed through the product (`quire index`) and asked, through `quire search --queries`
as a user is answered (the default listing, k = 10), its own judged queries, each of which has a relevant document, and
every other collection's, except the two library-science collections' of each other (one field).

The fields overlap in places (aerodynamics and NPL's physics, information retrieval and NPL's computing, medical
libraries in LISA and CISI), so some foreign queries have an honest answer: the foreign share is a figure to compare
gates by, not one to drive to 100%. The own share is the classic benchmark's "nothing relevant" figure, which must
stay under 2% (issue 32).

    python bench/foreign_queries.py [--methods static,sbert] [--modes hybrid,lexical] [--collections ...]

Prints a table per method and mode (rows: whose queries, columns: which collection is asked) and writes
bench/results/foreign_queries.json. Every number is recomputed on each run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from engine.errors import QuireError
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, Collection, load_collection
from engine.eval.harness import REPO, default_data_dir, default_results_dir
from engine.eval.product import build, search, write_files
from engine.eval.report import stamp

# Collections of one field, whose queries are not foreign to each other.
SAME_FIELD = ({"cisi", "lisa"},)
K = 10


def foreign(source: str, target: str) -> bool:
    """Whether ``source``'s queries are from another field than ``target``'s documents."""
    return source != target and not any({source, target} <= field for field in SAME_FIELD)


def measure(collections: dict[str, Collection], methods: list[str], modes: list[str], work: Path, *,
            timeout: float) -> list[dict]:
    """One row per (method, mode, asked collection, queries' collection): the share answered "nothing relevant";
    an index or search that fails is a row with its error."""
    queries = {name: {q: c.queries[q] for q in c.judged_queries()} for name, c in collections.items()}
    rows = []
    for target, collection in collections.items():
        files = write_files(collection, work / target / "docs")
        sources = [source for source in collections if source == target or foreign(source, target)]
        for method in methods:
            try:
                built = build(files, work / target / f"index-{method}", method, timeout=timeout)
            except QuireError as e:
                rows += [{"method": method, "mode": mode, "asked": target, "queries_of": source, "error": str(e)}
                         for mode in modes for source in sources]
                continue
            for mode in modes:
                for source in sources:
                    row = {"method": method, "mode": mode, "asked": target, "queries_of": source,
                           "queries": len(queries[source])}
                    try:
                        answers = search(built, files, queries[source], mode, timeout=timeout, depth=K)
                        row["nothing_pct"] = round(100 * len(answers.nothing_relevant) / len(queries[source]), 2)
                    except QuireError as e:
                        row["error"] = str(e)
                    rows.append(row)
    return rows


def summary(rows: list[dict], method: str, mode: str) -> dict:
    """Mean "nothing relevant" share over the foreign pairs and the worst own share, for one method and mode."""
    mine = [r for r in rows if r["method"] == method and r["mode"] == mode and "nothing_pct" in r]
    others = [r["nothing_pct"] for r in mine if r["asked"] != r["queries_of"]]
    own = [r["nothing_pct"] for r in mine if r["asked"] == r["queries_of"]]
    return {"method": method, "mode": mode,
            "foreign_nothing_mean": round(sum(others) / len(others), 2) if others else None,
            "foreign_nothing_min": min(others, default=None), "own_nothing_max": max(own, default=None)}


def table(rows: list[dict], names: list[str], method: str, mode: str) -> str:
    """Markdown: a row per queries' collection, a column per collection asked; '.' where the pair is not measured."""
    cell = {(r["queries_of"], r["asked"]): ("FAILED" if "error" in r else f"{r['nothing_pct']:.1f}")
            for r in rows if r["method"] == method and r["mode"] == mode}
    lines = [f"| queries of \\ asked | {' | '.join(names)} |", "|" + "---|" * (len(names) + 1)]
    lines += [f"| {s} | " + " | ".join(cell.get((s, t), ".") for t in names) + " |" for s in names]
    return "\n".join(lines)


def main() -> None:
    """Parse the options, index and ask, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: ../shared/data/benchmarks "
                        "or $QUIRE_BENCH_DATA), with retrieval/<collection>/")
    parser.add_argument("--methods", default="static", help="comma-separated embedding methods, e.g. static,sbert")
    parser.add_argument("--modes", default="hybrid", help="comma-separated search modes")
    parser.add_argument("--collections", default=",".join(RETRIEVAL_COLLECTIONS), help="retrieval collections")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed each `quire` subprocess")
    parser.add_argument("--out", type=Path, default=None, help="JSON file (default bench/results/foreign_queries.json)")
    args = parser.parse_args()
    data = args.data or default_data_dir()
    names = [c for c in args.collections.split(",") if c]
    methods, modes = [m for m in args.methods.split(",") if m], [m for m in args.modes.split(",") if m]
    collections = {name: load_collection(data / "retrieval" / name) for name in names}
    with tempfile.TemporaryDirectory(prefix="quire-foreign-") as work:
        rows = measure(collections, methods, modes, Path(work), timeout=args.timeout)

    summaries = [summary(rows, method, mode) for method in methods for mode in modes]
    for s in summaries:
        print(f"\n{s['method']}, {s['mode']}: % of queries answered \"nothing relevant\" (k = {K}); foreign pairs "
              f"mean {s['foreign_nothing_mean']}, lowest {s['foreign_nothing_min']}; own queries at most "
              f"{s['own_nothing_max']}\n")
        print(table(rows, names, s["method"], s["mode"]))
    for r in rows:
        if "error" in r:
            print(f"- {r['method']} {r['mode']} {r['queries_of']} -> {r['asked']}: {r['error']}")
    out = args.out or default_results_dir() / "foreign_queries.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"stamp": stamp(REPO), "k": K, "same_field": [sorted(f) for f in SAME_FIELD], "summaries": summaries,
              "rows": rows}
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
