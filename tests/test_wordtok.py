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


def reference_encode(tok, texts):
    """The Rust normaliser and pre-tokeniser on every text, unknown words resolved one by one: what encode must match."""
    flat, offsets = tok.encode_raw(texts)
    out = []
    for i, text in enumerate(texts):
        words = tok.pre_tokens(text)
        ids = [w if w != 0 else tok.resolve_oov(words[j]) for j, w in enumerate(flat[offsets[i] : offsets[i + 1]])]
        out.append([w for w in ids if w >= FIRST_WORD_ID])
    return out


def varied_texts():
    """Ordinary prose, accents, CJK, odd whitespace, control and format characters, Unicode punctuation."""
    rng = np.random.default_rng(3)
    alphabet = list("aehlnortwxyzHELLO .,;!?'\"-—“”…3") + ["é", "Ñ", "ï", "中", "文", "\u200b", "\u00ad", "\x00",
                                                         "\ufffd", "\t", "\n", "\u2028", "\u3000", "ß", "İ", "Σ", "ﬁ"]
    texts = ["Hello, WORLD! naïve...", "tokenisers—token’s “hello” world", "中文hello 3D x-y", ""]
    texts += ["".join(rng.choice(alphabet, size=int(rng.integers(0, 40)))) for _ in range(300)]
    return texts


def test_encode_matches_the_rust_tokeniser_with_resolved_unknown_words(tok):
    texts = varied_texts()
    flat, offsets = tok.encode(texts)
    got = [flat[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))]
    assert got == reference_encode(tok, texts)
    assert tok.encode(texts)[0].tolist() == flat.tolist()  # again, from the caches


def test_id_of_resolves_unknown_words_and_punctuation(tok):
    assert tok.id_of("hello") == tok.word_id("hello")
    assert tok.id_of("tokenisers") == tok.word_id("tokenise")
    assert tok.id_of("—") == tok.id_of("xyz") == 1  # punctuation and words with no known prefix: not words
