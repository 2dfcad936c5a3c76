"""Watched folders: watchdog reports changes, and after a quiet moment the folder is re-indexed.

Re-indexing a whole folder is cheap when little changed: ``Index.add`` compares size and modification time and
re-reads only the files that differ, and drops the ones that vanished.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

log = logging.getLogger(__name__)

# Editors save in bursts (temp file, rename, touch); waiting this long turns a burst into one run.
QUIET_MS = 800


class _Handler(FileSystemEventHandler):
    def __init__(self, root: str, changed: SignalInstance, ignored: Path) -> None:
        self.root, self.changed, self.ignored = root, changed, ignored

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write") or (event.is_directory and event.event_type == "modified"):
            return
        path = Path(str(event.src_path))
        if path == self.ignored or self.ignored in path.parents:
            return  # the index's own files, when it lives inside a watched folder
        self.changed.emit(self.root)  # from watchdog's thread: Qt queues it to the GUI thread


class FolderWatcher(QObject):
    """Emits ``reindex(list of folders)`` once changes under watched folders have settled."""

    reindex = Signal(list)
    _changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.index_dir: Path | None = None
        self._wanted: list[str] = []
        self._observer: BaseObserver | None = None
        self._folders: list[str] = []
        self._dirty: set[str] = set()
        self._timer = QTimer(self, singleShot=True, interval=QUIET_MS)
        self._timer.timeout.connect(self._flush)
        self._changed.connect(self._on_changed)

    def set_index_dir(self, folder: Path) -> None:
        """Where the index lives (its own writes are not changes); watching starts once this is known."""
        self.index_dir = folder.resolve()
        self.watch(self._wanted)

    def watch(self, folders: list[str]) -> None:
        """Watch exactly ``folders`` (those that exist)."""
        self._wanted = list(folders)
        existing = [f for f in folders if Path(f).is_dir()]
        if self.index_dir is None or existing == self._folders:
            return
        self.stop()
        self._folders = existing
        if not existing:
            return
        self._observer = observer = Observer()
        for folder in existing:
            observer.schedule(_Handler(folder, self._changed, self.index_dir), folder, recursive=True)
        observer.daemon = True
        observer.start()
        log.info("watching %s", ", ".join(existing))

    def _on_changed(self, root: str) -> None:
        self._dirty.add(root)
        self._timer.start()

    def _flush(self) -> None:
        roots, self._dirty = sorted(self._dirty), set()
        if roots:
            self.reindex.emit(roots)

    def stop(self) -> None:
        """Stop watching (joins watchdog's thread)."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        self._folders = []
