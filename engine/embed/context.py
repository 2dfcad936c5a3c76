"""Short lines are embedded with the text around them in their document.

Why and the measurements: docs/decisions/0001-short-lines-embedded-with-their-section.md.

A heading or one-word line ("Skin.") embedded alone is the vector of its word, so it is the nearest neighbour of
every query about that word, whatever its section is about. Such a line is context, not a passage: its stored vector
is made from its own words and those of the sentences after it in its document (of the sentences before it when the
document ends first), so it says what its section says. Its stored text, and what a search shows, stay its own.

Indexing (both paths: word ids the readers tokenised, texts for the other methods) and re-embedding all go through
:func:`embed_ids` or :func:`encode`, so a sentence gets the same vector however it came to be embedded, and
:func:`fingerprint` names the rule in what an index records, so vectors made without it (or under other constants)
are re-embedded rather than mixed with these. A short line also carries the hash of the sentence its vector mostly
stands for (:meth:`Spans.sources`), so boilerplate and the relevance calibration count copies of vectors, not of
texts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.embed.base import Embedder
from engine.embed.static import StaticEmbedder

log = logging.getLogger(__name__)

# A sentence of fewer words than this is short. Lines of 1-3 words are headings and titles ("History.", "Early
# life.", "Political career."); from 4 words on, headings ("Achilles in Greek philosophy.") and statements ("There is
# no known cure.") mix, and a statement embedded with its neighbours loses some of its own meaning: on the
# Wikipedia bench (docs/decisions/0001) 5 and 6 put the top hit of 43 and 42 of 50 questions in the right article,
# 4 put 44 there, and 3 left more bare headings winning one-word queries.
SHORT_WORDS = 4
# A short sentence takes following sentences until the pooled words reach this many: about one ordinary sentence (a
# Wikipedia sentence has 21.5 words on average; the one after a short line has fewer than 12 in a quarter of cases,
# and then the next one joins), so the heading's own words are one voice among a sentence's and the vector is the
# section's. 8 let more bare headings win one-word queries; 20 lost more title queries.
POOL_WORDS = 12
# At most this many sentences (the short one included) make one vector: a run of headings ("Contents. History.
# Early years.") reaches the text after it, and a vector never spreads over a whole section (2 let more runs of
# headings win on their own words).
MAX_SPAN = 3

# Words of a text for the methods that get texts, not word ids: runs of letters and digits, as
# engine.text.terms (FTS5's unicode61) splits them; the static path counts the word ids it pools.
_WORD = re.compile(r"[^\W_]+")


def rule() -> str:
    """The rule and its constants, as recorded in an index's fingerprint."""
    return f"ctx{SHORT_WORDS}.{POOL_WORDS}.{MAX_SPAN}"


def fingerprint(embedder: Embedder) -> str:
    """What an index records for vectors ``embedder`` made through this module: the method's fingerprint plus the
    rule, so an index embedded before the rule existed, or under other constants, no longer matches."""
    return f"{embedder.fingerprint}+{rule()}"


@dataclass(frozen=True)
class Spans:
    """The sentences each sentence of a batch is embedded from: ``lo[i]:hi[i]`` (``i:i+1`` unless it is short), with
    the word counts they were chosen by."""

    lo: np.ndarray
    hi: np.ndarray
    words: np.ndarray

    @property
    def alone(self) -> bool:
        """Whether every sentence is embedded from itself only."""
        return bool(np.all(self.hi - self.lo == 1))

    def sources(self) -> np.ndarray:
        """For each sentence, the sentence of its span with the most words (the first on ties; itself when alone).

        A short line's vector is mostly that sentence's, so it carries that sentence's hash (engine.index): copies
        of one vector across files are boilerplate however they were made, and the relevance calibration's random
        pairs leave copies out.
        """
        best = self.lo.copy()
        for step in range(1, MAX_SPAN):
            candidate = np.minimum(self.lo + step, self.words.size - 1)
            better = (self.lo + step < self.hi) & (self.words[candidate] > self.words[best])
            best[better] = candidate[better]
        return best


