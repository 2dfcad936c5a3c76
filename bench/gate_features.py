"""Dump what the relevance gate sees for every query, so that gate rules can be replayed offline (issue 32).

The answerability collection (STS-B, ``engine/eval/answerability.py``) and the five classic retrieval collections are
indexed through the product (`quire index`, ``engine/eval/product.py``); every query is then searched in-process through
``Index.search`` (hybrid, weak results cut, no explanations), as a user gets it, with the searcher's candidates and the
query's relevance scale captured on the way: each candidate document's best cosine, BM25, evidence, fused score and
the BM25 its word side ranked it by (related words counted), the query's words and their IDF, and the text of the
sentences the highest-evidence documents could be shown by. The product's own answer (which documents were shown) is
kept beside them, so that a replay can check it reproduces it.

    nice -n 10 python bench/gate_features.py [--split dev] [--collections cranfield,npl] [--work DIR]

Writes one gzipped JSON per collection under ``--work`` (default bench/results/tmp/gate/), beside the indexes, which
are reused when present. ``bench/gate_replay.py`` reads them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from engine import Index
from engine.eval import answerability as ans
from engine.eval import harness, product
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, Collection, load_collection, load_sts
from engine.search import relevance as rel
from engine.search import searcher as S
from engine.search.candidates import Candidate, semantic_side_score, word_side_score
from engine.search.query import query_stems
from engine.text.terms import stop_words_only

log = logging.getLogger("gate_features")

# Documents, by evidence, whose candidate sentences are kept: the gate is decided by the best few.
TEXT_DOCS = 10


@contextmanager
def captured() -> Iterator[dict]:
    """The last search's candidate documents and relevance scale, recorded by wrapping ``Searcher._rank``."""
    box: dict = {}
    rank = S.Searcher._rank

    def _rank(self, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked, ranking = rank(self, text, *args, **kwargs)
        box["docs"], box["searcher"] = dict(ranking.docs), self
        box["scale"], box["idf"] = asked.scale, {} if stop_words_only(text) else dict(asked.idf)
        # the query's null as the gate's dropped null-margin rule read it (decision 0016), for the replay's margin rules
        query_vectors = asked.vectors
        null = self.null_sample is not None and query_vectors is not None and len(self.null_sample) >= 2
        box["null_std"] = float((self.null_sample @ query_vectors.T).mean(axis=1).std()) if null else None
        sentences = self.collection.sentences if self.collection else self.store.sentence_count()
        box["null_size"] = sentences if null else 0
        return asked, ranking

    S.Searcher._rank = _rank  # type: ignore[method-assign]
    try:
        yield box
    finally:
        S.Searcher._rank = rank  # type: ignore[method-assign]


def _number(value: float | None, digits: int = 6) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), digits)


def dump_query(index: Index, box: dict, text: str, depth: int, bench_id: dict[int, str], files: product.Files) -> dict:
    """One query's search through the product (``depth`` results, weak ones cut) and what the gate saw; ``bench_id``
    maps the index's document ids to the benchmark's."""
    response = index.search(text, k=depth, mode="hybrid", explain=False)
    docs: dict[int, Candidate] = box["docs"]
    scale: rel.Scale = box["scale"]
    searcher: S.Searcher = box["searcher"]
    store = searcher.store
    _, _, stems = query_stems(text)
    rows = []
    for d in docs.values():
        rows.append([bench_id[d.doc_id], _number(d.sem_cosine) if d.sem_sentence is not None else None,
                     _number(d.sem_score) if d.sem_sentence is not None else None,
                     _number(d.lex_score) if d.lex_passage is not None else 0.0,
                     _number(d.evidence), _number(d.fused), _number(semantic_side_score(d)),
                     _number(word_side_score(d))])
    # candidate sentences of the documents with most evidence: the semantic best first, then the best passages'
    top = sorted(docs.values(), key=lambda d: -d.evidence)[:TEXT_DOCS]
    sem_rows = store.sentences_by_id([d.sem_sentence for d in top if d.sem_sentence is not None])
    passages = store.sentences_of_passages([p for d in top if d.lex_passage is not None
                                            for p in [d.lex_passage, *d.lex_more]])
    texts = {}
    for d in top:
        sentences = [sem_rows[d.sem_sentence].text] if d.sem_sentence in sem_rows else []
        lexical = [d.lex_passage, *d.lex_more] if d.lex_passage is not None else []
        passage_sentences = [r.text for p in lexical for r in passages.get(p, ())]
        texts[bench_id[d.doc_id]] = {"semantic": sentences, "lexical": passage_sentences}
    shown = [files.ids[str(Path(r.path).resolve())] for r in response.results]
    return {
        "text": text, "nothing_relevant": response.nothing_relevant, "shown": shown,
        "scale": {"mean": scale.mean, "tail": scale.tail, "lexical_bound": scale.lexical_bound,
                  "null_mean": scale.null_mean, "null_std": box["null_std"], "null_size": box["null_size"]},
        "idf": {s: round(v, 6) for s, v in box["idf"].items()}, "words": {s: t.word for s, t in stems.items()},
        "docs": rows, "texts": texts,
    }


