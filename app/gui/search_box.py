"""The search field: typing edits the query, while arrows, Enter, Esc and Ctrl+C act on the results list.

Keeping focus in the field while moving through results lets a user type, glance, refine and open without the
mouse; keys the field does not claim behave as in any line edit.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLineEdit

MOVES = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -5, Qt.Key.Key_PageDown: 5}


class SearchBox(QLineEdit):
    """Emits ``move`` (rows), ``enter`` (True with Ctrl), ``escape`` and ``copy_passage``."""

    move = Signal(int)
    enter = Signal(bool)
    escape = Signal()
    copy_passage = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # a folder dropped here is meant for indexing (the window takes it), not to paste its URL as a query
        self.setAcceptDrops(False)

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
