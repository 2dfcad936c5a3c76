"""The import-direction rule (STYLE.md, practice 3 and 6), checked in a fresh interpreter so it cannot rot.

``engine`` must import with PySide6 unavailable and without importing click itself, and the static path (import, load the model, index a
folder, search it) must never import torch or ray (ray only for a sharded collection on a cluster, engine.cluster):
start-up time and the app's footprint depend on it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from conftest import run_probe

REPO = Path(__file__).resolve().parent.parent

# Runs in a child interpreter: a meta-path finder refuses the blocked packages before anything is imported.
_PROBE = textwrap.dedent(
    """
    import json, sys
    from importlib.abc import MetaPathFinder

    # PySide6, torch and ray are refused to everyone. click is refused to quire's own engine modules only:
    # sqlite-utils (a dependency of the store) imports click for its plugin hooks, which is not ours to change.
    # Once click is in sys.modules no finder is asked again, so the static test below covers click as well.
    BLOCKED = ("PySide6", "torch", "ray")
    ENGINE_ONLY = ("click",)

    def importer():
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        return frame.f_globals.get("__name__", "") if frame is not None else ""

    class Block(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.split(".")[0]
            who = importer()
            if top in BLOCKED or (top in ENGINE_ONLY and who.split(".")[0] == "engine"):
                raise ImportError(f"{name} (imported by {who}) is blocked by test_engine_imports")
            return None

    sys.meta_path.insert(0, Block())
    folder, index_dir = sys.argv[1], sys.argv[2]

    import engine
    from engine import Index, IndexConfig, embed

    embedder = embed.load("static")
    with Index(index_dir, config=IndexConfig(workers=0)) as idx:
        report = idx.add([folder])
        response = idx.search("blue supergiant star in Orion", k=3)
    print(json.dumps({
        "documents": report.documents,
        "results": [r.path for r in response.results],
        "loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED),
        "dim": embedder.dim,
    }))
    """
)


def test_engine_imports_without_qt_click_torch_or_ray(corpus: Path, index_dir: Path) -> None:
    out = run_probe(_PROBE, corpus, index_dir)
    assert out["loaded"] == []
    assert out["documents"] == 5
    assert out["results"] and out["results"][0].endswith("rigel.txt")
    assert out["dim"] > 0


def test_engine_modules_name_no_ui_toolkit() -> None:
    """A static check as well, so a lazy import inside a function body cannot slip past the runtime probe."""
    banned = re.compile(r"^\s*(?:from|import)\s+(?:click|PySide6|app)\b", re.MULTILINE)
    offenders = [
        f"{path.relative_to(REPO)}: {match.group().strip()}"
        for path in sorted((REPO / "engine").rglob("*.py"))
        for match in banned.finditer(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_only_the_cluster_layer_knows_shards_and_ray() -> None:
    """engine.cluster sits above engine.Index: no module below it may import it, nor ray, which it alone uses. The
    package's public names sit above it (``open_index``), and load it only when one of them is used."""
    banned = re.compile(r"^\s*(?:from|import)\s+(?:engine\.cluster|ray)\b", re.MULTILINE)
    offenders = [
        f"{path.relative_to(REPO)}: {match.group().strip()}"
        for path in sorted((REPO / "engine").rglob("*.py"))
        if "cluster" not in path.relative_to(REPO / "engine").parts and path != REPO / "engine" / "__init__.py"
        for match in banned.finditer(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# Parser libraries a reader imports when it reads its first file of that format (docs/decisions/0008): every
# process start (the CLI, the app's index process, each reader process) would otherwise pay for all of them.
PARSERS = ("docx", "pptx", "PIL", "bs4", "ebooklib", "pypdfium2", "charset_normalizer", "lxml")

_PARSERS_PROBE = textwrap.dedent(
    """
    import json, sys

    PARSERS = tuple(sys.argv[2].split(","))

    def loaded():
        return sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in PARSERS})

    import engine.ingest.pool
    from engine.ingest import readers
    from pathlib import Path

    at_start = loaded()
    names = sorted(r.name for r in readers.readers())
    doc = readers.read(Path(sys.argv[1]))
    print(json.dumps({"at_start": at_start, "names": names, "kind": doc.kind, "after_pdf": loaded()}))
    """
)


def test_the_reader_pool_imports_no_parser_until_a_file_of_its_format_is_read(tmp_path: Path) -> None:
    from tests import docgen

    pdf = docgen.make_pdf(tmp_path)
    out = run_probe(_PARSERS_PROBE, pdf, ",".join(PARSERS))
    assert out["at_start"] == []
    assert out["names"] == sorted(["compressed", "docx", "email", "epub", "html", "image", "markdown", "odt", "pdf",
                                   "pptx", "rst", "rtf", "table", "text"])
    assert out["kind"] == "pdf"
    assert out["after_pdf"] == ["pypdfium2"]
