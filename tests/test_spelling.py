"""Did you mean: query words no document holds, spelt as close words the index does hold."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Index, IndexConfig
from engine.search import spelling
from engine.search.results import Mode


def test_edit_distances_count_insertions_deletions_substitutions_and_swaps():
    got = spelling.edit_distances("stethescop", ["stethoscop", "stethescop", "stetscop", "tsethescop", "heart", "s"])
    assert got.tolist() == [1, 0, 2, 1, 8, 9]
    assert spelling.edit_distances("abc", []).size == 0
    # the same numbers as a plain dynamic programme, on random words
    rng = np.random.default_rng(7)
    words = ["".join(rng.choice(list("abcd"), size=rng.integers(1, 7))) for _ in range(200)]
    assert spelling.edit_distances("badcab", words).tolist() == [_osa("badcab", w) for w in words]


def _osa(a: str, b: str) -> int:
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_shortlist_reads_misspelt_suffixes_and_prefers_the_commoner_stem():
    # "echolocaton" stems to itself, "echolocation" to "echoloc": the word's prefix is compared
    assert spelling.shortlist("echolocaton", [("echo", 9), ("echoloc", 2), ("eclips", 4)]) == ["echo", "echoloc"]
    assert spelling.shortlist("sepr", [("separ", 3), ("sepor", 40), ("septemb", 9)]) == ["sepor", "separ"]
    assert spelling.shortlist("cat", [("dog", 5)]) == [] and spelling.shortlist("cat", []) == []


def test_completions_give_the_stem_the_misspelt_words_own_ending():
    assert "communication" in spelling._completions("comunication", ["commun", "communic"])
    assert spelling._completions("stethescope", ["stethoscop"])[0] == "stethoscope"
    assert spelling._completions("stethescope", ["glucos"]) == []


def test_prefix_distances_hold_every_prefix_of_the_word():
    table = spelling.prefix_distances("echolocaton", ["echoloc", "echo"])
    assert table[7].tolist() == [0, 3] and table[4].tolist() == [3, 0] and table[0].tolist() == [7, 4]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("spelling")
    docs = root / "docs"
    docs.mkdir()
    (docs / "clinic.txt").write_text(
        "The doctor listened to the patient's heart with a stethoscope.\n\n"
        "Separate the patients who have a fever from the others.\n", encoding="utf-8")
    (docs / "kitchen.txt").write_text("Whisk the eggs and separate the yolks for the custard.\n", encoding="utf-8")
    (docs / "accounts.txt").write_text("Renew the password of every account each year.\n", encoding="utf-8")
    (docs / "band.txt").write_text("Bud Freeman played the tenor saxophone in the band.\n", encoding="utf-8")
    (docs / "zoo.txt").write_text("At the zoo the panda ate bamboo while we ate pancakes.\n", encoding="utf-8")
    (docs / "secrets.txt").write_text("Steganography hides a message in a picture; the hidden message is a steganogram.\n"
                                      "A steganogram and its steganogram key.\n", encoding="utf-8")
    with Index(root / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        yield idx


@pytest.mark.parametrize("mode", list(Mode))
def test_a_misspelt_word_gets_the_indexed_spelling(index, mode):
    response = index.search("stethescope heart", mode=mode, correct=False)
    assert response.missing == ("stethescope",)
    assert response.did_you_mean == "stethoscope heart"
    assert index.search(response.did_you_mean, mode=mode).results[0].path.endswith("clinic.txt")
    assert response.to_json()["did_you_mean"] == "stethoscope heart"
    # by default a query that finds no strong match is answered by its correction, and says what was typed
    corrected = index.search("stethescope", mode=mode)
    assert (corrected.query, corrected.corrected_from) == ("stethoscope", "stethescope")
    assert corrected.results[0].path.endswith("clinic.txt")


def test_the_suggestion_keeps_capitals_and_the_rest_of_the_query(index):
    assert index.search("Seperate the yolks", correct=False).did_you_mean == "Separate the yolks"
    assert index.search("seperate yolks", correct=False).did_you_mean == "separate yolks"
    assert index.search("stethoscopes", correct=False).did_you_mean is None  # a word of the index in another form is not missing


def test_no_suggestion_when_nothing_is_close_or_nothing_is_missing(index):
    assert index.search("zeppelin heart", correct=False).did_you_mean is None
    assert index.search("stethoscope heart", correct=False).did_you_mean is None
    # a pasted passage that misses many words is not a typo
    assert index.search("stethescope zeppelin quixotic blimp hangar", correct=False).did_you_mean is None


def test_a_word_of_the_language_the_documents_lack_is_not_taken_for_a_misspelling(index):
    # "passport" is two edits from the indexed "password", but it is an English word, not a typo for it
    response = index.search("renew my passport", correct=False)
    assert response.missing == ("passport",) and response.did_you_mean is None
    assert index.search("renew my pasword", correct=False).did_you_mean == "renew my password"


def test_a_stem_and_an_ending_that_make_no_word_are_not_suggested(index):
    # "freeman" + "er" stems as "freeman" does, two edits from "freelancer" (a word the model's vocabulary lacks)
    response = index.search("saxophone freelancer", correct=False)
    assert response.missing == ("freelancer",) and response.did_you_mean is None


def test_the_start_of_an_indexed_word_is_no_misspelling(index):
    # typed on the way to "pancakes": a new user was offered "panda"
    assert index.search("zoo panca", correct=False).did_you_mean is None
    assert index.search("zoo pandq", correct=False).did_you_mean == "zoo panda"  # a misspelling still is one


def test_of_equally_close_words_the_word_of_the_language_is_suggested(index):
    # two edits from both; "steganogram" is the commoner stem here, "steganography" the word of the language
    assert index.search("steganografy", correct=False).did_you_mean == "steganography"


@pytest.mark.parametrize(("typed", "meant"), [
    ("tsethoscope heart", "stethoscope heart"),  # two of the first three letters swapped
    ("setparate yolks", "separate yolks"),  # a letter too many among them
    ("sseparate yolks", "separate yolks"),  # one doubled
])
def test_a_typo_among_the_first_letters_is_corrected_too(index, typed, meant):
    # the stems sharing the word's first three letters did not hold it: a new user's "asasination" got no suggestion
    assert index.search(typed, correct=False).did_you_mean == meant


def test_short_words_that_begin_the_typo_do_not_crowd_out_the_word_meant(tmp_path):
    # a large index holds many short words that begin "asasination" and are one edit from its start: they filled the
    # 16 stems whose spellings are read, and "assassin" was not among them
    docs = tmp_path / "docs"
    docs.mkdir()
    clans = ", ".join(["Asa", "Asaf", "Asam", "Asai", "Asal", "Asap", "Asasu", "Assai", "Assi", "Asado", "Asaph",
                       "Asaka", "Asart", "Asawa", "Asani", "Aass", "Sasa", "Asar", "Asat", "Asay"])
    (docs / "clans.txt").write_text(f"The {clans} clans met in the hall.\n", encoding="utf-8")
    (docs / "history.txt").write_text("The assassination of the king ended the war.\n", encoding="utf-8")
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([docs])
        assert idx.search("the asasination of the king", correct=False).did_you_mean == "the assassination of the king"

