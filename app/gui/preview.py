"""The preview pane: the best passage in its context, why it was found in a sentence, and on demand the numbers."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QTextBrowser, QToolButton, QVBoxLayout, QWidget

from app.gui.breakdown import breakdown_html, query_words
from app.gui.delegate import mark_css
from app.gui.results_model import chips, highlight_html
from engine import page_label, readable

if TYPE_CHECKING:
    from engine import Mode, SearchResult


def flowed(texts: Sequence[str], pieces: Sequence[str]) -> str:
    """The ``pieces`` (the HTML of ``texts``, a passage's sentences in order) run together as the file's lines run: a
    line break before and after a sentence that does not end like one, or a list's item, so that "Rent and deposit"
    is not read as the start of "Rent and deposit The monthly rent is ...", spaces elsewhere."""
    from engine import ends_like_sentence, is_list_item  # loaded by the time results show

    # a list's item is a line of its own too, with a full stop or without ("£50,000. 1. The crew of four ...")
    running = [ends_like_sentence(t) and not is_list_item(t) for t in texts]
    out = [pieces[0]] if pieces else []
    for i in range(1, len(pieces)):
        out.append(" " if running[i - 1] and running[i] else "<br>")
        out.append(pieces[i])
    return "".join(out)


def context_html(result: SearchResult, asked: Sequence[str] | None, mode: Mode | None, show_details: bool) -> str:
    """The preview document for ``result``: the passage in context, then why it was found (``asked``: the query's
    words, None for "more like this"; ``mode``: the search's), with the numbers when ``show_details``."""
    path = readable(result.path)
    title = html.escape(result.title or Path(path).name)
    page = f" · {page_label(result.path, result.page, short=False)}" if result.page else ""
    passage = f"<span class='best'>{highlight_html(result.sentence, result.highlights)}</span>"
    texts = [*result.context_before, result.sentence, *result.context_after]
    pieces = [*map(html.escape, result.context_before), passage, *map(html.escape, result.context_after)]
    parts = [f"<h3>{title}</h3>", f"<p class='path'>{html.escape(path)}{page}</p>", f"<p>{flowed(texts, pieces)}</p>"]
    shown = chips(result)
    if shown:
        parts.append("<p><b>About:</b> " + "; ".join(html.escape(c.described) for c in shown) + "</p>")
    if result.duplicates:
        parts.append("<p class='path'>Same content also in: " + ", ".join(html.escape(d) for d in result.duplicates) + "</p>")
    parts.append(breakdown_html(result, asked, mode, show_details))
    return "".join(parts)


class PreviewPane(QWidget):
    """Shows the selected result and why it was found; the toggle for the numbers behind it is remembered across
    selections."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.setPlaceholderText("Select a result to read it in context.")
        self.toggle = QToolButton(self)
        self.toggle.setText("Score breakdown")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Show the numbers behind the ranking: similarity of meaning, word scores and how they "
                               "were combined (Ctrl+B)")
        self.toggle.toggled.connect(lambda _: self._render())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        layout.addWidget(self.toggle)
        self._result: SearchResult | None = None
        self._asked: tuple[str, ...] | None = None
        self._mode: Mode | None = None

    def set_query(self, query: str | None, mode: Mode) -> None:
        """The query the results on screen answer (None when it was a passage or a file, "more like this") and the
        mode it was searched in."""
        self._asked = None if query is None else query_words(query)
        self._mode = mode

    def show_result(self, result: SearchResult | None) -> None:
        """Display ``result`` (None empties the pane)."""
        self._result = result
        self._render()

    def _render(self) -> None:
        if self._result is None:
            self.browser.clear()
            return
        palette = self.palette()
        muted = palette.color(QPalette.ColorRole.PlaceholderText).name()
        self.browser.document().setDefaultStyleSheet(
            mark_css(palette) + f" .path {{ color: {muted}; }} .best {{ font-weight: 600; }}")
        self.browser.setHtml(context_html(self._result, self._asked, self._mode, self.toggle.isChecked()))
