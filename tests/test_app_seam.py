"""One seam between the edges and the engine (issue 59): ``app/`` imports only the names ``engine/__init__.py`` exports,
and what it searches, one index or a sharded collection, meets one Protocol (docs/decisions/0052-one-seam-to-the-app.md).

The imports are read from the source with ``ast``, at module level and inside functions alike, so nothing is imported
to check them and a lazy import cannot slip past.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from conftest import write_corpus

import engine
from engine import Index, IndexConfig, Mode, Searchable, index_collection, open_index
from engine.cluster.collection import Collection
from engine.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
CONFIG = IndexConfig(workers=0)


def reaches_past_the_seam(source: str) -> list[str]:
    """The imports in ``source`` that name an engine submodule, or a name ``engine`` does not export."""
    public = set(engine.__all__)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("engine.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("engine."):
                found.append(f"from {node.module} import ...")
            elif node.module == "engine":
                found += [f"from engine import {a.name}" for a in node.names if a.name not in public]
    return found


def test_app_imports_only_the_engines_public_names() -> None:
    offenders = [f"{path.relative_to(REPO)}: {line}"
                 for path in sorted((REPO / "app").rglob("*.py"))
                 for line in reaches_past_the_seam(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_check_sees_an_import_past_the_seam() -> None:
    source = ("from engine import Index, embed\n"
              "def f():\n    from engine.cluster import manifest\n    import engine.heap\n")
    assert reaches_past_the_seam(source) == ["from engine import embed", "from engine.cluster import ...",
                                             "import engine.heap"]


def _checked_names() -> set[str]:
    """The names ``engine/__init__.py`` imports for the type checker."""
    tree = ast.parse((REPO / "engine" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {a.asname or a.name for node in ast.walk(guarded) if isinstance(node, ast.ImportFrom) for a in node.names}


def test_every_public_name_has_one_home_and_resolves() -> None:
    """``__all__``, the lazy homes and the type checker's imports name the same things, and each one loads."""
    names = set(engine.__all__) - {"__version__"}
    assert names == set(engine._HOMES) == _checked_names()
    for name in sorted(names):
        assert getattr(engine, name) is not None, name
    with pytest.raises(AttributeError):
        engine.no_such_name  # noqa: B018


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(one index of the test corpus, a collection of 2 shards of it)."""
    root = tmp_path_factory.mktemp("seam")
    docs = write_corpus(root / "docs")
    with Index(root / "one", config=CONFIG) as index:
        index.add([docs])
    index_collection(root / "two", [docs], 2, config=CONFIG)
    return root / "one", root / "two"


def _takes_what_the_protocol_gives(cls: type, name: str) -> list[str]:
    """Where ``cls.name`` cannot be called as :class:`Searchable` says: a parameter missing, of another kind, or
    with another default (one the Protocol leaves as ``...`` may be any)."""
    wanted = inspect.signature(getattr(Searchable, name)).parameters
    given = inspect.signature(getattr(cls, name)).parameters
    problems = []
    for param in wanted.values():
        mine = given.get(param.name)
        if mine is None or mine.kind is not param.kind:
            problems.append(f"{cls.__name__}.{name}: {param.name}")
        elif param.default is not inspect.Parameter.empty and param.default is not Ellipsis \
                and mine.default != param.default:
            problems.append(f"{cls.__name__}.{name}: {param.name}={mine.default!r}, not {param.default!r}")
    return problems


CALLS = ("__enter__", "__exit__", "close", "search", "search_like", "explain", "status", "is_current")


@pytest.mark.parametrize("cls", [Index, Collection])
def test_an_index_and_a_collection_take_every_call_of_the_protocol(cls: type) -> None:
    assert {n for n in vars(Searchable) if not n.startswith("_")} == set(CALLS) - {"__enter__", "__exit__"}
    assert [p for name in CALLS for p in _takes_what_the_protocol_gives(cls, name)] == []


def test_open_index_opens_an_index_or_a_collection_as_searchable(opened: tuple[Path, Path]) -> None:
    one, two = opened
    with open_index(one) as single, open_index(two) as sharded:
        assert isinstance(single, Index) and isinstance(sharded, Collection)
        assert isinstance(single, Searchable) and isinstance(sharded, Searchable)
        with Index(one, create=False) as direct:
            asked = ("Rigel blue supergiant", Mode.LEXICAL), ("quarterly budget revenue", Mode.HYBRID)
            for query, mode in asked:
                expected = [r.path for r in direct.search(query, mode=mode).results]
                assert [r.path for r in single.search(query, mode=mode).results] == expected
                assert expected
        assert sharded.status().indexed == single.status().indexed


def test_a_cluster_is_refused_for_one_index(opened: tuple[Path, Path]) -> None:
    with pytest.raises(ConfigError, match="one index"):
        open_index(opened[0], cluster="local")