def spans(words: np.ndarray | Sequence[int], doc_sizes: np.ndarray | Sequence[int]) -> Spans:
    """For sentences of consecutive documents, the sentences each is embedded from.

    Parameters:
        words: each sentence's word count, documents in order and each document's sentences in order.
        doc_sizes: sentences per document (they sum to ``len(words)``).

    A sentence with no word stays alone: it has nothing of its own to show, and its zero vector keeps it out of
    semantic results as before.
    """
    words = np.asarray(words, dtype=np.int64)
    sizes = np.asarray(doc_sizes, dtype=np.int64)
    n = words.size
    if int(sizes.sum()) != n:
        raise ValueError(f"documents of {int(sizes.sum())} sentences for {n} word counts")
    lo, hi = np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64)
    short = np.flatnonzero(is_short(words))
    if not short.size:
        return Spans(lo, hi, words)
    doc_end = np.repeat(np.cumsum(sizes), sizes)[short]
    doc_start = doc_end - np.repeat(sizes, sizes)[short]
    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(words, out=cum[1:])
    # forward: the fewest sentences from the short one on whose words reach POOL_WORDS, within its document and cap
    reach = np.searchsorted(cum, cum[short] + POOL_WORDS, side="left")
    end = np.minimum(np.minimum(reach, short + MAX_SPAN), doc_end)
    hi[short] = end
    # backward: where the document ends first (its last lines), the sentences before fill the rest
    lacking = (cum[end] - cum[short] < POOL_WORDS) & (end - short < MAX_SPAN)
    back, back_end = short[lacking], end[lacking]
    start = np.searchsorted(cum, cum[back_end] - POOL_WORDS, side="right") - 1
    lo[back] = np.maximum(np.maximum(np.minimum(start, back), back_end - MAX_SPAN), doc_start[lacking])
    return Spans(lo, hi, words)


def pooled_ids(flat: np.ndarray, offsets: np.ndarray, made: Spans) -> tuple[np.ndarray, np.ndarray]:
    """Each sentence's word ids (CSR) replaced by those of its span, in the same layout.

    A span is a run of neighbouring sentences, so its ids are one slice of ``flat``; the slices are gathered in one
    numpy pass, never a Python step per word or sentence.
    """
    if made.alone:
        return flat, offsets
    starts = offsets[made.lo]
    lengths = offsets[made.hi] - starts
    out = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    gather = np.repeat(starts - out[:-1], lengths) + np.arange(out[-1], dtype=np.int64)
    return flat[gather], out


def pooled_texts(texts: Sequence[str], made: Spans) -> list[str]:
    """Each sentence's text replaced by its span's texts joined with a space (for methods that embed texts)."""
    return [texts[a] if b - a == 1 else " ".join(texts[a:b]) for a, b in zip(made.lo.tolist(), made.hi.tolist())]


def word_counts(texts: Sequence[str]) -> np.ndarray:
    """Words of each text as the methods that embed texts count them (runs of letters and digits)."""
    return np.fromiter((len(_WORD.findall(t)) for t in texts), dtype=np.int64, count=len(texts))


def is_short(words: np.ndarray) -> np.ndarray:
    """Which sentences, given their word counts, are embedded with their neighbours (a sentence without words is not:
    see :func:`spans`)."""
    return (words > 0) & (words < SHORT_WORDS)


def embed_ids(embedder: StaticEmbedder, flat: np.ndarray, offsets: np.ndarray,
              doc_sizes: np.ndarray | Sequence[int]) -> tuple[np.ndarray, Spans]:
    """Stored vectors of whole documents' sentences already tokenised by the static model (CSR word ids), and the
    spans they were made from."""
    made = spans(np.diff(offsets), doc_sizes)
    return embedder.embed_ids(*pooled_ids(flat, offsets, made)), made


def encode(embedder: Embedder, texts: Sequence[str], doc_sizes: np.ndarray | Sequence[int]) -> tuple[np.ndarray, Spans]:
    """Stored vectors of whole documents' sentences (``doc_sizes`` sentences each, in order), and the spans they were
    made from.

    The static model's words are counted and pooled as its tokenizer sees them, exactly as :func:`embed_ids` does
    with the readers' ids; other methods get the joined texts.
    """
    if isinstance(embedder, StaticEmbedder):
        return embed_ids(embedder, *embedder.tokenizer.encode(list(texts)), doc_sizes)
    made = spans(word_counts(texts), doc_sizes)
    return embedder.encode(pooled_texts(texts, made)), made
