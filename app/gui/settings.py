"""Every setting the app keeps, declared once with its type and default, split into preferences and window state.

Picard's pattern (STYLE.md): a declaration table is the single source of truth, so a typo in a key or a missing
default is an error at the declaration, not a silent ``None`` somewhere in the UI. QSettings stores everything as
strings on some platforms; ``Option.read`` converts back to the declared type.

No engine import here: the window must appear before the engine (and its document readers) has loaded.
"""

from __future__ import annotations

import atexit
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QObject, QSettings, Qt, QThread, Signal, Slot

ORGANISATION = "quire"
APPLICATION = "quire"


@dataclass(frozen=True)
class Option:
    """One persisted value: ``key`` in QSettings, its Python ``type`` and ``default``."""

    key: str
    type: type
    default: Any

    def read(self, store: QSettings) -> Any:
        """The stored value converted to ``type`` (the default when missing or unreadable)."""
        raw = store.value(self.key, None)
        if raw is None:
            return self.default
        if self.type is list:
            # an empty list comes back as None or "" from some backends, a single item as a bare string
            if isinstance(raw, str):
                return [] if raw == "" else [raw]
            return list(raw) if isinstance(raw, Iterable) else self.default
        if self.type is bool:
            return raw if isinstance(raw, bool) else str(raw).lower() in ("1", "true", "yes")
        try:
            return self.type(raw)
        except (TypeError, ValueError):
            return self.default


# User preferences (the settings dialog edits these).
SEARCH_MODE = Option("search/mode", str, "hybrid")  # an engine.Mode value
RESULTS_K = Option("search/results", int, 10)  # as the CLI: each extra result costs engine time per query
METHOD = Option("index/method", str, "static")  # engine.embed.DEFAULT_METHOD (a test keeps them equal)
IGNORE = Option("index/ignore", list, [])
WATCHED = Option("index/watched", list, [])
WATCH_NEW = Option("index/watch_new_folders", bool, True)
# Window and session state (written by the app itself).
GEOMETRY = Option("window/geometry", QByteArray, QByteArray())
SPLITTER = Option("window/splitter", QByteArray, QByteArray())
# Paths whose indexing was paused or interrupted: resumed on request after a restart.
PENDING = Option("session/pending", list, [])

PREFERENCES = (SEARCH_MODE, RESULTS_K, METHOD, IGNORE, WATCHED, WATCH_NEW)


OPTIONS = (*PREFERENCES, GEOMETRY, SPLITTER, PENDING)


class Settings:
    """Typed access to the app's settings; tests pass an isolated store (an INI file under ``tmp_path``).

    Reads come from memory (every option is read once, here) and writes go to disk on a thread of their own
    (:class:`_DiskWriter`): the window never waits for the disk, and another process sees a change moments later.
    """

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store or QSettings(ORGANISATION, APPLICATION)
        self._values = {option.key: option.read(self.store) for option in OPTIONS}

    def get(self, option: Option) -> Any:
        """The current value of ``option`` (a list comes as a copy: changing it changes nothing until ``set``)."""
        value = self._values[option.key] if option.key in self._values else option.read(self.store)
        return list(value) if isinstance(value, list) else value

    def set(self, option: Option, value: Any) -> None:
        """Persist ``value`` for ``option`` (on disk within moments, so a crash keeps it)."""
        if not isinstance(value, option.type):
            raise TypeError(f"{option.key} takes {option.type.__name__}, not {type(value).__name__}")
        self._values[option.key] = list(value) if isinstance(value, list) else value
        _writer().write(self.store, option.key, value)

    def flush(self) -> None:
        """Wait until every change so far is on disk (the window calls this as it closes)."""
        _writer().flush()

    def ignore_patterns(self) -> tuple[str, ...]:
        """Ignore patterns for ``engine.IndexConfig`` (blank lines dropped)."""
        return tuple(p for p in self.get(IGNORE) if p.strip())


class _DiskWriter(QObject):
    """Owns the writing QSettings objects, on a thread of its own, and writes without the interpreter lock.

    A write ends with an fsync, which waits behind everything else queued for the disk: after an indexing run, a
    quarter of a second (measured). ``QSettings.sync()`` called from Python holds the interpreter lock all that
    time, on any thread, and the window froze; and a QSettings that is being written blocks every other QSettings
    on the same file in the process. So the window only reads its own copy of the values, and the QSettings here
    take the changes and write them when Qt handles their deferred ``UpdateRequest``: in C++, without the lock.
    """

    _write = Signal(str, int, str, object)  # file, format, key, value
    _flush = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._thread = QThread()
        self._thread.setObjectName("quire-settings")
        self._stores: dict[tuple[str, int], QSettings] = {}
        self.moveToThread(self._thread)
        self._write.connect(self._on_write)
        self._flush.connect(self._on_flush, Qt.ConnectionType.BlockingQueuedConnection)
        self._thread.start()
        atexit.register(self.stop)

    def write(self, store: QSettings, key: str, value: Any) -> None:
        """Have ``key`` set to ``value`` in ``store``'s file, soon."""
        self._write.emit(store.fileName(), store.format().value, key, value)

    @Slot(str, int, str, object)
    def _on_write(self, name: str, fmt: int, key: str, value: Any) -> None:
        if (name, fmt) not in self._stores:
            self._stores[name, fmt] = QSettings(name, QSettings.Format(fmt))  # created here: it lives on this thread
        self._stores[name, fmt].setValue(key, value)  # Qt writes it from this thread's event loop, shortly

    def flush(self) -> None:
        """Return once every write asked for so far is on disk."""
        self._flush.emit()

    @Slot()
    def _on_flush(self) -> None:
        for store in self._stores.values():
            store.sync()

    def stop(self) -> None:
        """Write what is pending and end the thread (at exit)."""
        self.flush()
        self._thread.quit()
        self._thread.wait()


_WRITER: _DiskWriter | None = None


def _writer() -> _DiskWriter:
    global _WRITER  # one writer thread per process, started on first use
    if _WRITER is None:
        _WRITER = _DiskWriter()
    return _WRITER
