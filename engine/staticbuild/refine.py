"""More of step 4 (Sec. 3.3) for a built model: distillation continued on fresh corpus sentences.

The main build distils on the sentences its teacher pass chose for word contexts (Sec. 3.1), which favour rare
words. This stage samples further short sentences uniformly from corpus files the model was not built from, encodes
them with the same teacher (sentence embeddings only, so it is cheap enough for a CPU: ~100 sentences/s on two cores)
and continues Eq. 2's distillation from the model's vectors with the paper's settings (batch 128, tau 0.05, Adam lr
1e-3, early stopping on held-out sentences of the new sample). Resumable: encoded sentences are kept in chunks in the
work folder, and a refined model there is reused when the base model, sample and distillation settings all match.

The shipped model was built from every corpus file, so only ``--reuse-build-files`` samples for it (uniformly over
the corpus, where the build distilled on the 30% of sentences it chose for rare words)::

    python -m engine.staticbuild.refine --model resources/static/model.npz \
        --corpus ../shared/data/corpora/enwiki --work build/static-refine --out resources/static/model.npz
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine.embed.static import StaticEmbedder, StaticModel, save_model
from engine.embed.wordtok import FIRST_WORD_ID
from engine.staticbuild import corpus, distill, stage
from engine.staticbuild.export import portable, recorded_command
from engine.staticbuild.teacher import Teacher

log = logging.getLogger("engine.staticbuild.refine")

CHUNK = 10_000


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.staticbuild.refine", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="model file written by python -m engine.staticbuild")
    parser.add_argument("--corpus", type=Path, nargs="+", required=True,
                        help="WikiExtractor folders/files; files the model was built from are left out")
    parser.add_argument("--work", type=Path, required=True, help="folder for encoded chunks and the result (resumable)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the refined model and PROVENANCE.json")
    parser.add_argument("--sentences", type=int, default=310_000, help="fresh sentences the teacher encodes")
    parser.add_argument("--reuse-build-files", action="store_true",
                        help="sample from every --corpus file, the model's own included (a build that read the whole "
                             "corpus distilled on the sentences it chose for word contexts, a third of them)")
    stage.add_distill_options(parser, seed=11)
    return parser.parse_args(argv)


def fresh_files(sources: list[Path], used: list[str]) -> list[Path]:
    """The corpus files under ``sources`` that the model's own build did not read (its provenance names them)."""
    seen = {p.resolve() for p in corpus.corpus_files([Path(u) for u in used])}
    fresh = [p for p in corpus.corpus_files(sources) if p.resolve() not in seen]
    if not fresh:
        raise SystemExit("every corpus file was already used to build the model; pass other files with --corpus, "
                         "or sample them anyway with --reuse-build-files")
    return fresh


def sample_key(files: list[Path], seed: int) -> str:
    """Names a sample: chunk files carry it, so a work folder reused with other files or another seed never mixes
    another sample's encodings in."""
    return stage.settings_key(seed, CHUNK, corpus.names(files))


def result_key(base_fingerprint: str, sample: str, args: argparse.Namespace) -> str:
    """Names a refined model by everything that shapes it, so rerunning with, say, another --max-steps in the same
    work folder trains anew instead of returning the earlier result."""
    return stage.settings_key(base_fingerprint, sample, args.teacher, args.sentences, args.valid_sentences,
                              args.max_steps, args.distill_minutes)


def _chunks(args: argparse.Namespace, files: list[Path]) -> Iterator[tuple[list[str], Path]]:
    """The sample in chunks of CHUNK sentences, each with the file that holds (or will hold) its encodings."""
    sentences = corpus.iter_sentences(files, seed=args.seed)
    key = sample_key(files, args.seed)
    for index in range(-(-args.sentences // CHUNK)):
        texts = list(itertools.islice(sentences, min(CHUNK, args.sentences - index * CHUNK)))
        if not texts:
            return
        yield texts, args.work / f"chunk-{key}-{index:03d}.npy"


def encode_sample(args: argparse.Namespace, files: list[Path]) -> tuple[list[str], np.ndarray]:
    """Texts and teacher sentence embeddings of the sample; chunks already encoded are read back, not re-encoded."""
    teacher: Teacher | None = None
    texts: list[str] = []
    embeddings: list[np.ndarray] = []
    for chunk, path in _chunks(args, files):
        if not path.exists():
            teacher = teacher or Teacher(args.teacher, device=args.device)
            started = time.monotonic()
            out = np.zeros((len(chunk), teacher.dim), dtype=np.float16)
            for batch in teacher.encode(chunk):
                out[batch.index] = batch.sentence
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, out)
            tmp.replace(path)
            log.info("encoded %s: %d sentences, %.0f/s", path.name, len(chunk), len(chunk) / (time.monotonic() - started))
        texts.extend(chunk)
        embeddings.append(np.load(path))
    return texts, np.concatenate(embeddings).astype(np.float32)


def refine(args: argparse.Namespace) -> Path:
    """Continue the distillation; returns the refined model file in the work folder."""
    base = StaticEmbedder.from_file(args.model)
    if "refinement" in base.model.meta:
        # its provenance has room for one refinement, and its sample's files would not count as used
        raise SystemExit(f"{args.model} is already refined; refine the model it came from with a larger --sentences")
    used = base.model.meta.get("corpus", [])
    files = corpus.corpus_files(args.corpus) if args.reuse_build_files else fresh_files(args.corpus, used)
    name = f"refined-{result_key(base.fingerprint, sample_key(files, args.seed), args)}"
    result = args.work / f"{name}.npz"
    if result.exists():
        return result
    texts, teacher = encode_sample(args, files)
    flat, offsets = base.tokenizer.encode(texts)
    train, valid = distill.held_out_split(np.diff(offsets), args.valid_sentences, seed=0)
    vectors, history = distill.distill(
        base.table, flat, offsets, teacher, train, valid,
        stage.distill_config(args, seed=0),
    )
    (args.work / f"{name}.log.json").write_text(json.dumps(history, indent=1))
    source = "every corpus file, the build's own included" if args.reuse_build_files else "unused corpus files"
    meta = {**base.model.meta, "refinement": {
        "method": f"distillation (Sec. 3.3) continued on fresh sentences sampled uniformly from {source}",
        "base_model": base.fingerprint,
        "corpus": [portable(str(c)) for c in args.corpus],
        "corpus_files": len(files),
        "sentences_encoded": len(texts),
        "train_sentences": int(train.size),
        "valid_sentences": int(valid.size),
        "distill_steps": history["steps"],
        "valid_loss_at_start": history["history"][0]["valid_loss"],
        "best_valid_loss": history["best_valid_loss"],
        "command": recorded_command("engine.staticbuild.refine", args.argv),
    }}
    meta.pop("benchmarks", None)  # measured for the unrefined model; bench/tools/static_variants.py --stamp remeasures
    save_model(result, StaticModel(base.model.words, base.model.wordpieces, vectors[FIRST_WORD_ID:], meta))
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the stage; returns a process exit status."""
    return stage.main(_args, refine, argv)


if __name__ == "__main__":
    sys.exit(main())
