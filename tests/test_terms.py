"""Query words and highlighting: the fast candidate filter finds exactly the words full stemming finds."""

from __future__ import annotations

import sqlite3

from engine.store.schema import FTS_TOKENIZER
from engine.text.terms import (
    fold,
    fts_query,
    matches,
    query_terms,
    split_phrases,
    stem,
    stem_counts,
    stems_found,
    term_counts,
    term_key,
    words,
)

TEXT = (
    "Relational databases relate RELATIONS; the happy Happiness of naïve NAÏVE users. Über über-fast ﬁnance "
    "Ölkrise olkrise é e 3D 3d x_y snake_case Straße strasse"
)
QUERY = "relation happiness naive uber finance olkrise e 3d snake_case strasse"


# Japanese, Chinese, Korean, and CJK beside Latin letters, digits, marks and kana with a voicing mark
CJK = ["このグループは東京にあります。", "我们在北京学习中文", "한국어 문장을 검색합니다", "Python入門 3D映画 日", "東",
       "nai\u0308ve漢字", "ク\u3099ループ"]


def reference(text: str, stems: set[str]) -> list[tuple[int, int, str]]:
    """Every word stemmed, no shortcut."""
    return [(a, b, stem(w)) for w, a, b in words(text) if stem(w) and stem(w) in stems]


def test_matches_equal_stemming_every_word() -> None:
    stems = {stem(w) for w, _, _ in words(QUERY)}
    found = matches(TEXT, stems)
    assert found == reference(TEXT, stems)
    assert {TEXT[a:b] for a, b, _ in found} >= {"Relational", "RELATIONS", "naïve", "Über", "Ölkrise"}


def test_ascii_text_takes_the_lowercased_path_with_the_same_offsets() -> None:
    text = "Relational databases relate RELATIONS; the happy Happiness of Snake_Case users's"
    stems = {stem(w) for w, _, _ in words(QUERY + " user's")}
    found = matches(text, stems)
    assert found == reference(text, stems)
    assert [text[a:b] for a, b, _ in found] == [
        "Relational", "relate", "RELATIONS", "happy", "Happiness", "Snake", "Case", "users", "s"
    ]


def test_text_with_other_letters_finds_ascii_words_in_any_case_and_letters_that_fold_like_them() -> None:
    # not ASCII: the words' prefixes are matched in any case, and every word with another letter is stemmed
    text = "İstanbul ISTANBUL ıstanbul \u212aelvin KELVIN ſtar STAR x_STAR straße STRASSE École ECOLE"
    stems = {stem(w) for w in ["istanbul", "kelvin", "star", "strasse", "ecole"]}
    found = matches(text, stems)
    assert found == reference(text, stems)
    assert [text[a:b] for a, b, _ in found] == ["İstanbul", "ISTANBUL", "\u212aelvin", "KELVIN", "STAR", "STAR",
                                                 "STRASSE", "École", "ECOLE"]


def test_matches_with_no_terms_is_empty() -> None:
    assert matches(TEXT, set()) == []


def test_fold_ascii_fast_path_agrees_with_unicode_path() -> None:
    assert fold("HeLLo") == "hello" and fold("Naïve") == "naive" and fold("ﬁnance") == "ﬁnance"


def test_short_stems_whose_last_letter_porter_rewrites_still_match() -> None:
    text = "Ay, they say ay."  # "ay" stems to "ai": its match cannot rely on the stem's first two letters
    assert [text[a:b] for a, b, _ in matches(text, {stem("ay")})] == ["Ay", "ay"]


def test_stems_found_for_many_texts_equal_the_stems_of_their_matches() -> None:
    texts = [TEXT, "Relational databases relate RELATIONS; users", "", "3D x_y", "no query word here", "é", TEXT.upper()]
    stems = frozenset(stem(w) for w, _, _ in words(QUERY))
    assert stems_found(texts, stems) == [{s for _, _, s in matches(t, stems)} for t in texts]
    assert stems_found(texts, frozenset()) == [set()] * len(texts)


def test_words_and_stems_are_the_tokens_fts5_stores() -> None:
    """FTS5 scores quoted phrases and the word index everything else; terms.py splits text for the word index, so
    it must agree with FTS5's tokenizer or the two count other words. Underscores split words; words under three letters
    are not stemmed ("s" of "it's" stays "s")."""
    text = TEXT + " it's users's ab abc cats running generalization ﬁnancial Résumé résumés x_y_z 2024 3.5 nai\u0308ve Re\u0301sume\u0301s"
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, tokenize='{FTS_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    db.execute("INSERT INTO f VALUES (?)", [text])
    stored = {term for (term,) in db.execute("SELECT term FROM v")}
    ours = {stem(w) for w, _, _ in words(text)}
    # one known difference: FTS5's porter strips the final e of "straße" byte-wise, Snowball's leaves it
    assert ours - {"straße"} == stored - {"straß"}


