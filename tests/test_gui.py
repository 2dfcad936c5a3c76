"""The desktop app driven like a user would: real window, real workers, real index on tmp_path (pytest-qt)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QObject, QPointF, QSettings, Qt, QThread, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication
from PySide6.QtWidgets import QApplication

from app.gui import settings as S
from app.gui.controller import IndexState
from app.gui.folders import FileReport, FoldersPanel
from app.gui.results_model import Chip, Role, chips, highlight_html
from app.gui.settings import Option, Settings
from app.gui.window import MainWindow
from engine.filestate import FileState
from engine.search.results import Answer, Highlight

INDEX_TIMEOUT_MS = 60_000
# Qt 6 has only the QPoint constructor of QDragEnterEvent, which PySide flags as deprecated.
pytestmark = [pytest.mark.gui,
              pytest.mark.filterwarnings("ignore:Function.*QDragEnterEvent:DeprecationWarning")]


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


def launcher(folder: Path, name: str, script: str) -> Path:
    """An executable ``name`` in ``folder``, a shell script (tests put it first on PATH, as an installed program)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


class Opened:
    """What the app asked the desktop to open, as the xdg-open first on PATH logged it (its arguments, a line a call)."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def paths(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []


@pytest.fixture
def opened(tmp_path: Path, monkeypatch) -> Opened:
    """A stand-in xdg-open that logs its arguments and succeeds: the app's real launch path, no desktop needed."""
    log = tmp_path / "opened.log"
    launcher(tmp_path / "bin", "xdg-open", f'echo "$*" >> "{log}"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return Opened(log)


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
    """Type like a user (one key at a time, debounced) and wait for the list to show the answer after its second
    look (the first ranking's answer comes before it)."""
    window.search_box.clear()
    with qtbot.waitSignal(window.results_shown, timeout=10_000,
                          check_params_cb=lambda r: text in (r.query, r.corrected_from) and r.refined) as blocker:
        qtbot.keyClicks(window.search_box, text)
    return blocker.args[0]


def test_folders_named_on_the_command_line_are_indexed(qtbot, tmp_path, settings, corpus):
    # what a file manager's "Open with quire" runs: quire-app PATH...
    from app.gui.main import _parser, open_window

    window = open_window(_parser().parse_args([str(corpus / "animals"), "--index", str(tmp_path / "index")]),
                         settings)
    qtbot.addWidget(window)
    try:
        status = wait_indexed(qtbot, window)
        assert status.indexed == 1 and {Path(f.path).parent.name for f in status.files} == {"animals"}
    finally:
        window.close()


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
    # the number on each card is the ranking's score, so the numbers never rise down the list
    shown = [float(model.index(r).data(Role.SCORE_TEXT)) for r in range(model.rowCount())]
    assert shown == sorted(shown, reverse=True) and shown[0] == round(top.score) >= 50
    assert model.index(0).data(Role.SCORE_FRACTION) == pytest.approx(top.score / 100)
    assert "<mark>echolocation</mark>" in model.index(0).data(Role.PASSAGE_HTML)
    # the preview shows the passage in context, and the breakdown on demand
    assert "echolocation" in window.preview.browser.toPlainText()
    window.preview.toggle.setChecked(True)
    text = window.preview.browser.toPlainText()
    assert "Meaning of this passage: cosine" in text and "Combined by" in text and "echolocation (idf" in text
    assert "Rank by meaning (whole document)" in text and "Shown as" in text
    # the ranking's numbers by name, none by its raw key
    assert "Ranking score: meaning and words combined" in text and "Evidence of relevance" in text
    assert not re.search(r"\b(fused|evidence|alignment) \d", text)
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
    assert window.results_stack.currentWidget() is window.empty_page
    assert "Nothing relevant found" in window.empty.text()
    assert "“xylophone”, “zeppelin” are in none of your documents" in window.empty.text()
    assert not window.show_weak_button.isVisible()  # nothing matched at all, so nothing is hidden either
    # a quoted query is not quoted again
    type_query(qtbot, window, '"xylophone zeppelin"')
    assert window.empty.text().startswith('Nothing relevant found for "xylophone zeppelin".')
    # a stop word alone finds nothing relevant, and the window says why
    type_query(qtbot, window, "the")
    assert "“the” is a word too common to search by: add a word that says what you are looking for" in window.empty.text()
    # with results, the words no document holds are named in the status bar
    window.mode_box.setCurrentIndex(window.mode_box.findData("hybrid"))
    type_query(qtbot, window, "echolocation squid zeppelin")
    assert window.model.rowCount() >= 1
    assert window.statusBar().currentMessage() == "“zeppelin” is in none of your documents"


def test_unlikely_matches_are_shown_labelled_and_unrelated_ones_one_click_away(qtbot, window, corpus):
    window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    # one word of four in the corpus: its documents are shown, each labelled unlikely, under a line saying so
    response = type_query(qtbot, window, "echolocation xylophone zeppelin quasar")
    assert response.answer is Answer.CLOSEST and response.results and all(r.weak for r in response.results)
    assert window.results_stack.currentWidget() is window.results_page
    assert window.answer_note.isVisible()
    assert window.answer_note.text() == "No strong match for “echolocation xylophone zeppelin quasar”; the closest passages:"
    assert window.model.index(0).data(Role.LOCATION).startswith("unlikely match")
    assert "unlikely match" in window.model.index(0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert "An unlikely match: results like this one answered the query about" in window.preview.browser.toPlainText()
    # by meaning, documents that share nothing with the query are left out; one click, or Ctrl+Shift+A, lists them
    window.mode_box.setCurrentIndex(window.mode_box.findData("semantic"))
    response = type_query(qtbot, window, "quantum physics of superconductors")
    assert response.weak_hidden >= 1 and not any(not r.related for r in response.results)
    button = window.show_weak_button
    if response.results:
        assert not window.answer_note.isVisible() or window.answer_note.text().startswith("No strong match")
    else:
        assert window.results_stack.currentWidget() is window.empty_page and button.isVisible()
        assert button.text() == f"Show {response.weak_hidden} unrelated document" + "s" * (response.weak_hidden != 1)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        qtbot.keyClick(window.search_box, Qt.Key.Key_A,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    listed = blocker.args[0]
    assert len(listed.results) == len(response.results) + response.weak_hidden
    assert any(not r.related for r in listed.results) and all(r.weak for r in listed.results if not r.related)
    assert window.results_stack.currentWidget() is window.results_page


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
    qtbot.waitUntil(lambda: opened.paths() == [first.path])
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: opened.paths()[-1:] == [str(Path(first.path).parent)])

    window.results.setFocus()
    qtbot.keyClick(window.results, Qt.Key.Key_Down)  # the list's own arrows work too
    qtbot.keyClick(window.results, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: opened.paths()[-1:] == [second.path])
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.search_box.hasFocus()
    window.results.setFocus()
    qtbot.keyClick(window.results, Qt.Key.Key_Slash)
    assert window.search_box.hasFocus() and window.search_box.text() == "water"

    # choosing a mode from the keyboard hands the keys back to the search field, where Down moves the selection
    window.mode_box.setFocus()
    qtbot.keyClick(window.mode_box, Qt.Key.Key_Down)
    assert window.search_box.hasFocus()

    qtbot.keyClick(window.search_box, Qt.Key.Key_Escape)
    assert window.search_box.text() == "" and window.model.rowCount() == 0
    qtbot.keyClick(window.search_box, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)  # no menu bar: Ctrl+Q quits
    qtbot.waitUntil(lambda: not window.isVisible())


def test_ctrl_m_finds_other_documents_like_the_selected_passage(qtbot, window, corpus):
    # two more documents about animals that hunt by sound: what a passage about porpoises is like
    (corpus / "animals" / "dolphins.txt").write_text(
        "Dolphins find fish with echolocation, sending clicks through the murky water.\n", encoding="utf-8")
    (corpus / "animals" / "whales.txt").write_text(
        "Sperm whales use echolocation to hunt squid in the deep, dark water.\n", encoding="utf-8")
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "porpoises hunting with echolocation")
    source = window.current_result()
    assert source.path.endswith("porpoise.md")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    searched = []  # the thread that searched: never the GUI thread
    window.controller._searcher.answered.connect(lambda *_: searched.append(QThread.currentThread().objectName()),
                                                 Qt.ConnectionType.DirectConnection)
    window.results.setFocus()  # as after clicking the result
    # a watcher pass may still re-run the typed query; the answer awaited is the one to this passage
    with qtbot.waitSignal(window.results_shown, timeout=10_000,
                          check_params_cb=lambda r: r.query == source.sentence) as blocker:
        qtbot.keyClick(window.results, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    response = blocker.args[0]  # that passage, read from the index
    assert response.mode.value == "semantic"  # ranked by meaning, as `quire search --like` does, in hybrid mode too
    # the list heard of the answer through a queued connection made before this direct one: the search thread may
    # not have run this one yet when the list shows the answer
    qtbot.waitUntil(lambda: bool(searched), timeout=5_000)
    assert set(searched) == {"quire-search"}
    paths = [r.path for r in response.results]
    assert len(paths) >= 2 and source.path not in paths  # other documents, never the one it came from
    assert window.model.rowCount() == len(paths) and window.current_result().path == paths[0]
    assert window.like_chip.isVisible() and window.like_chip.text().startswith("Like: a passage of porpoise.md")
    assert source.sentence in window.like_chip.toolTip()
    assert window.search_box.text() == "" and window.search_box.hasFocus()

    # a mode change reruns it like the same passage: words only ranks it by words
    with qtbot.waitSignal(window.results_shown, timeout=10_000,
                          check_params_cb=lambda r: r.mode.value == "lexical") as blocker:
        window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))
    assert blocker.args[0].query == source.sentence
    assert source.path not in [r.path for r in blocker.args[0].results] and window.like_chip.isVisible()

    # Esc clears the chip and the results; Ctrl+M again (from the search field) and then typing replaces it
    qtbot.keyClick(window.search_box, Qt.Key.Key_Escape)
    assert not window.like_chip.isVisible() and window.model.rowCount() == 0
    type_query(qtbot, window, "porpoises hunting with echolocation")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_box, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert window.like_chip.isVisible()
    type_query(qtbot, window, "spaghetti")
    assert not window.like_chip.isVisible() and window.current_result().path.endswith("pasta.html")


