"""Shared fixtures: real files, real SQLite indexes, one QApplication per session (pytest-qt)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

DATA = Path(__file__).parent / "data"

# A small, topical collection: each file has sentences only it contains, so searches have a known right answer.
CORPUS = {
    "astronomy/rigel.txt": (
        "Rigel is a blue supergiant star in the constellation of Orion.\n\n"
        "It is one of the brightest stars in the night sky, about 860 light-years from the Sun. "
        "Astronomers measure its distance with parallax from space telescopes."
    ),
    "animals/porpoise.md": (
        "# Porpoises\n\n"
        "Porpoises are small toothed whales that live in the ocean. "
        "They use echolocation to hunt fish and squid in murky coastal water.\n\n"
        "Fishing nets kill thousands of harbour porpoises every year."
    ),
    "cooking/pasta.html": (
        "<html><head><title>Cooking pasta</title><script>var x = 'should not be indexed';</script></head>"
        "<body><h1>Cooking pasta</h1><p>Bring a large pot of salted water to the boil before adding the spaghetti.</p>"
        "<p>Drain the noodles when they are al dente and toss them with olive oil and garlic.</p></body></html>"
    ),
    "health/appointments.txt": (
        "Patients can now book hospital appointments by sending a text message to the clinic.\n\n"
        "The doctor reviews each request and replies with a time for the consultation."
    ),
    "finance/budget.txt": (
        "The quarterly budget shows that revenue grew by 4.5% while operating costs fell.\n\n"
        "Dr. Smith, the chief financial officer, expects profits to rise next year."
    ),
}


def write_corpus(root: Path, files: dict[str, str] = CORPUS) -> Path:
    """Write ``files`` (relative path -> text) under ``root`` and return it."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def indexed_corpus(root: Path) -> Path:
    """The corpus written under ``root``/docs and indexed (one process) into ``root``/index; the index folder."""
    from engine import Index, IndexConfig

    with Index(root / "index", config=IndexConfig(workers=0)) as idx:
        idx.add([write_corpus(root / "docs")])
    return root / "index"


def run_probe(code: str, *args: object) -> dict:
    """Run ``code`` in a fresh interpreter from the repository root with ``args``; the JSON of its last line."""
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=Path(__file__).resolve().parent.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def graph_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build a graph at any size: a test collection is far below engine.store.vectors.EXACT_BELOW, under which an
    index is scanned exactly and has no graph file to save, damage or catch up."""
    from engine.store import vectors

    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder of small real documents."""
    return write_corpus(tmp_path / "docs")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    """Where a test's index lives."""
    return tmp_path / "index"


def embedded_as_indexed(embedder, rows) -> np.ndarray:
    """What an index stores for whole documents' sentences, ``rows`` of (document id, text) in document order: a
    short line is embedded with its neighbours (engine.embed.context), so not every vector is its own text's."""
    from engine.embed import context

    sizes = [len(list(run)) for _, run in itertools.groupby(doc for doc, _ in rows)]
    return context.encode(embedder, [text for _, text in rows], sizes)[0]


def index_and_search(method: str, corpus: Path, db: Path, query: str) -> dict:
    """Index ``corpus`` with ``method`` and search it through the real CLI; returns the search JSON.

    Used by the tests of every optional method, so each proves the same round trip: `quire index --method`,
    then `quire search` on the index it made.
    """
    import json

    from click.testing import CliRunner

    from app.cli import cli

    runner = CliRunner()
    done = runner.invoke(cli, ["index", str(corpus), "--db", str(db), "--method", method, "--workers", "0", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["method"] == method and report["sentences"] > 10
    found = runner.invoke(cli, ["search", query, "--db", str(db), "--json", "--all"])
    assert found.exit_code == 0, found.output
    response = json.loads(found.stdout)
    assert response["method"] == method
    return response


def write_random_document(store, path: str, n: int, seed: int, dim: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(sentence ids, unit vectors) of a document of ``n`` sentences with random ``dim``-wide vectors of method
    "m", written to ``store`` (a Store)."""
    from engine.ingest.documents import NewDocument, SentenceRecord

    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    sentences = tuple(SentenceRecord(f"{path} {i}", 0, 1, None, i) for i in range(n))
    doc = NewDocument(path=path, size=1, mtime=1.0, hash=path, title=path, kind="text", sentences=sentences,
                      passages=((0, n - 1),))
    _, ids = store.write_documents([doc], v, "m")
    return ids, v


def opened_vectors(store, dim: int = 16):
    """Method "m"'s VectorIndex on ``store``, opened and saved as an indexing run does (a search only opens it)."""
    from engine.store.vectors import VectorIndex

    index = VectorIndex(store.folder, "m", "fp", dim)
    index.open(store)
    index.save(store.meta.generation())
    return index
