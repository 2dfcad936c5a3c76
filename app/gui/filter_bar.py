"""The filter row under the search field: which folder, which type of file, modified when (as Recoll's and
DocFetcher's filters). Changing one searches again; the engine applies them (engine.store.filters)."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from engine import Filters, readable

# What a person calls a type of file, and the file name extensions of each (the readers' formats, grouped).
TYPES: dict[str, tuple[str, ...]] = {
    "PDF": ("pdf",),
    "Word processor (DOCX, ODT, RTF)": ("docx", "odt", "rtf"),
    "Slides (PPTX)": ("pptx",),
    "Web pages (HTML)": ("html", "htm", "xhtml", "shtml"),
    "Text and Markdown": ("txt", "text", "md", "markdown", "mdown", "mkd", "rst", "rest"),
    "E-books (EPUB)": ("epub",),
    "Images read by OCR (PNG, JPEG, TIFF)": ("png", "jpg", "jpeg", "tif", "tiff"),
}
DAY = 86_400.0
# "Modified" choices: how many days back, None for any time.
AGES: dict[str, float | None] = {
    "Any time": None, "Past day": 1, "Past week": 7, "Past month": 30.44, "Past year": 365.24,
}


class FilterBar(QWidget):
    """Three drop-downs and a Clear button; ``changed`` fires when the choice changes."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = QComboBox()
        self.folder.setAccessibleName("Folder filter")
        self.folder.setToolTip("Search only this indexed folder")
        self.folder.addItem("All folders", None)
        self.kind = QComboBox()
        self.kind.setAccessibleName("File type filter")
        self.kind.addItem("All types", None)
        for label, extensions in TYPES.items():
            self.kind.addItem(label, extensions)
        self.age = QComboBox()
        self.age.setAccessibleName("Modified filter")
        self.age.setToolTip("Search only files modified in this time")
        for label, days in AGES.items():
            self.age.addItem(label, days)
        self.clear_button = QPushButton("Clear filters")
        self.clear_button.setEnabled(False)
        self.clear_button.clicked.connect(self.clear)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, box in (("In:", self.folder), ("Type:", self.kind), ("Modified:", self.age)):
            layout.addWidget(QLabel(label))
            layout.addWidget(box)
        layout.addWidget(self.clear_button)
        layout.addStretch(1)
        for box in (self.folder, self.kind, self.age):
            box.currentIndexChanged.connect(self._on_change)

    def set_folders(self, roots: list[str]) -> None:
        """Offer the index's folders; the chosen one stays chosen while it is still indexed."""
        chosen = self.folder.currentData()
        self.folder.blockSignals(True)
        self.folder.clear()
        self.folder.addItem("All folders", None)
        for root in sorted(roots):
            self.folder.addItem(Path(readable(root)).name or readable(root), root)
            self.folder.setItemData(self.folder.count() - 1, readable(root), Qt.ItemDataRole.ToolTipRole)
        self.folder.setCurrentIndex(max(0, self.folder.findData(chosen)))
        self.folder.blockSignals(False)
        if self.folder.currentData() != chosen:
            self._on_change()

    def filters(self) -> Filters:
        """The engine's filters for the choice on screen (an age counts back from now)."""
        folder, types, days = self.folder.currentData(), self.kind.currentData(), self.age.currentData()
        return Filters(folders=(folder,) if folder else (), types=tuple(types or ()),
                       modified_after=None if days is None else time.time() - days * DAY)

    def clear(self) -> None:
        """Back to all folders, all types, any time (one search, not three)."""
        for box in (self.folder, self.kind, self.age):
            box.blockSignals(True)
            box.setCurrentIndex(0)
            box.blockSignals(False)
        self._on_change()

    def _on_change(self) -> None:
        self.clear_button.setEnabled(any(box.currentIndex() > 0 for box in (self.folder, self.kind, self.age)))
        self.changed.emit()
