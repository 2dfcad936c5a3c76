"""Facets of indexed sentences and of queries, and their compact storage form.

A document sentence's facets cluster the words that co-occur with it: its own words and, at lower weight, those of
the sentences before and after it (the paper's co-occurrence set N_t, Sec. 2.1, is the neighbouring sentences;
including the sentence itself keeps the facets about what the passage says). Stop words are removed and the rest
SIF-weighted, as the paper does for co-occurring words (Sec. 3.1, Appendix C.1).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from engine.facets.nnsc import Clusters, cluster, set_distance
from engine.facets.space import FacetSpace

log = logging.getLogger(__name__)

# Facets per sentence: 3-5 read well as chips; the paper's similarity results use 10 (Table 2), which bench/ compares.
DEFAULT_K = 5
# A neighbouring sentence's words count this much relative to the sentence's own.
NEIGHBOUR_WEIGHT = 0.5
# Co-occurring words kept per sentence, heaviest first. The paper caps them at 30 (Appendix C.1); 20 suffice because
# Eq. 1's L1 term silences light words (docs/decisions/0048-facet-extraction-settings.md).
MAX_CONTEXT_WORDS = 20
# Sentences clustered per numpy pass: bounds the (sentences x words x dim) temporaries to some 30 MB.
CHUNK = 1024
# A facet explaining less than this share of the weighted words is noise, not a facet.
MIN_MASS_SHARE = 0.02
# Queries with at most this many distinct content words borrow words from their top results (see query_facets).
SHORT_QUERY_WORDS = 3
# ... from the sentences of this many top results: enough words for a few facets, few enough to stay on topic.
BORROW_RESULTS = 3


@dataclass(frozen=True)
class FacetSet:
    """Facets of one text: unit ``centres`` (k, dim), heaviest first, and each one's share of the words (``mass``)."""

    centres: np.ndarray
    mass: np.ndarray

    @property
    def k(self) -> int:
        """Number of facets (0 for a text without content words)."""
        return int(self.mass.size)


def empty(dim: int) -> FacetSet:
    """The facets of a text with no content word."""
    return FacetSet(np.zeros((0, dim), np.float32), np.zeros(0, np.float32))


