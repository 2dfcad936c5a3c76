"""Relevance on small folders and on stop words, and the number on each card: a paraphrase in a three-file folder
is shown as relevant, an unrelated query finds nothing relevant, card scores follow the ranking, and the
small-folder prior bundled for the shipped static model is the one its index uses."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docgen
import numpy as np
import pytest

from engine import Index
from engine.embed import context
from engine.embed.static import StaticEmbedder
from engine.resources import resource_path
from engine.search import relevance as rel
from engine.search.calibration import PRIOR_FOLDER, prior

# The three-file folder: one sentence answers "overnight rail service to Austria" by meaning alone.
THREE_FILES = {
    "trains.txt": "Timetable notes\n\nThe night train to Vienna leaves at 22:10 from platform 4. Sleeper cabins must "
                  "be booked a week ahead. Breakfast is served before arrival.\n",
    "garden.txt": "Spring garden\n\nTomatoes need full sun and regular watering. Prune the roses in early March. "
                  "Compost keeps the soil rich and loose.\n",
    "budget.txt": "Household budget\n\nRent is due on the first of every month. The electricity bill rose by ten "
                  "percent this winter. We save a fifth of each salary.\n",
}


def write_folder(docs: Path, files: dict[str, str]) -> Path:
    """``docs`` (made where missing) holding each of ``files``: name to text."""
    docs.mkdir(exist_ok=True)
    for name, text in files.items():
        (docs / name).write_text(text, encoding="utf-8")
    return docs


@pytest.fixture(scope="module")
def three_files(tmp_path_factory) -> Index:
    docs = write_folder(tmp_path_factory.mktemp("three"), THREE_FILES)
    index = Index(tmp_path_factory.mktemp("db"))
    index.add([docs])
    yield index
    index.close()


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
@pytest.mark.parametrize(("query", "name", "sentence"), [
    ("overnight rail service to Austria", "trains.txt", "The night train to Vienna"),
    ("what to plant in a sunny spot", "garden.txt", "Tomatoes need full sun"),
    # the heading shares a word with the query, but a sentence of its section is what answers
    ("monthly household expenses", "budget.txt", "Rent is due on the first of every month"),
])
def test_a_paraphrase_is_shown_as_relevant_in_a_three_file_folder(three_files: Index, mode: str, query: str, name: str,
                                                                    sentence: str) -> None:
    response = three_files.search(query, mode=mode)
    assert not response.nothing_relevant
    top = response.results[0]
    assert top.sentence.startswith(sentence) and not top.weak
    # the other two files are about something else: they are not shown as answers
    assert [Path(r.path).name for r in response.results] == [name]


@pytest.mark.parametrize("query", ["the history of jazz saxophone players", "quantum chromodynamics on a lattice"])
def test_an_unrelated_query_finds_nothing_relevant_in_a_small_folder(three_files: Index, query: str) -> None:
    response = three_files.search(query)
    assert response.nothing_relevant and response.results == ()
    assert response.weak_hidden == 3


def test_the_small_folder_is_judged_on_the_bundled_prior_of_the_shipped_model() -> None:
    """The shipped static model has a prior, named by the fingerprint its index records: a model rebuilt without
    remaking its prior (bench/tools/prior_calibration.py) fails here rather than silently falling back."""
    fingerprint = context.fingerprint(StaticEmbedder.from_file(resource_path("static/model.npz")))
    assert (resource_path(PRIOR_FOLDER) / f"{fingerprint}.json").is_file()
    calibration = prior(fingerprint)
    assert calibration is not None and 0 < calibration.mean < calibration.threshold < 1
    assert prior("static-0000000000000000") is None


def test_card_scores_follow_the_ranking_and_the_first_reads_as_relevance(corpus: Path, tmp_path: Path) -> None:
    index = Index(tmp_path / "db")
    index.add([corpus])
    for query in ("porpoises hunt fish", "book a hospital appointment by text", "star in Orion", "pasta"):
        for mode in ("hybrid", "semantic", "lexical"):
            response = index.search(query, mode=mode, include_weak=True)
            scores = [r.score for r in response.results]
            assert scores == sorted(scores, reverse=True) and all(0 <= s <= 100 for s in scores), (query, mode)
            # an answered query's first result cleared the bar, which reads as 50 on the card
            assert response.nothing_relevant or scores[0] >= 50, (query, mode)
    index.close()


def test_fusion_normalises_each_side_over_the_query_candidates() -> None:
    cosine = np.array([0.8, 0.4, np.nan, 0.6])
    bm25 = np.array([0.0, 10.0, 5.0, 2.5])
    fused = rel.fuse(cosine, bm25, 0.3)
    # cosine min-max over the three found (0.8 -> 1, 0.4 -> 0); BM25 over its best
    assert fused == pytest.approx([0.3, 0.7, 0.35, 0.3 * 0.5 + 0.7 * 0.25])


def test_the_lexical_bound_is_what_the_five_most_informative_words_score() -> None:
    idf = {"a": 0.5, "b": 3.0, "c": 2.0, "d": 1.0, "e": 4.0, "f": 0.25}
    assert rel.lexical_bound(idf) == pytest.approx(4.0 + 3.0 + 2.0 + 1.0 + 0.5)


HAMLET = ("Hamlet asks whether it is nobler to suffer or to fight: to be or not to be, that is the question he "
          "puts to himself alone on the stage.")


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Index:
    """The toy corpus (413 sentences: an index calibrated on itself, not a small folder) and a line of Hamlet."""
    docs = tmp_path_factory.mktemp("toy")
    docgen.write_toy_corpus(docs)
    (docs / "hamlet.txt").write_text(HAMLET + "\n", encoding="utf-8")
    index = Index(tmp_path_factory.mktemp("toydb"))
    index.add([docs])
    yield index
    index.close()


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
@pytest.mark.parametrize(("query", "note"), [
    ("the", "“the” is a word too common to search by: add a word that says what you are looking for"),
    ("to be or not to be", "“to”, “be”, “or”, “not” are words too common to search by: add a word that says what "
                           "you are looking for, or put the phrase in quotes (\"to be or not to be\") to find it as "
                           "written"),
])
def test_stop_words_alone_find_nothing_relevant_and_say_why(toy: Index, mode: str, query: str, note: str) -> None:
    # "the" is in every passage, so every passage held the query's every key word: answered with scores near 90
    response = toy.search(query, mode=mode)
    assert response.nothing_relevant and response.results == ()
    assert note in response.notes
    assert toy.search("the whales", mode=mode).results  # a word that says something is still found beside it


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_a_quoted_phrase_of_stop_words_is_searched_as_written(toy: Index, mode: str) -> None:
    response = toy.search('"to be or not to be"', mode=mode)
    assert not response.nothing_relevant and Path(response.results[0].path).name == "hamlet.txt"
    assert not response.notes and response.missing == ()
    # its words in another order are in no document: the phrase is named as missing, as a word would be
    assert toy.search('"be or not to be to"', mode=mode).missing == ("be or not to be to",)


def test_a_document_is_shown_by_its_sentence_with_most_evidence_not_its_best_passage_first(tmp_path: Path) -> None:
    """A FAQ's first passage scores most BM25 (it says "sed", "file" and "edition", which stems like "edit", again
    and again); the sentence that answers is in a later passage and holds "place" too."""
    docs = tmp_path / "docs"
    docs.mkdir()
    intro = " ".join(f"The second edition of this sed FAQ file, chapter {i}, revises the first edition of the file."
                     for i in range(12))
    options = " ".join(f"Option group {i} of GNU sed changes how scripts are read and printed." for i in range(12))
    (docs / "sedfaq.txt").write_text(
        f"{intro}\n\n{options} The -i option activates in-place editing of a file. {options}\n", encoding="utf-8")
    write_folder(docs, THREE_FILES)
    index = Index(tmp_path / "db")
    index.add([docs])
    for mode in ("hybrid", "lexical"):
        top = index.search("edit a file in place with sed", mode=mode).results[0]
        assert Path(top.path).name == "sedfaq.txt" and top.sentence.startswith("The -i option activates"), mode
    index.close()


LEASE = """Residential Tenancy Agreement
This agreement is made on 1 March 2024 between Margaret Holloway (the Landlord) and Daniel Okafor (the Tenant).

