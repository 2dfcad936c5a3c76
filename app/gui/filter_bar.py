"""The filter row under the search field: which folder, which type of file, modified when (as Recoll's and
DocFetcher's filters). Changing one searches again; the engine applies them (engine.store.filters)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
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


def folders_within(roots: Iterable[str], files: Iterable[str]) -> list[tuple[str, str]]:
    """(folder, label) of each root and, below it, each of its sub-folders that holds an indexed file (at any depth),
    in path order; a sub-folder's label is its path from the root's name ("notes/2024/may")."""
    roots = sorted(roots)
    below: dict[str, set[str]] = {root: set() for root in roots}
    for path in files:
        root = next((r for r in roots if path.startswith(r.rstrip(os.sep) + os.sep)), None)
        if root is None:
            continue
        folder = os.path.dirname(path)
        while len(folder) > len(root) and folder not in below[root]:
            below[root].add(folder)
            folder = os.path.dirname(folder)
    shown = []
    for root in roots:
        name = Path(readable(root)).name or readable(root)
        shown.append((root, name))
        shown += [(f, f"{name}/{readable(os.path.relpath(f, root))}") for f in sorted(below[root])]
    return shown


class FilterBar(QWidget):
    """Three drop-downs and a Clear button; ``changed`` fires when the choice changes."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = QComboBox()
        self.folder.setAccessibleName("Folder filter")
        self.folder.setToolTip("Search only this indexed folder, or one of its sub-folders")
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

    def set_folders(self, roots: Iterable[str], files: Iterable[str] = ()) -> None:
        """Offer the index's folders and the sub-folders that hold ``files`` (the indexed ones' paths); the chosen one
        stays chosen while it is still offered."""
        chosen = self.folder.currentData()
        self.folder.blockSignals(True)
        self.folder.clear()
        self.folder.addItem("All folders", None)
        for folder, label in folders_within(roots, files):
            self.folder.addItem(label, folder)
            self.folder.setItemData(self.folder.count() - 1, readable(folder), Qt.ItemDataRole.ToolTipRole)
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
