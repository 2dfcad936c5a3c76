import numpy as np
import pytest

from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer

PIECES = ["[PAD]", "[UNK]", "token", "##ise", "##r", "##s", "x", "##y", "##z", "hello", "world", "naive"]


@pytest.fixture
def tok():
    return WordTokenizer(["the", "hello", "world", "token", "tokenise", "naive", "3"], PIECES)


def words_of(tok, text):
    flat, offsets = tok.encode([text])
    return [tok.words[i - FIRST_WORD_ID] for i in flat[offsets[0] : offsets[1]]]


def test_punctuation_dropped_case_and_accents_folded(tok):
    assert words_of(tok, "Hello, WORLD! naïve...") == ["hello", "world", "naive"]


def test_oov_words_are_trimmed_to_their_longest_known_prefix(tok):
    # tokenisers -> token ##ise ##r ##s: "tokeniser" is unknown, "tokenise" is known
    assert words_of(tok, "tokenisers") == ["tokenise"]
    assert words_of(tok, "tokens") == ["token"]


def test_unresolvable_words_are_skipped(tok):
    assert words_of(tok, "xyz hello") == ["hello"]


def test_csr_layout_for_a_batch(tok):
    flat, offsets = tok.encode(["the world", "", "!!!", "hello 3"])
    assert offsets.tolist() == [0, 2, 2, 2, 4]
    assert flat.dtype == np.int64 and (flat >= FIRST_WORD_ID).all()


def test_encode_raw_aligns_with_pre_tokens(tok):
    text = "Hello, tokenisers!"
    flat, offsets = tok.encode_raw([text])
    assert len(flat) == len(tok.pre_tokens(text)) == 4
