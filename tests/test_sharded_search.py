"""A sharded collection without a cluster: shards indexed one after another in this process and searched on
threads rank as one index holding the same documents (engine.cluster)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sharding import assert_ranks_as_one, write_documents

from engine import Index, IndexConfig, Mode
from engine.cluster.collection import Collection
from engine.cluster.indexing import index_collection
from engine.search.like import LikeSource

REPO = Path(__file__).resolve().parent.parent
CONFIG = IndexConfig(workers=0)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(documents, one index of them, a collection of 4 shards of them)."""
    root = tmp_path_factory.mktemp("sharded")
    docs = write_documents(root / "docs")
    with Index(root / "one", config=CONFIG) as index:
        index.add([docs])
    index_collection(root / "four", [docs], 4, config=CONFIG)
    return docs, root / "one", root / "four"


def test_four_shards_rank_as_one_index(built: tuple[Path, Path, Path]) -> None:
    _, one, four = built
    with Index(one, create=False) as single, Collection(four) as sharded:
        assert_ranks_as_one(single, sharded)
        total, parts = single.status(), sharded.status()
        assert (parts.indexed, parts.sentences) == (total.indexed, total.sentences) == (52, total.sentences)
        assert parts.roots == total.roots


def test_a_passage_scores_in_its_shard_what_it_scores_in_one_index(built: tuple[Path, Path, Path]) -> None:
    """BM25 with the collection's statistics: the same score, not only the same order."""
    _, one, four = built
    with Index(one, create=False) as single, Collection(four) as sharded:
        for query in ("Rosa Parks arrested", "river city population", "war army battle"):
            a = single.search(query, mode=Mode.LEXICAL, include_weak=True, explain=False).results
            b = sharded.search(query, mode=Mode.LEXICAL, include_weak=True, explain=False).results
            assert [r.path for r in b] == [r.path for r in a]
            # the 0-100 score is scaled by the top document's evidence, which a shard reports to 4 decimals
            assert [r.score for r in b] == pytest.approx([r.score for r in a], abs=0.11)
            assert [r.explanation.bm25 for r in b] == pytest.approx([r.explanation.bm25 for r in a], rel=1e-12)


def test_related_words_score_in_a_shard_what_they_score_in_one_index(built: tuple[Path, Path, Path]) -> None:
    """Hybrid mode counts the words related to the query's (engine.search.related) by the collection's statistics
    too: the shards ask for those of every query word, since which are key words is known once their counts are
    summed."""
    _, one, four = built
    with Index(one, create=False) as single, Collection(four) as sharded:
        compared = 0
        for query in ("river city population", "church bishop", "linguistics Russian verb"):
            a = {r.path: r.explanation.contributions for r in single.search(query, include_weak=True).results}
            b = {r.path: r.explanation.contributions for r in sharded.search(query, include_weak=True).results}
            for path in a.keys() & b.keys():
                if "words" in a[path] or "words" in b[path]:
                    assert b[path]["words"] == pytest.approx(a[path]["words"], rel=1e-12)
                    compared += 1
        assert compared >= 5


def test_a_shard_holds_the_documents_its_paths_route_to(built: tuple[Path, Path, Path]) -> None:
    from engine.cluster.routing import shard_of

    docs, _, four = built
    for shard in range(4):
        with Index(four / f"shard-{shard:03d}", create=False) as index:
            paths = [f.path for f in index.status(files=True).files]
        assert paths and all(shard_of(p, 4) == shard for p in paths)


def test_explanations_come_from_the_shard_that_holds_the_document(built: tuple[Path, Path, Path]) -> None:
    _, one, four = built
    with Index(one, create=False) as single, Collection(four) as sharded:
        a = single.search("Rosa Parks arrested", k=3).results[0]
        b = sharded.search("Rosa Parks arrested", k=3).results[0]
    assert (b.path, b.sentence, b.context_after) == (a.path, a.sentence, a.context_after)
    # facet chips weigh words by the shard's own statistics: present, not necessarily the same weights
    assert b.facets and b.explanation.facets is not None and b.explanation.lexical_rank == 1


def test_copies_of_a_file_in_different_shards_are_shown_once(tmp_path: Path) -> None:
    from conftest import write_corpus

    from engine.cluster.routing import shard_of

    docs = write_corpus(tmp_path / "docs")
    original = next(docs.rglob("rigel.txt"))
    copy = next(p for p in (docs / f"copy-{i}.txt" for i in range(100)) if shard_of(str(p), 4) != shard_of(
        str(original), 4))
    copy.write_bytes(original.read_bytes())
    with Index(tmp_path / "one", config=CONFIG) as index:
        index.add([docs])
        expected = index.search("blue supergiant star in Orion", mode=Mode.LEXICAL, explain=False).results
    index_collection(tmp_path / "four", [docs], 4, config=CONFIG)
    with Collection(tmp_path / "four") as sharded:
        found = sharded.search("blue supergiant star in Orion", mode=Mode.LEXICAL, explain=False).results
    assert [(r.path, r.duplicates) for r in found] == [(r.path, r.duplicates) for r in expected]
    assert len(found[0].duplicates) == 1


def _quire(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_the_cli_indexes_searches_and_reports_a_collection(built: tuple[Path, Path, Path], tmp_path: Path) -> None:
    docs, one, _ = built
    db = tmp_path / "two"
    done = _quire("index", docs, "--db", db, "--shards", 2, "--workers", 0, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["documents"] == 52
    again = _quire("index", docs, "--db", db, "--workers", 0, "--json")  # the manifest says how many shards
    assert json.loads(again.stdout)["unchanged"] == 52
    found = json.loads(_quire("search", "Rosa Parks arrested", "--db", db, "--mode", "lexical", "--json").stdout)
    with Index(one, create=False) as single:
        expected = [r.path for r in single.search("Rosa Parks arrested", mode="lexical").results]
    assert [r["path"] for r in found["results"]] == expected
    status = json.loads(_quire("status", "--db", db, "--json").stdout)
    assert status["indexed"] == 52 and status["folder"] == str(db)
    wrong = _quire("index", docs, "--db", db, "--shards", 3)
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "holds 2 shards" in wrong.stderr
    missing = _quire("search", "--like", docs / "nowhere.txt", "--db", db)
    assert missing.returncode == 1 and "is not in the index" in missing.stderr


def test_more_like_this_on_a_collection(built: tuple[Path, Path, Path]) -> None:
    docs, one, four = built
    source = sorted(docs.rglob("*.txt"))[7]
    with Index(one, create=False) as single, Collection(four) as sharded:
        expected = single.search_like(LikeSource(str(source)), include_weak=True, explain=False).results
        found = sharded.search_like(LikeSource(str(source)), include_weak=True, explain=False).results
    assert str(source) not in [r.path for r in found]
    assert len({r.path for r in found} & {r.path for r in expected}) >= 0.95 * len(expected)


def test_only_a_filter_no_shard_passes_is_said_to_pass_nothing(built: tuple[Path, Path, Path]) -> None:
    from engine import Filters
    from engine.store.filters import NOTHING_PASSES

    docs, _, four = built
    one_file = docs / "part-0" / "doc-00.txt"  # in one shard: the other three pass nothing through this filter
    with Collection(four) as sharded:
        found = sharded.search("rats", k=5, include_weak=True, within=Filters(folders=(str(one_file),)))
        assert [Path(r.path) for r in found.results] == [one_file] and NOTHING_PASSES not in found.notes
        none = sharded.search("rats", within=Filters(types=("pdf",)))
        assert none.results == () and NOTHING_PASSES in none.notes
