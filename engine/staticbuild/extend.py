"""Step 1 widened for a built model: more vocabulary words, placed in its space and distilled (Sec. 3.1-3.3).

Table 9 of the paper shows what vocabulary size costs (MTEB Avg-s2s 62.7 at 50k words, 63.5 at 100k, 63.8 at 150k).
A CPU teacher pass bounds how many words a build can give N contexts, so models are built with 60k words, and a
model built from part of the corpus lacks common words of the rest (the one shipped until 2026-11-24, built from 160
files, reduced "tofu", "skateboard" or "trampoline" to word-pieces). This stage adds the next most frequent words of
the whole corpus without rebuilding the model:

1. Vocabulary: words are counted over every corpus file; the new words are those of the top ``--vocab-size`` that
   the model lacks.
2. Contexts (Sec. 3.1): sentences are chosen so that each new word gets up to ``--contexts`` of them (the build's
   own selection) and each is encoded once by the teacher; every vocabulary word in them, old ones included, gets
   its contextual vector (Eq. 1) and each sentence keeps the teacher's embedding for step 4.
3. Placement: the model's vectors are a linear map of contextual vectors (the PCA fold of Sec. 3.2) changed by the
   distillation. A ridge regression from the old words' contextual vectors to their model vectors stands in for
   both and is applied to the new words; it is fitted on the rarer half of the old words, as distillation scales
   vector norms by frequency (Sec. 5.3) and the new words are rarer still.
4. Distillation (Sec. 3.3, Eq. 2-3, the paper's settings) on the same sentences with the teacher's embeddings,
   moving only the new rows: the model's existing words keep their vectors.

Resumable like the build: the teacher pass checkpoints, and work-folder files are named by the settings that shaped
them, so a rerun with the same settings skips finished steps and one with other settings works beside them. Two
trials on that model (bench/results/static_extend_100k.json) left STS-B and EvalRank within two tenths and hybrid
retrieval slightly lower, so it was not extended. Example::

    python -m engine.staticbuild.extend --model resources/static/model.npz \
        --corpus ../shared/data/corpora/enwiki --work build/static-extend --out resources/static/model.npz
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from engine.embed.static import StaticEmbedder, StaticModel, save_model
from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer
from engine.staticbuild import corpus, distill, extract, stage
from engine.staticbuild.export import portable, recorded_command
from engine.staticbuild.teacher import Teacher
from engine.staticbuild.vocab import count_top_words

log = logging.getLogger("engine.staticbuild.extend")

# Old words need this many contexts to serve as examples for the placement's regression.
MIN_EXAMPLE_CONTEXTS = 3
RIDGE = 1.0


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.staticbuild.extend", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="model file to extend")
    parser.add_argument("--corpus", type=Path, nargs="+", required=True, help="WikiExtractor folders/files")
    parser.add_argument("--work", type=Path, required=True, help="folder for intermediate results (resumable)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the extended model and PROVENANCE.json")
    parser.add_argument("--vocab-size", type=int, default=100_000, help="frequent corpus words wanted in all")
    stage.add_teacher_pass_options(parser, contexts=10, max_sentences=200_000)  # new words left without a
    # context when --extract-minutes ends the pass are not added
    stage.add_distill_options(parser, seed=0)
    return parser.parse_args(argv)


def new_words(args: argparse.Namespace, model: StaticModel, key: str) -> list[str]:
    """The top ``--vocab-size`` corpus words the model lacks, most frequent first (cached in the work folder)."""
    path = args.work / f"new_words-{key}.txt"
    if not path.exists():
        started = time.monotonic()
        known = set(model.words)
        words = [w for w in count_top_words(corpus.all_paragraphs(args.corpus), args.vocab_size) if w not in known]
        path.write_text("\n".join(words), encoding="utf-8")
        log.info("vocabulary: %d new words in %.0f s", len(words), time.monotonic() - started)
    text = path.read_text(encoding="utf-8")
    return text.split("\n") if text else []


def _selection(args: argparse.Namespace, model: StaticModel, added: list[str], every: WordTokenizer, key: str
               ) -> extract.Selection:
    """Sentences chosen for the new words; each then serves every vocabulary word it holds (``every``: the model's
    words followed by the new ones)."""
    path = args.work / f"selection-{key}.npz"
    if not path.exists():
        started = time.monotonic()
        chosen = extract.select_sentences(
            corpus.iter_sentences(args.corpus, seed=args.seed), WordTokenizer(added, model.wordpieces),
            per_word=args.contexts, max_sentences=args.max_sentences, seed=args.seed,
        )
        extract.serving_every_word(chosen.texts, every, scanned=chosen.scanned).save(path)
        log.info("selection: %d of %d sentences in %.0f s", len(chosen.texts), chosen.scanned,
                 time.monotonic() - started)
    return extract.Selection.load(path)


def placement(contextual: np.ndarray, target: np.ndarray, *, seed: int) -> tuple[np.ndarray, dict]:
    """Ridge regression (with intercept) from contextual vectors to model vectors; returns the (d+1, d') map and
    the mean cosine between mapped and actual vectors on a tenth of the examples held out of the fit."""
    x = np.hstack([contextual, np.ones((len(contextual), 1), np.float32)]).astype(np.float64)
    y = target.astype(np.float64)
    held = np.random.default_rng(seed).random(len(x)) < 0.1

    def fit(rows: np.ndarray) -> np.ndarray:
        return np.linalg.solve(x[rows].T @ x[rows] + RIDGE * np.eye(x.shape[1]), x[rows].T @ y[rows])

    pred = x[held] @ fit(~held)
    cosine = np.sum(pred * y[held], axis=1) / (np.linalg.norm(pred, axis=1) * np.linalg.norm(y[held], axis=1) + 1e-12)
    norm_ratio = np.median(np.linalg.norm(pred, axis=1) / (np.linalg.norm(y[held], axis=1) + 1e-12))
    quality = {"examples": len(x), "held_out_mean_cosine": round(float(cosine.mean()), 4),
               "held_out_median_norm_ratio": round(float(norm_ratio), 4)}
    return fit(np.ones(len(x), dtype=bool)).astype(np.float32), quality


def extend(args: argparse.Namespace) -> Path:
    """Run steps 1-4; returns the extended model file in the work folder."""
    base = StaticEmbedder.from_file(args.model)
    model = base.model
    if "extension" in model.meta:
        raise SystemExit(f"{args.model} is already extended; extend the model it came from with a larger --vocab-size")
    # work-folder files are named by the settings that shaped them, each key holding the one before it
    words_key = stage.settings_key(base.fingerprint, corpus.names(corpus.corpus_files(args.corpus)), args.vocab_size,
                                   args.teacher)
    added = new_words(args, model, words_key)
    if not added:
        raise SystemExit(f"the model already holds the corpus's {args.vocab_size} most frequent words")
    every = WordTokenizer(model.words + added, model.wordpieces)
    selection_key = stage.settings_key(words_key, args.contexts, args.max_sentences, args.seed)
    sel = _selection(args, model, added, every, selection_key)
    teacher = Teacher(args.teacher, device=args.device)
    ext = stage.teacher_pass(args, sel, teacher, every.size, selection_key)
    key = stage.settings_key(selection_key, int(ext.done.sum()), args.valid_sentences, args.max_steps,
                             args.distill_minutes)
    result = args.work / f"extended-{key}.npz"
    if result.exists():
        return result
    old_ids = np.arange(FIRST_WORD_ID, base.tokenizer.size)
    new_ids = np.arange(base.tokenizer.size, every.size)
    contexts = ext.counts[new_ids]
    kept = new_ids[contexts > 0]
    log.info("extension: %d of %d new words have contexts (median %.0f)", kept.size, new_ids.size,
             float(np.median(contexts)))

    # step 3: the rarer half of the old frequent words that the chosen sentences show often enough
    frequent = int(model.meta.get("frequent_words", len(model.words)))
    rare_old = old_ids[frequent // 2 : frequent]
    examples = rare_old[ext.counts[rare_old] >= MIN_EXAMPLE_CONTEXTS]

    def mean(ids: np.ndarray) -> np.ndarray:  # Eq. 1's average over the contexts seen
        return ext.sums[ids] / ext.counts[ids, None]

    weights, quality = placement(mean(examples), base.table[examples], seed=args.seed)
    log.info("placement: %s", quality)
    table = np.vstack([base.table, np.hstack([mean(kept), np.ones((kept.size, 1), np.float32)]) @ weights])

    # step 4: only the new rows move
    words = model.words + [every.words[i - FIRST_WORD_ID] for i in kept]
    tok = WordTokenizer(words, model.wordpieces)
    flat, offsets = tok.encode(sel.texts)
    train, valid = distill.held_out_split(np.diff(offsets) * ext.done, args.valid_sentences, args.seed)
    trainable = np.arange(tok.size) >= base.tokenizer.size
    vectors, history = distill.distill(
        table, flat, offsets, ext.sentences, train, valid,
        stage.distill_config(args, seed=args.seed), trainable=trainable,
    )
    (args.work / f"{result.stem}.log.json").write_text(json.dumps(history, indent=1))
    meta = {**model.meta, "extension": {
        "method": "vocabulary extension: contextual vectors (Sec. 3.1) of more frequent corpus words, placed by a "
                  "ridge map fitted on the model's own words, then distilled (Sec. 3.3) with the old words fixed",
        "base_model": base.fingerprint,
        "corpus": [portable(str(c)) for c in args.corpus],
        "frequent_words": args.vocab_size,
        "words_added": int(kept.size),
        "words_without_context": int(new_ids.size - kept.size),
        "vocabulary_size": len(words),
        "contexts_per_word_max": args.contexts,
        "contexts_per_word_median": float(np.median(ext.counts[kept])) if kept.size else 0.0,
        "sentences_scanned": sel.scanned,
        "sentences_encoded": int(ext.done.sum()),
        "placement": quality,
        "train_sentences": int(train.size),
        "valid_sentences": int(valid.size),
        "distill_steps": history["steps"],
        "valid_loss_at_start": history["history"][0]["valid_loss"],
        "best_valid_loss": history["best_valid_loss"],
        "command": recorded_command("engine.staticbuild.extend", args.argv),
    }}
    meta.pop("benchmarks", None)  # measured before the extension; bench/tools/static_variants.py --stamp remeasures
    save_model(result, StaticModel(words, model.wordpieces, vectors[FIRST_WORD_ID:], meta))
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the stage; returns a process exit status."""
    return stage.main(_args, extend, argv)


if __name__ == "__main__":
    sys.exit(main())
