"""Indexed folders with their status, and the per-file report (indexed, skipped, failed, and why)."""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine import FileState, readable

if TYPE_CHECKING:
    from engine import IndexStatus

FILE_COLUMNS = ("Status", "File", "Sentences", "Reason")

# What the folder list and an answer say while the index holds no folder (none yet, or the last one removed).
NOTHING_INDEXED = "Nothing indexed yet.\nDrop a folder on the window or press Ctrl+O."


def root_summaries(status: IndexStatus) -> list[tuple[str, Counter]]:
    """(root, counts by file status) for every indexed root."""
    counts: dict[str, Counter] = {root: Counter() for root in status.roots}
    for f in status.files:
        for root in counts:
            if f.path == root or f.path.startswith(root.rstrip(os.sep) + os.sep):
                counts[root][f.status] += 1
                break
    return list(counts.items())


def describe_counts(counts: Counter) -> str:
    """"12 indexed · 1 skipped" style text."""
    parts = [f"{counts[s]:,} {s}" for s in FileState if counts[s]]
    return " · ".join(parts) or "no files yet"


class FoldersPanel(QWidget):
    """The list of indexed folders; a double-click or the button opens the per-file report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QStandardItemModel(self)
        self.view = QListView(self)
        self.view.setModel(self.model)
        self.view.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(True)
        self.view.setAccessibleName("Indexed folders")
        self.report_button = QPushButton("File report…", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setToolTip("Remove the selected folder from the index (the files stay on disk)")
        title = QLabel("<b>Folders</b>", self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.report_button)
        buttons.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.view)
        layout.addLayout(buttons)
        self.status: IndexStatus | None = None
        self._counts: dict[str, Counter] = {}  # each root's files by status, as of ``status``

    def show_status(self, status: IndexStatus | None, watched: list[str], busy: str = "") -> None:
        """List the roots of ``status``; watched folders and a running state are marked."""
        self.status = status
        self._counts = dict(root_summaries(status)) if status is not None else {}
        self._list(status.roots if status is not None else (), self._counts, watched, busy)

    def show_roots(self, roots: tuple[str, ...], watched: list[str], busy: str) -> None:
        """List ``roots``, read while a run writes (a status without its files): a root that had files keeps their
        counts until the status after the run; one that had none (new) shows none rather than "no files yet"."""
        self._list(roots, {root: counts for root, counts in self._counts.items() if counts}, watched, busy)

    def _list(self, roots: tuple[str, ...], counted: dict[str, Counter], watched: list[str], busy: str) -> None:
        selected = self.selected_root()  # kept: during a run the list is made again every few seconds
        self.model.clear()
        if not roots:  # never indexed, or its last folder removed
            item = QStandardItem(NOTHING_INDEXED)
            item.setEnabled(False)
            self.model.appendRow(item)
            return
        for root in roots:
            counts = [describe_counts(counted[root])] if root in counted else []
            flags = counts + (["watched"] if root in watched else []) + ([busy] if busy else [])
            name = os.path.basename(root.rstrip(os.sep)) or root
            item = QStandardItem(f"{name}\n{' · '.join(flags)}" if flags else name)
            item.setToolTip(root)
            item.setData(root, Qt.ItemDataRole.UserRole)
            self.model.appendRow(item)
            if root == selected:
                self.view.setCurrentIndex(item.index())

    def selected_root(self) -> str | None:
        """The root of the selected row."""
        index = self.view.currentIndex()
        return index.data(Qt.ItemDataRole.UserRole) if index.isValid() else None


class _FileFilter(QSortFilterProxyModel):
    """Rows whose status matches the chosen one and whose text contains the typed filter."""

    status = "all"
    text = ""

    def filterAcceptsRow(self, row: int, parent) -> bool:  # noqa: N802 - Qt API
        model = self.sourceModel()
        if self.status != "all" and model.index(row, 0, parent).data() != self.status:
            return False
        needle = self.text.lower()
        return not needle or any(needle in str(model.index(row, c, parent).data()).lower() for c in (1, 3))


class FileReport(QDialog):
    """Every file the index knows, filterable by status and text."""

    def __init__(self, status: IndexStatus, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Indexing report")
        self.resize(900, 500)
        self.model = QStandardItemModel(0, len(FILE_COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(FILE_COLUMNS))
        for f in status.files:
            sentences = QStandardItem()
            sentences.setData(int(f.sentences or 0), Qt.ItemDataRole.DisplayRole)
            self.model.appendRow([QStandardItem(f.status.value), QStandardItem(readable(f.path)), sentences,
                                  QStandardItem(f.reason or "")])
        self.proxy = _FileFilter(self)
        self.proxy.setSourceModel(self.model)
        self.status_filter = QComboBox(self)
        self.status_filter.addItems(["all", *(s.value for s in FileState)])
        self.status_filter.currentTextChanged.connect(self._filter)
        self.text_filter = QLineEdit(self)
        self.text_filter.setPlaceholderText("Filter by path or reason")
        self.text_filter.textChanged.connect(self._filter)
        table = QTableView(self)
        table.setModel(self.proxy)
        table.setSortingEnabled(True)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        table.verticalHeader().hide()
        self.table = table
        row = QHBoxLayout()
        row.addWidget(QLabel(f"{status.indexed:,} indexed · {status.skipped:,} skipped · {status.failed:,} failed"))
        row.addStretch()
        row.addWidget(self.status_filter)
        row.addWidget(self.text_filter)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(table)

    def _filter(self) -> None:
        if hasattr(self.proxy, "beginFilterChange"):  # Qt >= 6.9; invalidateFilter() is deprecated there
            self.proxy.beginFilterChange()
            self.proxy.status, self.proxy.text = self.status_filter.currentText(), self.text_filter.text()
            self.proxy.endFilterChange()
        else:
            self.proxy.status, self.proxy.text = self.status_filter.currentText(), self.text_filter.text()
            self.proxy.invalidateFilter()
