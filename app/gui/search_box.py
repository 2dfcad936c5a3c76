"""The search field: typing edits the query, while arrows, Enter, Esc and Ctrl+C act on the results list.

Keeping focus in the field while moving through results lets a user type, glance, refine and open without the
mouse; keys the field does not claim behave as in any line edit.

Dropping one file on the field asks for documents like it ("more like this"); folders, or several files, dropped
here are left to the window, which indexes them as it does anywhere else. Where the pointer is decides, not which
widget has the keyboard focus: focus is invisible during a drag, the field under the pointer is not. Dropped text
(a passage dragged from another application) lands in the field as a query, as in any line edit.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLineEdit

MOVES: dict[int, int] = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -5, Qt.Key.Key_PageDown: 5}


def single_file(event: QDropEvent) -> str | None:
    """The path when a drag carries exactly one local file (not a folder)."""
    mime = event.mimeData()
    paths = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()] if mime.hasUrls() else []
    return paths[0] if len(paths) == 1 and Path(paths[0]).is_file() else None


def has_local_paths(event: QDropEvent) -> bool:
    """True when a drag carries files or folders from the file manager."""
    return event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls())


class SearchBox(QLineEdit):
    """Emits ``move`` (rows), ``enter`` (True with Ctrl), ``escape``, ``copy_passage`` and ``file_dropped``."""

    move = Signal(int)  # type: ignore[assignment]  # shadows QWidget.move(x, y), which a search field never needs
    enter = Signal(bool)
    escape = Signal()
    copy_passage = Signal()
    file_dropped = Signal(str)  # a file to find documents like

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key, mods = event.key(), event.modifiers()
        if key in MOVES:
            self.move.emit(MOVES[key])
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.enter.emit(bool(mods & Qt.KeyboardModifier.ControlModifier))
        elif key == Qt.Key.Key_Escape:
            self.escape.emit()
        elif event.matches(QKeySequence.StandardKey.Copy) and not self.hasSelectedText():
            self.copy_passage.emit()
        else:
            super().keyPressEvent(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        self._drag(event, super().dragEnterEvent)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt API
        self._drag(event, super().dragMoveEvent)

    def _drag(self, event: QDragMoveEvent, default) -> None:
        if single_file(event):
            event.acceptProposedAction()
        elif has_local_paths(event):
            event.ignore()  # Qt then offers the drag to the window, which indexes folders
        else:
            default(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        path = single_file(event)
        if path:
            event.acceptProposedAction()
            self.file_dropped.emit(path)
        elif has_local_paths(event):
            event.ignore()
        else:
            super().dropEvent(event)
