"""Training text: sentences from WikiExtractor dumps (``.gz`` or plain) or from plain text files."""

from __future__ import annotations

import gzip
import hashlib
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

from engine.text.sentences import split_sentences

# The paper extracts and distils on short sentences: long ones widen the gap between what the teacher (word order,
# context) and the student (a bag of words) can see (Sec. 4.1, footnote 6).
MIN_WORDS = 5
MAX_WORDS = 40


def corpus_files(sources: Sequence[Path]) -> list[Path]:
    """Every file under the given files and folders, sorted so a build is reproducible."""
    found: list[Path] = []
    for source in sources:
        if source.is_dir():
            found.extend(p for p in sorted(source.rglob("*")) if p.is_file())
        else:
            found.append(source)
    return found


def names(files: Sequence[Path]) -> str:
    """The files by folder and name, one per line: what work-folder keys hold of a corpus, so a corpus moved elsewhere
    keeps its keys."""
    return "\n".join("/".join(path.parts[-2:]) for path in files)


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open("r", encoding="utf-8", errors="replace")


def iter_paragraphs(path: Path) -> Iterator[str]:
    """Paragraphs of one file: WikiExtractor ``<doc>`` markup and article titles are skipped."""
    with _open_text(path) as handle:
        title_next = False
        for line in handle:
            line = line.strip()
            if line.startswith("<doc "):
                title_next = True
                continue
            if title_next:
                title_next = False
                continue
            if line and not line.startswith("</doc>"):
                yield line


def all_paragraphs(sources: Sequence[Path]) -> Iterator[str]:
    """Every paragraph of every corpus file, in file order: what word counts are made from."""
    for path in corpus_files(sources):
        yield from iter_paragraphs(path)


def iter_sentences(sources: Sequence[Path], *, seed: int = 0) -> Iterator[str]:
    """Distinct short sentences from the corpus, files visited in a seeded random order.

    The order is shuffled so that a budget-limited pass samples the whole corpus rather than articles starting
    with "A".
    """
    files = corpus_files(sources)
    random.Random(seed).shuffle(files)
    seen: set[bytes] = set()
    for path in files:
        for paragraph in iter_paragraphs(path):
            for sentence in split_sentences(paragraph):
                n_words = len(sentence.split())
                if not MIN_WORDS <= n_words <= MAX_WORDS:
                    continue
                key = hashlib.blake2b(sentence.encode("utf-8"), digest_size=8).digest()
                if key not in seen:
                    seen.add(key)
                    yield sentence
