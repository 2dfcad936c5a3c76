"""The reader that tokenises for the static model: the same ids as the embedder, in any process."""

from __future__ import annotations

import pickle

import numpy as np

from engine import embed
from engine.ingest.readers.base import Limits
from engine.ingest.wordids import TokenisingReader

TEXT = (
    "Tokenisers split words at punctuation! Ünïcode naïveté, café-au-lait and zzqxwordsnotinvocab too.\n\n"
    "A second paragraph: 3.14 is not a word, but Dr. Smith's results are."
)


def test_a_reader_sent_to_another_process_tokenises_as_the_embedder(tmp_path):
    embedder = embed.load("static")
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    reader = TokenisingReader(embedder.tokenizer, embedder.path)
    blob = pickle.dumps(reader)
    assert len(blob) < 1000  # the model's path, not its vocabulary, travels with every task
    elsewhere = pickle.loads(blob)
    here, there = reader(str(tmp_path / "a.txt"), Limits()), elsewhere(str(tmp_path / "a.txt"), Limits())
    texts = [s.text for s in here.document.sentences]
    assert len(texts) >= 3 and here.document == there.document
    flat, offsets = embedder.tokenizer.encode(texts)
    for words in (here.words, there.words):
        np.testing.assert_array_equal(words[0], flat)
        np.testing.assert_array_equal(words[1], offsets)
    np.testing.assert_array_equal(embedder.embed_ids(*there.words), embedder.encode(texts))
    nothing = elsewhere(str(tmp_path / "empty.txt"), Limits())
    assert nothing.document is None and nothing.words is None
