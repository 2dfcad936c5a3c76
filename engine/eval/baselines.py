"""Baselines quire is compared against, computed here each run: BM25 (bm25s) and model2vec ``distill`` of the
bundled teacher. Both rank whole documents (title + text), the usual BEIR setup, outside the product.

bm25s and model2vec are imported inside the functions: they belong to the ``bench`` extra, not to the engine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from engine.errors import MethodUnavailableError
from engine.eval.datasets import Collection
from engine.eval.intrinsic import unit_rows
from engine.eval.product import DEPTH

log = logging.getLogger(__name__)

# BM25 parameters of the reference numbers in docs/benchmarks.md (bm25s defaults, Lucene-style IDF).
BM25_K1 = 0.9
BM25_B = 0.4
# model2vec's recommended output width; the reference row (docs/benchmarks.md) uses it.
MODEL2VEC_PCA_DIMS = 256


def _document_texts(collection: Collection) -> tuple[list[str], list[str]]:
    ids = list(collection.documents)
    return ids, [f"{title} {text}".strip() for title, text in collection.documents.values()]


def bm25_rankings(collection: Collection, queries: Sequence[str], *, depth: int = DEPTH) -> dict[str, list[str]]:
    """Top ``depth`` documents per query by BM25 (k1 0.9, b 0.4, English stopwords, no stemming)."""
    try:
        import bm25s
    except ImportError as e:
        raise MethodUnavailableError("the BM25 baseline needs bm25s: pip install -e '.[bench]'") from e
    ids, texts = _document_texts(collection)
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    query_tokens = bm25s.tokenize([collection.queries[q] for q in queries], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(query_tokens, k=min(depth, len(ids)), show_progress=False, n_threads=1)
    # bm25s pads with arbitrary zero-score documents when fewer match; a document that matched nothing is not ranked
    return {q: [ids[d] for d, s in zip(row, score_row) if s > 0] for q, row, score_row in zip(queries, found, scores)}


def dense_rankings(encode: Callable[[Sequence[str]], np.ndarray], collection: Collection, queries: Sequence[str], *,
                   depth: int = DEPTH) -> dict[str, list[str]]:
    """Top ``depth`` documents per query by cosine between whole-document and query embeddings."""
    ids, texts = _document_texts(collection)
    docs = unit_rows(encode(texts))
    sims = unit_rows(encode([collection.queries[q] for q in queries])) @ docs.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :depth]
    return {q: [ids[d] for d in row] for q, row in zip(queries, top.tolist())}


def model2vec_distill() -> Callable[[Sequence[str]], np.ndarray]:
    """model2vec ``distill`` of the bundled all-MiniLM-L6-v2 (PCA 256), built here from the local teacher folder."""
    try:
        from model2vec.distill import distill

        from engine.embed.sbert import bundled_model_path
    except ImportError as e:
        raise MethodUnavailableError(
            f"the model2vec baseline needs model2vec[distill] and the bundled teacher: pip install -e '.[bench]' ({e})"
        ) from e
    model = distill(model_name=str(bundled_model_path()), pca_dims=MODEL2VEC_PCA_DIMS)
    return lambda texts: np.asarray(model.encode(list(texts), show_progress_bar=False), dtype=np.float32)

