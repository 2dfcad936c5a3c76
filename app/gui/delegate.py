"""Paints one result row: title, score number and bar, path and page, the passage with marked words, facet chips
(each with a tooltip of its own).

Colours come from the widget's palette (light or dark, whatever the system uses); the mark colour is the palette's
highlight blended into the base colour, so it reads on both.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPalette, QTextCursor, QTextDocument
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from app.gui.results_model import Chip, Role

PAD = 10
BAR_WIDTH = 64
BAR_HEIGHT = 6
PASSAGE_LINES = 2
CHIP_PAD = 6
# Laid-out passages kept for repainting: a screenful of rows, selected and not, with room to scroll back.
PASSAGE_CACHE = 64


def blend(a: QColor, b: QColor, share_of_a: float) -> QColor:
    """``a`` mixed into ``b``."""
    s = share_of_a
    return QColor.fromRgbF(a.redF() * s + b.redF() * (1 - s), a.greenF() * s + b.greenF() * (1 - s),
                           a.blueF() * s + b.blueF() * (1 - s))


def mark_css(palette: QPalette) -> str:
    """CSS for ``<mark>``: a soft tint of the highlight colour, bold, readable in light and dark palettes."""
    tint = blend(palette.color(QPalette.ColorRole.Highlight), palette.color(QPalette.ColorRole.Base), 0.35)
    return f"mark {{ background-color: {tint.name()}; color: {palette.color(QPalette.ColorRole.Text).name()}; font-weight: 600; }}"


def clip(doc: QTextDocument, lines: int) -> None:
    """Cut a one-paragraph ``doc`` (laid out at its width) after its first ``lines`` lines, ending the last in "…"
    where text was cut: a card clipped mid-sentence without one read as if the passage ended there. The last word
    that fits goes, to make room, until the mark fits on the line."""
    block = doc.firstBlock()
    doc.size()  # lays the document out
    while doc.blockCount() == 1 and (layout := block.layout()) is not None and layout.lineCount() > lines:
        line = layout.lineAt(lines - 1)
        start, end = line.textStart(), line.textStart() + line.textLength()
        cut = block.text().rfind(" ", start, end - 1)
        cursor = QTextCursor(doc)
        cursor.setPosition(block.position() + (cut if cut > start else max(start, end - 2)))
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText("…")
        doc.size()


class ResultDelegate(QStyledItemDelegate):
    """Draws :class:`app.gui.results_model.ResultsModel` rows without any per-row widgets.

    Laying out a passage's rich text is most of a row's painting (4 ms a row, measured while typing), and rows are
    repainted on every hover, selection and scroll: the laid-out documents are kept, keyed by what they show.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._passages: OrderedDict[tuple, QTextDocument] = OrderedDict()

    def _passage(self, html: str, font: QFont, css: str, width: int) -> QTextDocument:
        key = (html, font.key(), css, width)
        doc = self._passages.get(key)
        if doc is None:
            doc = QTextDocument()
            doc.setDefaultFont(font)
            doc.setDocumentMargin(0)
            doc.setDefaultStyleSheet(css)
            doc.setHtml(f"<body>{html}</body>")
            doc.setTextWidth(width)
            clip(doc, PASSAGE_LINES)
            self._passages[key] = doc
            if len(self._passages) > PASSAGE_CACHE:
                self._passages.popitem(last=False)
        else:
            self._passages.move_to_end(key)
        return doc

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont]:
        title = QFont(option.font)
        title.setBold(True)
        title.setPointSizeF(option.font.pointSizeF() * 1.08)
        small = QFont(option.font)
        small.setPointSizeF(option.font.pointSizeF() * 0.9)
        return title, small

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        title, small = self._fonts(option)
        # every row has room for a line of chips, also before they arrive (rows do not jump when they do), so all
        # rows are the same height and the list lays them out without asking each one
        height = (PAD * 2 + QFontMetrics(title).height() + QFontMetrics(small).height() + 6
                  + QFontMetrics(option.font).lineSpacing() * PASSAGE_LINES + 8 + QFontMetrics(small).height() + 8)
        # no width of its own: the list stretches each card to its viewport, so cards wrap to the view, however
        # narrow, and no horizontal scroll bar appears (a card as wide as the view was when it was laid out kept
        # that width after the window shrank)
        return QSize(0, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        self.initStyleOption(option, index)
        painter.save()
        style = option.widget.style() if option.widget else None
        option.text = ""
        if style:  # background, selection and focus in the platform's look
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_color = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        muted = blend(text_color, palette.color(QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Base), 0.6)
        title_font, small_font = self._fonts(option)
        rect = option.rect.adjusted(PAD, PAD, -PAD, -PAD)
        y = rect.top()

        # score number and bar, right-aligned on the title line
        title_h = QFontMetrics(title_font).height()
        score_text = index.data(Role.SCORE_TEXT) or ""
        painter.setFont(small_font)
        score_w = QFontMetrics(small_font).horizontalAdvance("0.00") + 6
        bar = QRectF(rect.right() - BAR_WIDTH, y + (title_h - BAR_HEIGHT) / 2, BAR_WIDTH, BAR_HEIGHT)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(blend(muted, palette.color(QPalette.ColorRole.Base), 0.35))
        painter.drawRoundedRect(bar, 3, 3)
        fill = QRectF(bar)
        fill.setWidth(bar.width() * float(index.data(Role.SCORE_FRACTION) or 0.0))
        painter.setBrush(text_color if selected else palette.color(QPalette.ColorRole.Highlight))
        painter.drawRoundedRect(fill, 3, 3)
        painter.setPen(text_color)
        painter.drawText(QRectF(bar.left() - score_w - 4, y, score_w, title_h),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, score_text)

        # title and location
        painter.setFont(title_font)
        title_w = int(bar.left() - score_w - 12 - rect.left())
        title = QFontMetrics(title_font).elidedText(index.data(Role.TITLE) or "", Qt.TextElideMode.ElideRight, title_w)
        painter.drawText(QRectF(rect.left(), y, title_w, title_h), Qt.AlignmentFlag.AlignVCenter, title)
        y += title_h + 2
        painter.setFont(small_font)
        painter.setPen(muted)
        small_h = QFontMetrics(small_font).height()
        location = QFontMetrics(small_font).elidedText(index.data(Role.LOCATION) or "", Qt.TextElideMode.ElideMiddle,
                                                        rect.width())
        painter.drawText(QRectF(rect.left(), y, rect.width(), small_h), Qt.AlignmentFlag.AlignVCenter, location)
        y += small_h + 4

        # passage with marked words, clipped to PASSAGE_LINES lines
        doc = self._passage(index.data(Role.PASSAGE_HTML) or "", option.font,
                            f"body {{ color: {text_color.name()}; }} " + mark_css(palette), rect.width())
        passage_h = QFontMetrics(option.font).lineSpacing() * PASSAGE_LINES
        painter.save()
        painter.translate(rect.left(), y)
        doc.drawContents(painter, QRectF(0, 0, rect.width(), passage_h))
        painter.restore()
        y += passage_h + 8

        # facet chips
        chip_bg = (blend(text_color, palette.color(QPalette.ColorRole.Highlight), 0.22) if selected
                   else blend(palette.color(QPalette.ColorRole.Highlight), palette.color(QPalette.ColorRole.Base), 0.2))
        for chip, box in self._chip_boxes(option, index):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(chip_bg)
            painter.drawRoundedRect(box, box.height() / 2, box.height() / 2)
            painter.setPen(text_color)
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, chip.label)
        painter.restore()

    def _chip_boxes(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
                    ) -> list[tuple[Chip, QRectF]]:
        """Where each chip of the row is painted (those that fit on the chip line), for painting and for tooltips."""
        title_font, small_font = self._fonts(option)
        fm = QFontMetrics(small_font)
        rect = option.rect.adjusted(PAD, PAD, -PAD, -PAD)
        # below the title, the location and the passage, as paint() lays them out
        y = (rect.top() + QFontMetrics(title_font).height() + 2 + fm.height() + 4
             + QFontMetrics(option.font).lineSpacing() * PASSAGE_LINES + 8)
        x, out = rect.left(), []
        for chip in index.data(Role.FACETS) or []:
            w = fm.horizontalAdvance(chip.label) + 2 * CHIP_PAD
            if x + w > rect.right():
                break
            out.append((chip, QRectF(x, y, w, fm.height() + 2)))
            x += w + 6
        return out

    def helpEvent(self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem,  # noqa: N802 - Qt API
                  index: QModelIndex | QPersistentModelIndex) -> bool:
        """A chip's tooltip says what its facet is about and which of the query's words it matches; elsewhere the
        row's own tooltip (the file's path) shows."""
        if event.type() == QEvent.Type.ToolTip:
            chip = next((c for c, box in self._chip_boxes(option, index) if box.contains(event.pos())), None)
            if chip is not None:
                QToolTip.showText(event.globalPos(), chip.tooltip, view)
                return True
        return super().helpEvent(event, view, option, index)
