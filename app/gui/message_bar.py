"""The inline message above the results: what went wrong in plain words, with "Copy path" when a file is concerned
(a file that would not open can still be opened by hand), and a button to dismiss it. Never modal: the search
field keeps the keyboard."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget


class MessageBar(QWidget):
    """A one-line (wrapping) warning with optional "Copy path"; hidden until :meth:`show_message`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QPushButton("Copy path")
        self.copy_button.setToolTip("Put the file's path on the clipboard, to open it some other way")
        self.copy_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.copy_button.clicked.connect(self._copy_path)
        close = QToolButton()
        close.setText("✕")
        close.setAccessibleName("Dismiss message")
        close.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.copy_button)
        layout.addWidget(close)
        self._path = ""
        self.setVisible(False)

    def show_message(self, message: str, path: str = "") -> None:
        """Show ``message``; ``path``: the file it is about, offered for copying."""
        self._path = path
        self.label.setText(f"⚠ {message}")
        self.copy_button.setText("Copy path")
        self.copy_button.setVisible(bool(path))
        self.setVisible(True)

    def text(self) -> str:
        """The message shown."""
        return self.label.text()

    def _copy_path(self) -> None:
        QGuiApplication.clipboard().setText(self._path)
        self.copy_button.setText("Path copied")
