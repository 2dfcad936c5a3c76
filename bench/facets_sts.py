"""Facets benchmark (issue 7): SC on STS-B next to the paper, and what facets cost at index and search time.

1. STS-B: Pearson/Spearman x100 of -SC (Eq. 5) between the two sentences' facets, K = 10 and the display K, on the
   dev and test splits, beside the paper's Table 2 (SC, Our c K10: 63.0 dev / 52.6 test Pearson) and the static
   cosine. Our facets are training-free NNSC clusters of each sentence's own words, not the paper's predicted ones.
2. Indexing: a retrieval collection's documents written as files and indexed; then the same sentences' facets are
   recomputed and stored the way indexing does, giving their throughput. What they add to indexing (the 20% target)
   is measured in CPU-seconds by bench/facets_overhead.py, with facets off and on.
3. Explanations: milliseconds per result to build chips and evidence for the top 10 results of the collection's
   queries.

Run: ``nice -n 10 .venv/bin/python bench/facets_sts.py [--collection cranfield] [--queries 50]``.
Writes bench/results/facets_sts.json; every number is recomputed.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from engine import embed
from engine.facets.extract import DEFAULT_K, packed_document_facets, stacked, text_facets
from engine.facets.nnsc import set_distance
from engine.facets.service import load_space
from engine.index import Index
from engine.search.annotate import annotate
from engine.store.database import Store

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "benchmarks"
OUT = ROOT / "bench" / "results" / "facets_sts.json"
PAPER = {"dev": 63.0, "test": 52.6}  # Table 2, SC with Our c K10, Pearson x100


def read_sts(split: str) -> tuple[list[str], list[str], np.ndarray]:
    """Sentence pairs and gold scores of one STS-B split (tab-separated, score in column 5)."""
    a, b, gold = [], [], []
    with open(DATA / "sts" / f"sts-{split}.csv", encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 7:
                gold.append(float(row[4]))
                a.append(row[5])
                b.append(row[6])
    return a, b, np.array(gold)


def sc_scores(space, a: list[str], b: list[str], k: int) -> np.ndarray:
    """-SC per pair; pairs where a side has no content word get the lowest score seen."""
    (ca, wa), (cb, wb) = (stacked(text_facets(space, texts, k), space.dim) for texts in (a, b))
    scores = -set_distance(ca, cb, wa, wb)
    empty = (wa.sum(1) == 0) | (wb.sum(1) == 0)
    scores[empty] = scores[~empty].min() if (~empty).any() else 0.0
    return scores


def sts(space) -> dict:
    """Correlations of -SC (K = 10 and the display K) and of the static cosine, per split."""
    static = embed.load("static")
    out = {}
    for split in ("dev", "test"):
        a, b, gold = read_sts(split)
        rows = {}
        for k in sorted({10, DEFAULT_K}):
            started = time.perf_counter()
            pred = sc_scores(space, a, b, k)
            rows[f"SC K={k}"] = _corr(pred, gold) | {"seconds": round(time.perf_counter() - started, 2)}
        va, vb = static.encode(a), static.encode(b)
        rows["static cosine"] = _corr((va * vb).sum(1), gold)
        out[split] = rows
    return out


def _corr(pred: np.ndarray, gold: np.ndarray) -> dict:
    return {"pearson": round(100 * pearsonr(pred, gold)[0], 2), "spearman": round(100 * spearmanr(pred, gold)[0], 2)}


def write_collection(name: str, folder: Path) -> list[tuple[str, str]]:
    """Each corpus document as a text file; returns (query id, text) of the collection's queries."""
    folder.mkdir(parents=True)
    base = DATA / "retrieval" / name
    with open(base / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            (folder / f"{doc['_id']}.txt").write_text(f"{doc.get('title', '')}\n\n{doc['text']}", encoding="utf-8")
    with open(base / "queries.jsonl", encoding="utf-8") as f:
        return [(q["_id"], q["text"]) for q in map(json.loads, f)]


def _sentence_row(store: Store, path: str, ordinal: int) -> dict:
    row = store.db.execute(
        "SELECT s.id, s.doc_id, s.ordinal, s.text FROM sentences s JOIN documents d ON d.id = s.doc_id "
        "WHERE d.path = ? AND s.ordinal = ?", [path, ordinal]).fetchone()
    return dict(zip(("id", "doc_id", "ordinal", "text"), row))


def indexing(space, name: str, n_queries: int) -> dict:
    """Index a collection; time facets alone on its sentences; time explanations of top-10 results."""
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        queries = write_collection(name, docs)
        with Index(Path(tmp) / "idx", method="static") as index:
            started = time.perf_counter()
            report = index.add([docs])
            total = time.perf_counter() - started
            rows = index.store.db.execute("SELECT id, doc_id, text FROM sentences ORDER BY doc_id, ordinal").fetchall()
            store: Store = index.store
            started = time.perf_counter()
            for first in range(0, len(rows), 8192):
                chunk = rows[first : first + 8192]
                packed = packed_document_facets(space, [r[2] for r in chunk], [r[1] for r in chunk])
                store.add_facets((r[0], *row) for r, row in zip(chunk, packed))
            facet_seconds = time.perf_counter() - started
            explain_seconds, explained = 0.0, 0
            for _, text in queries[:n_queries]:
                response = index.search(text, k=10)
                plain = list(response.results)
                # the searcher already holds these rows when it annotates; fetch them outside the timed part
                rows_of = [_sentence_row(store, r.path, r.ordinal) for r in plain]
                started = time.perf_counter()
                annotate(store, space, text, plain, rows_of)
                explain_seconds += time.perf_counter() - started
                explained += len(plain)
    return {
        "collection": name, "documents": report.documents, "sentences": report.sentences,
        "index_seconds_with_facets": round(total, 2), "facet_seconds": round(facet_seconds, 2),
        "facet_sentences_per_second": round(len(rows) / facet_seconds, 1),
        "explained_results": explained, "ms_per_explanation": round(1000 * explain_seconds / max(explained, 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", default="cranfield")
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    space = load_space()
    if space is None:
        raise SystemExit("the static model is missing; build it with `python -m engine.staticbuild`")
    meta = embed.load("static").model.meta
    result = {"model": {"dim": space.dim, "frequent_words": meta.get("frequent_words")}, "paper_sc_k10": PAPER,
              "sts": sts(space), "cost": indexing(space, args.collection, args.queries)}
    print(f"STS-B, x100 (static model dim {space.dim}; paper Table 2 SC K10 Pearson: dev 63.0, test 52.6)")
    print(f"{'split':6} {'scorer':14} {'pearson':>8} {'spearman':>9}")
    for split, rows in result["sts"].items():
        for scorer, r in rows.items():
            print(f"{split:6} {scorer:14} {r['pearson']:8.2f} {r['spearman']:9.2f}")
    cost = result["cost"]
    print(f"\nindexing {cost['collection']}: {cost['sentences']} sentences in {cost['index_seconds_with_facets']} s "
          f"with facets; facets alone {cost['facet_seconds']} s ({cost['facet_sentences_per_second']}/s); "
          f"their share of indexing: bench/facets_overhead.py")
    print(f"explanations: {cost['ms_per_explanation']} ms per result over {cost['explained_results']} results "
          f"(target < 10 ms)")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
