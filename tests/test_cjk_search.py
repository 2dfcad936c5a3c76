"""Japanese, Chinese and Korean documents are found by their words, though they write no spaces between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Index, IndexConfig, Mode

DOCS = {
    "ja.txt": "このグループは東京で毎週会議を開きます。",
    "zh.txt": "我们在北京大学学习中文和历史。",
    "ko.txt": "우리는 서울에서 한국어를 공부합니다.",
    "en.txt": "The otters of the river hunt at dawn.",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("cjk")
    for name, text in DOCS.items():
        (root / "docs").mkdir(exist_ok=True)
        (root / "docs" / name).write_text(text + "\n", encoding="utf-8")
    with Index(root / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([root / "docs"])
        yield idx


@pytest.mark.parametrize(("query", "name"), [("グループ", "ja.txt"), ("会議", "ja.txt"), ("北京大学", "zh.txt"),
                                             ("历史", "zh.txt"), ("한국어", "ko.txt"), ("서울", "ko.txt")])
@pytest.mark.parametrize("mode", [Mode.LEXICAL, Mode.HYBRID])
def test_a_word_inside_a_cjk_sentence_is_found_and_highlighted(index, query, name, mode):
    response = index.search(query, mode=mode)
    assert response.missing == ()
    top = response.results[0]
    assert Path(top.path).name == name
    highlighted = "".join(top.sentence[h.start : h.end] for h in sorted(top.highlights, key=lambda h: h.start))
    assert query[:2] in highlighted


def test_a_cjk_word_no_document_holds_is_named_missing(index):
    assert index.search("図書館", mode=Mode.LEXICAL).results == ()
