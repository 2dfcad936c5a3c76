"""Command line of the static model build.

Files in ``--work`` are named by the settings that shaped them: a rerun with the same settings skips the finished
steps and continues a teacher pass that was killed or cut short by ``--extract-minutes``, and a rerun with other
settings writes its files beside the old ones (a changed ``--dim`` or distillation length reuses the teacher pass).

Example::

    python -m engine.staticbuild --corpus ../shared/data/corpora/enwiki --work build/static \
        --out resources/static/model.npz --device cuda

``resources/static/PROVENANCE.json`` records the exact command that built the shipped model. With ``--device cuda``
the teacher pass and the distillation run on the GPU (a 320k-sentence build took 113 s on an H100); on a CPU, cap them
with ``--extract-minutes`` and ``--distill-minutes`` and rerun to continue (the shipped model's 789k-sentence teacher
pass took ~68 minutes over two runs on a 2-core CPU, its distillation 26). The vocabulary and sentence selection are
CPU work either way and can be made on one machine and carried to another inside ``--work``.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from engine.embed.static import StaticModel, save_model
from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer
from engine.staticbuild import corpus, distill, extract, pca, stage
from engine.staticbuild.export import export, portable, recorded_command
from engine.staticbuild.teacher import Teacher

log = logging.getLogger("engine.staticbuild")

VARIANTS = ("full", "no-distill", "no-abtt", "no-pca", "token-level")


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.staticbuild", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, nargs="+", required=True, help="WikiExtractor folders/files or .txt files")
    parser.add_argument("--work", type=Path, required=True, help="folder for intermediate results (resumable)")
    parser.add_argument("--out", type=Path, help="where to write the final model (variant 'full')")
    parser.add_argument("--vocab-size", type=int, default=80_000, help="frequent corpus words kept (paper: 150k)")
    stage.add_teacher_pass_options(parser, contexts=100, max_sentences=400_000)
    parser.add_argument("--dim", type=int, default=256, help="d', dimensions kept by the PCA (Sec. 3.2)")
    parser.add_argument("--pca-sentences", type=int, default=100_000, help="M, sentences for the PCA (Sec. 3.2)")
    parser.add_argument("--variants", default="full", help=f"comma-separated, of {', '.join(VARIANTS)}")
    stage.add_distill_options(parser, seed=0)
    return parser.parse_args(argv)


def _vocabulary(args: argparse.Namespace, teacher: Teacher, key: str) -> list[str]:
    path = args.work / f"vocab-{key}.txt"
    if not path.exists():
        from engine.staticbuild.vocab import build_vocabulary

        started = time.monotonic()
        words = build_vocabulary(corpus.all_paragraphs(args.corpus), args.vocab_size, teacher.wordpieces())
        path.write_text("\n".join(words), encoding="utf-8")
        log.info("vocabulary: %d entries in %.0f s", len(words), time.monotonic() - started)
    return path.read_text(encoding="utf-8").split("\n")


def _selection(args: argparse.Namespace, tok: WordTokenizer, key: str) -> extract.Selection:
    path = args.work / f"selection-{key}.npz"
    if not path.exists():
        started = time.monotonic()
        sel = extract.select_sentences(
            corpus.iter_sentences(args.corpus, seed=args.seed), tok,
            per_word=args.contexts, max_sentences=args.max_sentences, seed=args.seed,
        )
        sel.save(path)
        log.info("selection: %d of %d sentences in %.0f s", len(sel.texts), sel.scanned, time.monotonic() - started)
    return extract.Selection.load(path)


def _token_vectors(args: argparse.Namespace, teacher: Teacher, tok: WordTokenizer, key: str) -> np.ndarray:
    """The ablation's starting point: each word encoded alone (cached, it costs a teacher call per word)."""
    path = args.work / f"E_token-{key}.npy"
    if not path.exists():
        vectors = np.zeros((tok.size, teacher.dim), dtype=np.float32)
        vectors[FIRST_WORD_ID:] = teacher.context_free(tok.words)
        np.save(path, vectors)
    return np.load(path)


class TeacherPass(NamedTuple):
    """What every variant is built from: the vocabulary, the chosen sentences and the teacher's pass over them."""

    tok: WordTokenizer
    wordpieces: list[str]
    sel: extract.Selection
    ext: extract.Extraction


