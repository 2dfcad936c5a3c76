"""Search results as a Qt list model with custom roles; the delegate and the preview read rows only through these."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from engine import page_label, readable

if TYPE_CHECKING:
    from engine import SearchResponse, SearchResult


class Role(IntEnum):
    """Custom data roles of :class:`ResultsModel`."""

    RESULT = Qt.ItemDataRole.UserRole + 1  # the engine's SearchResult
    TITLE = Qt.ItemDataRole.UserRole + 2
    SCORE_TEXT = Qt.ItemDataRole.UserRole + 3  # the number shown beside the bar
    SCORE_FRACTION = Qt.ItemDataRole.UserRole + 4  # bar length in [0, 1]
    PASSAGE_HTML = Qt.ItemDataRole.UserRole + 5  # best sentence, query words marked with <mark>
    FACETS = Qt.ItemDataRole.UserRole + 6  # the Chips of the facets that carry the match
    LOCATION = Qt.ItemDataRole.UserRole + 7  # path and page


# A chip is shown when a word of the query is at least this close to its facet (the word's cosine with the facet's
# centre, Eq. 7's coverage in engine.facets.explain): on tests/conftest.py's corpus a word the passage holds is at
# 0.7-1.0 from its facet and a related one at 0.3-0.75 ("doctor" to the facet of "Dr." 0.74, "mammals" to "whales"
# 0.34), while the facets of unrelated passages are at most 0.25 from any query word.
BRIDGE_FLOOR = 0.3
# ... or when its facet holds at least this share of the passage's weighted words, what the passage is mainly about
# (five facets sharing them evenly hold 0.2 each).
WEIGHT_FLOOR = 0.3


@dataclass(frozen=True)
class Chip:
    """A facet of a result as its card shows it: ``label``, what the passage is about there (``about``, the label
    first) and the query's words it matches (``matches``, none when it is shown for its weight alone)."""

    label: str
    about: tuple[str, ...]
    matches: tuple[str, ...]

    @property
    def described(self) -> str:
        """"clinic, hospital, patients — near your word 'doctor'": a query word the facet holds "matches" it, one only
        close in meaning is "near" it (a new user read "parsley — matches your word 'basil'" as a false claim)."""
        from engine import stem  # loaded by now: chips come with an answer

        said = ", ".join(self.about)
        held = {stem(w) for w in self.about}
        same = [w for w in self.matches if stem(w) in held]
        near = [w for w in self.matches if stem(w) not in held]
        parts = [f"{verb} your word{'s' if len(words) > 1 else ''} {', '.join(repr(w) for w in words)}"
                 for verb, words in (("matches", same), ("near", near)) if words]
        return f"{said} — {'; '.join(parts)}" if parts else said

    @property
    def tooltip(self) -> str:
        """"This passage is about: clinic, hospital, patients — near your word 'doctor'"."""
        return f"This passage is about: {self.described}"


def chips(result: SearchResult) -> list[Chip]:
    """The facets of ``result`` that carry its match, as chips: those a query word is near (BRIDGE_FLOOR), first,
    then those that hold much of the passage (WEIGHT_FLOOR); the rest would be noise beside the passage."""
    evidence = result.explanation.facets
    bridged: dict[str, list[str]] = {}
    for word in evidence.words if evidence is not None else ():
        if word.facet and word.coverage >= BRIDGE_FLOOR and word.word not in bridged.get(word.facet, ()):
            bridged.setdefault(word.facet, []).append(word.word)  # a word a pasted paragraph repeats is named once
    out = {}
    for facet in result.facets:
        matches = tuple(bridged.get(facet.label, ()))
        if (matches or facet.weight >= WEIGHT_FLOOR) and facet.label not in out:
            out[facet.label] = Chip(facet.label, facet.words or (facet.label,), matches)
    return sorted(out.values(), key=lambda chip: not chip.matches)  # stable: heaviest first within each group


