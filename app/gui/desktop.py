"""Hand documents to the platform (open, at the passage's page or line where the application takes one, or show in
the file manager) and say so when that failed.

Qt's ``QDesktopServices`` reports success once xdg-open has started, so a PDF with no viewer, or a folder with no
file manager, failed silently: xdg-open's complaint went to stderr. Here the launcher is a child process whose exit
status is watched for a few seconds, on a thread of its own, since finding a passage's line reads the file. The
commands come from :mod:`app.gui.launch`.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.gui.launch import Launch, OpenRequest, launch_for, local_request
from app.gui.workers import start_thread

log = logging.getLogger(__name__)

# How long a launcher is watched: xdg-open, gio and `open` give up on a file nothing can open within a second, while
# one that is still running after this long is the application itself (xdg-open outside a desktop waits for it).
WATCH_SECONDS = 5.0
POLL_MS = 100


@dataclass(frozen=True)
class _Running:
    """A launcher being watched: its process, where its stderr goes, and until when it is watched."""

    request: OpenRequest
    launch: Launch
    process: subprocess.Popen
    stderr: tempfile.SpooledTemporaryFile
    until: float


class Opener(QObject):
    """Starts launchers on its own thread and emits ``failed(message, path)`` for those that fail, ``noted(message)``
    for those that did not but could not be told where the passage is (:attr:`Launch.note`)."""

    failed = Signal(str, str)
    noted = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self._running: list[_Running] = []
        self._timer: QTimer | None = None  # made on the opener's thread, where it must tick
        # archive members are opened from copies here, removed when the app closes
        self._copies = tempfile.TemporaryDirectory(prefix="quire-opened-")

    @Slot(object)
    def open(self, request: OpenRequest) -> None:
        """Start what opens ``request``; a failure arrives through ``failed``."""
        from engine import ReadError  # the engine is loaded by the time results show

        try:
            request = local_request(request, Path(self._copies.name))
        except ReadError as e:
            self.failed.emit(f"Could not {request.action}: {e.reason}", request.path)
            return
        path = Path(request.path)
        if not path.exists():
            self.failed.emit(f"{path} is no longer there; it will leave the index at the next refresh", "")
            return
        launch = launch_for(request)
        # stderr to a file, not a pipe: a launcher still running when watching stops must never block on a full pipe
        stderr = tempfile.SpooledTemporaryFile(max_size=65_536)
        try:
            process = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=stderr, start_new_session=True)
        except OSError as e:
            stderr.close()
            what = f"{Path(launch.argv[0]).name} is not installed" if isinstance(e, FileNotFoundError) else e.strerror
            self.failed.emit(f"Could not {request.action}: {what}", request.path)
            return
        log.info("started %s", launch.argv)
        self._running.append(_Running(request, launch, process, stderr, time.monotonic() + WATCH_SECONDS))
        if self._timer is None:
            self._timer = QTimer(self, interval=POLL_MS)
            self._timer.timeout.connect(self._poll)
        self._timer.start()

    def _poll(self) -> None:
        still = []
        for run in self._running:
            status = run.process.poll()
            if status is None and time.monotonic() < run.until:
                still.append(run)
                continue
            if status and run.launch.checked:
                self.failed.emit(f"Could not {run.request.action}: {_reason(run, status)}", run.request.path)
            elif run.launch.note:
                self.noted.emit(run.launch.note)
            run.stderr.close()
            if status is None:
                # the application itself (a terminal editor that xdg-open waits for) goes on alone, and a thread waits
                # to reap it: Python reaps a finished child only when it next starts one, so an editor closed was left
                # a zombie until the next file was opened
                threading.Thread(target=run.process.wait, name="quire-reap", daemon=True).start()
        self._running = still
        if not still and self._timer is not None:
            self._timer.stop()


def _reason(run: _Running, status: int) -> str:
    """The launcher's last line on stderr ("no method available for opening ..."), else its exit status."""
    run.stderr.seek(0)
    lines = [line.strip() for line in run.stderr.read().decode("utf-8", "replace").splitlines() if line.strip()]
    program = Path(run.launch.argv[0]).name
    return lines[-1].removeprefix(f"{program}: ") if lines else f"{program} ended with status {status}"


class Desktop(QObject):
    """The GUI thread's handle on the opener thread: ``open`` returns at once; failures arrive through ``failed``
    (a sentence, and the path, for a "Copy path" offer), where the passage is in a file opened at its start through
    ``noted``."""

    failed = Signal(str, str)
    noted = Signal(str)
    _open = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._opener = Opener()
        self._open.connect(self._opener.open)
        self._opener.failed.connect(self.failed)
        self._opener.noted.connect(self.noted)
        self._thread = start_thread(self._opener, "quire-open")

    def open(self, request: OpenRequest) -> None:
        """Open (or reveal) ``request.path`` on the opener thread."""
        self._open.emit(request)

    def shutdown(self) -> None:
        """Stop the opener thread; launchers still running are left to run."""
        self._thread.quit()
        self._thread.wait()