def build_variant(args: argparse.Namespace, variant: str, vectors: np.ndarray, built: TeacherPass, out: Path) -> None:
    """Run PCA and distillation for one variant from its starting word vectors and write its model file."""
    tok, sel, ext = built.tok, built.sel, built.ext
    started = time.monotonic()
    info: dict = {"variant": variant}
    if variant != "no-pca":
        sample = pca.pca_sample(sel.word_ids, sel.offsets, limit=args.pca_sentences, seed=args.seed)
        sample = sample[ext.done[sample]]  # M sentences "from those used in Sec. 3.1"
        drop = 0 if variant == "no-abtt" else pca.abtt_drop(vectors.shape[1])
        mean, components = pca.fit_sentence_pca(vectors, tok, [sel.texts[i] for i in sample], out_dim=args.dim, drop=drop)
        vectors = pca.fold(vectors, mean, components)
        info.update(pca_sentences=int(sample.size), abtt_dropped=drop)
    if variant != "no-distill":
        flat, offsets = tok.encode(sel.texts)
        # only sentences the teacher encoded have a target (all of them unless --extract-minutes cut the pass)
        train, valid = distill.held_out_split(np.diff(offsets) * ext.done, args.valid_sentences, args.seed)
        vectors, log_ = distill.distill(
            vectors, flat, offsets, ext.sentences, train, valid, stage.distill_config(args, seed=args.seed),
        )
        info.update(distill_steps=log_["steps"], best_valid_loss=log_["best_valid_loss"],
                    train_sentences=int(train.size), valid_sentences=int(valid.size))
        out.with_suffix(".log.json").write_text(json.dumps(log_, indent=1))
    info["build_seconds"] = round(time.monotonic() - started, 1)
    meta = {**_provenance(args, built), **info}
    save_model(out, StaticModel(words=tok.words, wordpieces=built.wordpieces, vectors=vectors[FIRST_WORD_ID:],
                                meta=meta))
    log.info("variant %s written to %s", variant, out)


def _provenance(args: argparse.Namespace, built: TeacherPass) -> dict:
    tok, sel, ext = built.tok, built.sel, built.ext
    return {
        "method": "static word embeddings, Wada et al. (2025): contextual extraction, sentence PCA + ABTT, distillation",
        "teacher": "sentence-transformers/all-MiniLM-L6-v2" if args.teacher is None else str(args.teacher),
        "corpus": [portable(str(c)) for c in args.corpus],
        "corpus_files": len(corpus.corpus_files(args.corpus)),
        "sentences_scanned": sel.scanned,
        "sentences_selected": len(sel.texts),
        "sentences_encoded": int(ext.done.sum()),
        "contexts_per_word_max": args.contexts,
        "contexts_per_word_median": float(np.median(ext.counts[FIRST_WORD_ID:])),
        "vocabulary_size": len(tok.words),
        "frequent_words": args.vocab_size,
        "dim": args.dim,
        "build_command": recorded_command("engine.staticbuild", sys.argv[1:]),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the build; returns a process exit status."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args = _args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise SystemExit(f"unknown variants: {', '.join(sorted(unknown))}; choose from {', '.join(VARIANTS)}")
    teacher = Teacher(args.teacher, device=args.device)
    # work-folder files are named by the settings that shaped them, each key holding the one before it
    vocab_key = stage.settings_key(corpus.names(corpus.corpus_files(args.corpus)), args.vocab_size, args.teacher)
    tok = WordTokenizer(_vocabulary(args, teacher, vocab_key), teacher.wordpieces())
    selection_key = stage.settings_key(vocab_key, args.contexts, args.max_sentences, args.seed)
    sel = _selection(args, tok, selection_key)
    ext = stage.teacher_pass(args, sel, teacher, tok.size, selection_key)
    variant_key = stage.settings_key(selection_key, int(ext.done.sum()), args.dim, args.pca_sentences,
                                     args.valid_sentences, args.max_steps, args.distill_minutes)
    built = TeacherPass(tok, teacher.wordpieces(), sel, ext)

    @functools.cache
    def starting_vectors(token_level: bool) -> np.ndarray:
        if token_level:
            return _token_vectors(args, teacher, tok, vocab_key)
        return extract.word_vectors(ext, teacher, tok.words)

    for variant in variants:
        out = args.work / "variants" / f"{variant}-{variant_key}.npz"
        if not out.exists():
            out.parent.mkdir(exist_ok=True)
            build_variant(args, variant, starting_vectors(variant == "token-level"), built, out)
        if variant == "full" and args.out:
            export(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