def test_stem_counts_count_what_matches_finds_in_every_script() -> None:
    texts = [TEXT, "Relational relate relation RELATIONS", "", "naïve Naive NAÏVE naive_x", "Ωmega relation—relation",
             "straße Straße relationnel", TEXT.upper()]
    for query in (QUERY, "relation naive", "ωmega relation"):
        stems = frozenset(stem(w) for w, _, _ in words(query))
        expected = [{} for _ in texts]
        for counts, text in zip(expected, texts):
            for _, _, found in matches(text, stems):
                counts[found] = counts.get(found, 0) + 1
        assert stem_counts(texts, stems) == expected
    assert stem_counts(texts, frozenset({stem("relation")}))[1] == {stem("relation"): 4}


def test_separately_typed_diacritics_stay_in_the_word_they_mark() -> None:
    text = "A nai\u0308ve re\u0301sume\u0301, naive."
    assert [w for w, _, _ in words(text)] == ["A", "nai\u0308ve", "re\u0301sume\u0301", "naive"]
    assert matches(text, {stem("naive"), stem("resume")}) == reference(text, {stem("naive"), stem("resume")})
    assert [text[a:b] for a, b, _ in matches(text, {stem("naive")})] == ["nai\u0308ve", "naive"]


def test_stem_counts_are_the_term_counts_fts5_stores() -> None:
    """A result's matched words are counted here, so the counts must be FTS5's own (what the index holds), also where
    text is unusual: combining marks typed separately (FTS5 keeps them in the word and folds them away), a NUL inside
    a text (a separator), words in scripts other than the query's."""
    texts = ["nai\u0308ve relation\x00relation", "Relation", "x\x00", "NAÏVE caf\u00e9 re\u0301lation", "\x00",
             TEXT, "Ωmega relation—relations", ""]
    stems = frozenset(stem(w) for w in ("naive", "relation", "cafe", "happiness", "uber", "3d"))
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, tokenize='{FTS_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    db.executemany("INSERT INTO f(rowid, t) VALUES (?, ?)", enumerate(texts))
    stored = [{} for _ in texts]
    for term, row in db.execute("SELECT term, doc FROM v"):
        if term in stems:
            stored[row][term] = stored[row].get(term, 0) + 1
    assert stored[0] == {stem("naive"): 1, stem("relation"): 2}
    assert stem_counts(texts, stems) == stored


def test_quoted_phrases_are_split_from_the_words_and_a_quoted_word_is_a_word() -> None:
    phrases, rest = split_phrases('old "red barn" by the "river" and "  "')
    assert phrases == ["red barn"]
    assert rest.split() == ["old", "by", "the", "river", "and"]
    assert fts_query('old "red barn" "river"') == '"red barn" OR "old" OR "river"'


def test_term_counts_are_the_terms_and_lengths_fts5_stores() -> None:
    """The word index counts every word of every passage in one numpy pass: each text's stems with their counts, and
    its length in words (BM25's document length), as FTS5 stores them. (Where PyStemmer's Porter and FTS5's differ,
    about 0.2% of words, e.g. "ecology" -> "ecologi" / "ecolog", or FTS5 splits a word at a mark it does not count as
    a diacritic, the word index follows :func:`stem` and :func:`words`, as queries and highlighting do. CJK text is
    cut into pairs of letters where FTS5 keeps whole runs: tested apart.)"""
    texts = [TEXT.replace("Straße", "Strasse"), "", "nai\u0308ve relation\x00relation", "The the THE tHe",
             TEXT.upper().replace("STRASSE", ""), "Ωmega relation—relations", "x", "\x00", "İstanbul ﬁnance 3D 3d x_y",
             "a" * 300 + " " + "a" * 300]
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, tokenize='{FTS_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    db.executemany("INSERT INTO f(rowid, t) VALUES (?, ?)", enumerate(texts))
    stored: dict[tuple[int, int], int] = {}
    for term, row in db.execute("SELECT term, doc FROM v"):
        stored[row, term_key(term)] = stored.get((row, term_key(term)), 0) + 1
    counted = term_counts(texts)
    assert dict(zip(zip(counted.texts.tolist(), counted.keys.tolist()), counted.counts.tolist())) == stored
    lengths = [0] * len(texts)
    for (row, _), n in stored.items():
        lengths[row] += n
    assert counted.lengths.tolist() == lengths
    assert term_counts([]).lengths.tolist() == [] and term_counts(["", " , "]).keys.size == 0


