"""``quire-app``: start the window, or with ``--selftest DIR`` prove that a packaged build works end to end.

Nothing here imports torch: the static method is the default and GPU methods load only when an index uses them.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.output import print_line
from engine import FileState

if TYPE_CHECKING:
    from app.gui.settings import Settings
    from app.gui.window import MainWindow

STARTED = time.perf_counter()
# The self-test waits this long at most for indexing a small folder and one query.
SELFTEST_TIMEOUT_S = 600
# Exit status of a run that nobody watches when an unexpected error stops it (EX_SOFTWARE of sysexits.h).
EXIT_UNEXPECTED = 70
# Qt platforms that draw to no screen: nobody can see, let alone answer, a message box there.
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "minimalegl"})
# How often the interpreter wakes while Qt's loop waits, to run a signal's handler (_close_on_signals).
SIGNAL_CHECK_MS = 200
# What ``pip install 'quire[app]'`` adds to the engine's dependencies (pyproject.toml).
APP_PACKAGES = ("PySide6", "watchdog")

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="quire-app", description="quire desktop app: drop a folder, search it.",
                                epilog="Example: quire-app --selftest ~/Documents/papers")
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="folders or files to index and watch (what a file manager's Open With passes)")
    p.add_argument("--index", type=Path, default=None, help="index folder (default: the user data folder)")
    p.add_argument("--selftest", type=Path, metavar="DIR",
                   help="index DIR into a temporary index, search it, print the top result and exit")
    p.add_argument("--query", help="with --selftest: the query (default: the title of an indexed document)")
    p.add_argument("--screenshot", type=Path, help="with --selftest: save a PNG of the window showing the results")
    p.add_argument("--startup-probe", action="store_true", help=argparse.SUPPRESS)  # bench/gui_latency.py
    p.add_argument("--debug", action="store_true", help="debug logging")
    return p


def _application():
    from PySide6.QtCore import Qt, qInstallMessageHandler
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from app.gui.settings import APPLICATION, ORGANISATION

    # fractional scale factors (150 %) render at their true size instead of being rounded to 1x or 2x
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("quire")
    app.setDesktopFileName("quire")
    qInstallMessageHandler(_qt_message)
    return app


def _qt_message(kind, _context, message: str) -> None:
    """Qt's own warnings go to the log (the offscreen platform is chatty about window hints it cannot honour)."""
    from PySide6.QtCore import QtMsgType

    level = logging.ERROR if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) else logging.DEBUG
    logging.getLogger("qt").log(level, "%s", message)


def _install_excepthook(interactive: bool) -> None:
    """An unexpected error shows a readable message box instead of killing the app with a traceback.

    Only where someone can answer it: in a run nobody watches (``--startup-probe``, the offscreen or minimal
    platform) a modal box would wait forever (packaging/smoke.sh hung on one, issue 33 item 11), so the traceback
    goes to the log on stderr and the app exits with :data:`EXIT_UNEXPECTED`.
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.gui.errors import describe

    def hook(kind, value, tb) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        if not interactive:
            log.critical("unexpected error; quitting, as nobody is there to answer a message", exc_info=(kind, value, tb))
            # from the event loop's next turn, so that an error before app.exec() stops the run as well
            QTimer.singleShot(0, lambda: QApplication.exit(EXIT_UNEXPECTED))
            QApplication.exit(EXIT_UNEXPECTED)
            return
        message = describe(value)
        QMessageBox.warning(QApplication.activeWindow(), "quire", message)

    sys.excepthook = hook


def _interactive(args: argparse.Namespace) -> bool:
    """Whether a person may be looking at the window: not a probe, not a platform that draws to no screen."""
    from PySide6.QtGui import QGuiApplication

    return not args.startup_probe and QGuiApplication.platformName() not in HEADLESS_PLATFORMS


def _wait(emitted, timeout_s: float, until=lambda *_: True):
    """Run the event loop until the Qt signal ``emitted`` fires with arguments accepted by ``until``; returns them
    (None: timeout)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop, got = QEventLoop(), []

    def on(*args) -> None:
        if until(*args):
            got.append(args)
            loop.quit()

    emitted.connect(on)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    emitted.disconnect(on)
    return got[0] if got else None


def _sample_query(path: str) -> str:
    """A sentence of an indexed document (the longest of its first ten), so the self-test has a known answer."""
    from engine import Limits, extract

    document = extract(path, Limits()).document
    if document is None:
        return Path(path).stem
    return max((s.text for s in document.sentences[:10]), key=len)


