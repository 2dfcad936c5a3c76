"""The static-model build pipeline, end to end at toy scale with the real teacher (a few hundred sentences)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")

from engine.embed.static import StaticEmbedder, load_model  # noqa: E402
from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer  # noqa: E402
from engine.facets.space import LABEL_VOCABULARY, FacetSpace  # noqa: E402
from engine.search.related import PER_WORD, SIMILARITY, SLACK  # noqa: E402
from engine.staticbuild import __main__ as build  # noqa: E402
from engine.staticbuild import extend, refine  # noqa: E402
from engine.staticbuild.distill import DistillConfig, distill, similarity_loss  # noqa: E402
from engine.staticbuild.extract import run_extraction, select_sentences  # noqa: E402
from engine.staticbuild.pca import abtt_drop, fit_sentence_pca, fold  # noqa: E402
from engine.staticbuild.teacher import Teacher  # noqa: E402

TOY = Path(__file__).parent / "data" / "toy_corpus.txt"


def _build_args(work: Path, *changes: str) -> list[str]:
    """The toy build's command line, with ``changes`` (flag, value pairs) appended to override its settings."""
    return ["--corpus", str(TOY), "--work", str(work), "--out", str(work / "out" / "model.npz"), "--vocab-size", "600",
            "--contexts", "5", "--max-sentences", "300", "--dim", "32", "--pca-sentences", "250",
            "--valid-sentences", "60", "--max-steps", "120", "--variants", "full,no-distill", *changes]


@pytest.fixture(scope="module")
def toy_build(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("static-build")
    assert build.main(_build_args(work)) == 0
    return work


def _stamps(work: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in work.rglob("*") if p.is_file() and "out" not in p.parts}


def test_build_writes_a_loadable_compact_model_with_provenance(toy_build: Path):
    out = toy_build / "out" / "model.npz"
    model = load_model(out)
    assert model.vectors.shape == (len(model.words), 32)
    assert {"the", "star", "porpoise"} <= set(model.words)
    provenance = json.loads((out.parent / "PROVENANCE.json").read_text())
    assert provenance["dim"] == 32 and provenance["sentences_encoded"] <= 300
    assert provenance["teacher"].endswith("all-MiniLM-L6-v2") and "build_command" in provenance
    embedder = StaticEmbedder.from_file(out)
    vectors = embedder.encode(["Rigel is a bright star.", "Porpoises hunt fish."])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # its words' neighbours beside it, for hybrid search's related words (engine.facets.neighbours)
    table = FacetSpace(embedder).neighbours
    assert table is not None and table.covers(embedder.fingerprint, LABEL_VOCABULARY, PER_WORD + SLACK, SIMILARITY)


def test_distillation_lowers_the_held_out_loss(toy_build: Path):
    [log_file] = (toy_build / "variants").glob("full-*.log.json")
    log = json.loads(log_file.read_text())
    assert log["best_valid_loss"] < log["history"][0]["valid_loss"]
    [full], [plain] = (toy_build / "variants").glob("full-*.npz"), (toy_build / "variants").glob("no-distill-*.npz")
    full, plain = load_model(full).vectors, load_model(plain).vectors
    assert full.shape == plain.shape and not np.allclose(full, plain)


def test_build_resumes_without_redoing_finished_steps(toy_build: Path):
    stamps = _stamps(toy_build)
    assert build.main(_build_args(toy_build)) == 0
    assert _stamps(toy_build) == stamps


def test_a_build_with_other_settings_works_beside_the_old_files(toy_build: Path, tmp_path: Path):
    """Another --dim reuses the teacher pass and writes a new variant; other --contexts choose new sentences. Nothing
    made with the first settings is reused for the second or overwritten."""
    stamps = _stamps(toy_build)
    out = tmp_path / "model.npz"
    assert build.main([*_build_args(toy_build, "--dim", "16", "--variants", "full"), "--out", str(out)]) == 0
    assert load_model(out).vectors.shape[1] == 16
    new = set(_stamps(toy_build)) - set(stamps)
    assert len(new) == 2 and {p.parent.name for p in new} == {"variants"}  # the variant and its log
    assert build.main([*_build_args(toy_build, "--contexts", "3", "--variants", "no-distill"), "--out", str(out)]) == 0
    assert len(list(toy_build.glob("selection-*.npz"))) == len(list(toy_build.glob("extract-*.npz"))) == 2
    [variant] = [p for p in (toy_build / "variants").glob("no-distill-*.npz") if p not in stamps]
    assert load_model(variant).meta["contexts_per_word_max"] == 3
    assert all(p.stat().st_mtime_ns == stamp for p, stamp in stamps.items())


@pytest.fixture(scope="module")
def refined(toy_build: Path, tmp_path_factory) -> Path:
    """The toy model's distillation continued on a corpus file it was not built from (in chunks of 100)."""
    folder = tmp_path_factory.mktemp("static-refine")
    fresh = folder / "fresh.txt"
    fresh.write_text(TOY.read_text(encoding="utf-8"), encoding="utf-8")
    args = ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(TOY), str(fresh), "--work",
            str(folder / "work"), "--out", str(folder / "out" / "model.npz"), "--sentences", "250",
            "--valid-sentences", "50", "--max-steps", "80"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refine, "CHUNK", 100)
        assert refine.main(args) == 0
    return folder


