from engine.ingest.sentences import MAX_SENTENCE_CHARS, split_sentences, split_spans


def test_abbreviations_decimals_and_quotes_do_not_split():
    text = 'Dr. Smith paid $3.50 for it! "Really?" she asked. See No. 5 for details.'
    assert split_sentences(text) == ["Dr. Smith paid $3.50 for it!", '"Really?" she asked.', "See No. 5 for details."]


def test_initials_stay_with_the_name():
    assert split_sentences("The book by J. R. R. Tolkien sold well. It was long.") == [
        "The book by J. R. R. Tolkien sold well.",
        "It was long.",
    ]


def test_offsets_point_into_the_original_text():
    text = "  First one.   Second one!\n\nThird   one?"
    spans = split_spans(text)
    assert [text[a:b] for a, b in spans] == ["First one.", "Second one!", "Third   one?"]


def test_blank_lines_and_headings_end_sentences_but_wrapped_lines_do_not():
    text = (
        "Introduction\nThe method has hard\nwrapped lines across\nseveral lines. Done.\n\nNext paragraph without stop"
    )
    assert split_sentences(text) == [
        "Introduction",
        "The method has hard\nwrapped lines across\nseveral lines.",
        "Done.",
        "Next paragraph without stop",
    ]


def test_long_runs_are_cut_and_symbol_only_runs_dropped():
    text = ("word " * 400) + "\n\n---- ==== ****"
    parts = split_sentences(text)
    assert all(len(p) <= MAX_SENTENCE_CHARS for p in parts)
    assert "".join(parts).replace(" ", "") == "word" * 400


def test_empty_and_whitespace_text():
    assert split_spans("") == []
    assert split_spans(" \n\n \t") == []