def highlight_html(text: str, highlights: Sequence) -> str:
    """``text`` HTML-escaped, with each highlight span wrapped in ``<mark>`` (overlaps merged)."""
    out, last = [], 0
    for h in sorted(highlights, key=lambda h: h.start):
        start = max(h.start, last)
        if start >= h.end:
            continue
        out += [html.escape(text[last:start]), "<mark>", html.escape(text[start : h.end]), "</mark>"]
        last = h.end
    return "".join(out) + html.escape(text[last:])


def score_display(result: SearchResult) -> tuple[str, float]:
    """The number and bar length for one result: the estimated probability, in percent, that it is what the query
    asks for (docs/decisions/0040-calibrated-confidence.md), which never rises down the list."""
    return f"{result.score:.0f}", min(1.0, max(0.0, result.score / 100))


def strength_label(result: SearchResult) -> str:
    """The word for a result's confidence, as its card says it."""
    return {"strong": "strong match", "possible": "possible match"}.get(result.strength.value, "unlikely match")


class ResultsModel(QAbstractListModel):
    """Rows of one :class:`engine.SearchResponse`: replaced wholesale when a new answer arrives, extended when a
    further page of it does, then row by row as their explanations (facet chips, context) come in."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._results: list[SearchResult] = []
        self._explained: set[int] = set()
        self.response: SearchResponse | None = None

    def set_response(self, response: SearchResponse | None) -> None:
        """Show ``response`` (None clears the list); its rows count as unexplained."""
        self.beginResetModel()
        self.response = response
        self._results = list(response.results) if response else []
        self._explained = set()
        self.endResetModel()

    def extend(self, response: SearchResponse) -> int:
        """Append the results of ``response`` (the answer on screen asked again with a larger k) that are not on
        screen yet, keeping the rows there, explained or not; returns how many were added."""
        shown = {r.path for r in self._results}
        new = [r for r in response.results if r.path not in shown]
        self.response = response
        if new:
            first = len(self._results)
            self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
            self._results += new
            self.endInsertRows()
        return len(new)

    def unexplained(self, rows: Iterable[int]) -> list[int]:
        """Those of ``rows`` that exist and still lack their explanation."""
        return [r for r in rows if 0 <= r < len(self._results) and r not in self._explained]

    def set_explained(self, rows: Sequence[int], results: Sequence[SearchResult]) -> None:
        """Replace ``rows`` with their explained results (same documents, same order: only chips and context differ)."""
        for row, result in zip(rows, results):
            if 0 <= row < len(self._results) and self._results[row].path == result.path:
                self._results[row] = result
                self._explained.add(row)
                self.dataChanged.emit(self.index(row), self.index(row))

    def result(self, row: int) -> SearchResult | None:
        """The result at ``row``, if any."""
        return self._results[row] if 0 <= row < len(self._results) else None

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self._results)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        result = self.result(index.row()) if index.isValid() else None
        if result is None:
            return None
        path = readable(result.path)
        title = result.title or Path(path).name
        if role in (Qt.ItemDataRole.DisplayRole, Role.TITLE):
            return title
        if role == Qt.ItemDataRole.ToolTipRole:
            return path
        if role == Role.RESULT:
            return result
        if role == Role.SCORE_TEXT:
            return score_display(result)[0]
        if role == Role.SCORE_FRACTION:
            return score_display(result)[1]
        if role == Role.PASSAGE_HTML:
            return highlight_html(result.sentence, result.highlights)
        if role == Role.FACETS:
            return chips(result)
        if role == Role.LOCATION:
            page = f"  ·  {page_label(result.path, result.page)}" if result.page else ""
            byline = f"{result.byline}  ·  " if result.byline else ""  # an e-mail's sender and date
            return f"{strength_label(result)}  ·  {byline}{path}{page}"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{title}, {score_display(result)[0]} percent, {strength_label(result)}: {result.sentence}"
        return None
