"""The desktop app driven like a user would: real window, real workers, real index on tmp_path (pytest-qt)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QObject, QPointF, QSettings, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QDropEvent, QDragEnterEvent, QGuiApplication
from PySide6.QtWidgets import QApplication

from app.gui import settings as S
from app.gui.controller import IndexState
from app.gui.folders import FileReport
from app.gui.results_model import Role, facet_labels, highlight_html
from app.gui.settings import Option, Settings
from app.gui.window import MainWindow
from engine.search.results import Highlight

INDEX_TIMEOUT_MS = 60_000
# Qt 6 has only the QPoint constructor of QDragEnterEvent, which PySide flags as deprecated.
pytestmark = pytest.mark.filterwarnings("ignore:Function.*QDragEnterEvent:DeprecationWarning")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Preferences in an INI file of this test only; watching is off unless a test turns it on."""
    s = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    s.set(S.WATCH_NEW, False)
    return s


@pytest.fixture
def make_window(qtbot, tmp_path: Path, settings: Settings):
    """Factory for windows on this test's index; each is closed (threads joined) at teardown."""
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        window = MainWindow(tmp_path / "index", settings)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.close()


@pytest.fixture
def window(make_window) -> MainWindow:
    return make_window()


class UrlRecorder(QObject):
    """Receives the URLs the app asks the desktop to open (QDesktopServices' real handler hook)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def handle(self, url: QUrl) -> None:
        self.urls.append(url)


@pytest.fixture
def opened():
    recorder = UrlRecorder()
    QDesktopServices.setUrlHandler("file", recorder, "handle")
    yield recorder.urls
    QDesktopServices.unsetUrlHandler("file")


def drop(window: MainWindow, paths: list[Path]) -> None:
    """A drag from the file manager: enter, then drop, as Qt delivers them."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPointF(window.width() / 2, window.height() / 2)
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(window, QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                              Qt.KeyboardModifier.NoModifier))


def wait_indexed(qtbot, window: MainWindow):
    """Wait until the run and the searcher's reload are over; returns the fresh IndexStatus."""
    with qtbot.waitSignal(window.controller.status_ready, timeout=INDEX_TIMEOUT_MS,
                          check_params_cb=lambda s: s is not None and not window.controller.busy) as blocker:
        pass
    return blocker.args[0]


def type_query(qtbot, window: MainWindow, text: str):
    """Type like a user (one key at a time, debounced) and wait for the list to show the answer."""
    window.search_box.clear()
    with qtbot.waitSignal(window.results_shown, timeout=10_000,
                          check_params_cb=lambda r: r.query == text) as blocker:
        qtbot.keyClicks(window.search_box, text)
    return blocker.args[0]


def test_drop_folder_index_and_search_ranked_with_highlights(qtbot, window, corpus):
    drop(window, [corpus])
    status = wait_indexed(qtbot, window)
    assert status.indexed == 5
    assert window.folders.model.rowCount() == 1
    assert "5 indexed" in window.folders.model.item(0).text()

    response = type_query(qtbot, window, "porpoises hunting with echolocation")
    model = window.model
    assert model.rowCount() >= 1
    top = model.index(0).data(Role.RESULT)
    assert top.path.endswith("porpoise.md")
    scores = [model.result(r).score for r in range(model.rowCount())]
    assert scores == sorted(scores, reverse=True)
    assert float(model.index(0).data(Role.SCORE_TEXT)) == pytest.approx(top.similarity, abs=0.01)
    assert 0 < model.index(0).data(Role.SCORE_FRACTION) <= 1
    assert "<mark>echolocation</mark>" in model.index(0).data(Role.PASSAGE_HTML)
    # the preview shows the passage in context, and the breakdown on demand
    assert "echolocation" in window.preview.browser.toPlainText()
    window.preview.toggle.setChecked(True)
    text = window.preview.browser.toPlainText()
    assert "Semantic cosine" in text and "Fusion" in text and "echolocation (idf" in text
    # the delegate paints real rows
    image = window.results.grab().toImage()
    assert image.width() > 100 and len({image.pixel(x, 30) for x in range(0, image.width(), 4)}) > 3
    assert response.query == "porpoises hunting with echolocation"


