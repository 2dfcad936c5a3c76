"""Where lexical search's time goes at full size, and whether per-word candidate lists could replace FTS5's scan.

Run on an index kept by ``bench/index_wiki.py --keep DIR`` (the whole corpus: 3.09M sentences). It measures, for the
benchmark's 200 queries (the same sample as index_wiki.py):

- what FTS5's bm25() costs per matching passage, against walking the same matches without scoring them;
- exact BM25's top 10 documents for each query (FTS5 scoring every match; "include weak" so nothing is cut);
- for each query word, its passages ordered by that word's own BM25 term (a "champion list"), and then, for list
  depths d, how much of the exact top 10 is found when the candidates are the union of the query words' top-d
  passages, scored (a) by the lists alone, missing words counting 0, and (b) exactly (every word's term added).

(b) is what an index of impact-ordered posting lists kept beside the database would give; the shipped two-phase
search (engine/search/searcher.py) keeps 0.93 of the top 10.

    python bench/lexical_candidates.py --keep DIR [--depths 100,500,1000,2000]

Prints a table and writes bench/results/lexical_candidates.json; every number is recomputed on each run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_wiki import QUERIES, sample_queries

from engine import Index
from engine.search import searcher
from engine.search import terms as T

RESULTS = Path(__file__).resolve().parent / "results" / "lexical_candidates.json"
# single-word queries whose scan cost is timed (common enough for the per-passage cost to dominate)
TIMED_WORDS = ("history", "american", "school", "river", "music", "city")


def scan_costs(conn, words: tuple[str, ...]) -> dict[str, float]:
    """Microseconds per matching passage: bm25() ranking the matches, and counting them without scoring."""
    scored, walked, matches = 0.0, 0.0, 0
    for word in words:
        match = f'"{word}"'
        started = time.perf_counter()
        conn.execute("SELECT rowid, bm25(passages_fts) FROM passages_fts WHERE passages_fts MATCH ? "
                     "ORDER BY bm25(passages_fts) LIMIT 400", [match]).fetchall()
        scored += time.perf_counter() - started
        started = time.perf_counter()
        matches += conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?", [match]).fetchone()[0]
        walked += time.perf_counter() - started
    return {"bm25_us_per_passage": 1e6 * scored / matches, "walk_us_per_passage": 1e6 * walked / matches,
            "passages": matches}


def word_impacts(conn, word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(passage ids, document ids, the word's BM25 term) of every passage with ``word``, highest term first."""
    rows = conn.execute(
        "SELECT f.rowid, p.doc_id, -bm25(passages_fts) FROM passages_fts f JOIN passages p ON p.id = f.rowid "
        "WHERE passages_fts MATCH ? ORDER BY bm25(passages_fts)", [f'"{word}"']).fetchall()
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    passages, docs, impacts = (np.array(column) for column in zip(*rows))
    return passages, docs, impacts


def top_documents(passages: np.ndarray, docs: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
    """The ``k`` best documents, each by its best passage."""
    order = np.argsort(-scores, kind="stable")
    _, first = np.unique(docs[order], return_index=True)
    return docs[order][np.sort(first)][:k].tolist()


def agreement(queries: list[list[str]], exact: list[set[int]], impacts: dict, depth: int) -> tuple[float, float, float]:
    """(share found scoring by the lists alone, share found scoring exactly, median candidates) at ``depth``."""
    alone, rescored, candidates = [], [], []
    for stems, truth in zip(queries, exact):
        if not truth:
            continue
        lists = [impacts[s] for s in stems if s in impacts]
        heads = [(p[:depth], d[:depth], i[:depth]) for p, d, i in lists]
        pool = np.unique(np.concatenate([h[0] for h in heads] or [np.zeros(0, np.int64)]))
        candidates.append(pool.size)
        partial, full = np.zeros(pool.size), np.zeros(pool.size)
        owner = np.zeros(pool.size, np.int64)
        for (p, _, i), (head_p, head_d, head_i) in zip(lists, heads):
            at = np.searchsorted(pool, head_p)
            partial[at] += head_i
            owner[at] = head_d
            inside = np.isin(p, pool)
            full[np.searchsorted(pool, p[inside])] += i[inside]
        alone.append(len(set(top_documents(pool, owner, partial, 10)) & truth) / len(truth))
        rescored.append(len(set(top_documents(pool, owner, full, 10)) & truth) / len(truth))
    return float(np.mean(alone)), float(np.mean(rescored)), float(np.median(candidates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, required=True, help="folder of an index kept by bench/index_wiki.py")
    parser.add_argument("--depths", default="100,200,500,1000,2000")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    with Index(args.keep / "index", create=False) as idx:
        conn = idx.store.db.conn
        queries = sample_queries(idx, QUERIES)
        costs = scan_costs(conn, TIMED_WORDS)
        shipped, searcher.LEXICAL_SCAN_PASSAGES = searcher.LEXICAL_SCAN_PASSAGES, float("inf")
        try:
            exact_paths = [[r.path for r in idx.search(q, k=10, mode="lexical", explain=False, include_weak=True).results]
                           for q in queries]
        finally:
            searcher.LEXICAL_SCAN_PASSAGES = shipped
        ids = {r["path"]: r["id"] for r in idx.store.documents()}
        exact = [{ids[p] for p in paths} for paths in exact_paths]
        terms = [T.query_terms(q) for q in queries]
        impacts = {t.stem: word_impacts(conn, t.word) for ts in terms for t in ts}
    stems = [[t.stem for t in ts] for ts in terms]
    postings = [sum(impacts[s][0].size for s in set(q) if s in impacts) for q in stems]
    rows = [(d, *agreement(stems, exact, impacts, d)) for d in depths]
    result = {
        "queries": len(queries), **{k: round(v, 3) for k, v in costs.items()},
        "postings_per_query_median": int(np.median(postings)),
        "depths": [{"depth": d, "found_by_lists_alone": round(a, 3), "found_rescored": round(r, 3),
                    "candidates_median": int(c)} for d, a, r, c in rows],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"bm25() per matching passage: {costs['bm25_us_per_passage']:.2f} us; walking without scoring: "
          f"{costs['walk_us_per_passage']:.2f} us ({costs['passages']:,} passages of {len(TIMED_WORDS)} words)")
    print(f"postings of a query's words (median over {len(queries)} queries): {result['postings_per_query_median']:,}")
    print(f"{'depth':>6} {'candidates':>11} {'top 10 found, lists alone':>26} {'rescored exactly':>17}")
    for d, a, r, c in rows:
        print(f"{d:>6} {int(c):>11,} {a:>26.3f} {r:>17.3f}")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
