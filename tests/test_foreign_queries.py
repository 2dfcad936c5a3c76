"""bench/foreign_queries.py through the real CLI on three tiny generated collections: each collection is asked its own
queries and the other field's, never those of a collection of its own field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# name -> (documents, queries, each query's relevant document); cisi and lisa are one field, as the real ones are
COLLECTIONS = {
    "cisi": (["Libraries lend books to readers and catalogue them by subject.",
              "Indexing journals helps readers find articles in a library catalogue."],
             ["how do libraries catalogue books by subject", "indexing journal articles for readers"]),
    "lisa": (["Public libraries offer reading rooms and lend books to the community.",
              "Librarians answer reference questions from library users."],
             ["reading rooms in public libraries", "reference questions answered by librarians"]),
    "medline": (["Insulin lowers blood glucose in patients with diabetes.",
                 "Renal failure after cardiac surgery is treated with dialysis."],
                ["insulin and blood glucose in diabetic patients", "dialysis for renal failure after cardiac surgery"]),
}


def write_collection(root: Path, name: str) -> None:
    documents, queries = COLLECTIONS[name]
    folder = root / "retrieval" / name
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n"
                                                 for i, t in enumerate(documents)), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": t}) + "\n"
                                                  for i, t in enumerate(queries)), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(len(queries))), encoding="utf-8")


def test_benchmark_asks_each_collection_its_own_and_other_fields_queries(tmp_path):
    for name in COLLECTIONS:
        write_collection(tmp_path / "data", name)
    out = tmp_path / "foreign.json"
    run = subprocess.run([sys.executable, str(REPO / "bench" / "foreign_queries.py"), "--data", str(tmp_path / "data"),
                          "--collections", ",".join(COLLECTIONS), "--out", str(out)],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "| queries of \\ asked | cisi | lisa | medline |" in run.stdout
    result = json.loads(out.read_text())
    assert result["stamp"]["date"] and result["k"] == 10
    rows = {(r["queries_of"], r["asked"]): r for r in result["rows"]}
    # the library collections are not asked each other's queries; medicine is foreign to both
    assert set(rows) == {("cisi", "cisi"), ("lisa", "lisa"), ("medline", "medline"), ("medline", "cisi"),
                         ("medline", "lisa"), ("cisi", "medline"), ("lisa", "medline")}
    assert all("error" not in r and r["queries"] == 2 and r["method"] == "static" for r in rows.values())
    # every query shares its words with its own document alone: each collection answers its own
    assert all(rows[(n, n)]["nothing_pct"] == 0.0 for n in COLLECTIONS)
    (summary,) = result["summaries"]
    foreign = [r["nothing_pct"] for (s, a), r in rows.items() if s != a]
    assert summary["foreign_nothing_mean"] == round(sum(foreign) / len(foreign), 2)
    assert summary["own_nothing_max"] == 0.0
