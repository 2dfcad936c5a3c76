"""`quire-app` as packaging and users run it: a separate process, offscreen or on a real X server (Xvfb)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from clock import wait_until

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parent.parent
SELFTEST = (
    "import sys\n"
    "from app.gui.main import main\n"
    "code = main(sys.argv[1:])\n"
    "assert 'torch' not in sys.modules, 'the static path imported torch'\n"
    "sys.exit(code)\n"
)


def run_app(args: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SELFTEST, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_selftest_indexes_searches_and_prints_the_top_result(corpus):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = run_app(["--selftest", str(corpus), "--query", "toothed whales hunting fish"], env)
    assert done.returncode == 0, done.stderr
    assert "top result:" in done.stdout and "porpoise.md" in done.stdout
    assert "Traceback" not in done.stderr


def test_selftest_fails_cleanly_on_an_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    done = run_app(["--selftest", str(tmp_path / "empty")], {**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 1
    assert "nothing indexed" in done.stderr and "Traceback" not in done.stderr


def test_sigterm_closes_the_window_as_quitting_does(corpus, tmp_path):
    """A session ending, or ``kill``, sends SIGTERM: the window closes and stops its threads in order while it indexes,
    where it was killed outright (Qt then aborted: "QThread: Destroyed while thread 'quire-read' is still running")."""
    index = tmp_path / "index"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    app = subprocess.Popen([sys.executable, "-c", SELFTEST, "--index", str(index), str(corpus)], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the window is up and indexing the folder it was given
        wait_until(lambda: (index / "index.db").exists() or app.poll() is not None, timeout=120)
        app.send_signal(signal.SIGTERM)
        _, err = app.communicate(timeout=60)
    finally:
        app.kill()
    assert app.returncode == 0, err
    assert "QThread" not in err and "Traceback" not in err


@pytest.fixture
def xvfb_display():
    """A private Xvfb server on a display number it picks itself (-displayfd), stopped after the test."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        display = f.readline().strip()
    try:
        if not display:
            pytest.skip("Xvfb did not start")
        yield f":{display}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_screenshot_of_the_real_window_under_xvfb(corpus, tmp_path, xvfb_display):
    from PySide6.QtGui import QImage

    shot = tmp_path / "quire-window.png"
    env = {**os.environ, "DISPLAY": xvfb_display, "QT_QPA_PLATFORM": "xcb"}
    done = run_app(["--selftest", str(corpus), "--query", "water", "--screenshot", str(shot)], env)
    assert done.returncode == 0, done.stderr
    image = QImage(str(shot))
    assert image.width() >= 1000 and image.height() >= 600
    colours = {image.pixel(x, y) for x in range(0, image.width(), 25) for y in range(0, image.height(), 25)}
    assert len(colours) > 20  # a drawn window, not a blank frame


def test_window_module_loads_without_engine_or_torch():
    """The window appears before the engine loads (on a worker thread), so start-up stays under 1.5 s. Only the
    path and page display helpers (engine.text.paths and pages, plain string functions) and the filters (a dataclass)
    may be loaded."""
    code = ("import sys, app.gui.main, app.gui.window\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'torch')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["engine", "engine.filestate", "engine.store", "engine.store.filters", "engine.text",
                                       "engine.text.pages", "engine.text.paths"])


def test_gui_constants_match_the_engine():
    from app.gui import settings as S
    from app.gui.settings_dialog import MODE_LABELS
    from engine import Mode
    from engine.embed import DEFAULT_METHOD

    assert set(MODE_LABELS) == {m.value for m in Mode}
    assert S.SEARCH_MODE.default in MODE_LABELS
    assert S.METHOD.default == DEFAULT_METHOD


def test_screenshots_of_paging_the_breakdown_and_a_facet_tooltip_under_xvfb(corpus, tmp_path, xvfb_display):
    """Issue 34: the pictures a new user sees past the first answer: "1–20 of 30" after paging, the breakdown's
    sentence above its numbers, a chip's tooltip on screen (tests/screenshot_tour.py takes them)."""
    import json

    from PySide6.QtGui import QImage

    river = corpus / "river"
    river.mkdir()
    for i in range(30):  # 30 files about the river, 12 of them with otters: more than a page of answers
        otters = " Otters swim past the weir." if i % 3 == 0 or i % 10 == 0 else ""
        (river / f"d{i:02d}.txt").write_text(f"The river flows past bridge number {i}.{otters}\n", encoding="utf-8")
    shots = tmp_path / "shots"
    shots.mkdir()
    env = {**os.environ, "DISPLAY": xvfb_display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "screenshot_tour.py"), str(corpus), str(shots)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.strip().splitlines()[-1])

    assert facts["count_first"] == f"1–10 of {facts['found']}" and facts["found"] >= 30
    assert facts["rows_paged"] == 20 and facts["count_paged"] == f"1–20 of {facts['found']}"
    assert facts["top"].endswith("appointments.txt") and facts["chips"]
    breakdown = facts["breakdown"]
    assert breakdown.startswith("Found by") or "\nFound by" in breakdown
    assert breakdown.index("Found by") < breakdown.index("Details") < breakdown.index("cosine")
    assert facts["tooltip"] == facts["tooltip_expected"]
    assert facts["tooltip"].startswith("This passage is about: ") and "doctor" in facts["tooltip"]

    images = {name: QImage(str(shots / facts[name])) for name in ("paging", "breakdown_shot", "tooltip_shot")}
    for image in images.values():
        assert image.width() >= 1200 and image.height() >= 800
        colours = {image.pixel(x, y) for x in range(0, 1200, 20) for y in range(0, 800, 20)}
        assert len(colours) > 20  # a drawn window, not a blank frame
    # the tooltip is a window of its own: the screen changed where it appeared, and only around it
    before, after = images["breakdown_shot"], images["tooltip_shot"]
    changed = [(x, y) for x in range(0, 1200, 4) for y in range(0, 800, 4) if before.pixel(x, y) != after.pixel(x, y)]
    assert changed and len(changed) < 0.2 * (300 * 200)