def test_nothing_relevant_state(qtbot, window, corpus):
    window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))  # tiny corpora have no cosine threshold
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    response = type_query(qtbot, window, "xylophone zeppelin")
    assert response.nothing_relevant
    assert window.model.rowCount() == 0
    assert window.results_stack.currentWidget() is window.empty
    assert "Nothing relevant found" in window.empty.text()


def test_keyboard_navigation_open_copy_clear(qtbot, window, corpus, opened):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    type_query(qtbot, window, "water")
    assert window.model.rowCount() >= 2
    assert window.results.currentIndex().row() == 0
    qtbot.keyClick(window.search_box, Qt.Key.Key_Down)
    assert window.results.currentIndex().row() == 1
    second = window.current_result()
    assert second.sentence in window.preview.browser.toPlainText()
    qtbot.keyClick(window.search_box, Qt.Key.Key_Up)
    qtbot.keyClick(window.search_box, Qt.Key.Key_Up)  # clamped at the top
    assert window.results.currentIndex().row() == 0
    first = window.current_result()

    qtbot.keyClick(window.search_box, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == first.sentence

    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    assert [u.toLocalFile() for u in opened] == [first.path]
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert opened[-1].toLocalFile() == str(Path(first.path).parent)

    window.results.setFocus()
    qtbot.keyClick(window.results, Qt.Key.Key_Down)  # the list's own arrows work too
    qtbot.keyClick(window.results, Qt.Key.Key_Return)
    assert opened[-1].toLocalFile() == second.path
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.search_box.hasFocus()
    window.results.setFocus()
    qtbot.keyClick(window.results, Qt.Key.Key_Slash)
    assert window.search_box.hasFocus() and window.search_box.text() == "water"

    qtbot.keyClick(window.search_box, Qt.Key.Key_Escape)
    assert window.search_box.text() == "" and window.model.rowCount() == 0


def test_more_like_this_searches_with_the_passage(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "booking a doctor")
    passage = window.current_result().sentence
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        window.more_like_action.trigger()
    assert blocker.args[0].query == passage
    assert window.current_result().path.endswith("appointments.txt")


def test_stale_answers_are_dropped(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    shown = []
    window.results_shown.connect(shown.append)
    window.controller.search("porpoise")
    window.controller.search("spaghetti")
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    qtbot.wait(300)  # time for a stale answer to arrive, were it not dropped
    assert [r.query for r in shown] == ["spaghetti"]


def many_files(root: Path, n: int = 300) -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"note{i:04d}.txt").write_text(
            f"Field note {i}. The expedition catalogued {i} species of beetle near the river delta. "
            f"Specimen {i} was photographed at dawn and stored in alcohol.", encoding="utf-8")
    return root


def test_cancel_mid_index_keeps_what_was_done(qtbot, window, tmp_path):
    folder = many_files(tmp_path / "notes")
    window.controller.progress.connect(
        lambda p: window.controller.cancel() if p.files_done >= 1 and window.controller.state is IndexState.RUNNING else None)
    with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS) as blocker:
        drop(window, [folder])
    report = blocker.args[0]
    assert report.cancelled
    assert report.documents < 300
    status = wait_indexed(qtbot, window)
    assert status.indexed < 300
    assert window.controller.state is IndexState.IDLE
    assert window.settings.get(S.PENDING) == []
    assert not window.index_bar.isVisible()