Rent and deposit
The monthly rent is £950, payable in advance on the first day of each month by standing order.
The Tenant shall pay a security deposit of £1,100, which will be protected within 30 days.

Term and ending the tenancy
The tenancy runs for twelve months.
Either party may end it after the first six months by giving two months' written notice.
If the Tenant leaves before the end of the fixed term without agreement, the Tenant remains liable for rent.

Pets and smoking
No animals may be kept at the property without the Landlord's prior written consent.
"""
# Where "end" and "give" are common words, as in a real folder, and "notice" and "tenancy" rare.
EVERYDAY = {
    "film.txt": "The film's end gives away its secret. Critics give it four stars.",
    "road.txt": "Road works will end in May. Drivers were given a map of the closure.",
    "school.txt": "Term ends in July. Parents give their consent at the start of the year.",
    "match.txt": "The match came to an end in extra time. Fans were given free tickets.",
    "shop.txt": "Prices may change at any time. The sale ends on Sunday.",
}


@contextmanager
def everyday_folder(tmp_path: Path, name: str, text: str) -> Iterator[Index]:
    """An index of a folder holding ``name`` (its ``text``) among THREE_FILES and EVERYDAY's files."""
    docs = write_folder(tmp_path / "docs", {name: text, **THREE_FILES, **EVERYDAY})
    with Index(tmp_path / "db") as index:
        index.add([docs])
        yield index


