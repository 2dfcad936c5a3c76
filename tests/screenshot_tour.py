"""A short tour of the real window on a real X server, for the screenshot test in tests/test_gui_app.py.

Run as ``python tests/screenshot_tour.py FOLDER OUT``: indexes FOLDER into a temporary index through the window and its
workers, then photographs the screen at three moments a new user meets (issue 34): a results list paged past its first
ten, the plain-language breakdown of a result with its numbers open, and a facet chip's tooltip. The screen, not the
window, is grabbed, so the tooltip (a window of its own) is in the picture. What the window said at each moment is
printed as one JSON object for the test to check against the pictures.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings
from PySide6.QtGui import QGuiApplication, QHelpEvent, QImage
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem, QToolTip

from app.gui import settings as S
from app.gui.main import _application, _wait
from app.gui.results_model import Role
from app.gui.settings import Settings
from app.gui.window import MainWindow

WAIT_S = 120


def settle(app: QApplication, rounds: int = 20) -> None:
    """Let layouts, repaints and the X server catch up before a picture."""
    for _ in range(rounds):
        app.processEvents()
        QApplication.sendPostedEvents()


def snap(app: QApplication, path: Path) -> str:
    settle(app)
    QGuiApplication.primaryScreen().grabWindow(0).save(str(path))
    return path.name


def drawn(app: QApplication, before: QImage, timeout_s: float = 10.0) -> None:
    """Wait until the screen differs from ``before``: a tooltip is a window of its own, which the X server maps and
    the compositor-less Xvfb paints a moment after Qt shows it (on a busy machine, after a grab or two)."""
    deadline = time.monotonic() + timeout_s
    while QGuiApplication.primaryScreen().grabWindow(0).toImage() == before and time.monotonic() < deadline:
        settle(app, 5)
        time.sleep(0.05)


def search(window: MainWindow, text: str):
    window.search_box.setText(text)
    # the answer after its second look: the first ranking's comes before it
    shown = _wait(window.results_shown, WAIT_S, until=lambda r: r.query == text and r.refined)
    if shown is None:
        raise SystemExit(f"tour: no answer for {text!r}")
    return shown[0]


def wait_for_chips(app: QApplication, window: MainWindow) -> list[str]:
    """The top card's facet chips, once the explainer (a worker thread) has sent them."""
    deadline = time.monotonic() + WAIT_S
    while not window.model.index(0).data(Role.FACETS):
        if time.monotonic() > deadline:
            raise SystemExit("tour: the top result got no facet chips")
        app.processEvents()
        time.sleep(0.02)
    return [c.label for c in window.model.index(0).data(Role.FACETS)]


def hover_first_matching_chip(window: MainWindow) -> str:
    """Send the tooltip event a resting mouse sends over the top result's first chip that matches a query word."""
    view, delegate, row = window.results, window.results.itemDelegate(), window.model.index(0)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(row)
    chip, box = next((c, b) for c, b in delegate._chip_boxes(option, row) if c.matches)
    pos = box.center().toPoint()
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
    return chip.tooltip


def tour(folder: Path, out: Path) -> dict:
    app = _application()
    facts: dict = {}
    with tempfile.TemporaryDirectory(prefix="quire-tour-") as tmp:
        settings = Settings(QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat))
        settings.set(S.WATCH_NEW, False)
        window = MainWindow(Path(tmp) / "index", settings)
        window.resize(1200, 800)
        window.move(0, 0)
        window.show()
        window.add_paths([str(folder)])
        if _wait(window.controller.status_ready, WAIT_S, until=lambda s: s is not None and not window.controller.busy) is None:
            raise SystemExit("tour: indexing did not finish")

        first = search(window, "otters near the river weir")
        facts["found"] = first.found
        facts["count_first"] = window.count_label.text()
        window.load_more()
        if _wait(window.results_shown, WAIT_S) is None:
            raise SystemExit("tour: the second page did not come")
        facts["count_paged"] = window.count_label.text()
        facts["rows_paged"] = window.model.rowCount()
        facts["paging"] = snap(app, out / "1-paging.png")

        search(window, "doctor")
        facts["chips"] = wait_for_chips(app, window)
        facts["top"] = window.current_result().path
        window.breakdown_action.trigger()
        facts["breakdown"] = window.preview.browser.toPlainText()
        facts["breakdown_shot"] = snap(app, out / "2-breakdown.png")

        before = QGuiApplication.primaryScreen().grabWindow(0).toImage()
        facts["tooltip_expected"] = hover_first_matching_chip(window)
        settle(app)
        facts["tooltip"] = QToolTip.text() if QToolTip.isVisible() else None
        drawn(app, before)
        facts["tooltip_shot"] = snap(app, out / "3-tooltip.png")
        window.close()
    return facts


if __name__ == "__main__":
    print(json.dumps(tour(Path(sys.argv[1]), Path(sys.argv[2]))))