def dump(collection: Collection, kind: dict[str, str], right: dict[str, dict[str, float]], work: Path,
         depth: int, timeout: float) -> Path:
    """Index ``collection`` (or reuse its index under ``work``) and dump every query of ``kind`` (query id -> kind)."""
    files = product.write_files(collection, work / collection.name / "docs")
    db = work / collection.name / "index-static"
    if not (db / "done").exists():
        if db.exists():
            raise SystemExit(f"{db} is a partial index: remove it and run again")
        product.build(files, db, "static", timeout=timeout)
        (db / "done").write_text("built\n")
    out = {"collection": collection.name, "depth": depth, "bar": rel.RELEVANT, "floor_share": rel.WEAK_SHARE,
           "lexical_vote": rel.LEXICAL_VOTE, "queries": {}}
    started = time.perf_counter()
    with Index(db, create=False) as index, captured() as box:
        bench_id = {r.id: files.ids[str(Path(r.path).resolve())] for r in index.store.documents()}
        for n, (qid, k) in enumerate(kind.items()):
            row = dump_query(index, box, collection.queries[qid], depth, bench_id, files)
            row.update(kind=k, right=right.get(qid, {}))
            out["queries"][qid] = row
            if n % 100 == 0:
                log.info("%s: %d of %d queries (%.0f s)", collection.name, n, len(kind), time.perf_counter() - started)
    path = work / f"{collection.name}.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(out, handle)
    log.info("wrote %s (%d queries, %.0f s)", path, len(kind), time.perf_counter() - started)
    return path


def load_dumps(work: Path, split: str = "dev") -> dict[str, dict]:
    """What :func:`dump` wrote under ``work`` for the answerability collection of STS-B ``split`` and the five classic
    collections, by collection name; exits with a message when one is missing."""
    dumps = {}
    for name in (f"answerability-{split}", *RETRIEVAL_COLLECTIONS):
        path = work / f"{name}.json.gz"
        if not path.is_file():
            raise SystemExit(f"{path} not found: run bench/gate_features.py --split {split} first")
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            dumps[name] = json.load(handle)
    return dumps


def main() -> None:
    """Parse the options, dump each collection."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: $QUIRE_BENCH_DATA)")
    parser.add_argument("--split", choices=("dev", "test"), default="dev", help="STS-B split of the answerability set")
    parser.add_argument("--collections", default="answerability," + ",".join(RETRIEVAL_COLLECTIONS),
                        help="answerability and/or classic collections")
    parser.add_argument("--work", type=Path, default=harness.REPO / "bench" / "results" / "tmp" / "gate")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    data = args.data or harness.default_data_dir()
    args.work.mkdir(parents=True, exist_ok=True)
    for name in [c for c in args.collections.split(",") if c]:
        if name == "answerability":
            pairs = load_sts(data / "sts" / f"sts-{args.split}.csv")
            answers = ans.select(pairs, ans.load_offtopic(data / "retrieval"))
            collection = answers.collection()
            collection = Collection(f"answerability-{args.split}", collection.documents, collection.queries,
                                    collection.qrels)
            kind = {q: "answerable" for q in answers.answerable} | {q: "offtopic" for q in answers.offtopic}
            dump(collection, kind, collection.qrels, args.work, ans.K, args.timeout)
        else:
            collection = load_collection(data / "retrieval" / name)
            kind = {q: "classic" for q in collection.judged_queries()}
            dump(collection, kind, collection.qrels, args.work, product.DEPTH, args.timeout)


if __name__ == "__main__":
    main()