def test_refinement_continues_distillation_on_files_the_model_was_not_built_from(toy_build: Path, refined: Path,
                                                                                 monkeypatch):
    provenance = json.loads((refined / "out" / "PROVENANCE.json").read_text())
    stage = provenance["refinement"]
    assert stage["corpus_files"] == 1 and stage["sentences_encoded"] == 250  # the toy corpus itself was left out
    assert stage["best_valid_loss"] < stage["valid_loss_at_start"]
    assert stage["command"].startswith("python -m engine.staticbuild.refine --model ")
    assert stage["base_model"] == StaticEmbedder.from_file(toy_build / "out" / "model.npz").fingerprint
    assert provenance["dim"] == 32 and "benchmarks" not in provenance  # base provenance kept, old numbers dropped
    base = load_model(toy_build / "out" / "model.npz")
    after = load_model(refined / "out" / "model.npz")
    assert after.words == base.words and after.vectors.shape == base.vectors.shape
    assert not np.allclose(after.vectors, base.vectors)
    monkeypatch.setattr(refine, "CHUNK", 100)  # as the fixture ran; chunk size is part of a sample's name
    key = refine.sample_key([refined / "fresh.txt"], 11)
    assert sorted(p.name for p in (refined / "work").glob("chunk*.npy")) == [f"chunk-{key}-{i:03d}.npy" for i in range(3)]


def test_refinement_resumes_from_its_encoded_chunks(toy_build: Path, refined: Path):
    work = refined / "work"
    chunks = sorted(work.glob("chunk*.npy"))
    stamps = {p: p.stat().st_mtime_ns for p in chunks[:2]}
    [result] = work.glob("refined-*.npz")
    result.unlink()
    chunks[2].unlink()
    args = ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(refined / "fresh.txt"), "--work",
            str(work), "--out", str(refined / "again.npz"), "--sentences", "250", "--valid-sentences", "50",
            "--max-steps", "80"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refine, "CHUNK", 100)
        assert refine.main(args) == 0
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    assert chunks[2].exists()
    # the same sample, split and seed: the refined vectors are reproduced
    assert np.allclose(load_model(refined / "again.npz").vectors, load_model(refined / "out" / "model.npz").vectors,
                       atol=1e-5)


def test_refinement_reuses_a_result_only_for_the_same_settings(toy_build: Path, refined: Path):
    work = refined / "work"
    args = ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(refined / "fresh.txt"), "--work",
            str(work), "--out", str(refined / "other.npz"), "--sentences", "250", "--valid-sentences", "50"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(refine, "CHUNK", 100)
        before = set(work.glob("refined-*.npz"))
        assert refine.main([*args, "--max-steps", "80"]) == 0
        assert set(work.glob("refined-*.npz")) == before  # same settings: the stored result is reused
        assert refine.main([*args, "--max-steps", "40"]) == 0
    [new] = set(work.glob("refined-*.npz")) - before
    [old] = before
    assert json.loads(old.with_suffix(".log.json").read_text())["steps"] == 80
    assert json.loads(new.with_suffix(".log.json").read_text())["steps"] == 40


def test_refinement_refuses_a_corpus_the_model_was_built_from(toy_build: Path, tmp_path: Path):
    args = ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(TOY), "--work", str(tmp_path),
            "--out", str(tmp_path / "model.npz")]
    with pytest.raises(SystemExit, match="already used"):
        refine.main(args)


def test_refinement_samples_the_build_s_own_files_when_asked(toy_build: Path, tmp_path: Path):
    args = ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(TOY), "--work", str(tmp_path / "work"),
            "--out", str(tmp_path / "model.npz"), "--sentences", "250", "--valid-sentences", "50", "--max-steps", "80",
            "--reuse-build-files"]
    assert refine.main(args) == 0
    stage = json.loads((tmp_path / "PROVENANCE.json").read_text())["refinement"]
    assert stage["corpus_files"] == 1 and stage["sentences_encoded"] == 250
    assert "the build's own included" in stage["method"]
    assert not np.allclose(load_model(tmp_path / "model.npz").vectors, load_model(toy_build / "out" / "model.npz").vectors)