def test_stale_answers_are_dropped(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    shown = []
    window.results_shown.connect(shown.append)
    window.controller.search("porpoise")
    window.controller.search("spaghetti")
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    # the search thread takes requests in order: once it has run a call queued behind both queries, whatever it
    # sent for them is in the GUI thread's queue, and processing that queue delivers a stale answer, were it sent
    drained = []
    QTimer.singleShot(0, window.controller._searcher, lambda: drained.append(QThread.currentThread().objectName()))
    qtbot.waitUntil(lambda: bool(drained), timeout=10_000)
    assert drained == ["quire-search"]
    QApplication.processEvents()
    QApplication.processEvents()
    assert {r.query for r in shown} == {"spaghetti"}  # its first answer, and its second look's


def many_files(root: Path, n: int = 300, more: int = 0) -> Path:
    """``n`` field notes under ``root``, each with ``more`` sentences besides its own three."""
    root.mkdir(parents=True)
    for i in range(n):
        extra = "".join(f" Beetle {j} of note {i} had {j % 7} spots on its left wing." for j in range(more))
        (root / f"note{i:04d}.txt").write_text(
            f"Field note {i}. The expedition catalogued {i} species of beetle near the river delta. "
            f"Specimen {i} was photographed at dawn and stored in alcohol.{extra}", encoding="utf-8")
    return root


def folder_rows(panel: FoldersPanel) -> list[str]:
    """The folder list's rows as shown."""
    return [panel.model.item(r).text() for r in range(panel.model.rowCount())]


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


def test_a_crashed_indexing_process_is_reported_and_the_next_run_recovers(qtbot, window, tmp_path):
    import signal

    # too little text to start reader processes: killing the indexer then leaves no orphaned reader behind
    folder = many_files(tmp_path / "notes", 15)
    errors: list[str] = []
    window.controller.error.connect(errors.append)

    def kill_indexer(p) -> None:
        if p.phase == "scanning" and not errors:  # the run has begun: reading, writing, saving are still to come
            os.kill(window.controller._process._process.pid, signal.SIGKILL)  # as a crash in a PDF parser would

    window.controller.progress.connect(kill_indexer)
    with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS) as blocker:
        drop(window, [folder])
    assert blocker.args[0] is None
    assert errors and "indexing stopped unexpectedly" in errors[0]
    assert window.banner.isVisible() and "Traceback" not in window.banner.text()
    wait_indexed(qtbot, window)
    window.controller.progress.disconnect(kill_indexer)

    drop(window, [folder])  # a new indexing process picks up where the dead one stopped
    status = wait_indexed(qtbot, window)
    assert status.indexed == 15


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
    skipped = [f for f in status.files if f.status == FileState.SKIPPED]
    assert [Path(f.path).name for f in skipped] == ["empty.txt"] and skipped[0].reason
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
    assert Settings(settings.store).get(S.IGNORE) == ["*.log"]
    settings.store.setValue(S.WATCH_NEW.key, "false")
    assert Settings(settings.store).get(S.WATCH_NEW) is False
    with pytest.raises(TypeError):
        settings.set(S.RESULTS_K, "many")
    assert Option("x/y", int, 7).read(settings.store) == 7

    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.mode.setCurrentIndex(dialog.mode.findData("lexical"))
    dialog.ignore.setPlainText("*.tmp\n\nbuild/\n")
    dialog.accept()
    settings.flush()  # written on the settings thread: wait until it is on disk
    assert "mode=lexical" in (tmp_path / "settings.ini").read_text()
    reread = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    assert reread.get(S.SEARCH_MODE) == "lexical"
    assert reread.get(S.IGNORE) == ["*.tmp", "build/"]
    assert reread.ignore_patterns() == ("*.tmp", "build/")


