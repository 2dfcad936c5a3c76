"""Sentence records from a document: the boilerplate hash ignores case, digits and punctuation, as it always has; a
run of one sentence is kept once and a document is cut at the sentence limit, with the reason (issue 33, item 3)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from engine.filestate import FileState
from engine.ingest.extract import extract, sentence_hash, sentences_of
from engine.ingest.readers.base import Block, Document, Limits


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


def test_a_run_of_one_sentence_is_kept_once() -> None:
    doc = Document(title="t", blocks=(Block("Go now. " * 1000 + "Stop here."), Block("Go now.")), kind="text")
    assert [s.text for s in sentences_of(doc)] == ["Go now.", "Stop here.", "Go now."]


def test_a_document_past_the_sentence_limit_is_indexed_up_to_it(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("".join(f"Sentence number {n} is here.\n\n" for n in range(30)))
    outcome = extract(str(path), Limits(max_sentences=20))
    assert outcome.status == FileState.INDEXED
    assert outcome.reason == outcome.document.reason == "too many sentences: only the first 20 are indexed"
    assert [s.text for s in outcome.document.sentences][-1] == "Sentence number 19 is here."
    exactly = extract(str(path), Limits(max_sentences=30))
    assert (len(exactly.document.sentences), exactly.reason) == (30, None)