def test_term_counts_are_the_stems_of_the_words() -> None:
    texts = [TEXT, "Ecology ecologies ecological", "d\u0361\u0292 wad\u02e0\u0259 µg", TEXT.upper(), *CJK]
    counted = term_counts(texts)
    for i, text in enumerate(texts):
        expected: dict[int, int] = {}
        for word, _, _ in words(text):
            expected[term_key(stem(word))] = expected.get(term_key(stem(word)), 0) + 1
        rows = counted.texts == i
        assert dict(zip(counted.keys[rows].tolist(), counted.counts[rows].tolist())) == expected
        assert counted.lengths[i] == len(words(text))


def test_term_counts_of_a_batch_equal_those_of_each_text_alone() -> None:
    texts = [TEXT, "Relational relation", TEXT.lower(), "happy Happiness", *CJK]
    together = term_counts(texts)
    for i, text in enumerate(texts):
        alone = term_counts([text])
        rows = together.texts == i
        assert together.keys[rows].tolist() == alone.keys.tolist()
        assert together.counts[rows].tolist() == alone.counts.tolist()


def test_cjk_letters_are_words_in_overlapping_pairs() -> None:
    """A CJK run is a word apart from the letters around it, cut into pairs of letters, a lone letter one word; a
    query's pairs are found in a text's, highlighted and counted the same way."""
    assert [w for w, _, _ in words("このグループは")] == ["この", "のグ", "グル", "ルー", "ープ", "プは"]
    assert [w for w, _, _ in words("Python入門 日 3D映画")] == ["Python", "入門", "日", "3D", "映画"]
    assert [w for w, _, _ in words("한국어 문장")] == ["한국", "국어", "문장"]
    stems = frozenset(stem(w) for w, _, _ in words("グループ 東京"))
    text = CJK[0]
    assert [text[a:b] for a, b, _ in matches(text, stems)] == ["グル", "ルー", "ープ", "東京"]
    assert matches(text, stems) == reference(text, stems)
    expected = [{} for _ in CJK]
    for counts, t in zip(expected, CJK):
        for _, _, found in matches(t, stems | {stem("python")}):
            counts[found] = counts.get(found, 0) + 1
    assert stem_counts(CJK, stems | {stem("python")}) == expected
    assert stem_counts(["Python入門 python"], frozenset({stem("python")})) == [{stem("python"): 2}]


def test_the_function_word_parts_of_contractions_are_no_query_words() -> None:
    # a new user's "members who haven't paid" was told that "haven" is in none of the documents
    assert [t.word for t in query_terms("members who haven't paid")] == ["members", "paid"]
    assert [t.word for t in query_terms("I don’t know what won't work")] == ["know", "work"]  # either apostrophe
    assert [t.word for t in query_terms("a safe haven for the Don")] == ["safe", "haven", "Don"]  # words of their own
    # "I'm" searched "m", which a unit ("5 m") holds
    assert [t.word for t in query_terms("I'm sure I\u2019d seen it, i 'm told")] == ["sure", "seen", "told"]
    assert [t.word for t in query_terms("vitamin D and 5 m")] == ["vitamin", "D", "5", "m"]
    # typing "water" passes "wa", the stem of "was": it matched every "was" ("wa (as was)"); "wills" is a word
    assert [t.word for t in query_terms("how often should I wa")] == ["often"]
    assert [t.word for t in query_terms("thi")] == ["thi"]  # nothing else: searched as typed
    assert [t.word for t in query_terms("writing wills")] == ["writing", "wills"]
    assert [t.word for t in query_terms("O'Toole's pub")] == ["O", "Toole", "pub"]  # an apostrophe before no "t"


def test_a_passage_is_placed_on_a_page_or_on_a_slide() -> None:
    from engine.text.pages import page_label

    # a new user's presentation said its bus time was on "p. 3"
    assert page_label("/talks/away_day.PPTX", 3) == "slide 3" and page_label("deck.odp", 2, short=False) == "slide 2"
    assert page_label("tides.pdf", 3) == "p. 3" and page_label("tides.pdf", 3, short=False) == "page 3"
    assert page_label("notes.txt", None) == "" and page_label("tides.pdf", 0) == ""