def stacked(facets: Sequence[FacetSet], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Facet sets as one padded batch for the batched solver: centres (B, K, dim) and presence (B, K), 1 = a facet."""
    width = max((f.k for f in facets), default=0) or 1
    centres = np.zeros((len(facets), width, dim), np.float32)
    present = np.zeros((len(facets), width), np.float32)
    for i, f in enumerate(facets):
        centres[i, : f.k], present[i, : f.k] = f.centres, 1.0
    return centres, present


def set_distances(query: FacetSet, facets: Sequence[FacetSet]) -> np.ndarray:
    """SC (Eq. 5) between ``query``'s facets and each set of ``facets`` in one batched solve; NaN where a side has
    no facet (lower is closer)."""
    out = np.full(len(facets), np.nan)
    if not query.k or not facets:
        return out
    centres, present = stacked(facets, query.centres.shape[1])
    n = len(facets)
    sc = set_distance(np.broadcast_to(query.centres, (n, *query.centres.shape)), centres,
                      np.ones((n, query.k), np.float32), present)
    has = present.any(axis=1)
    out[has] = sc[has]
    return out


def context_words(space: FacetSpace, texts: Sequence[str], doc_of: np.ndarray | None = None,
                  max_words: int = MAX_CONTEXT_WORDS, *,
                  ids: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Word ids and weights of each sentence's co-occurrence set, padded: (B, J) ids and (B, J) weights (0 = pad).

    ``doc_of`` gives each sentence's document (consecutive sentences of one document are neighbours); None means
    every text stands alone (queries, benchmark pairs). Each distinct word appears once, at its largest weight.
    ``ids`` are the texts' word ids (``space.ids(texts)``) when the caller has them already: indexing tokenises
    once for the embedder and the facets.
    """
    n = len(texts)
    flat, offsets = ids if ids is not None else space.ids(list(texts))
    owner = np.repeat(np.arange(n), np.diff(offsets))
    weight = space.sif[flat]
    content = weight > 0  # stop words weigh 0: drop them before copying words to the neighbours
    owner, flat, weight = owner[content], flat[content], weight[content]
    targets, word_ids, weights = [owner], [flat], [weight]  # own words first (see below)
    if doc_of is not None and n > 1:
        doc_of = np.asarray(doc_of)
        for shift in (1, -1):  # words of sentence i join sentence i + shift's context
            neighbour = owner + shift
            ok = (neighbour >= 0) & (neighbour < n)
            ok[ok] = doc_of[neighbour[ok]] == doc_of[owner[ok]]
            targets.append(neighbour[ok])
            word_ids.append(flat[ok])
            weights.append(weight[ok] * NEIGHBOUR_WEIGHT)
    return _padded(n, np.concatenate(targets), np.concatenate(word_ids), np.concatenate(weights), space.tokenizer.size,
                   max_words)


def _padded(n: int, target: np.ndarray, word: np.ndarray, weight: np.ndarray, vocabulary: int,
            max_words: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, max_words) word ids and weights from (text, word id, weight) triples, padded with weight 0.

    Always max_words wide, however many words the texts have: the solver's sums then run over the same padded length
    for a text whatever batch it is in, so its facets are the same to the bit. Indexing clusters the documents each
    reader task happens to hold (``engine.indexing.prepare``); with the batch's own width, a sentence's stored facets
    differed in their last bits between a run in one process and one with a reader pool. One entry per (text, word)
    at its largest weight. Callers list a word's copies heaviest first: a copy weighs
    the word's SIF weight times 1 (the text's own words) or NEIGHBOUR_WEIGHT (borrowed ones), and own words come
    first; np.unique's first indices (a stable sort) pick exactly those, ordered by (text, word).
    """
    _, first = np.unique(target.astype(np.int64) * vocabulary + word, return_index=True)
    target, word, weight = target[first], word[first], weight[first]
    # then the heaviest max_words per text, by one stable sort on text x 4 - weight (weights lie in (0, 1], and
    # float64 holds both parts exactly), which breaks weight ties by word id
    order = np.argsort(target * 4.0 - weight, kind="stable")
    target, word, weight = target[order], word[order], weight[order]
    starts = np.searchsorted(target, np.arange(n))
    slot = np.arange(target.size) - starts[target]
    keep = slot < max_words
    width = max_words
    out_ids = np.zeros((n, width), dtype=np.int64)
    out_weights = np.zeros((n, width), dtype=np.float32)
    out_ids[target[keep], slot[keep]] = word[keep]
    out_weights[target[keep], slot[keep]] = weight[keep]
    return out_ids, out_weights


@dataclass(frozen=True)
class FacetBatch:
    """Facets of many texts as arrays: ``clusters`` over each text's context words ``ids`` (B, J), of which the
    first ``lengths[i]`` are real (the rest padding); ``mass`` (B, K) shares; text ``i`` has ``counts[i]`` facets,
    its first rows (the rest are below MIN_MASS_SHARE: noise, not facets)."""

    clusters: Clusters
    ids: np.ndarray
    lengths: np.ndarray
    mass: np.ndarray
    counts: np.ndarray

    @property
    def centres(self) -> np.ndarray:
        """(B, K, E) unit centres, heaviest first."""
        return self.clusters.centres

    def sets(self) -> list[FacetSet]:
        """One :class:`FacetSet` per text."""
        centres = self.centres
        return [FacetSet(centres[i, :c], self.mass[i, :c]) for i, c in enumerate(self.counts.tolist())]

    def packed(self) -> list[tuple[int, bytes, bytes, bytes]]:
        """Each text's facets in storage form: (k, words, mixtures, mass).

        ``words`` are the context words' ids (int32), ``mixtures`` the k x words float16 coefficients that make each
        centre from those words' unit vectors, ``mass`` k float32 shares. Some 300 bytes for 5 facets of 20 words,
        where the centres themselves as int8 took 1,300: facets were most of an index's database, and writing them
        a large part of indexing's disk time. The centres come back exactly up to float16 rounding.
        """
        _, k, j = self.clusters.mix.shape
        words = np.where(self.counts > 0, self.lengths, 0)
        real = np.arange(j) < words[:, None]  # (B, J)
        kept = (np.arange(k) < self.counts[:, None])[:, :, None] & real[:, None, :]  # (B, K, J)
        # one bytes object per array, sliced per text: a numpy slice and tobytes() per text costs more than the
        # packing (docs/decisions/0048-facet-extraction-settings.md)
        ids = self.ids.astype(np.int32)[real].tobytes()
        mixtures = self.clusters.mix.astype(np.float16)[kept].tobytes()
        mass = self.mass.astype(np.float32, copy=False).tobytes()
        id_end = np.cumsum(4 * words).tolist()
        mix_end = np.cumsum(2 * words * self.counts).tolist()
        out, id_start, mix_start = [], 0, 0
        for i, c in enumerate(self.counts.tolist()):
            f = 4 * i * k  # byte offset of text i's masses
            out.append((c, ids[id_start : id_end[i]], mixtures[mix_start : mix_end[i]], mass[f : f + 4 * c]))
            id_start, mix_start = id_end[i], mix_end[i]
        return out


def facet_batches(space: FacetSpace, ids: np.ndarray, weights: np.ndarray, k: int = DEFAULT_K) -> Iterator[FacetBatch]:
    """Cluster each row's weighted words into at most ``k`` facets (NNSC, Eq. 1), ``CHUNK`` rows per numpy pass."""
    for start in range(0, ids.shape[0], CHUNK):
        chunk_ids, chunk_weights = ids[start : start + CHUNK], weights[start : start + CHUNK]
        result = cluster(space.unit[chunk_ids], chunk_weights, k)
        total = result.mass.sum(axis=1, keepdims=True)
        share = np.divide(result.mass, total, out=np.zeros_like(result.mass), where=total > 0)
        lengths = (chunk_weights > 0).sum(axis=1)  # real words come first in each row (``_padded``)
        yield FacetBatch(result, chunk_ids, lengths, share, (share >= MIN_MASS_SHARE).sum(axis=1))


