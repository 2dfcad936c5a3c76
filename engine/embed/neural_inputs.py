"""Micro-tuning inputs of the neural method: text to token chunks, and the periodic masking blueprints.

Everything here is numpy and the tokenizer; torch is not needed, so the masking can be tested and reused (the head
fitting script masks its training sentences the same way) without a model.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from engine.text.sentences import split_sentences

# Sec. 2: "a mix of the simplest masking blueprints [(2, 1), (1, 1), (1, 2), (1, 3)]"; (k, m) keeps k tokens, then
# masks m, periodically.
BLUEPRINTS: tuple[tuple[int, int], ...] = ((2, 1), (1, 1), (1, 2), (1, 3))


@lru_cache(maxsize=1024)
def _mask_rows(n_tokens: int, blueprints: tuple[tuple[int, int], ...]) -> np.ndarray:
    rows = []
    j = np.arange(n_tokens)
    for keep, mask in blueprints:
        period = keep + mask
        shifts = np.arange(min(period, n_tokens))[:, None]
        rows.append((j[None, :] - shifts) % period >= keep)
    out = np.concatenate(rows) if rows else np.zeros((0, n_tokens), dtype=bool)
    out.flags.writeable = False
    return out


def blueprint_masks(n_tokens: int, blueprints: Sequence[tuple[int, int]] = BLUEPRINTS, *,
                    drop_unmasked: bool = True) -> np.ndarray:
    """(inputs, n_tokens) bool, True where a token is masked: Fig. 10 of the paper, row for row.

    For each blueprint (k, m) with period P = k + m and each shift s < min(P, n), token j is masked when
    (j - s) % P >= k. Rows with nothing masked teach nothing (the loss has no term) and are dropped, as in the
    authors' code; a one-token text would then have no input at all, so it gets the single input that masks its one
    token instead (the blueprints never mask it: every shift keeps position 0).
    """
    rows = _mask_rows(n_tokens, tuple(map(tuple, blueprints)))
    if not drop_unmasked:
        return rows
    rows = rows[rows.any(axis=1)]
    if len(rows) == 0 and n_tokens > 0:
        return np.ones((1, n_tokens), dtype=bool)
    return rows


@lru_cache(maxsize=4096)
def masked_positions(n_tokens: int, blueprints: tuple[tuple[int, int], ...] = BLUEPRINTS) -> int:
    """How many masked positions (loss terms, each a vocabulary-sized row of logits) a text of ``n_tokens`` brings to
    micro-tuning: what its memory and time follow."""
    return int(blueprint_masks(n_tokens, blueprints).sum())


def normalise_text(text: str) -> str:
    """NFKD, as the authors' code does before tokenising (accents become separate marks the vocabulary knows)."""
    return unicodedata.normalize("NFKD", text)


def token_chunks(text: str, tokenize: Callable[[str], list[int]], max_tokens: int) -> list[list[int]]:
    """Token ids of ``text`` in chunks of whole sentences that fit ``max_tokens`` (Fig. 8: "each text chunk consists
    of max number of sentences fitting input size"); a sentence longer than that is cut into pieces.

    ``tokenize`` returns ids without special tokens. Most indexed units are one sentence, so the whole text is
    tokenised first and split only when it does not fit (word-piece tokenisation does not cross whitespace, so the
    two ways give the same tokens).
    """
    text = normalise_text(text)
    whole = tokenize(text)
    if len(whole) <= max_tokens:
        return [whole] if whole else []
    chunks: list[list[int]] = []
    current: list[int] = []
    for sentence in split_sentences(text):
        ids = tokenize(sentence)
        pieces = [ids[i:i + max_tokens] for i in range(0, len(ids), max_tokens)]
        for piece in pieces:
            if current and len(current) + len(piece) > max_tokens:
                chunks.append(current)
                current = []
            current = current + piece
    if current:
        chunks.append(current)
    return chunks
