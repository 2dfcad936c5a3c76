"""The facade end to end on real files: every format, incremental re-indexing, deletion, methods, the HNSW graph.

Assertions rely on exact matches (a sentence searched for verbatim has cosine 1 with itself), never on how good
the bundled embedding model is, so they hold for the toy model and the real one alike.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import docgen
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from engine import Index, IndexConfig, Mode
from engine.blas import one_blas_thread
from engine.errors import ConfigError, IndexNotFoundError, MethodMismatchError
from engine.filestate import FileState
from engine.ingest import readers
from engine.ingest.extract import sentences_of
from engine.search.results import Answer
from engine.store.meta import Key, PerMethod

CONFIG = IndexConfig(workers=0)
RIGEL = "Rigel is a blue supergiant star in the constellation of Orion."
NO_TESSERACT = None if shutil.which("tesseract") else "images are read through Tesseract, which is not installed"
# every format's sample but, where there is no Tesseract, the scanned image's (tests/test_ocr.py covers that case)
KINDS = [kind for kind in docgen.SAMPLES if not (kind == "image" and NO_TESSERACT)]
PORPOISE = "They use echolocation to hunt fish and squid in murky coastal water."


def open_index(folder: Path, **kwargs) -> Index:
    return Index(folder, config=CONFIG, **kwargs)


def paths(response) -> list[str]:
    return [Path(r.path).name for r in response.results]


def vector_consistency(idx: Index) -> tuple[int, int]:
    """(live vectors in the HNSW graph, sentences in the database) after opening the graph the way search does."""
    from engine import embed

    graph = idx.vector_index(embed.load(idx.method))
    return graph.live_count, idx.store.sentences.count()


# --- every format, end to end ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def all_formats(tmp_path_factory) -> tuple[Path, Path]:
    docs = tmp_path_factory.mktemp("formats")
    for kind in KINDS:
        docgen.SAMPLES[kind](docs)
    index_dir = tmp_path_factory.mktemp("formats-index")
    with open_index(index_dir) as idx:
        report = idx.add([docs])
    assert report.documents == len(KINDS) and not report.issues
    return docs, index_dir


@pytest.mark.parametrize("kind", sorted(docgen.EXPECTED))
@pytest.mark.parametrize("mode", [m.value for m in Mode])
def test_every_format_is_found_by_its_own_sentence(all_formats, kind: str, mode: str) -> None:
    docs, index_dir = all_formats
    if kind == "image" and NO_TESSERACT:
        pytest.skip(NO_TESSERACT)
    sentence, title = docgen.EXPECTED[kind]
    with open_index(index_dir, create=False) as idx:
        response = idx.search(sentence, k=3, mode=mode)
    assert not response.nothing_relevant
    holders = {r.path for r in response.results if r.sentence == sentence}
    assert holders, f"{kind}: {sentence!r} not returned in {mode} mode: {paths(response)}"
    best = response.results[0]
    assert best.sentence == sentence
    assert best.title == title or kind in ("text", "markdown", "rst")  # these three share the sentence
    if mode != "lexical":
        assert best.similarity == pytest.approx(1.0, abs=2e-3)
    else:
        assert best.explanation.matched_terms and best.explanation.bm25 > 0


def test_pages_and_offsets_point_into_the_document(all_formats) -> None:
    docs, index_dir = all_formats
    with open_index(index_dir, create=False) as idx:
        pdf = idx.search(docgen.PDF_PAGE2_SENTENCE, k=1, mode="semantic").results[0]
        slide = idx.search(docgen.PPTX_SLIDE2_SENTENCE, k=1, mode="semantic").results[0]
    assert (Path(pdf.path).name, pdf.page) == ("tides.pdf", 2)
    assert (Path(slide.path).name, slide.page) == ("roadmap.pptx", 2)
    # start/end are offsets into the extracted text, as the app needs them to highlight in a preview
    records = sentences_of(readers.read(Path(pdf.path)))
    assert any((s.start, s.end) == (pdf.start, pdf.end) and s.text == pdf.sentence for s in records)
    assert pdf.context_before or pdf.context_after


def test_status_lists_every_file(all_formats) -> None:
    docs, index_dir = all_formats
    with open_index(index_dir, create=False) as idx:
        status = idx.status(files=True)
    assert status.indexed == status.documents == len(KINDS)
    assert {f.kind for f in status.files} == set(KINDS)
    assert all(f.status == FileState.INDEXED and f.sentences > 0 for f in status.files)
    assert status.roots == (str(docs),)
    json.dumps(status.to_json())  # plain JSON all the way down


# --- incremental -------------------------------------------------------------------------------------------------


def test_reindex_reads_only_what_changed(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as idx:
        first = idx.add([corpus])
        assert (first.documents, first.unchanged, first.removed) == (5, 0, 0)
        again = idx.add()  # no path: the roots indexed before
        assert (again.documents, again.unchanged, again.removed) == (0, 5, 0)

        rigel = corpus / "astronomy" / "rigel.txt"
        rigel.write_text("Betelgeuse is a red supergiant that may explode as a supernova.", encoding="utf-8")
        os.utime(rigel, (1_700_000_000, 1_700_000_000))
        touched = corpus / "finance" / "budget.txt"
        os.utime(touched, (1_600_000_000, 1_600_000_000))  # new mtime, same bytes: not re-read
        changed = idx.add()
        assert (changed.documents, changed.unchanged, changed.removed) == (1, 4, 0)
        assert idx.store.documents.get(str(touched)).mtime == 1_600_000_000
        assert str(rigel) not in {r.path for r in idx.search(RIGEL, mode="lexical", include_weak=True).results
                                  if "Orion" in r.sentence}
        assert paths(idx.search("Betelgeuse red supergiant supernova", k=1)) == ["rigel.txt"]
        assert idx.store.sentences.count() == vector_consistency(idx)[0]


def test_a_run_that_changes_no_sentence_leaves_the_graph_file_alone(corpus: Path, index_dir: Path, graph_always: None) -> None:
    graph = index_dir / "vectors-static.npz"
    with open_index(index_dir) as idx:
        idx.add([corpus])
    written = graph.stat()
    touched = corpus / "finance" / "budget.txt"
    os.utime(touched, (1_600_000_000, 1_600_000_000))  # new mtime, same bytes
    with open_index(index_dir, create=False) as idx:
        assert idx.add().unchanged == 5
        assert (graph.stat().st_ino, graph.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
        assert paths(idx.search(RIGEL, k=1, mode="semantic")) == ["rigel.txt"]
        (corpus / "astronomy" / "rigel.txt").write_text(PORPOISE, encoding="utf-8")
        assert idx.add().documents == 1
    assert graph.stat().st_ino != written.st_ino
    with open_index(index_dir, create=False) as idx:
        assert vector_consistency(idx) == (idx.store.sentences.count(),) * 2
        assert "rigel.txt" in paths(idx.search(PORPOISE, k=2, mode="semantic"))


def test_a_reader_knows_whether_a_run_changed_what_it_loaded(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as writer:
        writer.add([corpus])
        with open_index(index_dir, create=False) as reader:
            assert paths(reader.search(RIGEL, k=1, mode="semantic")) == ["rigel.txt"]  # its graph is loaded now
            os.utime(corpus / "finance" / "budget.txt", (1_600_000_000, 1_600_000_000))
            writer.add()
            assert reader.is_current()
            (corpus / "astronomy" / "rigel.txt").write_text(PORPOISE, encoding="utf-8")
            writer.add()
            assert not reader.is_current()


def test_deleted_file_disappears_from_every_mode(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as idx:
        idx.add([corpus])
        assert paths(idx.search(PORPOISE, k=1, mode="semantic")) == ["porpoise.md"]
        (corpus / "animals" / "porpoise.md").unlink()
        report = idx.add()
        assert report.removed == 1
        for mode in Mode:
            found = paths(idx.search(PORPOISE, k=10, mode=mode, include_weak=True))
            assert "porpoise.md" not in found, mode
        assert all(not f.path.endswith("porpoise.md") for f in idx.status(files=True).files)
        live, sentences = vector_consistency(idx)
        assert live == sentences
    # the deletion survives a reopen: the saved graph keeps the mark
    with open_index(index_dir, create=False) as idx:
        assert "porpoise.md" not in paths(idx.search(PORPOISE, k=10, mode="semantic", include_weak=True))


def test_remove_forgets_a_folder(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as idx:
        idx.add([corpus])
        assert idx.remove([corpus / "animals"]) == 1
        assert "porpoise.md" not in paths(idx.search(PORPOISE, k=10, mode="semantic", include_weak=True))
        assert idx.status().documents == 4
        assert vector_consistency(idx) == (idx.store.sentences.count(),) * 2


def test_opening_a_missing_index_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="quire index"):
        Index(tmp_path / "nothing", create=False)


def test_nothing_to_index_is_a_config_error(index_dir: Path) -> None:
    with open_index(index_dir) as idx, pytest.raises(ConfigError):
        idx.add()


# --- methods ---------------------------------------------------------------------------------------------------


def test_querying_with_another_method_is_a_clear_error(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as idx:
        idx.add([corpus])
        with pytest.raises(MethodMismatchError, match="static"):
            idx.search(RIGEL, method="sbert")
        with pytest.raises(ConfigError, match="unknown embedding method"):
            idx.add(method="no-such-method")


def test_vectors_of_an_older_model_are_refused_then_reembedded(corpus: Path, index_dir: Path) -> None:
    with open_index(index_dir) as idx:
        idx.add([corpus])
        with idx.store.db.atomic():
            idx.store.meta.put(Key.FINGERPRINT, "static-older")
            idx.store.meta.put(PerMethod.FINGERPRINT.of("static"), "static-older")
    with open_index(index_dir, create=False) as idx:
        with pytest.raises(MethodMismatchError, match="re-embed"):
            idx.search(RIGEL)
        assert idx.search(RIGEL, mode="lexical").results  # words need no vectors
        idx.add()
        assert paths(idx.search(RIGEL, k=1, mode="semantic")) == ["rigel.txt"]
        assert idx.store.meta.get(Key.FINGERPRINT) != "static-older"
        assert vector_consistency(idx) == (idx.store.sentences.count(),) * 2


# --- the HNSW graph ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["missing", "other-model", "garbage", "behind"])
def test_graph_is_rebuilt_or_caught_up(corpus: Path, index_dir: Path, damage: str, graph_always: None) -> None:
    with open_index(index_dir) as idx:
        idx.add([corpus])
    graph, sidecar = index_dir / "vectors-static.npz", index_dir / "vectors-static.json"
    info = json.loads(sidecar.read_text())
    if damage == "missing":
        graph.unlink()
    elif damage == "other-model":
        sidecar.write_text(json.dumps({**info, "fingerprint": "static-other", "dim": info["dim"] + 1}))
    elif damage == "garbage":
        graph.write_bytes(b"\0" * 64)
    elif damage == "behind":
        # a graph saved before the last write: the database is one generation ahead
        sidecar.write_text(json.dumps({**info, "generation": info["generation"] - 1}))
        shutil.copy(graph, graph.with_suffix(".keep"))
        with open_index(index_dir, create=False) as idx:
            (corpus / "cooking" / "pasta.html").unlink()
            idx.store.delete_paths([str(corpus / "cooking" / "pasta.html")])
        shutil.copy(graph.with_suffix(".keep"), graph)
        sidecar.write_text(json.dumps(info))
    files = {f.name: f.read_bytes() for f in index_dir.glob("vectors-*")}
    with open_index(index_dir, create=False) as idx:
        assert paths(idx.search(PORPOISE, k=1, mode="semantic")) == ["porpoise.md"]
        assert vector_consistency(idx) == (idx.store.sentences.count(),) * 2
        if damage == "behind":
            assert "pasta.html" not in paths(idx.search("salted water spaghetti", mode="semantic", include_weak=True))
    assert {f.name: f.read_bytes() for f in index_dir.glob("vectors-*")} == files  # a search repairs in memory only
    with open_index(index_dir, create=False) as idx:
        assert idx.add().documents == 0  # nothing changed, but the graph is saved repaired
        generation, sentences = idx.store.meta.get(Key.GENERATION), idx.store.sentences.count()
    saved = json.loads(sidecar.read_text())
    assert saved["fingerprint"] == info["fingerprint"] and saved["dim"] == info["dim"]
    assert saved["generation"] == generation and saved["count"] == sentences


# --- ranking: calibration, boilerplate, duplicates ------------------------------------------------------------------


@pytest.fixture(scope="module")
def toy_index(tmp_path_factory) -> tuple[Path, list[str]]:
    docs = tmp_path_factory.mktemp("toy")
    lines = docgen.write_toy_corpus(docs)
    index_dir = tmp_path_factory.mktemp("toy-index")
    with open_index(index_dir) as idx:
        idx.add([docs])
    return index_dir, lines


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_off_topic_query_finds_nothing_relevant(toy_index, mode: str) -> None:
    index_dir, _ = toy_index
    with open_index(index_dir, create=False) as idx:
        assert idx.store.meta.get(PerMethod.CALIBRATION.of("static")) is not None
        off = idx.search("quarterly tax returns for small businesses", mode=mode)
        shown = idx.search("quarterly tax returns for small businesses", mode=mode, include_weak=True)
    # the closest passages are shown, none of them vouched for: no strong card, the best under "possible"
    assert off.nothing_relevant and off.answer in (Answer.CLOSEST, Answer.NOTHING)
    assert all(r.weak and r.score < 30 for r in off.results) and off.weak_hidden > 0
    assert len(shown.results) > len(off.results) and all(r.weak for r in shown.results)


def test_on_topic_query_is_relevant_and_explained(toy_index) -> None:
    index_dir, lines = toy_index
    sentence = next(line for line in lines if "porpoise" in line.lower() and len(line) > 60)
    with open_index(index_dir, create=False) as idx:
        response = idx.search(sentence, k=5)
    assert not response.nothing_relevant
    best = response.results[0]
    assert best.sentence == sentence and not best.weak
    why = best.explanation
    assert why.cosine == pytest.approx(1.0, abs=2e-3) and why.cosine_percentile > 0.999
    assert why.semantic_rank == 1 and why.lexical_rank is not None and why.matched_terms
    assert why.fusion.startswith("score fusion") and 0 < best.score <= 100 and why.contributions["fused"] > 0


BOILERPLATE = "This document is confidential and may not be copied without the permission of the owner."
NEAR_BOILERPLATE = "This document is confidential and it may not be copied without the written permission of its owner."


def test_boilerplate_is_down_weighted(tmp_path: Path, index_dir: Path) -> None:
    docs = tmp_path / "memos"
    docs.mkdir()
    topics = ["wheat harvest", "bridge repairs", "school lunches", "river flooding", "library hours", "bus routes"]
    for n, topic in enumerate(topics):
        (docs / f"memo{n}.txt").write_text(f"Memo about {topic} for the council.\n\n{BOILERPLATE}")
    (docs / "policy.txt").write_text(f"Our policy on sharing files.\n\n{NEAR_BOILERPLATE}")
    with open_index(index_dir) as idx:
        idx.add([docs])
        response = idx.search(BOILERPLATE, k=7, mode="semantic", include_weak=True)
    # the footer repeated in six memos is worth less than the one real statement that resembles it
    assert paths(response)[0] == "policy.txt"
    by_name = {Path(r.path).name: r for r in response.results}
    assert by_name["memo0.txt"].explanation.boilerplate and by_name["memo0.txt"].similarity == pytest.approx(1, abs=2e-3)
    assert not by_name["policy.txt"].explanation.boilerplate


def test_identical_files_are_merged_into_one_result(corpus: Path, index_dir: Path) -> None:
    copy = corpus / "astronomy" / "rigel-copy.txt"
    shutil.copy(corpus / "astronomy" / "rigel.txt", copy)
    with open_index(index_dir) as idx:
        idx.add([corpus])
        response = idx.search(RIGEL, k=5)
    rigels = [r for r in response.results if "rigel" in Path(r.path).name]
    assert len(rigels) == 1
    assert {rigels[0].path, *rigels[0].duplicates} == {str(copy), str(corpus / "astronomy" / "rigel.txt")}


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_an_indexing_run_holds_numpys_blas_to_one_thread(tmp_path, corpus):
    """The run's own threads fill the cores; BLAS workers spinning between small products would take them.
    Searches afterwards get their threads back."""
    during = []
    with threadpool_limits(limits=2, user_api="blas"), Index(tmp_path / "idx") as idx:
        idx.add([corpus], progress=lambda p: during.append(_blas_threads()))
        assert during and all(threads == {1} for threads in during)
        assert _blas_threads() == {2}


def test_a_query_ranks_on_one_blas_thread_and_explains_on_all(tmp_path, corpus, monkeypatch):
    """Spinning BLAS workers doubled a ranking's CPU on the whole-corpus index (engine/blas.py); the explanations'
    large label product keeps every thread."""
    from engine.search import fusion, present

    seen: dict[str, set[int]] = {}
    fuse, annotate = fusion.fuse, present.annotate

    def fusing(*args, **kwargs):
        seen["ranking"] = _blas_threads()
        return fuse(*args, **kwargs)

    def explaining(*args, **kwargs):
        seen["explaining"] = _blas_threads()
        return annotate(*args, **kwargs)

    monkeypatch.setattr(fusion, "fuse", fusing)
    monkeypatch.setattr(present, "annotate", explaining)
    with threadpool_limits(limits=2, user_api="blas"), Index(tmp_path / "idx") as idx:
        idx.add([corpus])
        idx.search(RIGEL, k=5)
        assert seen == {"ranking": {1}, "explaining": {2}} and _blas_threads() == {2}


def test_a_query_that_ends_during_an_indexing_run_leaves_the_run_its_one_thread():
    """The limit is the process's: the last holder out restores it, whoever came first."""
    with threadpool_limits(limits=2, user_api="blas"):
        query = one_blas_thread()
        query.__enter__()
        with one_blas_thread():  # an indexing run starts while the query ranks
            query.__exit__(None, None, None)
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}


def test_a_long_run_saves_its_graph_as_it_goes(tmp_path, corpus):
    """A crash then re-inserts minutes of vectors at most: a sidecar naming a generation of the run appears before
    the run ends (the saves run behind the graph's inserts)."""
    config = IndexConfig(workers=0, batch_sentences=4, save_seconds=0)
    sidecar = tmp_path / "idx" / "vectors-static.json"
    seen = []
    with Index(tmp_path / "idx", config=config) as idx:
        report = idx.add([corpus], progress=lambda p: seen.append(
            (p.phase, json.loads(sidecar.read_text())["generation"] if sidecar.exists() else None)))
        final = idx.store.meta.generation()
    assert report.sentences > 8
    during = [g for phase, g in seen if phase == "embedding" and g is not None]
    assert during and 0 < max(during) < final
    assert json.loads(sidecar.read_text())["generation"] == final

