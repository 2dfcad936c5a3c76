"""A data table's rows as texts that name their cells by their headers: "Function: heappush; Cost: O(log n)".

A table with header cells (<th>) is read row by row (docs/decisions/0044-html-main-text.md): each body row becomes
one block that names each cell by its column's header, so that a row a query finds says what its figures are, and
the header row is never a passage of its own. A row that starts with a header cell (an infobox's "Born | 23 June
1912") names the rest by it: "Born: 23 June 1912". A row of one header cell (a title spanning the table, a group's
name) is a heading. A table without header cells is a layout (an e-mail's columns, a page's frame), and one with a
table inside it is too: their cells stay blocks of their own, as the reader's walk reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4 import Tag

# A colspan beyond this is a typo or a hostile page, not a layout: columns are counted up to it.
_MAX_SPAN = 100


def _span(cell: Tag) -> int:
    try:
        return min(max(int(str(cell.get("colspan") or 1)), 1), _MAX_SPAN)
    except ValueError:
        return 1


def _columns(cells: list[Tag], texts: list[str]) -> list[str]:
    """A header row's texts, one per column it covers."""
    return [text for cell, text in zip(cells, texts) for _ in range(_span(cell))]


def _row(cells: list[Tag], texts: list[str], headers: list[str]) -> str:
    """One body row as "Header: cell; Header: cell"; a row of no column headers that starts with a header cell as
    "Label: cell; cell"."""
    if not headers and cells[0].name == "th" and len(cells) > 1:
        rest = [text for text in texts[1:] if text]
        return f"{texts[0]}: {'; '.join(rest)}" if texts[0] and rest else "; ".join(t for t in texts if t)
    parts: list[str] = []
    column = 0
    for cell, text in zip(cells, texts):
        header = headers[column] if column < len(headers) else ""
        column += _span(cell)
        if text:
            parts.append(f"{header}: {text}" if header and header != text else text)
    return "; ".join(parts)


def table_rows(table: Tag, cell_text: Callable[[Tag], str]) -> list[str] | None:
    """The texts of a data table: its caption, then a text per row (see the module's docstring); None for a layout
    table, which the caller reads cell by cell. ``cell_text``: a cell's text on one line."""
    if table.find("th") is None or table.find("table") is not None:
        return None
    caption = table.find("caption")
    out = [text] if caption is not None and (text := cell_text(caption)) else []
    headers: list[str] = []
    for tr in table.find_all("tr"):
        cells = tr.find_all(("th", "td"), recursive=False)
        texts = [cell_text(cell) for cell in cells]
        if not any(texts):
            continue
        if all(cell.name == "th" for cell in cells):
            if len(cells) == 1:
                out.append(texts[0])  # a title or a group's name: a heading
            else:
                headers = _columns(cells, texts)  # a header row names the rows below it, and is no text itself
            continue
        if row := _row(cells, texts, headers):
            out.append(row)
    return out
