"""Each word's nearest label words, shipped with the static model (engine.facets.neighbours): what hybrid search's
related words read instead of searching the label vocabulary at query time. The table must give exactly what that
search gives, and a table that is stale, of another model or damaged must not be used."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from engine import embed
from engine.embed.static import NEIGHBOURS_FILE, StaticEmbedder, StaticModel, save_model
from engine.embed.wordtok import FIRST_WORD_ID
from engine.facets.space import LABEL_VOCABULARY, FacetSpace
from engine.search.related import PER_WORD, SIMILARITY, SLACK
from engine.staticbuild.neighbours import write_neighbours

TOP = PER_WORD + SLACK


def _searched(space: FacetSpace, ids: list[int], top: int, floor: float) -> list[list[tuple[str, float]]]:
    """What the label search itself finds, as FacetSpace.near answers without a table."""
    return [[(w, c) for w, c in row if c >= floor] for row in space.labels(space.unit[ids], top)]


@pytest.fixture(scope="module")
def shipped() -> FacetSpace:
    return FacetSpace(embed.load("static"))


def test_the_shipped_table_is_the_shipped_models_and_answers_what_related_words_ask(shipped: FacetSpace) -> None:
    table = shipped.neighbours
    assert table is not None, f"resources/static/{NEIGHBOURS_FILE} is missing: python -m engine.staticbuild.neighbours"
    assert table.covers(shipped.embedder.fingerprint, LABEL_VOCABULARY, TOP, SIMILARITY), (
        "the shipped neighbour table is stale: python -m engine.staticbuild.neighbours resources/static/model.npz")
    ids = np.random.default_rng(3).choice(np.flatnonzero(shipped.content), 400, replace=False).tolist()
    ids.append(shipped.tokenizer.id_of("austria"))
    assert shipped.near(ids, TOP, SIMILARITY) == _searched(shipped, ids, TOP, SIMILARITY)
    # fewer words at a higher floor come from the same table
    assert shipped.near(ids, 3, 0.6) == _searched(shipped, ids, 3, 0.6)
    assert "vienna" in [w for w, _ in shipped.near([ids[-1]], TOP, SIMILARITY)[0]]


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory, shipped: FacetSpace) -> Path:
    """The shipped model's 4,000 most frequent words, as a model file of its own with its table beside it."""
    model = shipped.embedder.model
    keep = 4_000
    small = StaticModel(model.words[:keep], model.wordpieces, model.vectors[:keep].copy(),
                        {**model.meta, "frequent_words": keep})
    path = tmp_path_factory.mktemp("small") / "model.npz"
    save_model(path, small)
    write_neighbours(path)
    return path


def test_a_table_written_by_the_build_gives_what_the_label_search_gives(small_model: Path) -> None:
    space = FacetSpace(StaticEmbedder.from_file(small_model))
    assert space.neighbours is not None and space.neighbours.covers(space.embedder.fingerprint, LABEL_VOCABULARY,
                                                                    TOP, SIMILARITY)
    ids = np.flatnonzero(space.content).tolist()
    assert space.near(ids, TOP, SIMILARITY) == _searched(space, ids, TOP, SIMILARITY)
    # a word that is not a content word (a stop word) has no neighbours in the table
    assert space.near([space.tokenizer.id_of("the")], TOP, SIMILARITY) == [[]]


def test_more_words_or_a_lower_floor_than_the_table_holds_are_searched(small_model: Path, monkeypatch) -> None:
    space = FacetSpace(StaticEmbedder.from_file(small_model))
    searched: list[int] = []
    real = FacetSpace._nearest_labels
    monkeypatch.setattr(FacetSpace, "_nearest_labels",
                        lambda self, rows, top: searched.append(len(rows)) or real(self, rows, top))
    ids = np.flatnonzero(space.content)[:50].tolist()
    space.near(ids, TOP, SIMILARITY)
    assert searched == []  # the table answers
    assert space.near(ids, TOP + 1, SIMILARITY) == _searched(space, ids, TOP + 1, SIMILARITY)
    assert space.near(ids, TOP, SIMILARITY - 0.1) == _searched(space, ids, TOP, SIMILARITY - 0.1)
    assert searched  # the label search answered those


def test_a_table_of_another_model_is_not_used(small_model: Path, shipped: FacetSpace, tmp_path: Path) -> None:
    model = shipped.embedder.model
    other = StaticModel(model.words[:3_000], model.wordpieces, model.vectors[:3_000].copy(),
                        {**model.meta, "frequent_words": 3_000})
    save_model(tmp_path / "model.npz", other)
    (tmp_path / NEIGHBOURS_FILE).write_bytes((small_model.parent / NEIGHBOURS_FILE).read_bytes())
    space = FacetSpace(StaticEmbedder.from_file(tmp_path / "model.npz"))
    assert space.neighbours is not None
    assert not space.neighbours.covers(space.embedder.fingerprint, LABEL_VOCABULARY, TOP, SIMILARITY)
    ids = np.flatnonzero(space.content)[:300].tolist()
    assert space.near(ids, TOP, SIMILARITY) == _searched(space, ids, TOP, SIMILARITY)


@pytest.mark.parametrize("damage", ["truncated", "not a zip", "arrays that disagree"])
def test_a_damaged_table_is_ignored_with_a_warning(small_model: Path, tmp_path: Path, damage: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    model = tmp_path / "model.npz"
    model.write_bytes(small_model.read_bytes())
    table = (small_model.parent / NEIGHBOURS_FILE).read_bytes()
    if damage == "truncated":
        (tmp_path / NEIGHBOURS_FILE).write_bytes(table[: len(table) // 2])
    elif damage == "not a zip":
        (tmp_path / NEIGHBOURS_FILE).write_bytes(b"hello" * 100)
    else:
        with np.load(small_model.parent / NEIGHBOURS_FILE) as data:
            arrays = dict(data)
        arrays["words"] = arrays["words"][:-3]
        np.savez(tmp_path / NEIGHBOURS_FILE, **arrays)
    with caplog.at_level(logging.WARNING):
        space = FacetSpace(StaticEmbedder.from_file(model))
    assert space.neighbours is None
    assert NEIGHBOURS_FILE in caplog.text and "ignoring" in caplog.text
    ids = np.flatnonzero(space.content)[:100].tolist()
    assert space.near(ids, TOP, SIMILARITY) == _searched(space, ids, TOP, SIMILARITY)


def test_a_model_without_a_table_searches_its_labels(shipped: FacetSpace) -> None:
    space = FacetSpace(StaticEmbedder(shipped.embedder.model, neighbours=None))
    assert space.neighbours is None
    word = shipped.tokenizer.id_of("austria")
    assert word >= FIRST_WORD_ID
    assert space.near([word], TOP, SIMILARITY) == shipped.near([word], TOP, SIMILARITY)
