"""The settings dialog: search mode, embedding method, ignore patterns, watched folders.

Each method is described, and offered wherever it can run: the GPU methods run on a CPU too, only slowly, so
picking one measures its speed here (``engine.embed.speed``, on the thread pool) and says how long the index's
sentences would take. Detecting the device may import torch (seconds), so it also runs on the thread pool after
the dialog is shown, and the method list is enabled when the answer arrives.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
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
from app.gui.wording import duration_text

log = logging.getLogger(__name__)

# engine.Mode values; the engine is not imported at start-up (a test keeps these in step with Mode)
MODE_LABELS = {"hybrid": "Hybrid (meaning + words)", "semantic": "Semantic (meaning)", "lexical": "Lexical (words)"}
METHOD_NOTES = {
    "static": "Word vectors distilled from a sentence model: fast on any computer, no GPU needed. The default.",
    "sbert": "all-MiniLM-L6-v2, a sentence transformer: better at word order and paraphrase; slow without a GPU.",
    "neural": "Word embeddings micro-tuned on your own documents with a masked language model; slow without a GPU.",
}
GPU_EXTRA = "Needs the GPU extra: pip install 'quire[gpu]'."


class _DeviceProbe(QObject):
    found = Signal(object, bool)  # engine.embed.device.Device; whether torch is installed

    def run(self) -> None:
        import importlib.util

        from engine import detect_device

        self.found.emit(detect_device(), importlib.util.find_spec("torch") is not None)


class _SpeedProbe(QObject):
    measured = Signal(str, float)  # method, sentences a second (0: it could not load)

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = method

    def run(self) -> None:
        from engine import QuireError, sentences_per_second

        try:
            rate = sentences_per_second(self.method)
        except QuireError as e:
            log.warning("cannot measure the %s method here: %s", self.method, e)  # the note points to the log
            rate = 0.0
        self.measured.emit(self.method, rate)


class SettingsDialog(QDialog):
    """Edits the preferences in :mod:`app.gui.settings`; ``accept`` writes them."""

    def __init__(self, settings: Settings, parent: QWidget | None = None, *, sentences: int = 0) -> None:
        from engine import DEFAULT_METHOD, embedding_methods

        super().__init__(parent)
        self.setWindowTitle("quire settings")
        self.settings = settings
        self.sentences = sentences  # what the index holds: the estimate says how long re-embedding them takes
        self._rates: dict[str, float] = {}
        self._probes: dict[str, _SpeedProbe] = {}
        self._device = None
        self.mode = QComboBox()
        for mode, label in MODE_LABELS.items():
            self.mode.addItem(label, mode)
        self.mode.setCurrentIndex(max(0, self.mode.findData(settings.get(S.SEARCH_MODE))))
        self.method = QComboBox()
        self._default_method = DEFAULT_METHOD
        for name in embedding_methods():
            self.method.addItem(name, name)
            self.method.setItemData(self.method.count() - 1, METHOD_NOTES.get(name, ""), Qt.ItemDataRole.ToolTipRole)
            if name != DEFAULT_METHOD:  # until the probe says whether torch is there
                self._method_item(self.method.count() - 1).setEnabled(False)
        self.method.setCurrentIndex(max(0, self.method.findData(settings.get(S.METHOD))))
        self.method_note = QLabel(wordWrap=True)
        self.method.currentIndexChanged.connect(self._on_method)
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
        form.addRow("", self.method_note)
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
        self._on_method()

    def _method_item(self, row: int) -> QStandardItem:
        """The method list's row ``row``: a combo box's own model holds standard items, which can be disabled."""
        model = self.method.model()
        assert isinstance(model, QStandardItemModel)
        return model.item(row)

    def _on_device(self, device, torch_installed: bool) -> None:
        self._device = device
        for row in range(self.method.count()):
            if self.method.itemData(row) != self._default_method:
                self._method_item(row).setEnabled(torch_installed)
        hint = "" if device.accelerated else " · sbert and neural run here too, slowly"
        self.device.setText(f"Device: {device.description}{hint if torch_installed else ''}")
        self._on_method()

    def _on_method(self) -> None:
        """Describe the chosen method; once the device is known, measure its speed here (once) for the estimate."""
        method = self.method.currentData()
        lines = [METHOD_NOTES.get(method, "")]
        enabled = self._method_item(self.method.currentIndex()).isEnabled()
        if self._device is not None and not enabled:
            lines.append(GPU_EXTRA)
        elif method in self._rates:
            lines.append(self._estimate(self._rates[method]))
        elif self._device is not None:
            lines.append("Measuring its speed on this computer…")
            if method not in self._probes:
                probe = self._probes[method] = _SpeedProbe(method)
                probe.measured.connect(self._on_measured)
                QThreadPool.globalInstance().start(probe.run)
        self.method_note.setText("\n".join(line for line in lines if line))

    def _on_measured(self, method: str, rate: float) -> None:
        self._rates[method] = rate
        if method == self.method.currentData():
            self._on_method()

    def _estimate(self, rate: float) -> str:
        """"Here (CPU): about 310 sentences a second, so the 55,000 sentences indexed now would take about 3 min."""
        if rate <= 0:
            return "It could not be loaded here; the log says why."
        # two significant digits below 10: a model that embeds under one sentence a second is not "about 0"
        speed = f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"
        assert self._device is not None  # speeds are measured once the device is known
        here = f"Here ({self._device.description}): about {speed} sentences a second"
        if not self.sentences:
            return here + "."
        seconds = self.sentences / rate
        took = "under a second" if seconds < 1 else f"about {duration_text(seconds)}"  # not "about 0 s"
        return f"{here}, so the {self.sentences:,} sentences indexed now would take {took} to embed."

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