def test_a_heading_yields_to_the_sentence_of_its_section_that_answers(tmp_path: Path) -> None:
    """A new user asked a lease how much notice ends the tenancy and was shown its heading "Term and ending the
    tenancy": the heading's few words lift its cosine above the sentence that answers."""
    with everyday_folder(tmp_path, "lease.txt", LEASE) as index:
        for mode in ("hybrid", "lexical"):
            top = index.search("how much notice do I have to give to end the tenancy", mode=mode).results[0]
            assert Path(top.path).name == "lease.txt" and top.sentence.startswith("Either party may end it"), mode
        # semantic mode weighs no words: the section's sentence most similar to the query, not the heading
        shown = index.search("how much notice do I have to give to end the tenancy", mode="semantic").results[0]
        assert Path(shown.path).name == "lease.txt" and shown.sentence.startswith("The tenancy runs"), shown.sentence
        # by meaning too: "pets" finds its section's sentence about animals
        top = index.search("are pets allowed").results[0]
        assert Path(top.path).name == "lease.txt" and top.sentence.startswith("No animals may be kept"), top.sentence


def test_a_table_is_shown_by_its_row_that_holds_the_words(tmp_path: Path) -> None:
    """A table's rows are short lines without final punctuation, as headings are: a row is the passage itself, and
    yields to no other (a new user's budget was shown by "Water,42," for the council tax)."""
    table = ("category,monthly,notes\nRent,950,standing order\nCouncil tax,189,Band C\nWater,42,\n"
             "Car insurance,61,renews in November\nGroceries,420,mostly the market\n")
    with everyday_folder(tmp_path, "budget.csv", table) as index:
        for mode in ("hybrid", "lexical", "semantic"):
            top = index.search("how much council tax do we pay", mode=mode).results[0]
            assert (top.title, top.sentence) == ("budget", "Council tax,189,Band C"), mode