def test_refinement_refuses_a_model_already_refined(refined: Path, tmp_path: Path):
    args = ["--model", str(refined / "out" / "model.npz"), "--corpus", str(refined / "fresh.txt"), "--work",
            str(tmp_path), "--out", str(tmp_path / "model.npz")]
    with pytest.raises(SystemExit, match="already refined"):
        refine.main(args)


@pytest.fixture(scope="module")
def extended(toy_build: Path, tmp_path_factory) -> Path:
    """The toy model with the toy corpus's next most frequent words added."""
    folder = tmp_path_factory.mktemp("static-extend")
    assert extend.main(_extend_args(toy_build, folder)) == 0
    return folder


def _extend_args(toy_build: Path, folder: Path) -> list[str]:
    return ["--model", str(toy_build / "out" / "model.npz"), "--corpus", str(TOY), "--work", str(folder / "work"),
            "--out", str(folder / "out" / "model.npz"), "--vocab-size", "2000", "--contexts", "5",
            "--max-sentences", "300", "--valid-sentences", "60", "--max-steps", "80"]


def test_extension_adds_words_and_keeps_the_old_ones(toy_build: Path, extended: Path):
    base = load_model(toy_build / "out" / "model.npz")
    after = load_model(extended / "out" / "model.npz")
    stage = json.loads((extended / "out" / "PROVENANCE.json").read_text())["extension"]
    added = after.words[len(base.words) :]
    assert after.words[: len(base.words)] == base.words and len(added) == stage["words_added"] > 20
    assert stage["vocabulary_size"] == len(after.words) and after.vectors.shape == (len(after.words), 32)
    # the old rows are the base model's (up to int8 rounding), the new ones were placed and distilled
    assert np.allclose(after.vectors[: len(base.words)], base.vectors, atol=1e-6)
    assert np.linalg.norm(after.vectors[len(base.words) :], axis=1).min() > 0
    assert stage["best_valid_loss"] < stage["valid_loss_at_start"]
    assert stage["base_model"] == StaticEmbedder.from_file(toy_build / "out" / "model.npz").fingerprint
    assert stage["command"].startswith("python -m engine.staticbuild.extend --model ")
    # a sentence with an added word is embedded from that word now, not from a word-piece fall-back
    text = f"They talked about {added[0]} for hours."
    old, new = StaticEmbedder.from_file(toy_build / "out" / "model.npz"), StaticEmbedder.from_file(
        extended / "out" / "model.npz")
    assert new.tokenizer.word_id(added[0]) is not None and old.tokenizer.word_id(added[0]) is None
    assert not np.allclose(old.encode([text]), new.encode([text]))


def test_extension_resumes_and_refuses_an_extended_model(toy_build: Path, extended: Path):
    work = extended / "work"
    stamps = {p: p.stat().st_mtime_ns for p in work.glob("*.npz")}
    assert extend.main(_extend_args(toy_build, extended)) == 0
    assert {p: p.stat().st_mtime_ns for p in work.glob("*.npz")} == stamps  # nothing recomputed
    # without the result, the finished teacher pass is read back and the same model is distilled again
    [result] = work.glob("extended-*.npz")
    result.unlink()
    assert extend.main([*_extend_args(toy_build, extended)[:7], str(extended / "again.npz"),
                        *_extend_args(toy_build, extended)[8:]]) == 0
    [checkpoint] = work.glob("extract-*.npz")
    assert checkpoint.stat().st_mtime_ns == stamps[checkpoint]
    assert np.allclose(load_model(extended / "again.npz").vectors, load_model(extended / "out" / "model.npz").vectors,
                       atol=1e-5)
    with pytest.raises(SystemExit, match="already extended"):
        extend.main(["--model", str(extended / "out" / "model.npz"), "--corpus", str(TOY), "--work",
                     str(extended / "again"), "--out", str(extended / "again" / "model.npz")])


def test_placement_recovers_a_linear_map_and_reports_its_fit():
    rng = np.random.default_rng(0)
    contextual = rng.normal(size=(500, 12)).astype(np.float32)
    true_map = rng.normal(size=(12, 6))
    weights, quality = extend.placement(contextual, contextual @ true_map + 0.5, seed=0)
    assert weights.shape == (13, 6)
    assert quality["held_out_mean_cosine"] > 0.99 and abs(quality["held_out_median_norm_ratio"] - 1) < 0.02
    _, noise = extend.placement(contextual, rng.normal(size=(500, 6)), seed=0)
    assert noise["held_out_mean_cosine"] < 0.3


