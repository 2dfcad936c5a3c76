"""Hand documents to the platform: open with the default application (at the passage's page where the PDF viewer
takes one), or show in the file manager.

Plain opening goes through ``QDesktopServices`` where Qt can do it, so a URL handler registered for ``file`` (tests
do this) sees every request; the page-aware command lines come from :mod:`app.gui.open_at_page`.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices

from app.gui.open_at_page import page_command

log = logging.getLogger(__name__)


def open_document(path: str, page: int | None = None) -> bool:
    """Open ``path`` with the application the system associates with it, at ``page`` when that application can."""
    command = page_command(path, page)
    if command is not None:
        if QProcess.startDetached(command[0], command[1:])[0]:
            return True
        log.info("could not start %s; opening %s with the default application", command[0], path)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


def reveal(path: str) -> bool:
    """Show ``path`` selected in the file manager (its folder, where the platform cannot select a file)."""
    if sys.platform == "darwin":
        return QProcess.startDetached("open", ["-R", path])[0]
    if sys.platform == "win32":
        return QProcess.startDetached("explorer", [f"/select,{Path(path)}"])[0]
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))
