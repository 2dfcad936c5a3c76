"""How well a query's words line up with a sentence's, in the static model's word space: the relevance gate's
evidence that a sentence says what the query asks, beside the cosine of their pooled vectors and the words they share.

Each content word of one text is matched to its most similar content word of the other (greedy matching), the
similarities weighted by the words' SIF weights (``engine.facets.space``): recall over the query's words, precision
over the sentence's, and their harmonic mean F. This is BERTScore's matching with importance weighting (Zhang et al.,
"BERTScore: Evaluating Text Generation with BERT", ICLR 2020, Section 3) on static word vectors instead of
contextual ones. A sentence that shares one phrase with an unrelated query aligns badly both ways (its other words
match nothing of the query, and the query's nothing of it); a paraphrase that changes most words aligns well
(docs/decisions/0016-word-alignment-in-the-gate.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.facets.space import FacetSpace


def content_words(space: FacetSpace, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct content words of each of ``texts`` as the static model pools them (stop words and words it cannot
    resolve left out): (text index, word id) pairs, grouped by text in order."""
    flat, offsets = space.ids(list(texts))
    owner = np.repeat(np.arange(len(texts)), np.diff(offsets))
    content = space.content[flat]
    size = space.content.size
    # one key per (text, word): np.unique drops repeated words and sorts the pairs by text
    keys = np.unique(owner[content] * size + flat[content])
    return keys // size, keys % size


def alignment_f(space: FacetSpace, query: str, sentences: Sequence[str]) -> np.ndarray:
    """The F of the query's alignment with each of ``sentences`` (0 to 1; 0 where either text has no content word
    the model knows), all sentences in one matrix product."""
    out = np.zeros(len(sentences))
    query_ids = content_words(space, [query])[1]
    owner, words = content_words(space, sentences)
    if query_ids.size == 0 or words.size == 0:
        return out
    kept, starts = np.unique(owner, return_index=True)  # the sentences with content words, where each starts
    # cosines of unit vectors, below zero counted as no match at all (as BERTScore's greedy matching of similar words);
    # each distinct word's vector read once: a query's ~200 candidate sentences hold ~4,000 words, many repeated
    distinct, inverse = np.unique(words, return_inverse=True)
    sims = np.clip(space.unit[query_ids] @ space.unit[distinct].T, 0.0, 1.0).astype(np.float64)[:, inverse]
    query_weights, weights = space.sif[query_ids].astype(np.float64), space.sif[words].astype(np.float64)
    # recall: each query word's best match within each sentence; precision: each sentence word's best query word
    recall = query_weights @ np.maximum.reduceat(sims, starts, axis=1) / query_weights.sum()
    precision = np.add.reduceat(weights * sims.max(axis=0), starts) / np.add.reduceat(weights, starts)
    both = recall + precision
    out[kept] = np.divide(2 * recall * precision, both, out=np.zeros_like(both), where=both > 0)
    return out
