"""The app shows a ranking first and explains it afterwards: ``Index.explain`` must give exactly what a search with
explanations gives, and leave alone a result whose document changed in between."""

from __future__ import annotations

from dataclasses import replace

from engine import Index


def test_explain_afterwards_equals_explaining_during_the_search(corpus, index_dir):
    with Index(index_dir) as index:
        index.add([corpus])
        for query in ("porpoises hunting with echolocation", "booking a doctor", "water"):
            full = index.search(query, explain=True)
            bare = index.search(query, explain=False)
            assert [r.path for r in bare.results] == [r.path for r in full.results]
            assert all(r.facets == () and r.context_before == r.context_after == () for r in bare.results)
            assert index.explain(query, bare.results) == list(full.results)
            assert any(r.facets for r in full.results)


def test_a_result_from_a_changed_document_comes_back_unexplained(corpus, index_dir):
    with Index(index_dir) as index:
        index.add([corpus])
        bare = index.search("porpoises hunting with echolocation", explain=False).results
        stale = replace(bare[0], sentence="A sentence the document no longer has.")
        explained = index.explain("porpoises", [stale, *bare[1:]])
        assert explained[0] is stale
        assert explained[1:] == index.explain("porpoises", bare[1:])
