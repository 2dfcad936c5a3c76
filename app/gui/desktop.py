"""Hand documents to the platform: open with the default application, or show in the file manager.

Both go through ``QDesktopServices`` where Qt can do it, so a URL handler registered for ``file`` (tests do this)
sees every request.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices


def open_document(path: str) -> bool:
    """Open ``path`` with the application the system associates with it."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(path))


def reveal(path: str) -> bool:
    """Show ``path`` selected in the file manager (its folder, where the platform cannot select a file)."""
    if sys.platform == "darwin":
        return QProcess.startDetached("open", ["-R", path])
    if sys.platform == "win32":
        return QProcess.startDetached("explorer", [f"/select,{Path(path)}"])
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))
