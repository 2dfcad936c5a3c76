"""The preview pane: the best passage in its context, and on demand the score breakdown behind the ranking."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QTextBrowser, QToolButton, QVBoxLayout, QWidget

from app.gui.delegate import mark_css
from app.gui.results_model import facet_labels, highlight_html
from engine.store.paths import readable

if TYPE_CHECKING:
    from engine import SearchResult


def breakdown_html(result: SearchResult) -> str:
    """Lexical terms, semantic cosine and fusion of one result, as an HTML table."""
    e = result.explanation
    rows = []
    if e.cosine is not None:
        pct = f" (higher than {e.cosine_percentile:.0%} of sentence pairs in this index)" if e.cosine_percentile is not None else ""
        rows.append(("Semantic cosine", f"{e.cosine:.3f}{pct}"))
    rows.append(("Semantic rank", str(e.semantic_rank) if e.semantic_rank else "not retrieved"))
    if e.bm25 is not None:
        rows.append(("Lexical BM25", f"{e.bm25:.3f}"))
    rows.append(("Lexical rank", str(e.lexical_rank) if e.lexical_rank else "not retrieved"))
    terms = ", ".join(f"{html.escape(t.word)} (idf {t.idf:.2f})" for t in e.matched_terms) or "none"
    rows.append(("Matched words", terms))
    rows.append(("Word coverage", f"{e.term_coverage:.0%} of the query's weight"))
    rows.append(("Fusion", html.escape(e.fusion)))
    if e.contributions:
        rows.append(("Points", " + ".join(f"{k} {v:.4f}" for k, v in e.contributions.items())
                     + f" = {result.score:.4f}"))
    if e.boilerplate:
        rows.append(("Note", "this sentence repeats across many documents (boilerplate); its match counts half"))
    if result.weak:
        rows.append(("Note", "weak match: below this index's relevance threshold"))
    cells = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in rows)
    return f"<table cellspacing='2'>{cells}</table>"


def context_html(result: SearchResult, show_breakdown: bool) -> str:
    """The preview document for ``result``."""
    path = readable(result.path)
    title = html.escape(result.title or Path(path).name)
    page = f" · page {result.page}" if result.page else ""
    before = " ".join(html.escape(s) for s in result.context_before)
    after = " ".join(html.escape(s) for s in result.context_after)
    passage = f"<span class='best'>{highlight_html(result.sentence, result.highlights)}</span>"
    parts = [f"<h3>{title}</h3>", f"<p class='path'>{html.escape(path)}{page}</p>",
             f"<p>{before} {passage} {after}</p>"]
    labels = facet_labels(result.facets)
    if labels:
        parts.append("<p><b>Facets:</b> " + ", ".join(html.escape(x) for x in labels) + "</p>")
    if result.duplicates:
        parts.append("<p class='path'>Same content also in: " + ", ".join(html.escape(d) for d in result.duplicates) + "</p>")
    if show_breakdown:
        parts.append("<h4>Why this result</h4>" + breakdown_html(result))
    return "".join(parts)


class PreviewPane(QWidget):
    """Shows the selected result; the breakdown toggle is remembered across selections."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.setPlaceholderText("Select a result to read it in context.")
        self.toggle = QToolButton(self)
        self.toggle.setText("Score breakdown")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Show how lexical words, semantic similarity and fusion ranked this result (Ctrl+B)")
        self.toggle.toggled.connect(lambda _: self._render())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        layout.addWidget(self.toggle)
        self._result: SearchResult | None = None

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
        self.browser.setHtml(context_html(self._result, self.toggle.isChecked()))
