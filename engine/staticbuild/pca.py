"""Step 3 (Sec. 3.2): sentence-level PCA with All-But-The-Top, folded into the word vectors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.embed.static import pool
from engine.embed.wordtok import FIRST_WORD_ID, WordTokenizer


def abtt_drop(dim: int) -> int:
    """r = floor(d / 100) dominant components are discarded (Mu and Viswanath, 2018; r = 3 for a 384-d teacher)."""
    return dim // 100


def sentence_matrix(vectors: np.ndarray, tok: WordTokenizer, texts: Sequence[str]) -> np.ndarray:
    """Each text as the average of its word vectors (texts with no known word are left out)."""
    flat, offsets = tok.encode(texts)
    sums = pool(vectors, flat, offsets)
    lengths = np.diff(offsets)
    keep = lengths > 0
    return sums[keep] / lengths[keep, None]


def fit_sentence_pca(
    vectors: np.ndarray, tok: WordTokenizer, texts: Sequence[str], *, out_dim: int, drop: int
) -> tuple[np.ndarray, np.ndarray]:
    """PCA of the centred sentence matrix; returns (mean X-bar, W) with W the (d, out_dim) block of components
    r+1 .. r+d' (Sec. 3.2). ``drop=0`` is the "no ABTT" ablation."""
    x = sentence_matrix(vectors, tok, texts).astype(np.float64)
    mean = x.mean(axis=0)
    # right singular vectors of the centred matrix = eigenvectors of its covariance, largest first
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    if drop + out_dim > vt.shape[0]:
        raise ValueError(f"cannot keep {out_dim} components after dropping {drop} of {vt.shape[0]}")
    return mean.astype(np.float32), vt[drop : drop + out_dim].T.astype(np.float32)


def fold(vectors: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """E-hat(w) = W^T (E(w) - X-bar), so that averaging the new vectors equals transforming the average."""
    out = np.zeros((vectors.shape[0], components.shape[1]), dtype=np.float32)
    out[FIRST_WORD_ID:] = (vectors[FIRST_WORD_ID:] - mean) @ components
    return out


def pca_sample(word_ids: np.ndarray, offsets: np.ndarray, *, limit: int, seed: int) -> np.ndarray:
    """Indices of sentences for the PCA: one random sentence per word (as the authors' code), at most ``limit``."""
    rng = np.random.default_rng(seed)
    owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    # a random order, then the first sentence seen for each word
    order = rng.permutation(word_ids.size)
    _, first = np.unique(word_ids[order], return_index=True)
    chosen = np.unique(owner[order[first]])
    if chosen.size > limit:
        chosen = np.sort(rng.choice(chosen, size=limit, replace=False))
    return chosen
