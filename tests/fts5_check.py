"""A check several test modules share: the word index ranks passages exactly as FTS5's bm25() does."""

from __future__ import annotations

import pytest

from engine.store.database import Store
from engine.text import terms


def assert_word_index_matches_fts5(store: Store, query: str, limit: int = 1000) -> list[tuple[int, int, float]]:
    """``query``'s words ranked from the word index equal FTS5's ranking of them OR-ed: the same passages and
    documents in the same order (ties by id), the same scores; and the same document frequencies. Returns the rows."""
    words = terms.query_terms(query)
    stems = [t.stem for t in words]
    match = terms.fts_expression([], words)
    exact = sorted(store.words.fts_bm25(match, limit), key=lambda r: (-r[2], r[0])) if match else []
    ranked = store.words.bm25(stems, limit)
    assert [(p, d) for p, d, _ in ranked] == [(p, d) for p, d, _ in exact], query
    assert [s for _, _, s in ranked] == pytest.approx([s for _, _, s in exact], rel=1e-12), query
    vocab = dict(store.db.execute(
        f"SELECT term, doc FROM passages_vocab WHERE term IN ({','.join('?' * len(stems))})", stems).fetchall())
    assert store.words.frequencies(stems) == {s: n for s, n in vocab.items() if n}, query
    return ranked
