""""More like this" in the engine: ``Index.search_like`` and the ``FILE[:PAGE|#SENTENCE]`` spec it is named by.

Two documents share a topic in different words (honeybees; pollinating insects), a third is about something else
(income tax), a generated PDF has pages, and a copy of the bees document sits in another folder. The bundled static
model tells the topics apart by meaning, which is all the ranking assertions rely on.

The ranking tests ask for weak matches too (``include_weak=True``): the index's relevance threshold is calibrated for
one query sentence, while a document's query averages the cosines of up to 32 (see the report on the searcher).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docgen
import pytest

from engine import Index, IndexConfig, Mode
from engine.errors import ConfigError, QueryError
from engine.search.like import MAX_QUERY_SENTENCES, LikeSource, spread

BEES = [
    "Honeybees collect nectar from flowers and turn it into honey inside the hive.",
    "A colony of honeybees has one queen, thousands of female workers and a few hundred drones.",
    "Worker bees perform a waggle dance to tell their sisters where the best flowers are.",
    "Beekeepers smoke the hive gently before they lift the frames to check the brood.",
    "In winter the bees cluster together and shiver their wing muscles to keep the queen warm.",
    "Pollen baskets on the hind legs of a worker carry pollen back to feed the larvae.",
    "Varroa mites weaken colonies and spread viruses between the bees.",
]
POLLINATORS = [
    "Bumblebees and solitary wasps carry pollen from blossom to blossom in the orchard.",
    "Without pollinating insects, apple trees and almond groves would give far smaller harvests.",
    "Butterflies sip sweet liquid from petals and move pollen grains as they feed.",
    "Farmers plant wildflower strips beside their fields so that insects find food all summer.",
    "Pesticides sprayed on crops can poison the insects that fertilise the flowers.",
    "A single bumblebee visits hundreds of blossoms on a warm morning.",
]
TAX = [
    "The income tax return must be filed with the revenue office before the end of April.",
    "Self-employed workers deduct business expenses such as office rent and travel from their taxable income.",
    "A late filing costs a penalty of five percent of the unpaid tax for each month.",
    "Keep receipts for at least six years in case the tax authority audits the return.",
    "Refunds are usually paid into the bank account within eight weeks.",
]


def names(response) -> list[str]:
    return [Path(r.path).name for r in response.results]


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, Path]:
    """(documents folder, index folder), indexed once for the module."""
    docs = tmp_path_factory.mktemp("like-docs")
    for name, sentences in (("bees.txt", BEES), ("pollinators.txt", POLLINATORS), ("tax.txt", TAX)):
        (docs / name).write_text("\n\n".join(sentences), encoding="utf-8")
    (docs / "copies").mkdir()
    shutil.copy(docs / "bees.txt", docs / "copies" / "bees-again.txt")
    docgen.make_pdf(docs)
    docgen.make_binary(docs, "blob.bin")  # recorded as skipped
    index_dir = tmp_path_factory.mktemp("like-index")
    with Index(index_dir, config=IndexConfig(workers=0)) as idx:
        report = idx.add([docs])
    assert report.documents == 5 and len(report.issues) == 1
    return docs, index_dir


@pytest.fixture
def idx(library) -> Index:
    with Index(library[1], create=False) as index:
        yield index


# --- the ranking ---------------------------------------------------------------------------------------------------


def test_a_document_finds_the_other_document_on_its_topic_first_and_never_itself(library, idx) -> None:
    docs, _ = library
    response = idx.search_like(docs / "bees.txt", include_weak=True)
    assert response.mode is Mode.SEMANTIC  # by meaning unless asked otherwise
    # the source and its identical copy elsewhere would be first at 1.00; neither is listed
    assert names(response)[0] == "pollinators.txt"
    assert {"bees.txt", "bees-again.txt"}.isdisjoint(names(response))
    assert set(names(response)) == {"pollinators.txt", "tax.txt", "tides.pdf"}
    # the query is the document's own sentences, spread through it
    assert BEES[0] in response.query and BEES[-1] in response.query
    similarity = {Path(r.path).name: r.similarity for r in response.results}
    assert similarity["pollinators.txt"] > similarity["tax.txt"]


def test_the_other_topic_ranks_its_own_way(library, idx) -> None:
    docs, _ = library
    response = idx.search_like(str(docs / "pollinators.txt"), include_weak=True)
    assert names(response)[0] in ("bees.txt", "bees-again.txt")  # two copies of one file: shown once
    assert "pollinators.txt" not in names(response)


def test_one_sentence_by_the_ordinal_a_result_prints(library, idx) -> None:
    docs, _ = library
    found = idx.search(BEES[5], k=1, mode="semantic").results[0]
    assert (Path(found.path).name, found.sentence, found.ordinal) in {("bees.txt", BEES[5], 5),
                                                                     ("bees-again.txt", BEES[5], 5)}
    response = idx.search_like(LikeSource(str(docs / "bees.txt"), sentence=found.ordinal), include_weak=True)
    assert response.query == BEES[5]  # that sentence alone, numbered from 0 as `ordinal` is
    assert names(response)[0] == "pollinators.txt"
    assert {"bees.txt", "bees-again.txt"}.isdisjoint(names(response))


def test_one_page_of_a_pdf(library, idx) -> None:
    docs, _ = library
    page2 = idx.search_like(LikeSource(str(docs / "tides.pdf"), page=2), include_weak=True, mode="lexical")
    assert page2.query == docgen.PDF_PAGE2_SENTENCE and page2.mode is Mode.LEXICAL
    page3 = idx.search_like(LikeSource(str(docs / "tides.pdf"), page=3), include_weak=True)
    assert docgen.RIGHT_COLUMN in page3.query and docgen.PDF_PAGE2_SENTENCE not in page3.query
    assert "tides.pdf" not in names(page2) + names(page3)


def test_a_relative_path_is_found(library, idx, monkeypatch) -> None:
    docs, _ = library
    monkeypatch.chdir(docs)
    assert names(idx.search_like("tax.txt", include_weak=True))[0] != "tax.txt"


def test_spread_takes_informative_sentences_from_all_through() -> None:
    long = [f"Sentence number {i} of a long document." for i in range(100)]
    picked = spread(["Title", *long])
    assert len(picked) == MAX_QUERY_SENTENCES and picked[0] == long[0] and picked[-1] == long[-1]
    assert spread(["Title", "Short bit"]) == ["Title", "Short bit"]  # nothing longer: fragments will do


# --- errors --------------------------------------------------------------------------------------------------------


def test_a_path_not_in_the_index(library, idx) -> None:
    with pytest.raises(QueryError, match="is not in the index: index it first"):
        idx.search_like(library[0] / "missing.txt")


def test_a_skipped_file_has_nothing_to_compare(library, idx) -> None:
    with pytest.raises(QueryError, match="was skipped .* no sentences"):
        idx.search_like(library[0] / "blob.bin")


def test_a_page_that_does_not_exist(library, idx) -> None:
    docs, _ = library
    with pytest.raises(QueryError, match="tides.pdf has no page 9 with text; its pages with text are 1-5"):
        idx.search_like(LikeSource(str(docs / "tides.pdf"), page=9))
    with pytest.raises(QueryError, match="tax.txt has no pages"):
        idx.search_like(LikeSource(str(docs / "tax.txt"), page=1))


def test_a_sentence_that_does_not_exist(library, idx) -> None:
    with pytest.raises(QueryError, match="tax.txt has no sentence 5: its sentences are numbered 0 to 4"):
        idx.search_like(LikeSource(str(library[0] / "tax.txt"), sentence=5))


def test_a_source_is_checked_when_made() -> None:
    with pytest.raises(ConfigError, match="not both"):
        LikeSource("a.pdf", page=1, sentence=2)
    with pytest.raises(ConfigError, match="numbered from 1"):
        LikeSource("a.pdf", page=0)


# --- the spec --------------------------------------------------------------------------------------------------


def test_parse_pages_and_sentences(tmp_path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(b"%PDF")
    assert LikeSource.parse(str(paper)) == LikeSource(str(paper))
    assert LikeSource.parse(f"{paper}:2") == LikeSource(str(paper), page=2)
    assert LikeSource.parse(f"{paper}#3") == LikeSource(str(paper), sentence=3)
    assert LikeSource.parse(f"{paper}#0") == LikeSource(str(paper), sentence=0)
    # a file gone from disk since it was indexed still takes a number
    assert LikeSource.parse(f"{tmp_path}/gone.txt#4") == LikeSource(f"{tmp_path}/gone.txt", sentence=4)
    assert str(LikeSource(str(paper), page=2)) == f"{paper}:2"


@pytest.mark.parametrize(("suffix", "words"), [("#-1", "sentence -1 does not exist"), (":-1", "page -1 does not exist")])
def test_a_negative_number_is_refused_as_such(tmp_path, suffix: str, words: str) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text("A note.")
    with pytest.raises(ConfigError, match=words):  # was taken as a file named "paper.md#-1", "not in the index"
        LikeSource.parse(f"{paper}{suffix}")


def test_parse_keeps_paths_that_hold_the_separators(tmp_path) -> None:
    odd = tmp_path / "notes#2"
    odd.write_text("x")
    timed = tmp_path / "log 10:30"
    timed.write_text("x")
    assert LikeSource.parse(str(odd)) == LikeSource(str(odd))  # "notes" does not exist: the name is whole
    assert LikeSource.parse(str(timed)) == LikeSource(str(timed))
    assert LikeSource.parse(f"{odd}#1") == LikeSource(str(odd), sentence=1)  # parsed from the right
    assert LikeSource.parse(f"{timed}:3") == LikeSource(str(timed), page=3)
    assert LikeSource.parse(f"{tmp_path}/a:b.txt") == LikeSource(f"{tmp_path}/a:b.txt")  # no number at the end
    (tmp_path / "notes").write_text("x")
    assert LikeSource.parse(str(odd)) == LikeSource(str(tmp_path / "notes"), sentence=2)  # both exist: the number
    with pytest.raises(QueryError, match="FILE:PAGE or FILE#SENTENCE"):
        LikeSource.parse("")
