"""The engine's layers, checked over its import graph (issue 36): a module imports only from its own layer or below.

    base (errors, filestate, resources, blas, heap, locations) < text < ingest < embed < store < facets < search
    < indexing < index < cluster < tools

``text`` is the leaf every layer shares (folding, stemming, sentence splitting); ``indexing`` is what an indexing run
does beside the store; ``index`` is the facade and its configuration; ``cluster`` runs many indexes as one (shards,
Ray); the tools (evaluation, model building) and the package's public names sit on top. For the layers every import
counts, absolute or relative, at module level or inside a function: a lazy import still ties the layers together.

Inside a layer no modules import each other in a cycle. There only the imports that run when a module is imported
count: those at module level (in a class body, a ``try`` or an ``if`` too), but not those under ``if TYPE_CHECKING:``
nor inside a function, which is how a deliberate lazy import breaks a cycle. An import names the module it takes
(``from engine.store import vectors``: ``engine.store.vectors``; ``from engine.store.db import Store``:
``engine.store.db``), not the packages above it that Python runs first. The graph is read from the source with
``ast``, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine"
LAYERS = ("base", "text", "ingest", "embed", "store", "facets", "search", "indexing", "index", "cluster", "tools")
# Modules directly in engine/, by layer; subpackages are their own layer, or a tool.
TOP_LEVEL = {"errors": "base", "filestate": "base", "resources": "base", "blas": "base", "heap": "base",
             "locations": "base", "config": "ingest", "index": "index", "reports": "index", "searchable": "index",
             "__init__": "tools"}
TOOLS = {"eval", "staticbuild", "neuralhead", "onnxbuild", "_resources"}


def layer(module: str) -> str:
    """The layer of a dotted ``engine...`` module name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "tools"  # `engine` itself: the public names
    name = parts[1]
    if name in TOP_LEVEL:
        return TOP_LEVEL[name]
    if name in TOOLS:
        return "tools"
    assert name in LAYERS, f"engine.{name} belongs to no layer: add it to tests/test_layers.py"
    return name


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    """Whether the dotted name is a module or package of the source tree (not a name defined in one)."""
    path = ENGINE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _from_module(path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, with a relative one (``from . import x``, ``from ..store import y``)
    made absolute from the package ``path`` is in."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _targets(path: Path, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The engine modules one import statement in ``path`` names: ``from engine.store import vectors`` names
    ``engine.store.vectors``, ``from engine import Index`` names ``engine``."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name.split(".")[0] == "engine"}
    module = _from_module(path, node)
    if module.split(".")[0] != "engine":
        return set()
    return {f"{module}.{a.name}" if _is_module(f"{module}.{a.name}") else module for a in node.names}


def _module_level(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported: not those inside a function, nor those under
    ``if TYPE_CHECKING:``, which only the type checker reads."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))


def imports(path: Path, module_level: bool = False) -> set[str]:
    """Every engine module ``path`` imports, absolutely or relatively; ``module_level``: only the imports that run
    when it is imported (:func:`_module_level`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = _module_level(tree) if module_level else (
        node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))
    return {target for node in nodes for target in _targets(path, node)}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` (module -> the modules it imports): each strongly connected part of more than
    one module, sorted (Tarjan's algorithm, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, targets = work[-1]
            target = next((t for t in targets if t in graph), None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    part = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    found += [sorted(part)] if len(part) > 1 else []
            elif target not in order:
                order[target] = low[target] = len(order)
                stack.append(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in stack:
                low[node] = min(low[node], order[target])
    return sorted(found)


def test_every_engine_import_goes_down_or_stays_in_its_layer() -> None:
    upward = []
    for path in sorted(ENGINE.rglob("*.py")):
        source = module_name(path)
        for target in sorted(imports(path)):
            if LAYERS.index(layer(target)) > LAYERS.index(layer(source)):
                upward.append(f"{source} ({layer(source)}) imports {target} ({layer(target)})")
    assert upward == []


def test_the_text_leaf_imports_nothing_of_quire_but_its_errors() -> None:
    for path in sorted((ENGINE / "text").rglob("*.py")):
        assert {layer(t) for t in imports(path)} <= {"base", "text"}, path.name


def test_no_modules_of_one_layer_import_each_other_in_a_cycle() -> None:
    graph = {module_name(path): imports(path, module_level=True) for path in sorted(ENGINE.rglob("*.py"))}
    within = {source: {t for t in targets if t != source and layer(t) == layer(source)}
              for source, targets in graph.items()}
    assert cycles(within) == []


def test_the_cycle_check_finds_cycles_and_only_those() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}, "g": set()}
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_relative_imports_are_read_and_lazy_ones_left_out_of_the_cycles() -> None:
    searcher = ENGINE / "search" / "searcher.py"
    source = "from ..store import vectors\nfrom . import fusion\nfrom .results import Answer\nfrom .. import Index\n"
    nodes = [node for node in ast.parse(source).body if isinstance(node, ast.ImportFrom)]
    assert [_targets(searcher, node) for node in nodes] == [
        {"engine.store.vectors"}, {"engine.search.fusion"}, {"engine.search.results"}, {"engine"}]
    assert _targets(ENGINE / "store" / "__init__.py", nodes[1]) == {"engine.store"}  # `.` is the package itself
    lazy = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import engine.index\n"
                     "def f():\n    import engine.search\nclass C:\n    import engine.store\n")
    assert {t for node in _module_level(lazy) for t in _targets(searcher, node)} == {"engine.store"}


def test_the_check_sees_an_upward_import() -> None:
    # the checker itself: a store module importing the searcher would be caught
    assert LAYERS.index(layer("engine.search.searcher")) > LAYERS.index(layer("engine.store.bm25"))
    assert imports(ENGINE / "index.py") >= {"engine.embed"}  # `from engine import embed`