# Passages a new user was shown in place of the sentence that answers, each as (file, its text, the question, the
# modes that weigh words, how the answering passage starts).
PASSAGES = {
    # the card's title again: the line the plant's notes are titled by
    "title line": ("monstera.txt", "Looking after Monty (the Swiss cheese plant, Monstera deliciosa)\n\n"
                   "Bought from the garden centre in April, about 60 cm tall then.\n\n"
                   "Watering\nLet the compost dry out between waterings, then water until it drains.\n",
                   "how often should I water the cheese plant", ("hybrid", "lexical"), "Let the compost"),
    # "Before we start viewing": a heading over a checklist, whose items are its sentences
    "list under a heading": ("checklist.md", "# Buying a house\n\n## Things to check at each viewing\n\n"
                             "- Water pressure in the shower\n- Damp in the house, under the windows and in the loft\n"
                             "- How old the boiler is\n\n## Moving day\n\n- Read the meters\n- Book the van\n",
                             "what to check in the house at a viewing", ("hybrid", "lexical", "semantic"),
                             "- Damp in the house"),
    # the heading of the walk after the one whose sentence answered, nothing of its own section holding a query word
    "the next section's heading": ("walks.txt", "Three walks from Malham\n\nWalk 2: Malham Cove\n\nFrom the village "
                                   "the path follows the beck north. The 400 steps up the west side of the cove bring "
                                   "you to the limestone pavement on top.\n\nWalk 3: Malham Tarn\n\nThe tarn is a lake "
                                   "high on the moor, with a nature reserve beside it.\n",
                                   "how many steps to climb at Malham", ("hybrid", "lexical"), "The 400 steps"),
    # a reading log's header row, which names columns ("date_finished title author pages format rating notes")
    "a table's header row": ("reading_log.tsv", "date_finished\ttitle\tauthor\tpages\tformat\trating\tnotes\n"
                             "2024-01-14\tThe Salt Path\tRaynor Winn\t288\tpaperback\t4\twalking the coast path\n"
                             "2024-02-29\tKlara and the Sun\tKazuo Ishiguro\t303\tlibrary\t3\tbeautiful but slow\n"
                             "2024-06-09\tLessons in Chemistry\tBonnie Garmus\t400\tebook\t4\tbook club pick\n"
                             "2024-07-21\tDemon Copperhead\tBarbara Kingsolver\t560\thardback\t5\tthe best thing "
                             "I read all year\n", "books I finished with the best rating", ("hybrid",),
                             "2024-07-21 Demon Copperhead"),
}


@pytest.mark.parametrize("case", PASSAGES)
def test_the_passage_shown_is_the_one_that_answers(tmp_path: Path, case: str) -> None:
    name, text, query, modes, answer = PASSAGES[case]
    with everyday_folder(tmp_path, name, text) as index:
        for mode in modes:
            top = index.search(query, mode=mode).results[0]
            assert Path(top.path).name == name and top.sentence.startswith(answer), (mode, top.sentence)


def test_hybrid_shows_the_document_about_the_query_above_one_holding_more_of_its_words(tmp_path: Path) -> None:
    # meaning and words share the fused score: a passage on the subject, with one of the query's words, comes before
    # one that holds two of them in a sentence on something else
    files = {**THREE_FILES,
             "trains.txt": "Timetable notes\n\nThe overnight sleeper to Vienna leaves at 22:10 from platform 4. Sleeper "
                           "cabins must be booked a week ahead. Breakfast is served before arrival.\n",
             "ski.txt": "Winter sport\n\nAustria trains its ski jumpers hard. The team from Austria won the event "
                        "again. Snow fell all afternoon.\n"}
    with Index(tmp_path / "index") as index:
        index.add([write_folder(tmp_path / "docs", files)])
        shown = index.search("overnight train to Austria", k=5, include_weak=True, explain=False).results
    assert [Path(r.path).name for r in shown[:2]] == ["trains.txt", "ski.txt"]