def test_settings_describe_each_method_and_estimate_a_slow_one_here(qtbot, settings):
    """Issue 34: "static / neural / sbert" with no description, and sbert disabled on a CPU where it runs (slowly)."""
    import importlib.util

    from app.gui.settings_dialog import GPU_EXTRA, METHOD_NOTES, SettingsDialog

    dialog = SettingsDialog(settings, sentences=55_000)
    qtbot.addWidget(dialog)
    assert dialog.method_note.text().startswith(METHOD_NOTES["static"])
    qtbot.waitUntil(lambda: dialog.device.text().startswith("Device:"), timeout=60_000)
    qtbot.waitUntil(lambda: "sentences a second" in dialog.method_note.text(), timeout=60_000)
    assert "so the 55,000 sentences indexed now would take " in dialog.method_note.text()
    assert "about 0 s" not in dialog.method_note.text()  # the static model embeds them in under a second
    dialog.sentences = 10**9
    dialog._on_method()
    assert re.search(r"1,000,000,000 sentences indexed now would take about \d+ (min|h)", dialog.method_note.text())
    static_rate = rate_in(dialog.method_note.text())
    sbert = dialog.method.findData("sbert")
    torch = importlib.util.find_spec("torch") is not None
    assert dialog.method.model().item(sbert).isEnabled() == torch  # on a CPU as well: slow, not impossible
    dialog.method.setCurrentIndex(sbert)
    assert dialog.method_note.text().startswith(METHOD_NOTES["sbert"])
    if not torch:
        assert GPU_EXTRA in dialog.method_note.text()
        return
    qtbot.waitUntil(lambda: "would take about" in dialog.method_note.text(), timeout=120_000)
    assert 0 < rate_in(dialog.method_note.text()) < static_rate  # measured, and the order every benchmark shows


def rate_in(note: str) -> float:
    """The sentences a second a settings note states."""
    return float(re.search(r"about ([\d,.]+) sentences a second", note).group(1).replace(",", ""))


def test_highlight_helper():
    text = "Fish & chips <b>"
    spans = (Highlight(0, 4, "fish"), Highlight(2, 6, "sh"), Highlight(7, 12, "chips"))
    assert highlight_html(text, spans) == "<mark>Fish</mark><mark> &amp;</mark> <mark>chips</mark> &lt;b&gt;"


def test_a_chip_shows_only_when_it_carries_the_match():
    from engine.facets.results import Facet, FacetExplanation, WordCoverage
    from engine.search.results import Explanation, SearchResult

    facets = (Facet("appointments", ("appointments",), 0.22), Facet("clinic", ("clinic", "hospital", "patients"), 0.2),
              Facet("sending", ("sending",), 0.19), Facet("zwingli", ("zwingli",), 0.35))
    coverage = (WordCoverage("doctor", 0.62, 0.9, "clinic"), WordCoverage("texting", 0.21, 0.8, "sending"),
                WordCoverage("doctor", 0.62, 0.9, "clinic"))  # a pasted paragraph's words repeat
    evidence = FacetExplanation((), 0.5, coverage, (), (), 0.3, None)
    result = SearchResult("/a.txt", "a", 1.0, 0.5, "Patients book at the clinic.", 0, 10, None, 0, (), (), (),
                          Explanation(0.5, None, None, (), 0.0, 1, None, "semantic", {}, facets=evidence), False,
                          facets=facets)
    shown = chips(result)
    # "clinic" bridges the query's "doctor"; "zwingli" holds much of the passage; "sending" is too far from "texting"
    assert [c.label for c in shown] == ["clinic", "zwingli"]
    assert shown[0].tooltip == "This passage is about: clinic, hospital, patients — near your word 'doctor'"
    # a word the facet holds matches it; one close in meaning is only near it
    assert Chip("river", ("river", "stream"), ("rivers", "brook")).described == (
        "river, stream — matches your word 'rivers'; near your word 'brook'")
    assert shown[1].tooltip == "This passage is about: zwingli"


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


