"""The desktop app on a sharded collection (engine.cluster): it searches and explains it as one index, and does not
write to it (pytest-qt, real window and workers, shards searched on threads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_gui import INDEX_TIMEOUT_MS, drop, settings, type_query  # noqa: F401 (settings is a fixture)

from app.gui.window import MainWindow
from engine import IndexConfig
from engine.cluster.indexing import index_collection

pytestmark = pytest.mark.gui


def test_the_window_searches_a_collection_and_leaves_it_unchanged(qtbot, tmp_path: Path, settings,  # noqa: F811
                                                                   corpus: Path) -> None:
    collection = tmp_path / "collection"
    index_collection(collection, [corpus], 2, config=IndexConfig(workers=0))
    before = sorted(p.name for p in collection.iterdir())
    window = MainWindow(collection, settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        with qtbot.waitSignal(window.controller.explained, timeout=10_000):
            response = type_query(qtbot, window, "porpoises hunting with echolocation")
        assert response.results[0].path.endswith("porpoise.md")
        top = window.current_result()
        assert top.path.endswith("porpoise.md") and top.facets and top.context_after
        errors: list[str] = []
        window.controller.error.connect(errors.append)
        with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS):
            drop(window, [corpus])
        assert errors and "sharded collection" in errors[0]
        assert sorted(p.name for p in collection.iterdir()) == before
    finally:
        window.close()
