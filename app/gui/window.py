"""The main window: search field, results list and preview, indexed folders, and the indexing bar.

Widgets only display and forward: every engine call goes through :class:`app.gui.controller.Controller`.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListView,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.gui import settings as S
from app.gui.controller import Controller, IndexState
from app.gui.delegate import ResultDelegate
from app.gui.desktop import Desktop
from app.gui.filter_bar import FilterBar
from app.gui.folders import NOTHING_INDEXED, FileReport, FoldersPanel
from app.gui.launch import OpenRequest
from app.gui.message_bar import MessageBar
from app.gui.paging import Page, Shown
from app.gui.preview import PreviewPane
from app.gui.results_model import ResultsModel, Role
from app.gui.run_report import Problem, problems_of, run_message
from app.gui.search_box import SearchBox, has_local_paths
from app.gui.settings import Settings
from app.gui.settings_dialog import MODE_LABELS, SettingsDialog
from app.gui.watcher import FolderWatcher
from app.gui.wording import duration_text
from engine import NOTHING_PASSES, page_label

if TYPE_CHECKING:  # the engine loads on the worker threads, after the window is up
    from engine import IndexStatus, Progress, SearchResponse, SearchResult

log = logging.getLogger(__name__)

# Typing pause before a search starts: short enough that results feel live (the benchmark's 100 ms budget
# includes it), long enough that a burst of keystrokes becomes one query.
DEBOUNCE_MS = 40
# Facet chips and context are asked for once an answer has stood this long: a pause in typing, so that explaining
# an answer the next keystroke replaces does not take CPU from that keystroke's search.
EXPLAIN_DELAY_MS = 150


def _missing_text(words: tuple[str, ...], shown: int = 5) -> str:
    """The query words no document holds, as a search engine's "Missing:" line: often the reason nothing relevant
    was found, and the first thing to change. A pasted passage may miss many; the first few are named."""
    quoted = ", ".join(f"“{w}”" for w in words[:shown])
    more = f" and {len(words) - shown} more" if len(words) > shown else ""
    return f"{quoted}{more} {'is' if len(words) == 1 else 'are'} in none of your documents"


@dataclass(frozen=True)
class LikeTarget:
    """What the "more like this" search on screen is like: a file dropped on the search field, or (``ordinal`` set)
    the passage of an indexed file that Ctrl+M was pressed on (``page`` and ``sentence`` only say which, on the chip)."""

    path: str
    ordinal: int | None = None
    page: int | None = None
    sentence: str = ""

    @property
    def label(self) -> str:
        """"whales.txt", or "a passage of tides.pdf, p. 2"."""
        name = Path(self.path).name
        if self.ordinal is None:
            return name
        return f"a passage of {name}" + (f", {page_label(self.path, self.page)}" if self.page else "")


def progress_text(p: Progress) -> str:
    """"reading 12 / 40 files · 1,234 sentences · about 5 s left"."""
    doing = f"{p.phase} {p.files_done:,} / {p.files_total:,} {p.unit}" if p.files_total else "looking for files"
    eta = f" · about {duration_text(p.eta_seconds)} left" if p.eta_seconds else ""
    return f"{doing} · {p.sentences:,} sentences{eta}"


class MainWindow(QMainWindow):
    """quire's window. ``index_dir``: the index folder (None: the user data folder); ``settings``: preferences."""

    results_shown = Signal(object)  # SearchResponse, after the list was updated (tests and benchmarks wait on it)

    def __init__(self, index_dir: Path | None = None, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.setWindowTitle("quire")
        self.setAcceptDrops(True)
        self.controller = Controller(index_dir, self.settings, self)
        self.watcher = FolderWatcher(self)
        self.desktop = Desktop(self)
        self._last_query = ""
        self._suggested: str | None = None  # the "Did you mean" link's spelling
        self._exact: str | None = None  # a query searched as typed, not as its correction ("search instead for")
        self._query_note = ""  # the status-bar note about the answer on screen, replaced by the next answer's
        self._announced: frozenset[Problem] | None = None  # files not indexed that were told about (None: not known)
        self._like: LikeTarget | None = None  # what the "more like this" search on screen is like
        self._shown = 0  # generation of the answer on screen
        self._requested = Page(self.controller.page_size)  # what the latest search asked for
        self._page = self._requested  # what the answer on screen was asked for
        self._count = Shown(0, 0, False)  # how much of it the list holds
        self._more: int | None = None  # generation of a further page of it in flight
        self._status = None
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._search_now)
        self._explain_timer = QTimer(self, singleShot=True, interval=EXPLAIN_DELAY_MS)
        self._explain_timer.timeout.connect(self._explain_visible)
        self._build()
        self._connect()
        self._restore()
        QTimer.singleShot(0, self.controller.start)  # first turn of the event loop: after the window is shown
        self.watcher.watch(self.settings.get(S.WATCHED))
        if self.controller.state is IndexState.PAUSED:
            self._set_indexing_ui(IndexState.PAUSED.value)

    # -- layout -----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.search_box = SearchBox()
        self.search_box.setPlaceholderText("Search your documents by meaning or by words   (Ctrl+K)")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setAccessibleName("Search")
        font = self.search_box.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.search_box.setFont(font)
        self.search_box.setMinimumHeight(self.search_box.sizeHint().height() + 8)
        self.mode_box = QComboBox()
        for mode, label in MODE_LABELS.items():
            self.mode_box.addItem(label, mode)
        self.mode_box.setCurrentIndex(max(0, self.mode_box.findData(self.settings.get(S.SEARCH_MODE))))
        self.mode_box.setToolTip("Search mode")
        add_button = QPushButton("Add Folder…")
        add_button.setToolTip("Index a folder (Ctrl+O); you can also drop folders or files on the window")
        add_button.clicked.connect(self.add_folder_dialog)
        self.like_chip = QToolButton()
        self.like_chip.setAccessibleName("More like this")
        self.like_chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.like_chip.setVisible(False)
        top = QHBoxLayout()
        top.addWidget(self.like_chip)
        top.addWidget(self.search_box, 1)
        top.addWidget(self.mode_box)
        top.addWidget(add_button)

        self.filter_bar = FilterBar()
        self.filter_bar.changed.connect(self._search_again)

        self.banner = MessageBar()
        # "Did you mean …?" under the search field, for a query word none of the documents holds
        self.suggestion = QLabel()
        self.suggestion.setAccessibleName("Did you mean")
        self.suggestion.setTextFormat(Qt.TextFormat.RichText)
        self.suggestion.setVisible(False)
        self.suggestion.linkActivated.connect(self._on_suggestion_link)

        self.model = ResultsModel(self)
        self.results = QListView()
        self.results.setModel(self.model)
        self.results.setItemDelegate(ResultDelegate(self.results))
        self.results.setUniformItemSizes(True)  # see ResultDelegate.sizeHint
        self.results.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.results.setAccessibleName("Results")
        self.results.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.results.installEventFilter(self)
        self.count_label = QLabel()
        self.count_label.setAccessibleName("Result count")
        self.count_label.setToolTip("Scroll to the end of the list, or press Page Down on its last result, for more")
        self.results_page = QWidget()
        results_layout = QVBoxLayout(self.results_page)
        results_layout.setContentsMargins(0, 0, 0, 0)
        # "No strong match for …; the closest passages:" above a list none of whose results is likely
        self.answer_note = QLabel()
        self.answer_note.setAccessibleName("Answer")
        self.answer_note.setWordWrap(True)
        self.answer_note.setVisible(False)
        results_layout.addWidget(self.answer_note)
        results_layout.addWidget(self.count_label)
        results_layout.addWidget(self.results, 1)
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        # "nothing relevant" means no document shares a word or a meaning closer than chance with the query: those
        # documents stay one click (or Ctrl+Shift+A) away, as `quire search --all` lists them
        self.show_weak_button = QPushButton()
        self.show_weak_button.setVisible(False)
        self.show_weak_button.setToolTip("The documents that share nothing with the query, labelled (Ctrl+Shift+A)")
        self.show_weak_button.clicked.connect(self.show_weak_matches)
        self.empty_page = QWidget()
        empty_layout = QVBoxLayout(self.empty_page)
        empty_layout.addStretch(1)
        empty_layout.addWidget(self.empty)
        empty_layout.addWidget(self.show_weak_button, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_layout.addStretch(1)
        self.results_stack = QStackedWidget()
        self.results_stack.addWidget(self.results_page)
        self.results_stack.addWidget(self.empty_page)
        self._show_empty("Type to search.\nDrop folders or files here to index them (Ctrl+O).")

        self.preview = PreviewPane()
        self.folders = FoldersPanel()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.folders)
        self.splitter.addWidget(self.results_stack)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setStretchFactor(2, 3)
        self.splitter.setSizes([220, 620, 460])

        self.progress = QProgressBar()
        self.progress_label = QLabel()
        self.pause_button = QPushButton("Pause")
        self.cancel_button = QPushButton("Cancel")
        bar = QHBoxLayout()
        bar.addWidget(self.progress_label)
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.pause_button)
        bar.addWidget(self.cancel_button)
        self.index_bar = QWidget()
        self.index_bar.setLayout(bar)
        self.index_bar.setVisible(False)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(top)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.suggestion)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.index_bar)
        self.setCentralWidget(central)
        self.summary = QLabel()
        self.statusBar().addPermanentWidget(self.summary)
        self.resize(1300, 800)
        self.search_box.setFocus()
        self._actions()

    def _actions(self) -> None:
        def action(text: str, keys: list[str], slot, context=Qt.ShortcutContext.WindowShortcut) -> QAction:
            a = QAction(text, self)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(context)
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.focus_action = action("Focus search", ["Ctrl+K", "/"], self.focus_search)
        self.open_folder_action = action("Add Folder…", ["Ctrl+O"], self.add_folder_dialog)
        self.settings_action = action("Settings…", ["Ctrl+,"], self.open_settings)
        self.more_like_action = action("More like this", ["Ctrl+M"], self.more_like_this)
        self.breakdown_action = action("Score breakdown", ["Ctrl+B"], self.preview.toggle.toggle)
        self.show_weak_action = action("Show unrelated documents too", ["Ctrl+Shift+A"], self.show_weak_matches)
        # the window has no menu bar to quit from (Qt reads Ctrl as Cmd on macOS)
        self.quit_action = action("Quit", ["Ctrl+Q"], self.close)
        self.open_action = QAction("Open document", self)
        self.open_action.triggered.connect(lambda: self.open_current(reveal=False))
        self.reveal_action = QAction("Show in folder", self)
        self.reveal_action.triggered.connect(lambda: self.open_current(reveal=True))
        self.copy_action = QAction("Copy passage", self)
        self.copy_action.triggered.connect(self.copy_passage)

    def _connect(self) -> None:
        c = self.controller
        self.search_box.textChanged.connect(self._on_text_changed)
        self.search_box.move.connect(self.move_selection)
        self.search_box.enter.connect(self._on_enter)
        self.search_box.escape.connect(self.clear_search)
        self.search_box.copy_passage.connect(self.copy_passage)
        self.search_box.file_dropped.connect(self.search_like_file)
        self.like_chip.clicked.connect(self.clear_search)
        self.results.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.mode_box.currentIndexChanged.connect(self._on_mode_changed)
        # a mode chosen, the keys go back to the search field: Up and Down then move through the results again
        self.mode_box.activated.connect(lambda _: self.search_box.setFocus())
        self.results.selectionModel().currentChanged.connect(lambda cur, _: self.preview.show_result(cur.data(Role.RESULT)))
        self.results.doubleClicked.connect(lambda _: self.open_current(reveal=False))
        self.results.customContextMenuRequested.connect(self._context_menu)
        self.folders.report_button.clicked.connect(self.show_report)
        self.folders.view.doubleClicked.connect(lambda _: self.show_report())
        self.folders.remove_button.clicked.connect(self._remove_folder)
        self.pause_button.clicked.connect(self._pause_or_resume)
        self.cancel_button.clicked.connect(c.cancel)
        c.ready.connect(self._on_engine_ready)
        c.answered.connect(self._on_answer)
        c.explained.connect(self._on_explained)
        c.query_failed.connect(lambda _g, message: self._show_empty(message))
        c.status_ready.connect(self._on_status)
        c.counted.connect(self._on_counted)
        c.progress.connect(self._on_progress)
        c.state_changed.connect(self._set_indexing_ui)
        c.run_finished.connect(self._on_run_finished)
        c.error.connect(self.show_error)
        self.desktop.failed.connect(self.show_error)
        self.desktop.noted.connect(lambda message: self.statusBar().showMessage(message, 15_000))
        self.watcher.reindex.connect(c.index)

    def _restore(self) -> None:
        geometry = self.settings.get(S.GEOMETRY)
        if not geometry.isEmpty():
            self.restoreGeometry(geometry)
        splitter = self.settings.get(S.SPLITTER)
        if not splitter.isEmpty():
            self.splitter.restoreState(splitter)

    def _on_engine_ready(self, folder: str) -> None:
        from PySide6.QtGui import QIcon

        from engine import resource_path  # loaded by now, on the search thread

        self.watcher.set_index_dir(Path(folder))
        if QGuiApplication.windowIcon().isNull():
            icon = QIcon()
            for name in ("icons/quire-256.png", "icons/quire-64.png"):  # PNG: no need for Qt's SVG plugin
                icon.addFile(str(resource_path(name)))
            QGuiApplication.setWindowIcon(icon)

    # -- searching --------------------------------------------------------------------------------------------
    def focus_search(self) -> None:
        """Ctrl+K and /: put the cursor in the search field with its text selected."""
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def _on_text_changed(self, text: str) -> None:
        self._explain_timer.stop()
        if text.strip():
            self._set_like(None)  # typing replaces a "more like this file" search
            self._debounce.start()
        elif self._like is None:
            self.clear_results()

    def _search_now(self, page: Page | None = None) -> None:
        self._debounce.stop()
        text = self.search_box.text().strip()
        if not text:
            return
        self._last_query = text
        self._more = None
        self._request(page or Page(self.controller.page_size))

    def _request(self, page: Page, refined: bool = False) -> int:
        """Search for the query on screen (typed, or "more like this") as far as ``page``; returns the generation.
        ``refined``: the second look's answer alone, for a further page of the one on screen."""
        self._requested, mode, like = page, self.mode_box.currentData(), self._like
        within = self.filter_bar.filters()
        if like is None:
            return self.controller.search(self._last_query, mode, include_weak=page.include_weak, k=page.k,
                                          within=within, exact=self._last_query == self._exact, refined=refined)
        # "more like this" ranks by meaning unless words only were chosen, as `quire search --like` does: in hybrid
        # mode a passage's everyday words ("near", "morning", "light") ranked Albedo above Agriculture for a garden note
        mode = "semantic" if mode == "hybrid" else mode
        if like.ordinal is None:
            return self.controller.search_file(like.path, mode, include_weak=page.include_weak, k=page.k,
                                               within=within, refined=refined)
        return self.controller.search_like(like.path, like.ordinal, mode, include_weak=page.include_weak, k=page.k,
                                           within=within, refined=refined)

    def load_more(self) -> None:
        """The next page of the answer on screen (the list scrolled to its end, or Page Down on its last row): the
        same search with a larger k on the search thread; its new rows are appended and the selection stays."""
        if self._more is None and self._count.more and self.model.response is not None:
            self._more = self._request(self._page.more(self.controller.page_size), refined=True)

    def _on_scrolled(self, value: int) -> None:
        self._explain_timer.start()
        if value and value == self.results.verticalScrollBar().maximum():
            self.load_more()

    def _on_enter(self, ctrl: bool) -> None:
        text = self.search_box.text().strip()
        if ctrl:
            self.open_current(reveal=True)
        elif self._debounce.isActive() or (text and text != self._last_query):
            self._search_now()
        else:
            self.open_current(reveal=False)

    def _on_mode_changed(self) -> None:
        self.settings.set(S.SEARCH_MODE, self.mode_box.currentData())
        self._search_again()

    def _search_again(self, *, include_weak: bool = False) -> None:
        """Rerun the query on screen (the mode changed, indexing brought new content, or the unrelated documents were
        asked for), as far as the pages on screen went."""
        page = Page(max(self._page.k, self.controller.page_size), include_weak)
        if self._like is not None:
            self._search_like(page)
        elif self.search_box.text().strip():
            self._search_now(page)

    def _search_like(self, page: Page | None = None) -> None:
        self._more = None
        self._request(page or Page(self.controller.page_size))

    def search_like_file(self, path: str) -> None:
        """More like this with a file (dropped on the search field): its sentences are the query."""
        self._start_like(LikeTarget(path), f"Reading {Path(path).name}…")

    def more_like_this(self) -> None:
        """Ctrl+M: the documents like the selected result's passage, other than its own (the engine reads the passage
        from the index by its sentence number)."""
        result = self.current_result()
        if result is not None:
            like = LikeTarget(result.path, result.ordinal, result.page, result.sentence)
            self._start_like(like, f"Looking for documents like {like.label}…")

    def _start_like(self, like: LikeTarget, waiting: str) -> None:
        self.search_box.clear()
        self._set_like(like)
        self._show_empty(waiting)
        self.search_box.setFocus()  # where Esc clears it and typing replaces it
        self._search_like()

    def _set_like(self, like: LikeTarget | None) -> None:
        self._like = like
        self.like_chip.setVisible(like is not None)
        if like is not None:
            self.like_chip.setText(f"Like: {like.label}  ✕")
            what = f"this passage of {like.path}:\n“{like.sentence}”" if like.ordinal is not None else like.path
            self.like_chip.setToolTip(f"Documents like {what}\nEsc or click to clear")

    def _on_answer(self, generation: int, response: SearchResponse) -> None:
        self._shown = generation
        if generation == self._more:
            self._on_more(response)
            return
        self._more, self._page = None, self._requested
        # the same query answered again (indexing brought new content, the mode changed) keeps the selected
        # document and the message above the list: a watcher pass after Enter opened a file (or failed to) must
        # neither move the selection to another file nor hide why it did not open
        previous, selected = self.model.response, self.current_result()
        if previous is None or previous.query != response.query:
            self.banner.setVisible(False)
        kept = selected.path if selected is not None and previous is not None and previous.query == response.query else None
        # from the top: a list left scrolled to its end would ask for a further page of the new answer at once
        self.results.verticalScrollBar().setValue(0)
        self.model.set_response(response)
        self._show_suggestion(response.did_you_mean if self._like is None else None, response.corrected_from)
        closest = response.answer.value == "closest" and bool(response.results)  # engine.search.results.Answer
        self.answer_note.setVisible(closest)
        if closest:
            self.answer_note.setText(f"No strong match for “{response.query}”; the closest passages:"
                                     if self._like is None else "No document is much like it; the closest:")
        self.preview.set_query(None if self._like else response.query, response.mode)
        # a file's sentences as the query miss words by the dozen; only typed words are worth naming, and none when
        # the index holds no folder (its last one removed): every word is missing, which says nothing
        empty_index = self._status is not None and not self._status.roots
        missing = _missing_text(response.missing) if response.missing and self._like is None and not empty_index else ""
        self._set_count(Shown(len(response.results), response.found, response.found_at_least,
                              exhausted=len(response.results) < self._page.k))
        if response.results:
            self.results_stack.setCurrentWidget(self.results_page)
            row = next((r for r, result in enumerate(response.results) if result.path == kept), 0)
            self.results.setCurrentIndex(self.model.index(row))
            self._explain_timer.start()
        else:
            quoted = response.query if '"' in response.query else f"“{response.query}”"  # not “"a phrase"”
            wanted = f"like {self._like.label}" if self._like else f"for {quoted}"
            wanted += " with these filters" if self.filter_bar.filters() else ""
            said = "".join(f"\n{line[0].upper()}{line[1:]}." for line in ([missing] if missing else []) + list(response.notes))
            filtered_out = NOTHING_PASSES in response.notes
            hint = ("Change or clear the filters." if filtered_out else
                    "Try another passage, or switch the search mode." if self._like else
                    "Try other words, or switch the search mode.")
            self._show_empty(NOTHING_INDEXED if empty_index else f"Nothing relevant found {wanted}.{said}\n{hint}",
                             weak_hidden=response.weak_hidden)
            self.preview.show_result(None)
        self._show_query_note(" · ".join(([missing] if missing and response.results else []) + list(response.notes)))
        self.results_shown.emit(response)

    def _on_more(self, response: SearchResponse) -> None:
        """A further page of the answer on screen (refined at once, as the rows above it are): its new rows go after
        those there."""
        self._more, self._page = None, self._requested
        added = self.model.extend(response)
        self._set_count(Shown(self.model.rowCount(), response.found, response.found_at_least,
                              exhausted=not added or len(response.results) < self._page.k))
        self._explain_timer.start()
        self.results_shown.emit(response)

    def _show_suggestion(self, query: str | None, typed: str | None = None) -> None:
        """Under the search field: the correction searched in place of ``typed`` (with a link to search it as typed),
        or a spelling ``query`` to try."""
        self.suggestion.setVisible(query is not None or typed is not None)
        if typed is not None:
            self.suggestion.setText(f"Showing results for <b>{html.escape(query or '')}</b>. Search instead for "
                                    f'<a href="exact">{html.escape(typed)}</a>')
            self.suggestion.setToolTip(f"“{typed}” found no strong match; its spelling correction did better")
        elif query is not None:
            self.suggestion.setText(f'Did you mean <a href="#">{html.escape(query)}</a>?')
            self.suggestion.setToolTip(f"Search for “{query}”: these words are in your documents")
        self._suggested = query

    def _on_suggestion_link(self, link: str) -> None:
        if link == "exact":
            self.search_as_typed()
        else:
            self.take_suggestion()

    def search_as_typed(self) -> None:
        """Search the query on screen as typed, not as its spelling correction (the "Search instead for" link)."""
        self._exact = self._last_query
        self._search_now()

    def take_suggestion(self) -> None:
        """Search for the suggested spelling (the "Did you mean" link): it replaces the query, as if typed."""
        if self._suggested is not None:
            self.search_box.setText(self._suggested)
            self._search_now()

    def _set_count(self, shown: Shown) -> None:
        self._count = shown
        self.count_label.setText(shown.text)

    def _show_query_note(self, note: str) -> None:
        """Say ``note`` about the answer on screen in the status bar, in place of the previous answer's."""
        bar = self.statusBar()
        if note:
            bar.showMessage(note)
        elif self._query_note and bar.currentMessage() == self._query_note:
            bar.clearMessage()
        self._query_note = note

    def _explain_visible(self) -> None:
        """Ask for the chips and context of the rows on screen (and the selected one) that lack them."""
        if not self.model.rowCount() or self.model.response is None:
            return
        viewport = self.results.viewport()
        top = self.results.indexAt(QPoint(0, 0)).row()
        bottom = self.results.indexAt(QPoint(0, viewport.height() - 1)).row()
        visible = range(max(0, top), (bottom if bottom >= 0 else self.model.rowCount() - 1) + 1)
        rows = sorted(set(self.model.unexplained([*visible, self.results.currentIndex().row()])))
        self.controller.explain(self._shown, self.model.response.query, rows, [self.model.result(r) for r in rows])

    def _on_explained(self, generation: int, rows, results) -> None:
        if generation != self._shown:
            return
        self.model.set_explained(rows, results)
        if self.results.currentIndex().row() in rows:
            self.preview.show_result(self.current_result())

    def show_weak_matches(self) -> None:
        """Ctrl+Shift+A: the query on screen again, with the documents that share nothing with it too (labelled)."""
        self._search_again(include_weak=True)

    def _show_empty(self, message: str, *, weak_hidden: int = 0) -> None:
        self.empty.setText(message)
        self.show_weak_button.setText(f"Show {weak_hidden} unrelated document{'s' if weak_hidden != 1 else ''}")
        self.show_weak_button.setVisible(weak_hidden > 0)
        self.results_stack.setCurrentWidget(self.empty_page)

    def clear_results(self) -> None:
        """Empty the list and drop answers still in flight."""
        self._debounce.stop()
        self._explain_timer.stop()
        self._last_query = ""
        self._more = None
        self.controller.invalidate()
        self.model.set_response(None)
        self._show_suggestion(None)
        self.answer_note.setVisible(False)
        self._set_count(Shown(0, 0, False))
        self.preview.show_result(None)
        self._show_query_note("")
        self._show_empty("Type to search.")

    def clear_search(self) -> None:
        """Esc: clear the query (text or "like" file) and the results."""
        self._set_like(None)
        self.search_box.clear()
        self.clear_results()

    def move_selection(self, delta: int) -> None:
        """Move the current result by ``delta`` rows (clamped)."""
        rows = self.model.rowCount()
        if not rows:
            return
        row = self.results.currentIndex().row() + delta  # from -1 when none is selected
        self.results.setCurrentIndex(self.model.index(min(rows - 1, max(0, row))))
        if row > rows - 1:  # Down or Page Down past the last row: the next page, if there is one
            self.load_more()

    def current_result(self) -> SearchResult | None:
        """The selected result."""
        return self.model.result(self.results.currentIndex().row())

    def open_current(self, reveal: bool) -> None:
        """Enter opens the document (at the passage's page or line where the viewer or editor takes one), Ctrl+Enter
        shows it in the file manager; a failure shows above the results, with the path to copy."""
        result = self.current_result()
        if result is not None:
            self.desktop.open(OpenRequest(result.path, reveal, result.page, result.sentence, result.start))

    def copy_passage(self) -> None:
        """Ctrl+C: the best passage of the selected result to the clipboard."""
        result = self.current_result()
        if result is not None:
            QGuiApplication.clipboard().setText(result.sentence)
            self.statusBar().showMessage("Passage copied", 2000)

    def _context_menu(self, pos) -> None:
        if self.current_result() is None:
            return
        menu = QMenu(self)
        for a in (self.open_action, self.reveal_action, self.copy_action, self.more_like_action, self.breakdown_action):
            menu.addAction(a)
        menu.exec(self.results.viewport().mapToGlobal(pos))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Enter / Ctrl+Enter / Ctrl+C on the results list, and Down or Page Down on its last row (the next page)."""
        if obj is self.results and event.type() == QEvent.Type.KeyPress:
            event = cast(QKeyEvent, event)  # a KeyPress event is a QKeyEvent
            last = self.results.currentIndex().row() == self.model.rowCount() - 1
            if last and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_PageDown):
                self.load_more()
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.open_current(reveal=bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier))
                return True
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy_passage()
                return True
        return super().eventFilter(obj, event)

    # -- indexing ---------------------------------------------------------------------------------------------
    def add_paths(self, paths: list[str]) -> None:
        """Index files and folders (the drop target and Add Folder both land here)."""
        paths = [str(Path(p).resolve()) for p in paths if p]
        if not paths:
            return
        if self.settings.get(S.WATCH_NEW):
            watched = self.settings.get(S.WATCHED)
            watched += [p for p in paths if Path(p).is_dir() and p not in watched]
            self.settings.set(S.WATCHED, watched)
            self.watcher.watch(watched)
        self.controller.index(paths)

    def come_forward(self, paths: list[str]) -> None:
        """Another ``quire-app`` was started on this index (engine of app.gui.single_instance): index what it was
        given and come to the front, un-minimised, as the window the user asked for."""
        self.add_paths(paths)
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    def add_folder_dialog(self) -> None:
        """Ctrl+O."""
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to the index", str(Path.home()))
        if folder:
            self.add_paths([folder])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if has_local_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    def _pause_or_resume(self) -> None:
        if self.controller.state is IndexState.PAUSED:
            self.controller.resume()
        else:
            self.controller.pause()

    def _on_progress(self, p: Progress) -> None:
        if p.files_total:
            self.progress.setRange(0, p.files_total)
            self.progress.setValue(p.files_done)
        else:
            self.progress.setRange(0, 0)  # busy indicator while scanning
        self.progress_label.setText(progress_text(p))

    def _set_indexing_ui(self, state: str) -> None:
        state = IndexState(state)
        self.index_bar.setVisible(state is not IndexState.IDLE)
        self.pause_button.setText("Resume" if state is IndexState.PAUSED else "Pause")
        self.pause_button.setEnabled(state in (IndexState.RUNNING, IndexState.PAUSED))
        self.cancel_button.setEnabled(state is not IndexState.CANCELLING)
        if state is IndexState.RUNNING:
            self.progress.setRange(0, 0)
            self.progress_label.setText("Starting…")
        elif state is IndexState.PAUSED:
            self.progress_label.setText("Indexing paused; Resume continues where it stopped (also after a restart).")
        elif state is IndexState.PAUSING:
            self.progress_label.setText("Pausing after the current file…")
        elif state is IndexState.CANCELLING:
            self.progress_label.setText("Stopping…")

    def _on_run_finished(self, report) -> None:
        if report is not None:
            message, self._announced = run_message(report, self._announced or ())
            if message:
                self.statusBar().showMessage(message, 10000)
        self._search_again()  # queued behind the searcher's reload, so it sees the new content

    def _on_status(self, status) -> None:
        self._status = status
        # problems the index held before this window saw a run were reported then; one that went away is forgotten,
        # so it is announced again if it comes back
        problems = problems_of(status) if status is not None else frozenset()
        self._announced = problems if self._announced is None else self._announced & problems
        self.folders.show_status(status, self.settings.get(S.WATCHED), self._busy())
        if status is not None:
            self.filter_bar.set_folders(status.roots, (f.path for f in status.files if f.status == "indexed"))
        self._show_summary(status)

    def _on_counted(self, status: IndexStatus) -> None:
        """Counts read while a run writes: the footer and the folder list follow them. What was announced, the
        status-bar message, the filters and the results wait for the status after the run."""
        self.folders.show_roots(status.roots, self.settings.get(S.WATCHED), self._busy())
        self._show_summary(status)

    def _busy(self) -> str:
        """The folder list's mark for the run in progress, if any."""
        return "indexing…" if self.controller.state is IndexState.RUNNING else ""

    def _show_summary(self, status: IndexStatus | None) -> None:
        self.summary.setText("" if status is None else
                             f"{status.indexed:,} documents · {status.sentences:,} sentences · {status.method} method")

    def show_report(self) -> None:
        """The per-file indexing report."""
        if self._status is None:
            self.show_error("nothing is indexed yet: drop a folder here or press Ctrl+O")
            return
        FileReport(self._status, self).exec()

    def _remove_folder(self) -> None:
        root = self.folders.selected_root()
        if root is None:
            return
        answer = QMessageBox.question(self, "Remove folder", f"Remove {root} from the index? The files stay on disk.")
        if answer == QMessageBox.StandardButton.Yes:
            self.settings.set(S.WATCHED, [w for w in self.settings.get(S.WATCHED) if w != root])
            self.watcher.watch(self.settings.get(S.WATCHED))
            self.controller.remove([root])

    # -- settings and errors ----------------------------------------------------------------------------------
    def open_settings(self) -> None:
        """Ctrl+,."""
        dialog = SettingsDialog(self.settings, self, sentences=self._status.sentences if self._status else 0)
        if dialog.exec():
            self.mode_box.setCurrentIndex(max(0, self.mode_box.findData(self.settings.get(S.SEARCH_MODE))))
            self.watcher.watch(self.settings.get(S.WATCHED))

    def show_error(self, message: str, path: str = "") -> None:
        """A readable message above the results (never a traceback); ``path``: the file it is about, which the
        message offers to copy."""
        self.banner.show_message(message, path)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        self.settings.set(S.GEOMETRY, self.saveGeometry())
        self.settings.set(S.SPLITTER, self.splitter.saveState())
        self.settings.flush()
        self.watcher.stop()
        self.desktop.shutdown()
        self.controller.shutdown()
        super().closeEvent(event)
