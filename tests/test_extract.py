"""Sentence records from a document: the boilerplate hash ignores case, digits and punctuation, as it always has."""

from __future__ import annotations

import hashlib
import re

from engine.ingest.extract import sentence_hash, sentences_of
from engine.ingest.readers.base import Block, Document


def _regex_hash(text: str) -> int:
    """The hash as first defined (a regex over runs of junk): stored hashes of existing indexes must still match."""
    key = re.sub(r"[\W\d_]+", " ", text.lower()).strip()
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def test_sentence_hash_is_the_regex_definition() -> None:
    for text in ["Page 12 of 40", "page 3 of 7!", "  Ünïcode—dash_and__under 1.5 ", "", "...", "İstanbul ǅ ß", "a\tb\u00a0c\u2028d"]:
        assert sentence_hash(text) == _regex_hash(text), text
    assert sentence_hash("Page 12 of 40") == sentence_hash("PAGE 3 OF 7.")


def test_sentence_text_has_its_inner_whitespace_collapsed() -> None:
    doc = Document(blocks=(Block("First  line\nwrapped\there.\u00a0Second one."),), title="t", kind="text")
    assert [s.text for s in sentences_of(doc)] == ["First line wrapped here.", "Second one."]