def test_pause_survives_restart_and_resume_completes(qtbot, make_window, tmp_path):
    folder = many_files(tmp_path / "notes")
    window = make_window()
    window.controller.progress.connect(
        lambda p: window.controller.pause() if p.files_done >= 1 else None)
    with qtbot.waitSignal(window.controller.state_changed, timeout=INDEX_TIMEOUT_MS,
                          check_params_cb=lambda s: s == IndexState.PAUSED.value):
        drop(window, [folder])
    assert window.pause_button.text() == "Resume"
    assert window.settings.get(S.PENDING) == [str(folder.resolve())]
    wait_indexed(qtbot, window)
    window.close()

    again = make_window()  # a restart: same settings, same index
    assert again.controller.state is IndexState.PAUSED
    assert again.index_bar.isVisible() and again.pause_button.text() == "Resume"
    qtbot.mouseClick(again.pause_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(again.controller.status_ready, timeout=INDEX_TIMEOUT_MS,
                          check_params_cb=lambda s: s is not None and s.indexed == 300 and not again.controller.busy):
        pass
    assert again.controller.state is IndexState.IDLE
    assert again.settings.get(S.PENDING) == []


def test_changed_file_is_reindexed_by_the_watcher(qtbot, window, corpus):
    window.settings.set(S.WATCH_NEW, True)
    (corpus / "empty.txt").write_text("", encoding="utf-8")
    drop(window, [corpus])
    status = wait_indexed(qtbot, window)
    assert window.settings.get(S.WATCHED) == [str(corpus.resolve())]
    skipped = [f for f in status.files if f["status"] == "skipped"]
    assert [Path(f["path"]).name for f in skipped] == ["empty.txt"] and skipped[0]["reason"]
    report = FileReport(status, window)
    assert report.model.rowCount() == 6
    report.status_filter.setCurrentText("skipped")
    assert report.proxy.rowCount() == 1

    with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS):
        with open(corpus / "animals" / "porpoise.md", "a", encoding="utf-8") as f:
            f.write("\n\nNarwhals sing beneath the Arctic sea ice in winter.\n")
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "narwhals arctic")
    top = window.current_result()
    assert top.path.endswith("porpoise.md")
    assert "<mark>Narwhals</mark>" in window.model.index(0).data(Role.PASSAGE_HTML)


def test_settings_declared_types_and_dialog(qtbot, settings, tmp_path):
    from app.gui.settings_dialog import SettingsDialog

    assert settings.get(S.SEARCH_MODE) == "hybrid" and settings.get(S.IGNORE) == []
    settings.store.setValue(S.IGNORE.key, "*.log")  # a one-item list comes back as a bare string from INI files
    assert settings.get(S.IGNORE) == ["*.log"]
    settings.store.setValue(S.WATCH_NEW.key, "false")
    assert settings.get(S.WATCH_NEW) is False
    with pytest.raises(TypeError):
        settings.set(S.RESULTS_K, "many")
    assert Option("x/y", int, 7).read(settings.store) == 7

    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.mode.setCurrentIndex(dialog.mode.findData("lexical"))
    dialog.ignore.setPlainText("*.tmp\n\nbuild/\n")
    dialog.accept()
    reread = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    assert reread.get(S.SEARCH_MODE) == "lexical"
    assert reread.get(S.IGNORE) == ["*.tmp", "build/"]
    assert reread.ignore_patterns() == ("*.tmp", "build/")
    # GPU methods are enabled only when the probe finds an accelerator
    qtbot.waitUntil(lambda: dialog.device.text().startswith("Device:"), timeout=60_000)
    sbert = dialog.method.findData("sbert")
    if sbert >= 0:
        from engine.embed.device import detect

        assert dialog.method.model().item(sbert).isEnabled() == detect().accelerated


def test_highlight_and_facet_helpers():
    text = "Fish & chips <b>"
    spans = (Highlight(0, 4, "fish"), Highlight(2, 6, "sh"), Highlight(7, 12, "chips"))
    assert highlight_html(text, spans) == "<mark>Fish</mark><mark> &amp;</mark> <mark>chips</mark> &lt;b&gt;"

    class Facet:
        label = "marine life"

    assert facet_labels([{"label": "oceans"}, Facet(), {"other": 1}, {"label": "oceans"}]) == ["oceans", "marine life"]


def test_errors_are_messages_not_tracebacks(qtbot, window, corpus):
    window.search_box.setText("anything")
    qtbot.waitUntil(lambda: "nothing is indexed yet" in window.empty.text(), timeout=10_000)
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    window.search_box.setText("porpoise " * 3000)  # longer than the engine accepts
    qtbot.waitUntil(lambda: "limit" in window.empty.text(), timeout=10_000)
    assert "Traceback" not in window.empty.text()


def test_signal_emit_keeps_python_refcounts(qapp):
    """PySide6 6.12.0 dropped a reference to True on every emit(); a long indexing run then crashed the app."""
    import sys

    from PySide6.QtCore import Signal

    class Emitter(QObject):
        ping = Signal(int)

    emitter = Emitter()
    emitter.ping.connect(lambda _: None)
    before = sys.getrefcount(True)
    for i in range(200):
        emitter.ping.emit(i)
    assert sys.getrefcount(True) >= before - 5
