"""What a bag of words can keep of the teacher's STS-B score: the teacher, the teacher on word-shuffled sentences,
and the static model, overall and per source (captions, forum answers, news).

A static model averages word vectors, so it cannot see word order (Wada et al., 2025, Sec. 3). Feeding the teacher
(all-MiniLM-L6-v2) the same sentences with their words shuffled shows how much of its score rests on order, source by
source: where the shuffled teacher falls, a static model distilled from it has little to learn from. The shuffle is
out of the teacher's training distribution, so this is a yardstick, not a bound. The shuffled rows are the median
over ``--seeds`` shuffles.

Run: ``python bench/static_ceiling.py`` (about two minutes on two cores); writes bench/results/static_ceiling.json.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from engine.embed import load
from engine.eval.datasets import StsPairs, load_sts
from engine.eval.harness import default_data_dir, default_results_dir
from engine.eval.intrinsic import Encode, sts_spearman_by_source


def shuffled(pairs: StsPairs, seed: int) -> StsPairs:
    """The same pairs with each sentence's words (split on spaces; STS-B is pre-tokenised) in a seeded random order."""
    rng = random.Random(seed)

    def shuffle(text: str) -> str:
        words = text.split()
        rng.shuffle(words)
        return " ".join(words)

    return StsPairs(tuple(map(shuffle, pairs.first)), tuple(map(shuffle, pairs.second)), pairs.gold, pairs.source)


def by_source(encode: Encode, pairs: StsPairs) -> dict[str, float]:
    """Spearman x100 over all pairs and within each source."""
    return {name: round(100 * value, 2) for name, value in sts_spearman_by_source(encode, pairs).items()}


def median_by_source(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each source's median over the shuffles."""
    return {name: round(float(np.median([run[name] for run in runs])), 2) for name in runs[0]}


def main() -> None:
    """Measure, print one table per split, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: ../shared/data/benchmarks)")
    parser.add_argument("--seeds", type=int, default=3, help="word shuffles of each split")
    parser.add_argument("--out", type=Path, default=default_results_dir() / "static_ceiling.json")
    args = parser.parse_args()
    data = args.data or default_data_dir()
    teacher, static = load("sbert").encode, load("static").encode
    results = {}
    for split in ("dev", "test"):
        pairs = load_sts(data / "sts" / f"sts-{split}.csv")
        rows = {
            "teacher": by_source(teacher, pairs),
            "teacher, words shuffled": median_by_source([by_source(teacher, shuffled(pairs, seed))
                                                         for seed in range(args.seeds)]),
            "static": by_source(static, pairs),
        }
        counts = {name: pairs.source.count(name) for name in sorted(set(pairs.source))}
        results[split] = {"pairs": {"all": len(pairs.gold), **counts}, "spearman": rows}
        print(f"\nSTS-B {split}: Spearman x100")
        print("| source | pairs | " + " | ".join(rows) + " |")
        print("|---" * (len(rows) + 2) + "|")
        for name, n in results[split]["pairs"].items():
            print(f"| {name} | {n} | " + " | ".join(str(row[name]) for row in rows.values()) + " |")
    stamp = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "command": f"python bench/static_ceiling.py --seeds {args.seeds}"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**stamp, **results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
