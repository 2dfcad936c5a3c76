"""Related words in hybrid ranking (``engine.search.related``, docs/decisions/0019-related-words.md), swept through the
product: every query of the answerability collection (STS-B dev) and of the five classic collections searched with
``Index.search`` (hybrid, weak results cut, no explanations), as a user gets it, under each setting of the module's
three constants; the first row turns related words off (weight 0), the second is what ships.

    python bench/gate_features.py      # once: indexes the six collections under bench/results/tmp/gate/
    python bench/related_words.py [--work DIR]

Prints, per setting: STS-B dev shown@10 / top-1 / off-topic answered "nothing relevant", and each classic
collection's nDCG@10 of what is shown (with its share of queries answered "nothing relevant") and their mean, as
bench/answerability.py and bench/run.py measure them. Writes bench/results/related_words.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from gate_features import load_dumps

from engine import Index
from engine.eval import answerability as ans
from engine.eval import harness
from engine.eval.datasets import RETRIEVAL_COLLECTIONS, load_collection, load_sts
from engine.eval.metrics import ndcg_at
from engine.eval.report import stamp
from engine.search import related

# (similarity, per word, weight): off, shipped, then each constant moved on its own and a few together
SETTINGS = (
    (related.SIMILARITY, related.PER_WORD, 0.0),
    (related.SIMILARITY, related.PER_WORD, related.WEIGHT),
    (0.55, 5, 0.5), (0.6, 5, 0.5), (0.45, 5, 0.5),
    (0.5, 3, 0.5), (0.5, 8, 0.5),
    (0.5, 5, 0.3), (0.5, 5, 0.4), (0.5, 5, 0.6), (0.5, 5, 1.0),
    (0.6, 3, 1.0),
)


def document_ids(name: str, data: Path) -> list[str]:
    """The benchmark's document ids in the order bench/gate_features.py wrote them as files (doc000000.txt, ...)."""
    if name.startswith("answerability-"):
        pairs = load_sts(data / "sts" / f"sts-{name.removeprefix('answerability-')}.csv")
        return list(ans.select(pairs, ans.load_offtopic(data / "retrieval")).collection().documents)
    return list(load_collection(data / "retrieval" / name).documents)


def measure(dumps: dict[str, dict], work: Path, ids: dict[str, list[str]]) -> dict:
    """Every dumped query searched again through the product under the module's current constants."""
    out: dict = {}
    for name, dump in dumps.items():
        shown10, top1, offtopic, ndcg, nothing = [], [], [], [], []
        with Index(work / name / "index-static", create=False) as index:
            bench_id = {r.path: ids[name][int(Path(r.path).stem.removeprefix("doc"))] for r in index.store.documents()}
            for q in dump["queries"].values():
                response = index.search(q["text"], k=dump["depth"], mode="hybrid", explain=False)
                shown = [bench_id[r.path] for r in response.results]
                if q["kind"] == "classic":
                    ndcg.append(ndcg_at(shown, q["right"], 10))
                    nothing.append(response.nothing_relevant)
                elif q["kind"] == "answerable":
                    right = next(iter(q["right"]))
                    shown10.append(right in shown[:10])
                    top1.append(shown[:1] == [right])
                else:
                    offtopic.append(response.nothing_relevant)
        if ndcg:
            out[name] = {"ndcg@10": round(100 * float(np.mean(ndcg)), 2),
                         "nothing": round(100 * float(np.mean(nothing)), 2)}
        else:
            out["sts_dev"] = {"shown@10": round(100 * float(np.mean(shown10)), 1),
                              "top1": round(100 * float(np.mean(top1)), 1),
                              "offtopic_nothing": round(100 * float(np.mean(offtopic)), 1)}
    out["classic_mean"] = round(float(np.mean([out[c]["ndcg@10"] for c in RETRIEVAL_COLLECTIONS])), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=harness.REPO / "bench" / "results" / "tmp" / "gate",
                        help="the folder bench/gate_features.py wrote its indexes and dumps to")
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: $QUIRE_BENCH_DATA)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    data = args.data or harness.default_data_dir()
    dumps = load_dumps(args.work)
    ids = {name: document_ids(name, data) for name in dumps}
    print("| similarity / per word / weight | STS-B dev shown@10 / top-1 / off-topic nothing | "
          + " | ".join(RETRIEVAL_COLLECTIONS) + " | classic mean |\n|---|---|" + "---|" * (len(RETRIEVAL_COLLECTIONS) + 1))
    result: dict = {"stamp": stamp(harness.REPO), "settings": []}
    shipped = (related.SIMILARITY, related.PER_WORD, related.WEIGHT)
    try:
        for similarity, per_word, weight in SETTINGS:
            related.SIMILARITY, related.PER_WORD, related.WEIGHT = similarity, per_word, weight
            m = measure(dumps, args.work, ids)
            sts = m["sts_dev"]
            label = f"{similarity:g} / {per_word} / {weight:g}" + (" (off)" if weight == 0 else "")
            print(f"| {label} | {sts['shown@10']:.1f} / {sts['top1']:.1f} / {sts['offtopic_nothing']:.1f} | "
                  + " | ".join(f"{m[c]['ndcg@10']:.2f} ({m[c]['nothing']:.1f}%)" for c in RETRIEVAL_COLLECTIONS)
                  + f" | {m['classic_mean']:.2f} |", flush=True)
            result["settings"].append({"similarity": similarity, "per_word": per_word, "weight": weight, **m})
    finally:
        related.SIMILARITY, related.PER_WORD, related.WEIGHT = shipped
    out = args.out or harness.default_results_dir() / "related_words.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
