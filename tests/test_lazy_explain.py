"""The app shows a ranking first and explains it afterwards: ``Index.explain`` must give exactly what a search with
explanations gives, and leave alone a result whose document changed in between."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

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
        changed = Path(bare[0].path)
        changed.write_text(changed.read_text(encoding="utf-8") + "\n\nA sentence the document did not have.\n",
                           encoding="utf-8")
        index.add([corpus])  # its sentences are written again, under new ids
        explained = index.explain("porpoises", bare)
        assert explained[0] is bare[0]
        assert explained[1:] == index.explain("porpoises", bare[1:])


def test_a_result_names_its_sentence_and_one_no_search_made_comes_back_as_it_was(corpus, index_dir):
    with Index(index_dir) as index:
        index.add([corpus])
        bare = index.search("porpoises hunting with echolocation", explain=False).results
        rows = index.store.sentences.by_ids([r.sentence_id for r in bare])
        assert [(rows[r.sentence_id].text, rows[r.sentence_id].ordinal) for r in bare] == \
            [(r.sentence, r.ordinal) for r in bare]
        assert all("sentence_id" not in r.to_json() for r in bare)
        unnamed = replace(bare[0], sentence_id=None)
        assert index.explain("porpoises", [unnamed])[0] is unnamed
