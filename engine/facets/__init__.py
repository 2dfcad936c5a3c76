"""Multi-facet explanations (Chang, Agrawal and McCallum, "Extending Multi-Sense Word Embedding to Phrases and
Sentences for Unsupervised Semantic Applications", AAAI 2021; Sec. 2).

A sentence's facets are K cluster centres of the words around it, found by non-negative sparse coding (Eq. 1) in the
static model's word-vector space. They explain results: which query facets met which passage facets, how well the
passage covers each query word (Eq. 7), which passage words matter (Eq. 6), and which word pairs carry the cosine.

Submodules: ``nnsc`` (the solver), ``space`` (word vectors, stop words, SIF weights, labels), ``extract`` (facets of
sentences and queries, their storage format), ``explain`` (per-result explanations), ``rerank`` (re-ranking by the
set distance SC, Eq. 5), ``service`` (facets written while indexing, read for results).
"""
