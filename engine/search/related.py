"""Words related to a query's, for the word side of hybrid ranking: the vocabulary words whose static vectors lie
nearest each of the query's key words ("rail": railway, railroad, trains; "austria": austrian, vienna, salzburg).

A note that says "The night train to Vienna leaves at 22:10" holds none of the words of "overnight rail journey to
Austria", so the word side gave it nothing and articles holding one of those words ranked above it, though its
meaning ranked first. Each key word brings its nearest words at a share of their similarity, and a passage's BM25
for them is added to its BM25 for the query's own words when hybrid search ranks documents. The gate, the number on
a card and words-only mode still weigh the query's own words alone: a related word makes a document rank higher
among those found, not a query look answered. This is embedding-based query expansion (Kuzi, Shtok and Kurland,
"Query Expansion Using Word Embeddings", CIKM 2016, Section 2: each query term's nearest words in the embedding
space, weighted by their similarity) on the static model's word vectors (docs/decisions/0019-related-words.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.facets.space import FacetSpace
from engine.search.relevance import KEY_WORDS
from engine.text import terms as T

# A word is related when its cosine with a query word is at least this (in the static space "rail" -> "railroad"
# 0.60, "trains" 0.59; "overnight" -> "night" 0.61; below 0.5 come siblings such as "holiday" -> "vacation" 0.48 and
# "rail" -> "train" 0.48)...
SIMILARITY = 0.5
# ...up to this many for each query word...
PER_WORD = 5
# ...each counting this share of its similarity times its BM25 term (docs/decisions/0019-related-words.md).
WEIGHT = 0.5
# Nearest words read for each query word beyond PER_WORD: its own forms ("rail": rail, rails) come first.
SLACK = 6


def related_words(space: FacetSpace, words: Sequence[T.Term], df: Mapping[str, int], key_words: int = KEY_WORDS
                  ) -> dict[str, float]:
    """The stems of the words related to the query's ``words`` (as the index stores them) and the weight of each: the
    query's ``key_words`` rarest words (``df``: passages holding each stem) each bring their PER_WORD nearest words
    of the space's label vocabulary at SIMILARITY or more (words the model does not read as themselves bring none).
    A stem of the query's own or of a stop word is never added; a stem two query words bring keeps the higher
    weight."""
    key = sorted(words, key=lambda t: df.get(t.stem, 0))[:key_words]
    read = [space.read_as(T.fold(t.word)) for t in key]
    # a word the model reads only as a short prefix of it has no neighbours of its own (decision 0018)
    known = [i for i, faithful in read if faithful and space.content[i]]
    if not known:
        return {}
    own = {t.stem for t in words}
    out: dict[str, float] = {}
    # from the table shipped with the model (engine.facets.neighbours); a few more than PER_WORD, since the query
    # word itself and its other forms are among them
    for nearest in space.near(known, top=PER_WORD + SLACK, floor=SIMILARITY):
        added = 0
        for word, similarity in nearest:
            if added == PER_WORD:
                break
            stem = T.stem(word)
            # a related word that stems as a stop word does ("mining" brings "ore", stemmed "or") would be scored in
            # every passage holding "or" (133,203 of the whole corpus's 291,796), for nothing
            if stem in own or stem in T.STOP_STEMS:
                continue  # the query word itself, another form of a query word, or a stop word's stem
            out[stem] = max(out.get(stem, 0.0), WEIGHT * similarity)
            added += 1
    return out
