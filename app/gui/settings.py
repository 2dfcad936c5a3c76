"""Every setting the app keeps, declared once with its type and default, split into preferences and window state.

Picard's pattern (STYLE.md): a declaration table is the single source of truth, so a typo in a key or a missing
default is an error at the declaration, not a silent ``None`` somewhere in the UI. QSettings stores everything as
strings on some platforms; ``Option.read`` converts back to the declared type.

No engine import here: the window must appear before the engine (and its document readers) has loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

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
            return [] if raw == "" else ([raw] if isinstance(raw, str) else list(raw))
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


class Settings:
    """Typed access to a QSettings store; tests pass an isolated one (an INI file under ``tmp_path``)."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store or QSettings(ORGANISATION, APPLICATION)

    def get(self, option: Option) -> Any:
        """The current value of ``option``."""
        return option.read(self.store)

    def set(self, option: Option, value: Any) -> None:
        """Persist ``value`` for ``option`` (written to disk right away, so a crash keeps it)."""
        if not isinstance(value, option.type):
            raise TypeError(f"{option.key} takes {option.type.__name__}, not {type(value).__name__}")
        self.store.setValue(option.key, value)
        self.store.sync()

    def ignore_patterns(self) -> tuple[str, ...]:
        """Ignore patterns for ``engine.IndexConfig`` (blank lines dropped)."""
        return tuple(p for p in self.get(IGNORE) if p.strip())
