"""Speed (texts/s) of the GPU methods, and STS-B Spearman of the neural method on an evenly spaced subset.

Texts are real STS-B test sentences (STS length, 12.4 word-pieces on average), evenly spaced over the set and repeated
to the requested count. Every number is recomputed on each run; the table is printed and written to
bench/results/neural_speed.json. On a CPU, neural costs about 4 d V flops per masked position and epoch (vocabulary
logits and their gradient); an STS sentence has about 87 masked positions, so budget ~1.5 CPU-s per text for MiniLM.

Examples::

    python bench/neural_speed.py --texts 64 --sts-pairs 100             # CPU, bundled MiniLM + fitted head
    python bench/neural_speed.py --texts 64 --sts-pairs 1379            # all STS-B test pairs (~1 CPU-hour)
    python bench/neural_speed.py --texts 20000 --device cuda             # GPU speed
    python bench/neural_speed.py --texts 8000 --random-bert-base         # bert-base-sized model, random weights
    python bench/neural_speed.py --method sbert --texts 50000 --device cuda
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from engine.embed.centre import centre_rows, collection_mean
from engine.embed.device import detect
from engine.embed.neural_inputs import blueprint_masks
from engine.embed.neural_model import HEAD_ENV

log = logging.getLogger("bench.neural_speed")

STS = Path(__file__).resolve().parents[2] / "shared" / "data" / "benchmarks" / "sts"
RESULTS = Path(__file__).resolve().parent / "results" / "neural_speed.json"
# Sentences embedded per progress line of the STS-B measurement (which takes about an hour on a 2-core CPU).
STS_BATCH = 256


def sts_pairs(split: str = "test") -> list[tuple[str, str, float]]:
    """(sentence 1, sentence 2, gold score) of an STS-B split."""
    with (STS / f"sts-{split}.csv").open(encoding="utf-8") as handle:
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
    """Texts/s after one warm-up batch (model loading and kernel selection excluded).

    CPU-seconds are reported beside wall seconds because on a shared CPU the wall time says more about the other
    jobs than about the method.
    """
    embedder.encode(texts[:2])
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started, cpu_started = time.perf_counter(), time.process_time()
    embedder.encode(texts)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    row = {"texts": len(texts), "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
           "texts_per_s": round(len(texts) / seconds, 2), "texts_per_cpu_s": round(len(texts) / cpu_seconds, 2)}
    if hasattr(embedder, "chunks"):
        chunks = [ids for units in embedder.chunks(texts) for ids in units]
        row["mean_tokens"] = round(float(np.mean([len(ids) for ids in chunks])), 1)
        # The cost driver of micro-tuning: vocabulary logits (and their gradient) at every masked position.
        positions = sum(int(blueprint_masks(len(ids), embedder.settings.blueprints).sum()) for ids in chunks)
        row["masked_positions_per_text"] = round(positions / len(texts), 1)
    return row


def sts_spearman(embedder, n_pairs: int, split: str = "test") -> dict:
    """Spearman x100 of cosine vs gold on ``n_pairs`` evenly spaced pairs of an STS-B split (all of them when
    n_pairs is at least its size). A sentence in several pairs is embedded once: micro-tuning is deterministic."""
    from scipy.stats import spearmanr

    pairs = sts_pairs(split)
    picked = [pairs[i] for i in np.unique(np.linspace(0, len(pairs) - 1, min(n_pairs, len(pairs))).astype(int))]
    sentences = sorted({s for p in picked for s in p[:2]})
    started, cpu_started = time.perf_counter(), time.process_time()
    vectors = {}
    for start in range(0, len(sentences), STS_BATCH):
        batch = sentences[start:start + STS_BATCH]
        vectors.update(zip(batch, embedder.encode(batch)))
        log.warning("STS-B %s: %d/%d sentences embedded (%.0f s)", split, start + len(batch), len(sentences),
                    time.perf_counter() - started)
    gold = [p[2] for p in picked]
    rho = spearmanr([float(vectors[a] @ vectors[b]) for a, b, _ in picked], gold).statistic
    # Eq. 1 alone (above), and centred on the split's sentences as one collection (no labels used), which is what
    # an index of them or `quire embed` returns for a method that centres (engine.embed.centre).
    matrix = np.stack([vectors[s] for s in sentences])
    centred = dict(zip(sentences, centre_rows(matrix, collection_mean(matrix))))
    rho_centred = spearmanr([float(centred[a] @ centred[b]) for a, b, _ in picked], gold).statistic
    return {"sts_split": split, "sts_pairs": len(picked), "sts_total_pairs": len(pairs),
            "sts_spearman": round(100 * float(rho), 2), "sts_spearman_centred": round(100 * float(rho_centred), 2),
            "sts_sentences": len(sentences), "sts_seconds": round(time.perf_counter() - started, 1),
            "sts_cpu_seconds": round(time.process_time() - cpu_started, 1)}


def main() -> None:
    """Run, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=("neural", "sbert"), default="neural")
    parser.add_argument("--model", help="model folder (default: the bundled model)")
    parser.add_argument("--random-bert-base", action="store_true", help="time a random bert-base-sized model")
    parser.add_argument("--device", help="cuda, mps or cpu (default: detected)")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--sts-pairs", type=int, default=0, help="also measure STS-B Spearman on this many pairs")
    parser.add_argument("--sts-split", choices=("test", "dev"), default="test",
                        help="STS-B split (dev: for choosing between heads without looking at test)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)
    found = detect(args.device)
    row: dict = {"method": args.method, "device": found.description}
    with tempfile.TemporaryDirectory() as tmp:
        model = str(random_bert_base(Path(tmp))) if args.random_bert_base else args.model
        row["model"] = "random bert-base" if args.random_bert_base else (args.model or "bundled all-MiniLM-L6-v2")
        if not (args.random_bert_base or args.model) and os.environ.get(HEAD_ENV):
            row["model"] += f" + head {os.environ[HEAD_ENV]}"
        embedder = make_embedder(args.method, model, args.device)
        if hasattr(embedder, "fingerprint"):
            row["fingerprint"] = embedder.fingerprint
        sentences = [s for p in sts_pairs() for s in p[:2]]
        # Evenly spaced over the test set, so a short run has the set's length mix, not that of its first pairs.
        step = max(1, len(sentences) // args.texts)
        texts = [sentences[(i * step) % len(sentences)] for i in range(args.texts)]
        row.update(speed(embedder, texts))
        if args.sts_pairs:
            row.update(sts_spearman(embedder, args.sts_pairs, args.sts_split))
    print(" | ".join(f"{k}" for k in row))
    print(" | ".join(f"{v}" for v in row.values()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    # One entry per configuration, replaced by each run, so the file holds the latest number of every setup.
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    split = f" | STS-B {args.sts_split}" if args.sts_pairs and args.sts_split != "test" else ""
    results[f"{row['method']} | {row['model']} | {row['device']}{split}"] = row
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