def drop_on_search_box(window: MainWindow, paths: list[Path]) -> bool:
    """A drag from the file manager released over the search field; True when the field or the window took it."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    box = window.search_box
    pos = QPointF(box.width() / 2, box.height() / 2)
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(box, enter)  # Qt offers it to the parents when the field declines
    if not enter.isAccepted():
        return False
    QApplication.sendEvent(box, QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                           Qt.KeyboardModifier.NoModifier))
    return True


WHALES = ("Dolphins and porpoises find fish in dark water by echolocation, listening to the echoes of their clicks.\n\n"
          "Harbour porpoises are often caught in fishing nets along the coast.\n\n"
          "Whales and dolphins breathe air through a blowhole on the top of the head.")


def test_drop_a_file_on_the_search_box_finds_documents_like_it(qtbot, window, corpus, tmp_path):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    note = tmp_path / "elsewhere" / "whales.txt"
    note.parent.mkdir()
    note.write_text(WHALES, encoding="utf-8")
    window.search_box.setText("spaghetti")
    readers = []  # the thread that read the file: never the GUI thread
    window.controller._reader.read.connect(lambda _r: readers.append(QThread.currentThread().objectName()),
                                           Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        assert drop_on_search_box(window, [note])
    response = blocker.args[0]
    qtbot.waitUntil(lambda: bool(readers), timeout=5_000)  # the direct connection runs after the queued one
    assert readers == ["quire-read"]
    assert "echolocation" in response.query and "blowhole" in response.query  # sentences from all through the file
    assert window.like_chip.isVisible() and window.like_chip.text().startswith("Like: whales.txt")
    assert window.search_box.text() == ""
    assert window.current_result().path.endswith("porpoise.md")
    assert window.search_box.hasFocus()

    # Esc clears the chip and the results
    qtbot.keyClick(window.search_box, Qt.Key.Key_Escape)
    assert not window.like_chip.isVisible() and window.model.rowCount() == 0


def test_a_dropped_indexed_file_is_not_its_own_best_match(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    porpoise = corpus / "animals" / "porpoise.md"
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        assert drop_on_search_box(window, [porpoise])
    paths = [r.path for r in blocker.args[0].results]
    assert str(porpoise.resolve()) not in paths
    # the mode can change under a file search: it reruns with the same file
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))
    assert blocker.args[0].mode.value == "lexical" and window.like_chip.isVisible()
    assert str(porpoise.resolve()) not in [r.path for r in blocker.args[0].results]
    # typing a query replaces the file
    type_query(qtbot, window, "spaghetti")
    assert not window.like_chip.isVisible()


def test_folders_dropped_on_the_search_box_are_indexed(qtbot, window, corpus, tmp_path):
    assert drop_on_search_box(window, [corpus])
    status = wait_indexed(qtbot, window)
    assert status.indexed == 5 and not window.like_chip.isVisible()
    # an unreadable file: a readable message, no traceback
    blob = tmp_path / "photo.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    assert drop_on_search_box(window, [blob])
    qtbot.waitUntil(lambda: "cannot search for documents like photo.png" in window.empty.text(), timeout=10_000)
    assert "corrupt image" in window.empty.text() and "Traceback" not in window.empty.text()


def default_app(tmp_path: Path, monkeypatch, mime: str, desktop_id: str, entry: str) -> None:
    """Make ``desktop_id`` (a desktop entry whose lines after the header are ``entry``) the desktop's default
    application for ``mime``, in XDG folders under ``tmp_path``."""
    config, data = tmp_path / "xdg-config", tmp_path / "xdg-data"
    (data / "applications").mkdir(parents=True)
    (data / "applications" / desktop_id).write_text(f"[Desktop Entry]\nType=Application\n{entry}")
    config.mkdir()
    (config / "mimeapps.list").write_text(f"[Default Applications]\n{mime}={desktop_id}\n")
    for name, value in (("XDG_CONFIG_HOME", config), ("XDG_CONFIG_DIRS", config), ("XDG_DATA_HOME", data),
                        ("XDG_DATA_DIRS", data)):
        monkeypatch.setenv(name, str(value))


def test_chips_and_context_arrive_after_the_ranking(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    window.search_box.clear()
    seen = []  # the first row as the list first showed it
    window.results_shown.connect(lambda _r: seen.append((not window.model.unexplained([0]), window.current_result())))
    with qtbot.waitSignal(window.controller.explained, timeout=10_000) as blocker:
        qtbot.keyClicks(window.search_box, "porpoises echolocation")
    explained_rows = blocker.args[1]
    assert 0 in explained_rows
    first_explained, first = seen[-1]
    assert not first_explained and first.facets == () and first.context_before == first.context_after == ()
    top = window.current_result()
    assert not window.model.unexplained([0]) and top.path == first.path and top.score == first.score
    assert top.facets and window.model.index(0).data(Role.FACETS) == chips(top) != []
    context = top.context_before + top.context_after
    assert context and all(sentence in window.preview.browser.toPlainText() for sentence in context)


def test_enter_on_a_pdf_passage_falls_back_to_the_default_application(qtbot, window, tmp_path, opened, monkeypatch):
    from tests.docgen import PDF_PAGE2_SENTENCE, make_pdf

    # the desktop's default PDF application takes no page argument: the PDF opens there (at its first page)
    default_app(tmp_path, monkeypatch, "application/pdf", "firefox.desktop", "Exec=firefox %u\n")
    folder = tmp_path / "pdfs"
    folder.mkdir()
    pdf = make_pdf(folder)
    drop(window, [folder])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "harbour master spring tide")
    top = window.current_result()
    assert top.sentence == PDF_PAGE2_SENTENCE and top.page == 2
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: opened.paths() == [str(pdf.resolve())])
    # the viewer could not be told the page: the window says it
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == f"{pdf.name} opened at its start: the passage is "
                    "on page 2")


def test_search_worker_keeps_its_graph_after_a_run_that_changed_nothing(qtbot, tmp_path: Path) -> None:
    from app.gui.workers import Generations, SearchWorker
    from engine import Index, IndexConfig

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Rigel is a blue supergiant star in the constellation of Orion.", encoding="utf-8")
    with Index(tmp_path / "index", config=IndexConfig(workers=0)) as writer:
        writer.add([docs])
        worker = SearchWorker(tmp_path / "index", Generations())
        opened = worker._open()
        writer.add()
        with qtbot.waitSignal(worker.reloaded):
            worker.reload()
        assert worker._index is opened
        (docs / "b.txt").write_text("Porpoises hunt fish by echolocation.", encoding="utf-8")
        writer.add()
        with qtbot.waitSignal(worker.reloaded):
            worker.reload()
        assert worker._index is not opened
        worker.close()


def test_a_file_that_will_not_open_says_why_and_offers_its_path(qtbot, window, corpus, tmp_path, monkeypatch):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "porpoises hunting with echolocation")
    top = window.current_result()
    # xdg-open as it ends on a desktop with no application for the file, or no file manager for a folder
    launcher(tmp_path / "bin", "xdg-open", 'echo "xdg-open: no method available for opening \'$1\'" >&2; exit 3')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    assert window.banner.text() == f"⚠ Could not open porpoise.md: no method available for opening '{top.path}'"
    assert window.banner.copy_button.isVisible()
    qtbot.mouseClick(window.banner.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == top.path
    assert window.search_box.hasFocus()  # the message is no dialog: typing goes on

    window.banner.hide()
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    assert window.banner.text().startswith("⚠ Could not show porpoise.md in the file manager: no method available")

    window.banner.hide()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no xdg-open at all
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(window.banner.isVisible, timeout=10_000)
    assert window.banner.text() == "⚠ Could not open porpoise.md: xdg-open is not installed"


def test_an_application_the_launcher_waited_for_is_reaped_when_it_ends(qtbot, tmp_path, monkeypatch):
    """xdg-open outside a desktop waits for the application (a new user's vim): once watching stopped, it was a
    zombie from the moment it ended until the next file was opened."""
    from app.gui import desktop
    from app.gui.launch import OpenRequest

    monkeypatch.setattr(desktop, "WATCH_SECONDS", 0.2)
    started = tmp_path / "pid"
    launcher(tmp_path / "bin", "xdg-open", f'echo $$ > "{started}"; sleep 1')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    note = tmp_path / "note.txt"
    note.write_text("The keeper trimmed the wick.\n", encoding="utf-8")
    opener = desktop.Opener()
    opener.open(OpenRequest(str(note)))
    qtbot.waitUntil(lambda: started.exists() and started.read_text().strip() and not opener._running, timeout=5_000)
    # ended (after a second) and reaped: a zombie keeps its /proc entry until its parent waits for it
    process = Path(f"/proc/{int(started.read_text())}")
    qtbot.waitUntil(lambda: not process.exists(), timeout=5_000)


def test_enter_opens_a_text_file_at_the_passage_line_in_the_default_editor(qtbot, window, tmp_path, opened,
                                                                          monkeypatch):
    default_app(tmp_path, monkeypatch, "text/plain", "org.gnome.gedit.desktop", "Exec=gedit %U\nTerminal=false\n")
    edited = tmp_path / "gedit.log"
    launcher(tmp_path / "bin", "gedit", f'echo "$*" >> "{edited}"')
    folder = tmp_path / "notes"
    folder.mkdir()
    notes = folder / "lighthouse.md"
    notes.write_text("# Keepers\n\nThe keeper trimmed the wick at dusk.\n\n*Storms* came in autumn.\n"
                     "Gulls nested on the gallery rail.\n\nThe lamp's   Fresnel lens\nfocused its beam over the "
                     "reef for twenty miles.\n", encoding="utf-8")
    drop(window, [folder])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "fresnel lens beam reef")
    assert window.current_result().sentence.startswith("The lamp")
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(edited.exists, timeout=10_000)
    assert edited.read_text().split() == ["+8", str(notes.resolve())]
    assert opened.paths() == []  # the editor was started directly, not through xdg-open


def test_the_selection_stays_on_the_opened_result_when_the_list_refreshes(qtbot, window, corpus, opened):
    window.settings.set(S.WATCH_NEW, True)
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "water")
    assert window.model.rowCount() >= 2
    qtbot.keyClick(window.search_box, Qt.Key.Key_Down)
    second = window.current_result()
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: opened.paths() == [second.path])
    # the editor writes a swap file beside the document: the watcher re-indexes, and the query runs again
    with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS):
        (Path(second.path).parent / f".{Path(second.path).name}.swp").write_bytes(b"\x00swap")
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        pass
    assert window.current_result().path == second.path
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)  # a second Enter opens the same file again
    qtbot.waitUntil(lambda: opened.paths() == [second.path, second.path])


def test_a_query_note_is_replaced_by_the_next_answer(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "echolocation squid stethescope")
    assert window.statusBar().currentMessage() == "“stethescope” is in none of your documents"
    type_query(qtbot, window, "echolocation squid")
    assert window.statusBar().currentMessage() == ""


def test_did_you_mean_offers_the_indexed_spelling_and_searches_it(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "porpoises echolocaton")
    assert window.suggestion.isVisible() and "echolocation" in window.suggestion.text()
    with qtbot.waitSignal(window.results_shown, timeout=10_000,
                          check_params_cb=lambda r: r.query == "porpoises echolocation"):
        window.suggestion.linkActivated.emit("#")  # the link clicked
    assert window.search_box.text() == "porpoises echolocation" and not window.suggestion.isVisible()
    assert window.current_result().path.endswith("porpoise.md")


def test_run_messages_count_right_and_name_a_skipped_file_once(qtbot, window, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.txt").write_text("Spring tides follow the full and the new moon.", encoding="utf-8")
    empty = folder / "empty.txt"
    empty.write_text("", encoding="utf-8")
    bar = window.statusBar()

    def run(paths: list[Path]) -> str:
        bar.clearMessage()
        with qtbot.waitSignal(window.controller.run_finished, timeout=INDEX_TIMEOUT_MS):
            window.add_paths([str(p) for p in paths])
        wait_indexed(qtbot, window)
        return bar.currentMessage()

    first = run([folder])
    assert first.startswith("indexed 1 document (1 sentence) in ")
    assert first.endswith("; 1 file not indexed (see File report)")
    assert run([folder]) == ""  # a pass that changed nothing (a watcher's, after a file was opened) says nothing
    empty.write_text("Neap tides come at the quarter moons.", encoding="utf-8")
    assert run([folder]).startswith("indexed 1 document (1 sentence)")
    empty.write_text("", encoding="utf-8")  # skipped again: it changed, so it is named again
    assert run([folder]) == "1 file not indexed (see File report)"
    (folder / "tides.txt").unlink()
    assert run([folder]) == "1 deleted file left the index"


def test_result_cards_wrap_to_a_small_window(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "porpoises hunting with echolocation")
    window.resize(760, 520)  # the cards were laid out for the larger window
    qtbot.waitUntil(lambda: window.results.viewport().width() < 400)  # the list's share of a 760-pixel window
    qtbot.wait(100)  # the list lays its items out again on a timer after a resize

    def fits() -> bool:
        viewport = window.results.viewport().width()
        return not window.results.horizontalScrollBar().isVisible() and all(
            window.results.visualRect(window.model.index(r)).right() < viewport for r in range(window.model.rowCount()))

    assert fits()
    type_query(qtbot, window, "porpoises in the ocean")  # and a new answer shown in the small window
    assert fits()


def test_the_breakdown_says_why_in_a_sentence_before_the_numbers(qtbot, window, corpus):
    drop(window, [corpus])
    wait_indexed(qtbot, window)
    type_query(qtbot, window, "porpoises echolocation zeppelin")
    assert window.current_result().path.endswith("porpoise.md")
    text = window.preview.browser.toPlainText()
    assert "Found by meaning and by 2 of your 3 words, which this document holds: porpoises, echolocation." in text
    assert "Details" not in text and "cosine" not in text and "BM25" not in text  # numbers only on demand
    window.breakdown_action.trigger()  # Ctrl+B
    text = window.preview.browser.toPlainText()
    assert text.index("Found by meaning") < text.index("Details") < text.index("cosine") < text.index("BM25")

    window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))
    qtbot.waitUntil(lambda: window.model.response.mode.value == "lexical", timeout=10_000)
    text = window.preview.browser.toPlainText()
    assert "Found by 2 of your 3 words, which this document holds: porpoises, echolocation." in text
    assert "not found by meaning" not in text and "this mode does not order by meaning" in text

    window.mode_box.setCurrentIndex(window.mode_box.findData("hybrid"))
    type_query(qtbot, window, "dolphins")  # in no document: the porpoise is found by what the word means
    assert window.current_result().path.endswith("porpoise.md")
    assert ("Found by meaning only: no word of your query is in this passage."
            in window.preview.browser.toPlainText())


def test_breakdown_headlines_for_each_way_a_result_is_found():
    from app.gui.breakdown import headline
    from engine.search.results import Explanation, MatchedTerm, Mode

    def found(words: tuple[str, ...], semantic: int | None, lexical: int | None) -> Explanation:
        return Explanation(0.5, None, 3.0 if lexical else None, tuple(MatchedTerm(w, w, 1.0) for w in words), 0.5,
                           semantic, lexical, "hybrid", {})

    asked, hybrid = ("river", "otters", "dams"), Mode.HYBRID
    assert (headline(found(("river", "otters"), 1, 2), asked, hybrid)
            == "Found by meaning and by 2 of your 3 words, which this document holds: river, otters.")
    assert (headline(found(asked, None, 1), asked, hybrid)
            == "Found by your words, which this document holds: river, otters, dams.")
    assert headline(found((), 1, None), asked, hybrid) == "Found by meaning only: no word of your query is in this passage."
    assert (headline(found(("otters",), 1, 1), None, hybrid)
            == "Found by meaning and by 1 word of the passage you searched with, which this document holds: otters.")
    # semantic mode looks the words up too, but ranks by meaning alone
    assert (headline(found(("otters",), 4, 2), asked, Mode.SEMANTIC)
            == "Found by meaning; this document also holds 1 of your 3 words: otters.")
    assert headline(found(("otters",), None, 2), asked, Mode.LEXICAL) == "Found by 1 of your 3 words, which this document holds: otters."
    # a word the document holds only in another form of its stem is named as the document writes it
    other = Explanation(0.5, None, 3.0, (MatchedTerm("medication", "medic", 1.0, "Medical"),), 0.5, 1, 1, "hybrid", {})
    assert (headline(other, ("medication", "statins"), hybrid)
            == "Found by meaning and by 1 of your 2 words, which this document holds: medication (as Medical).")
    # of a long list (a file searched with) the eight most informative are named, in order, and the others counted
    many = tuple(MatchedTerm(f"w{i}", f"w{i}", float(i % 5)) for i in range(10))
    long = Explanation(0.5, None, 3.0, many, 0.5, 1, 1, "hybrid", {})
    assert (headline(long, None, hybrid) == "Found by meaning and by 10 words of the passage you searched with, which "
            "this document holds: w1, w2, w3, w4, w6, w7, w8, w9 and 2 more.")


def test_the_preview_puts_a_heading_on_a_line_of_its_own():
    from app.gui.preview import flowed

    # a new user read "Rent and deposit The monthly rent is ..." in the preview of a lease
    texts = ["No pets.", "Rent and deposit", "The rent is £950.", "It is due monthly!", "Groceries: 420", "Fuel: 90"]
    assert flowed(texts, [t.upper() for t in texts]) == (
        "NO PETS.<br>RENT AND DEPOSIT<br>THE RENT IS £950. IT IS DUE MONTHLY!<br>GROCERIES: 420<br>FUEL: 90")
    assert flowed(["He said “stop.”", "Then left."], ["a", "b"]) == "a b"  # a quote closes the sentence
    # numbered items ran together: "£50,000. 1. The crew of four ... 2. Load the van."
    assert flowed(["It cost £50,000.", "1. The crew arrive.", "2. Load the van.", "Done."], list("abcd")) == (
        "a<br>b<br>c<br>d")
    assert flowed([], []) == ""


def test_how_close_in_meaning_is_said_finely_where_most_results_are():
    from app.gui.breakdown import share_of_pairs

    # nearly every shown result is above the 99th percentile of random pairs: "100%" for all of them said nothing
    assert [share_of_pairs(p) for p in (0.934, 0.9973, 0.99949, 0.99995, 1.0)] == [
        "93%", "99.7%", "99.9%", "99.99% or more", "99.99% or more"]


def test_a_chip_tooltip_says_what_the_facet_is_about_and_which_query_word_it_matches(qtbot, window, corpus):
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

    drop(window, [corpus])
    wait_indexed(qtbot, window)
    window.search_box.clear()
    with qtbot.waitSignal(window.controller.explained, timeout=10_000):
        qtbot.keyClicks(window.search_box, "doctor")
    top = window.current_result()
    assert top.path.endswith("appointments.txt")
    shown = window.model.index(0).data(Role.FACETS)
    assert shown and set(c.label for c in shown) <= {f.label for f in top.facets}
    # each chip carries the match: a query word is near it, or it holds much of the passage
    assert all(c.matches or next(f for f in top.facets if f.label == c.label).weight >= 0.3 for c in shown)
    assert any(c.matches == ("doctor",) for c in shown)
    # hovering a chip shows its own tooltip, not the file's path
    delegate, view = window.results.itemDelegate(), window.results
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(window.model.index(0))
    chip, box = next((c, b) for c, b in delegate._chip_boxes(option, window.model.index(0)) if c.matches)
    pos = box.center().toPoint()
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
    qtbot.waitUntil(lambda: QToolTip.isVisible(), timeout=2_000)
    assert QToolTip.text() == chip.tooltip
    assert chip.tooltip.startswith("This passage is about: ") and chip.tooltip.endswith("your word 'doctor'")
    # the preview lists the same chips
    assert chip.described in window.preview.browser.toPlainText()
    elsewhere = QPoint(int(box.right()) + 200, pos.y() - 40)
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, elsewhere,
                                                       view.viewport().mapToGlobal(elsewhere)))
    qtbot.waitUntil(lambda: QToolTip.text() == top.path, timeout=2_000)


def test_a_passage_too_long_for_its_card_ends_in_an_ellipsis(qapp):
    from PySide6.QtGui import QFont, QTextDocument

    from app.gui.delegate import clip

    def clipped(html: str) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(QFont())
        doc.setDocumentMargin(0)
        doc.setHtml(f"<body>{html}</body>")
        doc.setTextWidth(300)
        clip(doc, 2)
        return doc

    # a new user read cards cut off mid-sentence with nothing to say the passage went on
    long = "The monthly rent is <mark>£950</mark>, payable in advance " + "on the first day of each month " * 6
    doc = clipped(long)
    text = doc.toPlainText()
    assert doc.firstBlock().layout().lineCount() == 2 and text.endswith("…") and text.startswith("The monthly rent")
    assert not text[:-1].endswith(" ") and len(text) < len(long)  # cut after a whole word
    assert clipped("x" * 400).toPlainText().endswith("…")  # no space to cut at: cut where the line ends
    assert clipped("Short one.").toPlainText() == "Short one."


def test_the_list_counts_what_was_found_and_pages_on_scroll_and_page_down(qtbot, window, tmp_path):
    """Issue 34: the list stopped at 10 documents with no count ("file": 10 shown, 35+ hold the word)."""
    docs = tmp_path / "river"
    docs.mkdir()
    for i in range(30):  # "river" in all 30 files, "otters" in 12
        otters = " Otters swim past the weir." if i % 3 == 0 or i % 10 == 0 else ""
        (docs / f"d{i:02d}.txt").write_text(f"The river flows past bridge number {i}.{otters}\n", encoding="utf-8")
    window.mode_box.setCurrentIndex(window.mode_box.findData("lexical"))
    drop(window, [docs])
    wait_indexed(qtbot, window)

    response = type_query(qtbot, window, "otters")
    assert window.model.rowCount() == 10 and response.found == 12
    assert window.count_label.text() == "1–10 of 12" and window.count_label.isVisible()
    window.move_selection(3)
    selected = window.current_result()
    # scrolling to the end of the list asks for the next page; its rows are appended and the selection stays
    bar = window.results.verticalScrollBar()
    assert bar.maximum() > 0
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        bar.setValue(bar.maximum())
    paths = [window.model.result(r).path for r in range(window.model.rowCount())]
    assert len(paths) == len(set(paths)) == 12 and window.count_label.text() == "1–12 of 12"
    assert window.current_result() == selected and window.results.currentIndex().row() == 3
    assert paths[:10] == [r.path for r in response.results]
    window.move_selection(100)  # nothing more to load
    assert window._more is None and window.model.rowCount() == 12

    response = type_query(qtbot, window, "river")
    assert window.model.rowCount() == 10 and window.count_label.text() == "1–10 of 30"
    window.move_selection(9)
    assert window.results.currentIndex().row() == 9
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.search_box, Qt.Key.Key_PageDown)  # Page Down on the last row
    assert window.model.rowCount() == 20 and window.count_label.text() == "1–20 of 30"
    assert window.results.currentIndex().row() == 9
    # the same from the list itself, when it has the focus
    window.results.setFocus()
    window.results.setCurrentIndex(window.model.index(19))
    with qtbot.waitSignal(window.results_shown, timeout=10_000):
        qtbot.keyClick(window.results, Qt.Key.Key_PageDown)
    assert window.model.rowCount() == 30 and window.count_label.text() == "1–30 of 30"
    # a new query starts from the first page again
    type_query(qtbot, window, "otters")
    assert window.model.rowCount() == 10 and window.count_label.text() == "1–10 of 12"


def test_the_count_says_when_it_is_a_lower_bound():
    from app.gui.paging import Shown

    assert Shown(10, 39, at_least=True).text == "1–10 of at least 39"
    assert Shown(10, 39, at_least=True).more
    # a page that came back short is all the search can give; duplicates counted in the engine's count drop out
    assert Shown(12, 14, at_least=True, exhausted=True).text == "1–12 of 12"
    assert not Shown(12, 14, at_least=True, exhausted=True).more
    assert Shown(0, 0, False).text == ""
    # a lower bound the rows already reach: another page may still bring more
    assert Shown(10, 10, at_least=True).text == "1–10 of 10 or more" and Shown(10, 10, at_least=True).more
    assert Shown(10, 10, at_least=False).text == "1–10 of 10" and not Shown(10, 10, at_least=False).more


def test_progress_reads_as_a_sentence():
    from app.gui.window import progress_text
    from engine.indexing.run import Progress

    assert progress_text(Progress("scanning", 0, 0, 0)) == "looking for files · 0 sentences"
    assert progress_text(Progress("reading", 12, 40, 1234, eta_seconds=5)).startswith(
        "reading 12 / 40 files · 1,234 sentences · about 5")


def test_the_filter_row_limits_results_to_a_folder_and_a_type(qtbot, window, corpus, tmp_path):
    from conftest import write_corpus

    other = write_corpus(tmp_path / "more", {"sea/porpoises.txt": "Harbour porpoises hunt fish with echolocation.\n"})
    drop(window, [corpus, other])
    wait_indexed(qtbot, window)
    bar = window.filter_bar
    # all, the two folders, and each sub-folder that holds an indexed file, under its folder
    qtbot.waitUntil(lambda: bar.folder.count() == 9)
    labels = [bar.folder.itemText(i) for i in range(bar.folder.count())]
    assert labels[labels.index(corpus.name):][:3] == [corpus.name, f"{corpus.name}/animals", f"{corpus.name}/astronomy"]
    assert "more/sea" in labels
    response = type_query(qtbot, window, "porpoises echolocation")
    assert {Path(r.path).name for r in response.results} >= {"porpoise.md", "porpoises.txt"}
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        bar.folder.setCurrentIndex(bar.folder.findData(str(other.resolve())))
    assert [Path(r.path).name for r in blocker.args[0].results] == ["porpoises.txt"]
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:  # a sub-folder of the other folder
        bar.folder.setCurrentIndex(bar.folder.findText(f"{corpus.name}/animals"))
    assert [Path(r.path).name for r in blocker.args[0].results] == ["porpoise.md"]
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        bar.folder.setCurrentIndex(bar.folder.findData(str(other.resolve())))
    assert bar.clear_button.isEnabled()
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        bar.kind.setCurrentIndex(bar.kind.findText("PDF"))
    assert blocker.args[0].results == () and "with these filters" in window.empty.text()
    # no PDF is in that folder: the window says so, and that the filters are what to change
    assert window.empty.text().endswith("No indexed document passes these filters.\nChange or clear the filters.")
    with qtbot.waitSignal(window.results_shown, timeout=10_000) as blocker:
        bar.clear_button.click()  # one search for the three drop-downs
    assert {Path(r.path).name for r in blocker.args[0].results} >= {"porpoise.md", "porpoises.txt"}
    assert not bar.clear_button.isEnabled() and not bar.filters()


def test_removing_the_last_folder_says_nothing_is_indexed(qtbot, window, corpus):
    """Issue 34: after removing the only folder a query said its words were "in none of your documents", and the
    hint to drop a folder did not come back."""
    from app.gui.folders import NOTHING_INDEXED

    drop(window, [corpus])
    wait_indexed(qtbot, window)
    window.controller.remove([str(corpus)])  # what Remove does once its question is answered yes
    with qtbot.waitSignal(window.controller.status_ready, timeout=INDEX_TIMEOUT_MS,
                          check_params_cb=lambda s: s is not None and not s.roots and not window.controller.busy):
        pass
    assert window.folders.model.rowCount() == 1 and window.folders.model.item(0).text() == NOTHING_INDEXED
    type_query(qtbot, window, "porpoises")
    assert window.empty.text() == NOTHING_INDEXED
    assert "none of your documents" not in window.statusBar().currentMessage()


def test_the_footer_and_folder_list_follow_a_run_while_it_writes(qtbot, make_window, tmp_path, monkeypatch):
    """Issue 34: while a run indexed a new folder, the footer said "0 documents · 0 sentences" and the folder list
    lacked the folder until the run ended, although searches already found its documents."""
    from app.gui import controller

    monkeypatch.setattr(controller, "COUNTS_DURING_RUN_MS", 50)  # often, so that a run of seconds is seen mid-way
    # about 20,000 sentences: the indexing process writes a batch every 8,192 (IndexConfig.batch_sentences), then
    # reads on, so documents are written while the run goes on
    folder = many_files(tmp_path / "notes", 500, more=37)
    window = make_window()
    seen = []  # the footer and the folder list at each progress report: all of them come before the run's end
    window.controller.progress.connect(lambda p: seen.append((window.summary.text(), folder_rows(window.folders))))
    drop(window, [folder])
    status = wait_indexed(qtbot, window)
    written = [(footer, rows) for footer, rows in seen if footer and not footer.startswith("0 documents")]
    assert written, f"no document counted before the run ended; last seen: {seen[-3:]}"
    footer, rows = written[0]
    assert re.fullmatch(r"[\d,]+ documents · [\d,]+ sentences · static method", footer)
    assert rows == ["notes\nindexing…"]
    # the status after the run counts every file again, and the run's mark is gone
    assert window.summary.text() == f"{status.indexed:,} documents · {status.sentences:,} sentences · static method"
    assert status.indexed == 500 and folder_rows(window.folders) == ["notes\n500 indexed"]


def test_the_folder_list_made_again_mid_run_keeps_counts_and_the_selection(qtbot):
    """During a run the folder list is made again every few seconds from a status without files: a folder that had
    files keeps their counts, a new one shows only that it is being indexed, and the selected folder stays selected
    (Remove and File report act on it)."""
    from engine import IndexStatus
    from engine.reports import FileStatus

    panel = FoldersPanel()
    qtbot.addWidget(panel)
    note = FileStatus("/docs/b/x.txt", FileState.INDEXED, None, 3, "x", "text")
    panel.show_status(IndexStatus("/index", "static", None, 1, 1, 0, 0, 3, ("/docs/a", "/docs/b"), ("static",), 0,
                                  (note,)), [], "")
    panel.view.setCurrentIndex(panel.model.index(1, 0))
    panel.show_roots(("/docs/a", "/docs/b", "/docs/c"), ["/docs/b"], "indexing…")
    assert folder_rows(panel) == ["a\nindexing…", "b\n1 indexed · watched · indexing…", "c\nindexing…"]
    assert panel.selected_root() == "/docs/b"
