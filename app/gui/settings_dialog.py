"""The settings dialog: search mode, embedding method, ignore patterns, watched folders.

GPU methods are offered only when an accelerator is found. Detecting one may import torch (seconds), so it runs on
the thread pool after the dialog is shown, and the method list is enabled when the answer arrives.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.gui import settings as S
from app.gui.settings import Settings

# engine.Mode values; the engine is not imported at start-up (a test keeps these in step with Mode)
MODE_LABELS = {"hybrid": "Hybrid (meaning + words)", "semantic": "Semantic (meaning)", "lexical": "Lexical (words)"}


class _DeviceProbe(QObject):
    found = Signal(object)  # engine.embed.device.Device

    def run(self) -> None:
        from engine.embed.device import detect

        self.found.emit(detect())


class SettingsDialog(QDialog):
    """Edits the preferences in :mod:`app.gui.settings`; ``accept`` writes them."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        from engine import embed

        super().__init__(parent)
        self.setWindowTitle("quire settings")
        self.settings = settings
        self.mode = QComboBox()
        for mode, label in MODE_LABELS.items():
            self.mode.addItem(label, mode)
        self.mode.setCurrentIndex(max(0, self.mode.findData(settings.get(S.SEARCH_MODE))))
        self.method = QComboBox()
        for name in embed.names():
            self.method.addItem(name, name)
            self._default_method = embed.DEFAULT_METHOD
            if name != embed.DEFAULT_METHOD:
                self.method.model().item(self.method.count() - 1).setEnabled(False)
        self.method.setCurrentIndex(max(0, self.method.findData(settings.get(S.METHOD))))
        self.device = QLabel("Looking for a GPU…")
        self.ignore = QPlainTextEdit("\n".join(settings.get(S.IGNORE)))
        self.ignore.setPlaceholderText("One gitignore-style pattern per line, e.g.\n*.log\nnode_modules/")
        self.watched = QListWidget()
        self.watched.addItems(settings.get(S.WATCHED))
        self.watch_new = QCheckBox("Watch folders when they are added")
        self.watch_new.setChecked(settings.get(S.WATCH_NEW))
        add, remove = QPushButton("Add…"), QPushButton("Remove")
        add.clicked.connect(self._add_watched)
        remove.clicked.connect(lambda: [self.watched.takeItem(self.watched.row(i)) for i in self.watched.selectedItems()])
        buttons_row = QHBoxLayout()
        buttons_row.addWidget(add)
        buttons_row.addWidget(remove)
        buttons_row.addStretch()
        form = QFormLayout()
        form.addRow("Search mode", self.mode)
        form.addRow("Embedding method", self.method)
        form.addRow("", self.device)
        form.addRow("Ignore patterns", self.ignore)
        form.addRow("Watched folders", self.watched)
        form.addRow("", buttons_row)
        form.addRow("", self.watch_new)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(box)
        self._probe = _DeviceProbe()
        self._probe.found.connect(self._on_device)
        QThreadPool.globalInstance().start(self._probe.run)

    def _on_device(self, device) -> None:
        for row in range(self.method.count()):
            if self.method.itemData(row) != self._default_method:
                self.method.model().item(row).setEnabled(device.accelerated)
        hint = "" if device.accelerated else " · GPU methods need a GPU"
        self.device.setText(f"Device: {device.description}{hint}")

    def _add_watched(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Watch folder", str(Path.home()))
        if folder and folder not in self.watched_folders():
            self.watched.addItem(folder)

    def watched_folders(self) -> list[str]:
        """The folders listed in the dialog."""
        return [self.watched.item(i).text() for i in range(self.watched.count())]

    def accept(self) -> None:
        """Write the preferences and close."""
        self.settings.set(S.SEARCH_MODE, self.mode.currentData())
        self.settings.set(S.METHOD, self.method.currentData())
        self.settings.set(S.IGNORE, [p.strip() for p in self.ignore.toPlainText().splitlines() if p.strip()])
        self.settings.set(S.WATCHED, self.watched_folders())
        self.settings.set(S.WATCH_NEW, self.watch_new.isChecked())
        super().accept()
