"""Speed (texts/s) of the GPU methods, and STS-B Spearman of the neural method on an evenly spaced subset.

Texts are real STS-B test sentences (STS length, about 10-30 tokens), repeated to the requested count. Every number
is recomputed on each run; the table is printed and written to bench/results/neural_speed.json.

Examples::

    python bench/neural_speed.py --texts 256 --sts-pairs 100            # CPU, bundled MiniLM + fitted head
    python bench/neural_speed.py --texts 20000 --device cuda             # GPU speed
    python bench/neural_speed.py --texts 8000 --random-bert-base         # bert-base-sized model, random weights
    python bench/neural_speed.py --method sbert --texts 50000 --device cuda
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
import torch

from engine.embed.device import detect

STS = Path(__file__).resolve().parents[2] / "shared" / "data" / "benchmarks" / "sts" / "sts-test.csv"
RESULTS = Path(__file__).resolve().parent / "results" / "neural_speed.json"


def sts_pairs() -> list[tuple[str, str, float]]:
    """(sentence 1, sentence 2, gold score) of the STS-B test split."""
    with STS.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(r[5], r[6], float(r[4])) for r in rows if len(r) >= 7]


def random_bert_base(folder: Path) -> Path:
    """A bert-base-sized BertForMaskedLM with random weights and the bundled model's uncased vocabulary."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from engine.embed.sbert import bundled_model_path

    AutoTokenizer.from_pretrained(str(bundled_model_path())).save_pretrained(str(folder))
    BertForMaskedLM(BertConfig()).save_pretrained(str(folder))
    return folder


def make_embedder(method: str, model: str | None, device: str | None):
    """The embedder under test."""
    if method == "neural":
        from engine.embed.neural import NeuralEmbedder

        return NeuralEmbedder(model, device=device)
    from engine.embed.sbert import SbertEmbedder

    return SbertEmbedder(model, device=device)


def speed(embedder, texts: list[str]) -> dict:
    """Texts/s after one warm-up batch (model loading and kernel selection excluded)."""
    embedder.encode(texts[:2])
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started = time.perf_counter()
    embedder.encode(texts)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    tokens = [len(ids) for chunks in (embedder.chunks(texts) if hasattr(embedder, "chunks") else []) for ids in chunks]
    return {"texts": len(texts), "mean_tokens": round(float(np.mean(tokens)), 1) if tokens else None,
            "seconds": round(seconds, 2), "texts_per_s": round(len(texts) / seconds, 1)}


def sts_spearman(embedder, n_pairs: int) -> dict:
    """Spearman x100 of cosine vs gold on ``n_pairs`` evenly spaced STS-B test pairs."""
    from scipy.stats import spearmanr

    pairs = sts_pairs()
    picked = [pairs[i] for i in np.linspace(0, len(pairs) - 1, min(n_pairs, len(pairs))).astype(int)]
    a = embedder.encode([p[0] for p in picked])
    b = embedder.encode([p[1] for p in picked])
    rho = spearmanr(np.sum(a * b, axis=1), [p[2] for p in picked]).statistic
    return {"sts_pairs": len(picked), "sts_total_pairs": len(pairs), "sts_spearman": round(100 * float(rho), 2)}


def main() -> None:
    """Run, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=("neural", "sbert"), default="neural")
    parser.add_argument("--model", help="model folder (default: the bundled model)")
    parser.add_argument("--random-bert-base", action="store_true", help="time a random bert-base-sized model")
    parser.add_argument("--device", help="cuda, mps or cpu (default: detected)")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--sts-pairs", type=int, default=0, help="also measure STS-B Spearman on this many pairs")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    found = detect(args.device)
    row: dict = {"method": args.method, "device": found.description}
    with tempfile.TemporaryDirectory() as tmp:
        model = str(random_bert_base(Path(tmp))) if args.random_bert_base else args.model
        row["model"] = "random bert-base" if args.random_bert_base else (args.model or "bundled all-MiniLM-L6-v2")
        embedder = make_embedder(args.method, model, args.device)
        sentences = [s for p in sts_pairs() for s in p[:2]]
        texts = (sentences * (args.texts // len(sentences) + 1))[: args.texts]
        row.update(speed(embedder, texts))
        if args.sts_pairs:
            row.update(sts_spearman(embedder, args.sts_pairs))
    print(" | ".join(f"{k}" for k in row))
    print(" | ".join(f"{v}" for v in row.values()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    # One entry per configuration, replaced by each run, so the file holds the latest number of every setup.
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[f"{row['method']} | {row['model']} | {row['device']}"] = row
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
