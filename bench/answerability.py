"""The relevance gate as a user meets it: is the right sentence shown, and is "nothing relevant found" said to
questions the collection cannot answer?

Documents are STS-B sentences, one per file; answerable queries are paraphrases of one of them (gold >= 4) that share
at most half of their content words with it; off-topic queries are a seeded sample of the classic retrieval
collections' queries (engine/eval/answerability.py has the rules). Everything runs through the product: `quire index`
once per method, then `quire search --queries` per mode twice, as a user gets it (each result labelled by its confidence) and with
``--all`` (the ungated ranking), so a loss can be told apart as the ranking's or the gate's.

Run: ``python bench/answerability.py [--methods static,sbert] [--modes hybrid,semantic,lexical] [--split test]``;
prints a table and writes bench/results/answerability.json (``answerability_test.json`` for ``--split test``: the dev
split is the one to tune on and commit). Every number is recomputed on each run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from engine.errors import QuireError
from engine.eval import answerability as ans
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, load_sts
from engine.eval.harness import REPO, default_data_dir, default_results_dir
from engine.eval.product import Built, Files, build, write_files
from engine.eval.report import stamp

MODES = ("hybrid", "semantic", "lexical")
# Examples of each failure kept in the JSON: enough to see what kind of query fails, not a dump.
EXAMPLES = 3
COLUMNS = (("shown_at_k", "shown@10"), ("shown_top1", "shown top-1"), ("ungated_at_k", "ungated@10"),
           ("ungated_top1", "ungated top-1"), ("first_at_least_possible", "first, >= possible"),
           ("offtopic_no_strong", "off-topic: no strong"), ("offtopic_best_under_30", "off-topic: best < 30"),
           ("offtopic_best_card_p95", "off-topic best card p95"), ("ece", "ECE"),
           ("cosine_separation", "cosine separation"))


def measure_mode(answers: ans.AnswerSet, built: Built, files: Files, mode: str, *, timeout: float) -> dict:
    """One mode's scores, search times and failure examples on a built index."""
    queries = answers.queries()
    started = time.perf_counter()
    gated = ans.search(built, files, queries, mode, gated=True, timeout=timeout)
    gated_seconds = time.perf_counter() - started
    ungated = ans.search(built, files, queries, mode, gated=False, timeout=timeout)
    scores = ans.score(answers, gated, ungated)
    return {
        **asdict(scores), "cosine_separation": ans.separation(answers, ungated),
        "search_seconds": round(gated_seconds, 1), "examples": examples(answers, gated, ungated),
    }


def _cell(key: str, value: float | None) -> str:
    """A table cell: percentages to a tenth, the calibration error (a share) to three places."""
    return "-" if value is None else f"{value:.3f}" if key == "ece" else f"{value:.1f}"


def examples(answers: ans.AnswerSet, gated: dict, ungated: dict) -> dict:
    """A few answerable queries whose right document was not listed, and off-topic queries shown a strong result."""
    docs = answers.documents
    cut = [{"query": answers.answerable[q], "document": docs[d]} for q, d in answers.answers.items()
           if d in [h.doc for h in ungated[q]] and d not in ans.shown(gated[q])]
    answered = [{"query": answers.offtopic[q], "shown_first": docs[gated[q][0].doc],
                 "confidence": gated[q][0].confidence} for q in answers.offtopic
                if gated[q] and gated[q][0].strength == "strong"]
    return {"cut_by_gate": cut[:EXAMPLES], "offtopic_shown": answered[:EXAMPLES]}


def run(answers: ans.AnswerSet, methods: list[str], modes: list[str], work: Path, *, timeout: float) -> list[dict]:
    """Index once per method, measure each mode; a method that fails is a row with its error, not a lost run."""
    files = write_files(answers.collection(), work / "docs")
    rows = []
    for method in methods:
        try:
            built = build(files, work / f"index-{method}", method, timeout=timeout)
        except QuireError as e:
            rows += [{"method": method, "mode": mode, "error": str(e)} for mode in modes]
            continue
        for mode in modes:
            row = {"method": method, "mode": mode, "index_seconds": round(built.index_seconds, 3),
                   "documents_indexed": built.documents, "sentences": built.sentences}
            try:
                row.update(measure_mode(answers, built, files, mode, timeout=timeout))
            except QuireError as e:
                row["error"] = str(e)
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    """The markdown table of the rows (FAILED where a row has an error)."""
    header = ["method", "mode", *(title for _, title in COLUMNS), "index s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = (["FAILED"] * (len(COLUMNS) + 1) if "error" in r
                 else [_cell(key, r[key]) for key, _ in COLUMNS] + [f"{r['index_seconds']:.1f}"])
        lines.append("| " + " | ".join([r["method"], r["mode"], *cells]) + " |")
    return "\n".join(lines)


def main() -> None:
    """Parse the options, build the collection, measure, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: ../shared/data/benchmarks "
                        "or $QUIRE_BENCH_DATA), with sts/ and retrieval/<collection>/queries.jsonl")
    parser.add_argument("--split", choices=("dev", "test"), default="dev",
                        help="STS-B split; test is for a one-time report, tune on dev")
    parser.add_argument("--methods", default="static", help="comma-separated embedding methods, e.g. static,sbert")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated search modes")
    parser.add_argument("--collections", default=",".join(RETRIEVAL_COLLECTIONS),
                        help="retrieval collections the off-topic queries come from")
    parser.add_argument("--offtopic", type=int, default=ans.OFFTOPIC_PER_COLLECTION,
                        help="off-topic queries sampled per collection")
    parser.add_argument("--seed", type=int, default=0, help="seed of the off-topic sample")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed each `quire` subprocess")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON file (default: bench/results/answerability.json, answerability_test.json for test)")
    args = parser.parse_args()
    data = args.data or default_data_dir()
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    out = args.out or default_results_dir() / f"answerability{'' if args.split == 'dev' else '_' + args.split}.json"

    pairs = load_sts(data / "sts" / f"sts-{args.split}.csv")
    offtopic = ans.load_offtopic(data / "retrieval", per_collection=args.offtopic, seed=args.seed,
                                 collections=[c for c in args.collections.split(",") if c])
    answers = ans.select(pairs, offtopic)
    counts = {"pairs": len(pairs.gold), "documents": len(answers.documents), "answerable": len(answers.answerable),
              "offtopic": len(answers.offtopic)}
    with tempfile.TemporaryDirectory(prefix="quire-answerability-") as work:
        rows = run(answers, [m for m in args.methods.split(",") if m], modes, Path(work), timeout=args.timeout)

    print(f"STS-B {args.split}: {counts['documents']:,} documents, {counts['answerable']} answerable queries, "
          f"{counts['offtopic']} off-topic queries (percentages; k = {ans.K})\n")
    print(table(rows))
    for r in rows:
        if "error" in r:
            print(f"- {r['method']} {r['mode']}: {r['error']}")
    rules = {"gold_answerable": ans.GOLD_ANSWERABLE, "gold_distractor": ans.GOLD_DISTRACTOR,
             "max_shared": ans.MAX_SHARED, "min_content_words": ans.MIN_CONTENT_WORDS, "k": ans.K,
             "offtopic_per_collection": args.offtopic, "seed": args.seed, "collections": args.collections.split(",")}
    result = {"stamp": stamp(REPO), "split": args.split, "counts": counts, "rules": rules, "rows": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
