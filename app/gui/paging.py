"""Paging through an answer: what a search asked for, and the count the list shows ("1–10 of at least 39").

A further page is the same search with a larger k (on the search thread, as any query): the engine ranks the same
way whatever k is, so the rows on screen stay and the new ones are appended. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """How much of an answer a search asks for: its first ``k`` documents, weak ones too with ``include_weak``."""

    k: int
    include_weak: bool = False

    def more(self, step: int) -> Page:
        """The same search, ``step`` documents further."""
        return Page(self.k + step, self.include_weak)


@dataclass(frozen=True)
class Shown:
    """What the list holds of an answer: ``rows`` of the ``found`` documents the search found (``at_least``: a
    lower bound), and whether the search has no more to give (``exhausted``: a page came back short)."""

    rows: int
    found: int
    at_least: bool
    exhausted: bool = False

    @property
    def total(self) -> int:
        """The count to show: what the engine found, or the rows once a page came back short (files with the same
        content count once each in the engine's count but are shown once)."""
        return self.rows if self.exhausted else max(self.found, self.rows)

    @property
    def doubt(self) -> bool:
        """Whether there may be more than the count says (a page that came back short ends the doubt)."""
        return self.at_least and not self.exhausted

    @property
    def more(self) -> bool:
        """Whether another page may bring more documents: the count says so, or it is a lower bound that the rows
        already reach."""
        return not self.exhausted and (self.rows < self.total or self.at_least)

    @property
    def text(self) -> str:
        """"1–10 of 37", "1–10 of at least 39", "1–10 of 10 or more" (a lower bound the rows reach: "of at least 10"
        read oddly to a new user)."""
        if not self.rows:
            return ""
        if self.doubt and self.total <= self.rows:
            return f"1–{self.rows} of {self.total:,} or more"
        return f"1–{self.rows} of {'at least ' if self.doubt else ''}{self.total:,}"