def test_distillation_moves_only_the_trainable_rows():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(30, 8)).astype(np.float32)
    flat = rng.integers(2, 30, size=600)
    offsets = np.arange(0, 601, 6)
    teacher = rng.normal(size=(100, 16)).astype(np.float32)
    trainable = np.arange(30) >= 20
    out, _ = distill(vectors, flat, offsets, teacher, np.arange(80), np.arange(80, 100),
                     DistillConfig(batch_size=16, max_steps=40, validate_every=10, patience=100), trainable=trainable)
    assert np.array_equal(out[~trainable], vectors[~trainable])
    assert not np.allclose(out[trainable], vectors[trainable])


def test_selection_caps_contexts_per_word_and_respects_the_budget():
    words = ["a", "b", "c", "d"]
    tok = WordTokenizer(words, ["[UNK]"])
    sentences = ["a b", "a c", "a d", "a b c", "b", "d d d", "c"] * 3
    tight = select_sentences(sentences, tok, per_word=2, max_sentences=5, seed=1)
    assert len(tight.texts) <= 5
    assert np.bincount(tight.word_ids, minlength=tok.size).max() <= 2
    sel = select_sentences(sentences, tok, per_word=2, max_sentences=100, seed=1)
    counts = np.bincount(sel.word_ids, minlength=tok.size)[FIRST_WORD_ID:]
    assert counts.tolist() == [2, 2, 2, 2]
    # each recorded position is where that word first occurs in its sentence
    for i, text in enumerate(sel.texts):
        tokens = tok.pre_tokens(text)
        for wid, pos in zip(
            sel.word_ids[sel.offsets[i] : sel.offsets[i + 1]], sel.positions[sel.offsets[i] : sel.offsets[i + 1]]
        ):
            assert tokens.index(words[wid - FIRST_WORD_ID]) == pos


def test_a_teacher_pass_cut_by_its_time_budget_continues_on_the_next_run(tmp_path: Path):
    teacher = Teacher()
    tok = WordTokenizer(["parks", "bus", "montgomery", "arrested", "the"], teacher.wordpieces())
    sentences = [line for line in TOY.read_text(encoding="utf-8").splitlines() if line.strip()][:60]
    sel = select_sentences(sentences, tok, per_word=5, max_sentences=60)
    cut = run_extraction(sel, teacher, tok.size, tmp_path / "cut.npz", budget_seconds=0.0)
    assert not cut.done.any() and (tmp_path / "cut.npz").exists()
    resumed = run_extraction(sel, teacher, tok.size, tmp_path / "cut.npz")
    whole = run_extraction(sel, teacher, tok.size, tmp_path / "whole.npz")
    assert resumed.done.all() and np.array_equal(resumed.counts, whole.counts) and whole.counts[FIRST_WORD_ID:].all()
    assert np.allclose(resumed.sums, whole.sums, atol=1e-4)


def test_similarity_loss_is_smallest_when_student_matches_teacher():
    g = torch.Generator().manual_seed(0)
    teacher = torch.randn(16, 8, generator=g)
    same = similarity_loss(teacher.clone(), teacher, 0.05)
    other = similarity_loss(torch.randn(16, 8, generator=g), teacher, 0.05)
    assert torch.isfinite(same) and same < other


def test_pca_keeps_components_after_the_dropped_top_ones():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    tok = WordTokenizer(words, ["[UNK]"])
    vectors = np.zeros((tok.size, 10), dtype=np.float32)
    vectors[FIRST_WORD_ID:] = rng.normal(size=(50, 10))
    texts = [" ".join(rng.choice(words, 5)) for _ in range(200)]
    mean, components = fit_sentence_pca(vectors, tok, texts, out_dim=4, drop=2)
    assert components.shape == (10, 4)
    assert np.allclose(components.T @ components, np.eye(4), atol=1e-5)
    folded = fold(vectors, mean, components)
    assert folded.shape == (tok.size, 4) and not folded[:FIRST_WORD_ID].any()
    assert abtt_drop(384) == 3


def test_refinement_samples_are_named_by_their_files_and_seed(tmp_path: Path):
    files = [tmp_path / "AA" / "wiki_40.gz", tmp_path / "AA" / "wiki_41.gz"]
    key = refine.sample_key(files, 11)
    assert key == refine.sample_key([Path("elsewhere") / "AA" / "wiki_40.gz", Path("AA/wiki_41.gz")], 11)
    assert key != refine.sample_key(files, 12) and key != refine.sample_key(files[:1], 11)


def test_fallback_pieces_leave_out_both_bert_and_mpnet_special_markers():
    from engine.staticbuild.vocab import fallback_pieces

    pieces = ["[PAD]", "[unused3]", "[CLS]", "<s>", "<pad>", "</s>", "<unk>", "<mask>", "the", "##ing", "<", "a"]
    assert fallback_pieces(pieces) == ["the", "a"]
