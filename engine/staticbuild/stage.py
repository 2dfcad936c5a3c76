"""What the build's command lines share: the distillation options (Sec. 3.3 and 4.1), how work-folder files are
named, and a stage's entry point."""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from engine.staticbuild import extract
from engine.staticbuild.distill import DistillConfig
from engine.staticbuild.export import export
from engine.staticbuild.teacher import Teacher


def add_distill_options(parser: argparse.ArgumentParser, *, seed: int) -> None:
    """Teacher, device, seed and the distillation's length, the same flags for the build, ``refine`` and
    ``extend``."""
    parser.add_argument("--seed", type=int, default=seed, help="seed of the stage's random choices")
    parser.add_argument("--teacher", type=Path, help="sentence-transformer folder (default: bundled all-MiniLM-L6-v2)")
    parser.add_argument("--valid-sentences", type=int, default=4096, help="held out for early stopping")
    parser.add_argument("--max-steps", type=int, default=30_000, help="distillation steps (Sec. 4.1)")
    parser.add_argument("--distill-minutes", type=float, default=None, help="stop distillation after this long")
    parser.add_argument("--device", default="cpu")


def add_teacher_pass_options(parser: argparse.ArgumentParser, *, contexts: int, max_sentences: int) -> None:
    """How many contexts a word gets (Sec. 3.1) and what the teacher pass may spend, for the build and ``extend``."""
    parser.add_argument("--contexts", type=int, default=contexts, help="N, sentences per word (Sec. 3.1)")
    parser.add_argument("--max-sentences", type=int, default=max_sentences,
                        help="budget of sentences the teacher encodes")
    parser.add_argument("--extract-minutes", type=float, default=None,
                        help="stop the teacher pass after this long and use the sentences encoded so far")


def settings_key(*settings: object) -> str:
    """Names a work-folder file by the settings that shaped it (with the key of the file it was made from), so a rerun
    with other settings writes beside it instead of silently reusing it, and a rerun with the same settings resumes."""
    return hashlib.blake2b(" ".join(str(s) for s in settings).encode("utf-8"), digest_size=6).hexdigest()


def teacher_pass(args: argparse.Namespace, sel: extract.Selection, teacher: Teacher, vocabulary_size: int,
                 key: str) -> extract.Extraction:
    """The teacher's pass over the chosen sentences (Sec. 3.1), checkpointed in ``extract-{key}.npz``: it resumes a
    pass that was killed or cut by --extract-minutes and returns at once when the pass is complete."""
    return extract.run_extraction(sel, teacher, vocabulary_size, args.work / f"extract-{key}.npz",
                                  budget_seconds=args.extract_minutes * 60 if args.extract_minutes else None)


def distill_config(args: argparse.Namespace, *, seed: int) -> DistillConfig:
    """The paper's settings with the command line's length limits and device."""
    return DistillConfig(max_steps=args.max_steps, seed=seed, device=args.device,
                         max_seconds=args.distill_minutes * 60 if args.distill_minutes else None)


def main(parse: Callable[[list[str] | None], argparse.Namespace], stage: Callable[[argparse.Namespace], Path],
         argv: list[str] | None) -> int:
    """Entry point of a stage that turns a model file into another: its command line is kept for the provenance
    (``args.argv``) and the result is exported to ``--out`` with PROVENANCE.json beside it."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args = parse(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    args.work.mkdir(parents=True, exist_ok=True)
    export(stage(args), args.out)
    return 0
