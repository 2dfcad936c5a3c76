"""Query words and highlighting: the fast candidate filter finds exactly the words full stemming finds."""

from __future__ import annotations

from engine.search.terms import fold, matches, stem, stems_found, words

TEXT = (
    "Relational databases relate RELATIONS; the happy Happiness of naïve NAÏVE users. Über über-fast ﬁnance "
    "Ölkrise olkrise é e 3D 3d x_y snake_case Straße strasse"
)
QUERY = "relation happiness naive uber finance olkrise e 3d snake_case strasse"


def reference(text: str, stems: set[str]) -> list[tuple[int, int, str]]:
    """Every word stemmed, no shortcut; a word that stems to nothing ("s" of "user's") matches nothing."""
    return [(a, b, stem(w)) for w, a, b in words(text) if stem(w) and stem(w) in stems]


def test_matches_equal_stemming_every_word() -> None:
    stems = {stem(w) for w, _, _ in words(QUERY)}
    found = matches(TEXT, stems)
    assert found == reference(TEXT, stems)
    assert {TEXT[a:b] for a, b, _ in found} >= {"Relational", "RELATIONS", "naïve", "Über", "ﬁnance", "Ölkrise"}


def test_ascii_text_takes_the_lowercased_path_with_the_same_offsets() -> None:
    text = "Relational databases relate RELATIONS; the happy Happiness of Snake_Case users's"
    stems = {stem(w) for w, _, _ in words(QUERY + " user's")}
    found = matches(text, stems)
    assert found == reference(text, stems)
    assert [text[a:b] for a, b, _ in found] == ["Relational", "relate", "RELATIONS", "happy", "Happiness", "Snake_Case", "users"]


def test_matches_with_no_terms_is_empty() -> None:
    assert matches(TEXT, set()) == []


def test_fold_ascii_fast_path_agrees_with_unicode_path() -> None:
    assert fold("HeLLo") == "hello" and fold("Naïve") == "naive" and fold("ﬁnance") == "finance"


def test_short_stems_whose_last_letter_porter_rewrites_still_match() -> None:
    text = "Ay, they say ay."  # "ay" stems to "ai": its match cannot rely on the stem's first two letters
    assert [text[a:b] for a, b, _ in matches(text, {stem("ay")})] == ["Ay", "ay"]


def test_stems_found_for_many_texts_equal_the_stems_of_their_matches() -> None:
    texts = [TEXT, "Relational databases relate RELATIONS; users", "", "3D x_y", "no query word here", "é", TEXT.upper()]
    stems = frozenset(stem(w) for w, _, _ in words(QUERY))
    assert stems_found(texts, stems) == [{s for _, _, s in matches(t, stems)} for t in texts]
    assert stems_found(texts, frozenset()) == [set()] * len(texts)
