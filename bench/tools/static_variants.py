"""Quality and speed of static model files side by side: the shipped model and the build's ablation variants.

Each ``.npz`` written by ``python -m engine.staticbuild --variants ...`` (``WORK/variants/*.npz``) is loaded and
measured with the same code as ``quire eval`` (STS-B dev/test Spearman, EvalRank, encode speed), so a row per
variant shows what each build step buys (issue 3's ablations). With ``--stamp`` the shipped model's numbers are
written into ``resources/static/PROVENANCE.json`` so the provenance file carries measured, not pasted, numbers.

Example::

    python bench/tools/static_variants.py --variants work-static/variants --stamp
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from engine.embed.static import StaticEmbedder
from engine.eval.datasets import load_evalrank, load_sts
from engine.eval.harness import default_data_dir, default_results_dir
from engine.eval.intrinsic import evalrank, sentences_per_second, sts_spearman
from engine.resources import resource_path

SPEED_SENTENCES = 20_000


def measure(path: Path, data: Path) -> dict:
    """STS-B dev/test Spearman x100, EvalRank x100 and sentences/s of one model file."""
    embedder = StaticEmbedder.from_file(path)
    sts = data / "sts"
    rank_data = load_evalrank(data / "evalrank")
    score = evalrank(embedder.encode, rank_data)
    pool = list(rank_data.pool)
    speed_texts = (pool * (SPEED_SENTENCES // len(pool) + 1))[:SPEED_SENTENCES]
    return {
        "sts_b_dev": round(100 * sts_spearman(embedder.encode, load_sts(sts / "sts-dev.csv")), 2),
        "sts_b_test": round(100 * sts_spearman(embedder.encode, load_sts(sts / "sts-test.csv")), 2),
        "evalrank_mrr": round(100 * score.mrr, 2),
        "evalrank_hits1": round(100 * score.hits1, 2),
        "evalrank_hits3": round(100 * score.hits3, 2),
        "sentences_per_second": round(sentences_per_second(embedder.encode, speed_texts)),
        "vocabulary": len(embedder.model.words),
        "dim": embedder.dim,
    }


def main() -> None:
    """Measure, print a table, write bench/results/static_variants.json (and optionally stamp the provenance)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", type=Path, help="folder of variant .npz files from the build's work folder")
    parser.add_argument("--data", type=Path, default=None, help="benchmark folder (default: ../shared/data/benchmarks)")
    parser.add_argument("--stamp", action="store_true", help="write the shipped model's numbers into PROVENANCE.json")
    parser.add_argument("--out", type=Path, default=default_results_dir() / "static_variants.json")
    args = parser.parse_args()
    data = args.data or default_data_dir()
    shipped = resource_path("static/model.npz")
    # a build machine may measure its fresh variants without the shipped file beside them
    models = {"shipped": shipped} if shipped.exists() or args.stamp else {}
    if args.variants:
        models.update({p.stem: p for p in sorted(args.variants.glob("*.npz"))})
    rows = {name: measure(path, data) for name, path in models.items()}
    columns = ["sts_b_dev", "sts_b_test", "evalrank_mrr", "evalrank_hits1", "evalrank_hits3", "sentences_per_second"]
    print("| model | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(str(row[c]) for c in columns) + " |")
    stamp = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": "python bench/tools/static_variants.py"}
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**stamp, "rows": rows}, indent=2) + "\n")
    if args.stamp:
        provenance = shipped.with_name("PROVENANCE.json")
        meta = json.loads(provenance.read_text())
        meta["benchmarks"] = {**stamp, **rows["shipped"]}
        provenance.write_text(json.dumps(meta, indent=2) + "\n")
        print(f"stamped {provenance}")


if __name__ == "__main__":
    main()