def facets_of_words(space: FacetSpace, ids: np.ndarray, weights: np.ndarray, k: int = DEFAULT_K) -> list[FacetSet]:
    """:func:`facet_batches` as one :class:`FacetSet` per row."""
    return [f for batch in facet_batches(space, ids, weights, k) for f in batch.sets()]


def document_facets(space: FacetSpace, texts: Sequence[str], doc_of: Sequence[int] | np.ndarray,
                    k: int = DEFAULT_K) -> list[FacetSet]:
    """Facets of consecutive sentences, ``doc_of[i]`` naming sentence i's document (see :func:`context_words`)."""
    if not texts:
        return []
    ids, weights = context_words(space, texts, np.asarray(doc_of))
    return facets_of_words(space, ids, weights, k)


def text_facets(space: FacetSpace, texts: Sequence[str], k: int = DEFAULT_K) -> list[FacetSet]:
    """Facets of texts that stand alone (queries, benchmark sentences): their own content words only."""
    if not texts:
        return []
    ids, weights = context_words(space, texts)
    return facets_of_words(space, ids, weights, k)


def query_facets(space: FacetSpace, query: str, borrowed: Sequence[str] = (), k: int = DEFAULT_K) -> FacetSet:
    """Facets of a query, whose co-occurring words are unknown.

    A short query (at most SHORT_QUERY_WORDS distinct content words) is too thin to have facets of its own:
    "hospital appointments" gives at most two, one per word. As the paper's clustering baseline clusters the words
    observed around a text (Sec. 1, Appendix B.2), such a query borrows the words of ``borrowed``, the top results'
    sentences, as its neighbours (at NEIGHBOUR_WEIGHT, like a sentence's neighbours at index time). Longer queries
    keep their own words. The query's words are listed first, so each keeps its own full weight.
    """
    flat, offsets = space.ids([query, *borrowed])
    weight = space.sif[flat]
    own = int(offsets[1])
    content = np.unique(flat[:own][weight[:own] > 0])
    if not borrowed or content.size == 0 or content.size > SHORT_QUERY_WORDS:
        return text_facets(space, [query], k)[0]
    weight = weight.copy()
    weight[own:] *= NEIGHBOUR_WEIGHT
    keep = weight > 0
    ids, weights = _padded(1, np.zeros(int(keep.sum()), np.int64), flat[keep], weight[keep], space.tokenizer.size,
                           MAX_CONTEXT_WORDS)
    return facets_of_words(space, ids, weights, k)[0]


# -- storage ------------------------------------------------------------------------------------------------------
def packed_document_facets(space: FacetSpace, texts: Sequence[str], doc_of: Sequence[int] | np.ndarray,
                           k: int = DEFAULT_K, *,
                           ids: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[int, bytes, bytes, bytes]]:
    """:func:`document_facets` in storage form (:meth:`FacetBatch.packed`), one row per text; ``ids`` as in
    :func:`context_words`."""
    words, weights = context_words(space, texts, np.asarray(doc_of), ids=ids)
    return [row for batch in facet_batches(space, words, weights, k) for row in batch.packed()]


def unpack(k: int, words: bytes, mixtures: bytes, mass: bytes, space: FacetSpace) -> FacetSet:
    """Inverse of :meth:`FacetBatch.packed`: the centres rebuilt from ``space``'s unit word vectors (and
    renormalised after float16 rounding)."""
    if k == 0:
        return empty(space.dim)
    ids = np.frombuffer(words, dtype=np.int32)
    mix = np.frombuffer(mixtures, dtype=np.float16).reshape(k, ids.size).astype(np.float32)
    rows = mix @ space.unit[ids]
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return FacetSet(rows, np.frombuffer(mass, dtype=np.float32).copy())
