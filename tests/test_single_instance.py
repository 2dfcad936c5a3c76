"""One window per index (app.gui.single_instance): a second ``quire-app`` on an index that a window has open hands
its folders over and exits, as real separate processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import settings as S
from app.gui import single_instance
from app.gui.settings import Settings
from app.gui.window import MainWindow

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parent.parent
INDEX_TIMEOUT_MS = 60_000


@pytest.fixture
def start_app():
    """Start ``quire-app ARGS`` as its entry point runs it, offscreen; any still running at teardown is killed."""
    started: list[subprocess.Popen] = []

    def start(*args: str) -> subprocess.Popen:
        started.append(subprocess.Popen([sys.executable, "-m", "app.gui.main", *args], cwd=ROOT, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def window(qtbot, tmp_path: Path):
    """A window on this test's index that holds the index's claim, as ``quire-app`` sets it up."""
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings.set(S.WATCH_NEW, False)
    primary = single_instance.claim(tmp_path / "index")
    assert primary is not None
    window = MainWindow(tmp_path / "index", settings)
    primary.handed_over.connect(window.come_forward)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.close()
    primary.release()


def test_a_second_app_on_the_same_index_hands_its_folder_to_the_open_window(qtbot, tmp_path, window, corpus, start_app):
    window.showMinimized()
    second = start_app("--index", str(tmp_path / "index"), str(corpus / "animals"))
    with qtbot.waitSignal(window.controller.status_ready, timeout=INDEX_TIMEOUT_MS,
                          check_params_cb=lambda s: s is not None and s.indexed > 0 and not window.controller.busy) \
            as indexed:
        pass
    qtbot.waitUntil(lambda: second.poll() is not None, timeout=30_000)
    _, err = second.communicate()
    assert second.returncode == 0, err
    assert "already open" in err and "brought to the front" in err and "Traceback" not in err
    assert {Path(f.path).parent.name for f in indexed.args[0].files} == {"animals"}
    assert not window.isMinimized()


def test_a_second_app_without_folders_only_brings_the_window_forward(qtbot, tmp_path, window, start_app):
    with qtbot.waitSignal(window.controller.status_ready, timeout=INDEX_TIMEOUT_MS):
        pass  # the window's own start: the empty index's status
    window.showMinimized()
    second = start_app("--index", str(tmp_path / "index"))
    qtbot.waitUntil(lambda: second.poll() is not None, timeout=30_000)
    _, err = second.communicate()
    assert second.returncode == 0 and "brought to the front" in err and "given the folders" not in err
    qtbot.waitUntil(lambda: not window.isMinimized(), timeout=5_000)
    assert not window.controller.busy


def test_another_index_gets_a_window_of_its_own(qtbot, tmp_path, window):
    assert single_instance.claim(tmp_path / "other-index") is not None
    assert single_instance.claim(tmp_path / "index") is None  # this test's window holds it


def test_a_window_that_does_not_answer_is_reported_and_nothing_starts(tmp_path, qtbot, start_app):
    # the lock is held but nothing listens: a window hung before its socket, or another user's process
    holder = single_instance.QLockFile(str(single_instance.lock_path(tmp_path / "index")))
    tmp_path.joinpath("index").mkdir()
    assert holder.tryLock(0)
    try:
        second = start_app("--index", str(tmp_path / "index"))
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1
        assert "does not answer" in err and "--index" in err and "Traceback" not in err
    finally:
        holder.unlock()


def test_the_claim_of_a_window_that_was_killed_is_taken_over(tmp_path, qtbot):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\nfrom PySide6.QtCore import QCoreApplication\n"
         "from app.gui import single_instance\napp = QCoreApplication([])\n"
         "held = single_instance.claim(Path(sys.argv[1]))\nprint('held' if held else 'not held', flush=True)\n"
         "time.sleep(600)\n",
         str(tmp_path / "index")], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    try:
        assert holder.stdout.readline().strip() == "held"
        assert single_instance.claim(tmp_path / "index") is None
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    started = time.monotonic()
    primary = single_instance.claim(tmp_path / "index")
    assert primary is not None and time.monotonic() - started < 5
    primary.release()


def test_the_claim_is_freed_when_released(tmp_path, qtbot):
    primary = single_instance.claim(tmp_path / "index")
    assert primary is not None and single_instance.claim(tmp_path / "index") is None
    primary.release()
    again = single_instance.claim(tmp_path / "index")
    assert again is not None
    again.release()


def test_an_index_beside_which_no_lock_can_be_made_still_gets_its_window(tmp_path, qtbot):
    # a read-only place (here: under a file, where no folder can be made) must not keep the window from opening
    (tmp_path / "a-file").write_text("not a folder\n", encoding="utf-8")
    primary = single_instance.claim(tmp_path / "a-file" / "sub" / "index")
    assert primary is not None
    primary.release()
