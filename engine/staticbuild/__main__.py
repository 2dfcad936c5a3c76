"""Command line of the static model build; every step skips itself when its output already exists.

Example::

    python -m engine.staticbuild --corpus ../shared/data/corpora/enwiki --work build/static \
        --out resources/static/model.npz --device cuda

``resources/static/PROVENANCE.json`` records the exact command that built the shipped model. With ``--device cuda``
the teacher pass and the distillation run on the GPU (the shipped model took 113 s on an H100); on a CPU, cap them
with ``--extract-minutes`` and ``--distill-minutes``. The vocabulary and sentence selection are CPU work either way
and can be made on one machine and carried to another inside ``--work``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

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


def _vocabulary(args: argparse.Namespace, teacher: Teacher) -> list[str]:
    path = args.work / "vocab.txt"
    if not path.exists():
        from engine.staticbuild.vocab import build_vocabulary

        started = time.monotonic()
        words = build_vocabulary(corpus.all_paragraphs(args.corpus), args.vocab_size, teacher.wordpieces())
        path.write_text("\n".join(words), encoding="utf-8")
        log.info("vocabulary: %d entries in %.0f s", len(words), time.monotonic() - started)
    return path.read_text(encoding="utf-8").split("\n")


def _selection(args: argparse.Namespace, tok: WordTokenizer) -> extract.Selection:
    path = args.work / "selection.npz"
    if not path.exists():
        started = time.monotonic()
        sel = extract.select_sentences(
            corpus.iter_sentences(args.corpus, seed=args.seed), tok,
            per_word=args.contexts, max_sentences=args.max_sentences, seed=args.seed,
        )
        sel.save(path)
        log.info("selection: %d of %d sentences in %.0f s", len(sel.texts), sel.scanned, time.monotonic() - started)
    return extract.Selection.load(path)


def _word_vectors(args: argparse.Namespace, teacher: Teacher, tok: WordTokenizer, sel, kind: str) -> np.ndarray:
    path = args.work / f"E_{kind}.npy"
    if not path.exists():
        if kind == "context":
            ext = extract.run_extraction(
                sel, teacher, tok.size, args.work / "extract.npz",
                budget_seconds=args.extract_minutes * 60 if args.extract_minutes else None,
            )
            vectors = extract.word_vectors(ext, teacher, tok.words)
            np.save(args.work / "teacher_sentences.npy", ext.sentences)
            np.save(args.work / "context_counts.npy", ext.counts)
            np.save(args.work / "encoded.npy", ext.done)
        else:
            vectors = np.zeros((tok.size, teacher.dim), dtype=np.float32)
            vectors[FIRST_WORD_ID:] = teacher.context_free(tok.words)
        np.save(path, vectors)
    return np.load(path)


def _encoded(args: argparse.Namespace, n_texts: int) -> np.ndarray:
    path = args.work / "encoded.npy"
    return np.load(path) if path.exists() else np.ones(n_texts, dtype=bool)


def build_variant(args: argparse.Namespace, variant: str, teacher: Teacher, tok: WordTokenizer, sel) -> Path:
    """Run PCA and distillation for one variant and write its model file; returns the path."""
    out = args.work / "variants" / f"{variant}.npz"
    if out.exists():
        return out
    started = time.monotonic()
    vectors = _word_vectors(args, teacher, tok, sel, "token" if variant == "token-level" else "context")
    info: dict = {"variant": variant}
    if variant != "no-pca":
        sample = pca.pca_sample(sel.word_ids, sel.offsets, limit=args.pca_sentences, seed=args.seed)
        sample = sample[_encoded(args, len(sel.texts))[sample]]  # M sentences "from those used in Sec. 3.1"
        drop = 0 if variant == "no-abtt" else pca.abtt_drop(vectors.shape[1])
        mean, components = pca.fit_sentence_pca(vectors, tok, [sel.texts[i] for i in sample], out_dim=args.dim, drop=drop)
        vectors = pca.fold(vectors, mean, components)
        info.update(pca_sentences=int(sample.size), abtt_dropped=drop)
    if variant != "no-distill":
        flat, offsets = tok.encode(sel.texts)
        # only sentences the teacher encoded have a target (all of them unless --extract-minutes cut the pass)
        lengths = np.diff(offsets) * _encoded(args, len(sel.texts))
        train, valid = distill.held_out_split(lengths, args.valid_sentences, args.seed)
        teacher_emb = np.load(args.work / "teacher_sentences.npy", mmap_mode="r")
        vectors, log_ = distill.distill(
            vectors, flat, offsets, teacher_emb, train, valid, stage.distill_config(args, seed=args.seed),
        )
        info.update(distill_steps=log_["steps"], best_valid_loss=log_["best_valid_loss"],
                    train_sentences=int(train.size), valid_sentences=int(valid.size))
        (args.work / "variants").mkdir(exist_ok=True)
        (args.work / "variants" / f"{variant}.log.json").write_text(json.dumps(log_, indent=1))
    info["build_seconds"] = round(time.monotonic() - started, 1)
    meta = {**_provenance(args, tok, sel), **info}
    save_model(out, StaticModel(words=tok.words, wordpieces=teacher.wordpieces(), vectors=vectors[FIRST_WORD_ID:], meta=meta))
    log.info("variant %s written to %s", variant, out)
    return out


def _provenance(args: argparse.Namespace, tok: WordTokenizer, sel) -> dict:
    counts_path = args.work / "context_counts.npy"
    counts = np.load(counts_path)[FIRST_WORD_ID:] if counts_path.exists() else None
    return {
        "method": "static word embeddings, Wada et al. (2025): contextual extraction, sentence PCA + ABTT, distillation",
        "teacher": "sentence-transformers/all-MiniLM-L6-v2" if args.teacher is None else str(args.teacher),
        "corpus": [portable(str(c)) for c in args.corpus],
        "corpus_files": len(corpus.corpus_files(args.corpus)),
        "sentences_scanned": sel.scanned,
        "sentences_selected": len(sel.texts),
        "sentences_encoded": int(_encoded(args, len(sel.texts)).sum()),
        "contexts_per_word_max": args.contexts,
        "contexts_per_word_median": float(np.median(counts)) if counts is not None else None,
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
    tok = WordTokenizer(_vocabulary(args, teacher), teacher.wordpieces())
    sel = _selection(args, tok)
    for variant in variants:
        path = build_variant(args, variant, teacher, tok, sel)
        if variant == "full" and args.out:
            export(path, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