def selftest(folder: Path, query: str | None, screenshot: Path | None) -> int:
    """Index ``folder`` into a temporary index through the real window and workers, search, print the top result."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings

    from app.gui import settings as S
    from app.gui.settings import Settings
    from app.gui.window import MainWindow

    if not folder.exists():
        print(f"selftest: {folder} does not exist", file=sys.stderr)
        return 2
    app = _application()
    with tempfile.TemporaryDirectory(prefix="quire-selftest-") as tmp:
        settings = Settings(QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat))
        settings.set(S.WATCH_NEW, False)
        window = MainWindow(Path(tmp) / "index", settings)
        window.show()
        errors: list[str] = []
        window.controller.error.connect(errors.append)
        window.add_paths([str(folder)])
        status = _wait(window.controller.status_ready, SELFTEST_TIMEOUT_S,
                       until=lambda s: s is not None and not window.controller.busy)
        indexed = [f for f in status[0].files if f.status == FileState.INDEXED] if status else []
        if not indexed:
            print(f"selftest: nothing indexed from {folder}" + (f": {errors[-1]}" if errors else ""), file=sys.stderr)
            window.close()
            return 1
        text = query or _sample_query(indexed[0].path)
        window.search_box.setText(text)
        answer = _wait(window.results_shown, 60)
        top = answer[0].results[0] if answer and answer[0].results else None
        if screenshot is not None:
            app.processEvents()
            window.grab().save(str(screenshot))
        window.close()
    if top is None:
        print(f"selftest: no result for {text!r}", file=sys.stderr)
        return 1
    sim = f"{top.similarity:.3f}" if top.similarity is not None else "n/a"
    print(f"query: {text}\ntop result: {top.path}\nsimilarity: {sim}\npassage: {top.sentence}")
    return 0


def _lag_probe(interval_ms: int = 10):
    """Start a timer on the GUI thread; the returned function gives its worst lateness so far in ms (how long the
    window could not react while the engine loaded beside it)."""
    from PySide6.QtCore import Qt, QTimer

    timer = QTimer(interval=interval_ms, timerType=Qt.TimerType.PreciseTimer)
    last, worst = [0.0], [0.0]

    def tick() -> None:
        now = time.perf_counter()
        if last[0]:  # from the first tick on: the event loop is running
            worst[0] = max(worst[0], (now - last[0]) * 1000 - interval_ms)
        last[0] = now

    timer.timeout.connect(tick)
    timer.start()
    return lambda: (timer, worst[0])[1]  # the closure keeps the timer alive


def _close_on_signals(window: MainWindow) -> None:
    """SIGTERM (a session ending, ``kill``) and Ctrl+C in the terminal close ``window`` as Ctrl+Q does, its indexing
    and search threads stopped in order: killed outright, Qt aborted on threads still running ("QThread: Destroyed
    while thread 'quire-read' is still running"). Python runs a handler only when it runs code, so a timer wakes it
    while Qt's loop waits (the window's own timer, which lives as long as it)."""
    from PySide6.QtCore import QTimer

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: window.close())
    timer = QTimer(window, interval=SIGNAL_CHECK_MS)
    timer.timeout.connect(lambda: None)
    timer.start()


def open_window(args: argparse.Namespace, settings: Settings | None = None) -> MainWindow:
    """Show the main window on ``args.index``; the folders and files named on the command line are indexed (and
    watched, as dropped ones are) from the start."""
    from app.gui.window import MainWindow

    window = MainWindow(args.index, settings)
    window.show()
    if args.paths:
        window.add_paths([str(p) for p in args.paths])
    return window


def _index_dir(args: argparse.Namespace) -> Path:
    from engine import default_index_dir

    return args.index if args.index is not None else default_index_dir()


def _claim(args: argparse.Namespace):
    """This window's claim on its index (app.gui.single_instance); None when a window is already open on it."""
    from app.gui import single_instance

    return single_instance.claim(_index_dir(args))


def _handed_over(args: argparse.Namespace) -> bool:
    """Give this run's paths to the window already open on the index, and say so; False when it did not answer."""
    from app.gui import single_instance

    index = _index_dir(args)
    if single_instance.hand_over(index, [str(p) for p in args.paths]):
        given = " and given the folders to index" if args.paths else ""
        print(f"quire is already open on {index}: that window was brought to the front{given}.", file=sys.stderr)
        return True
    print(f"quire is already open on {index}, but that window does not answer. Close it (or end its process), or "
          "open another index with --index.", file=sys.stderr)
    return False


def missing_app_extra() -> list[str]:
    """The desktop app's packages (the ``app`` extra) that are not installed; the CLI and the engine need none."""
    return [name for name in APP_PACKAGES if importlib.util.find_spec(name) is None]


def main(argv: list[str] | None = None) -> int:
    """Console entry point of ``quire-app``."""
    args = _parser().parse_args(argv)
    missing = missing_app_extra()
    if missing:
        print(f"quire-app needs {' and '.join(missing)}, which come with the app extra: pip install 'quire[app]'",
              file=sys.stderr)
        sys.exit(1) if argv is None else None
        return 1
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from engine import keep_freed_memory

    # the app keeps searching: a query's large arrays reuse the last one's memory (docs/decisions/0021); its
    # indexing runs in spawned processes, which keep the C library's defaults
    keep_freed_memory()
    if args.selftest is not None:
        code = selftest(args.selftest, args.query, args.screenshot)
        sys.exit(code) if argv is None else None
        return code
    from PySide6.QtCore import QTimer

    app = _application()
    _install_excepthook(_interactive(args))
    primary = _claim(args)
    if primary is None:
        code = 0 if _handed_over(args) else 1
        sys.exit(code) if argv is None else None
        return code
    window = open_window(args)
    _close_on_signals(window)
    primary.handed_over.connect(window.come_forward)
    app.aboutToQuit.connect(primary.release)
    if args.startup_probe:
        # the first turn of the event loop after show(): the window is painted and takes input; then the engine
        # finishes loading on its thread and searches can be answered. A reader that stops reading after "ready"
        # (grep -q) closes the pipe: the rest of the output goes nowhere and the window still closes (app.output).
        QTimer.singleShot(0, lambda: print_line(f"ready {time.perf_counter() - STARTED:.3f}"))
        lag = _lag_probe()

        def engine_ready(_folder: str) -> None:
            try:
                print_line(f"engine {time.perf_counter() - STARTED:.3f} lag {lag():.1f}")
            finally:
                window.close()

        window.controller.ready.connect(engine_ready)
    code = app.exec()
    if argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
