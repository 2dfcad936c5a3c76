"""The engine's layers, checked over its import graph (issue 36): a module imports only from its own layer or below.

    base (errors, filestate, resources, blas, heap, locations) < text < ingest < embed < store < facets < search
    < indexing < index < cluster < tools

``text`` is the leaf every layer shares (folding, stemming, sentence splitting); ``indexing`` is what an indexing run
does beside the store; ``index`` is the facade and its configuration; ``cluster`` runs many indexes as one (shards,
Ray); the tools (evaluation, model building) and the package's public names sit on top. Every import counts, at module level or inside a function: a lazy import still
ties the layers together. The graph is read from the source with ``ast``, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
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


def _submodule(name: str) -> bool:
    return (ENGINE / f"{name}.py").exists() or (ENGINE / name).is_dir()


def imports(path: Path) -> set[str]:
    """Every engine module ``path`` imports (``from engine import embed`` counts as ``engine.embed``, ``from engine
import Index`` as ``engine``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "engine"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "engine":  # a submodule, or a public name of the package itself
                found |= {f"engine.{a.name}" if _submodule(a.name) else "engine" for a in node.names}
            elif node.module.split(".")[0] == "engine":
                found.add(node.module)
    return found


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


def test_the_check_sees_an_upward_import() -> None:
    # the checker itself: a store module importing the searcher would be caught
    assert LAYERS.index(layer("engine.search.searcher")) > LAYERS.index(layer("engine.store.bm25"))
    assert imports(ENGINE / "index.py") >= {"engine.embed"}  # `from engine import embed`
