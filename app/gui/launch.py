"""What to run to open a result (at its page or line where the application takes one) or show it in its folder.

Qt-free and side-effect free apart from reading the result's file to find its line, so every route can be checked
without launching anything; :mod:`app.gui.desktop` runs the commands and watches how they end.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from app.gui.open_at_line import MAX_SCAN_BYTES, line_command, line_of, text_mimes
from app.gui.open_at_page import page_command
from engine import page_label


@dataclass(frozen=True)
class OpenRequest:
    """Open ``path`` (``reveal``: show it in the file manager instead); ``page``, ``sentence`` and ``start`` (its
    offset in the indexed text) say where the passage is, for applications that can go there."""

    path: str
    reveal: bool = False
    page: int | None = None
    sentence: str = ""
    start: int = 0

    @property
    def action(self) -> str:
        """What was asked, for messages: "open tides.pdf", "show tides.pdf in the file manager"."""
        name = Path(self.path).name
        return f"show {name} in the file manager" if self.reveal else f"open {name}"


@dataclass(frozen=True)
class Launch:
    """A command line to start; ``checked``: a non-zero exit status means it failed (Windows Explorer returns 1
    even when it did what was asked, so its status says nothing); ``note``: what to tell the user once it started,
    where the application could not be told the passage's page or line ("tides.txt opened at its start: the passage
    is on line 12")."""

    argv: tuple[str, ...]
    checked: bool = True
    note: str = ""


def plain_launch(path: str, platform: str = sys.platform) -> Launch:
    """Open ``path`` with the platform's default application: xdg-open (which asks the desktop, or its portal in a
    sandbox, and exits non-zero when nothing can open the file), macOS's ``open``, Explorer on Windows."""
    if platform == "darwin":
        return Launch(("open", path))
    if platform == "win32":
        return Launch(("explorer", path), checked=False)
    return Launch(("xdg-open", path))


def reveal_launch(path: str, platform: str = sys.platform) -> Launch:
    """Show ``path`` selected in the file manager (its folder where the platform cannot select a file)."""
    if platform == "darwin":
        return Launch(("open", "-R", path))
    if platform == "win32":
        return Launch(("explorer", f"/select,{Path(path)}"), checked=False)
    return Launch(("xdg-open", str(Path(path).parent)))


def local_request(request: OpenRequest, copies: Path) -> OpenRequest:
    """``request`` for a file the platform can open: a zip archive's member (``engine.ingest.archive``) is unpacked
    into ``copies`` under its own name and opened there (revealing shows the archive), and so is the file inside a
    compressed one (``FAQ.gz`` opens as ``FAQ``: no viewer opens a .gz); other paths are unchanged. Raises
    engine.errors.ReadError when the file can no longer be unpacked."""
    from engine import file_holding, is_packed, unpacked_copy  # on the opening thread, as in _line

    path = Path(request.path)
    if request.reveal or not is_packed(path):
        shown = file_holding(path)
        return request if shown == path else replace(request, path=str(shown))
    return replace(request, path=str(unpacked_copy(path, Path(tempfile.mkdtemp(prefix="member-", dir=copies)))))


def launch_for(request: OpenRequest, platform: str = sys.platform) -> Launch:
    """The command for ``request``: a PDF viewer at the page, an editor at the line, else the plain route, which
    says where the passage is."""
    if request.reveal:
        return reveal_launch(request.path, platform)
    command = page_command(request.path, request.page, platform=platform)
    if command is None and request.sentence:
        command = line_command(request.path, lambda: _line(request), platform=platform)
    if command is not None:
        return Launch(tuple(command))
    return replace(plain_launch(request.path, platform), note=_where(request))


def _where(request: OpenRequest) -> str:
    """Where the passage is in a file opened at its start ("" where that is where it is, or is not known): a new
    user's text opened at its first line in an editor quire could not find a line-aware route to."""
    name = Path(request.path).name
    if request.page is not None and request.page > 1:
        return f"{name} opened at its start: the passage is on {page_label(request.path, request.page, short=False)}"
    line = _line(request) if request.sentence and text_mimes(request.path) else None
    return f"{name} opened at its start: the passage is on line {line}" if line is not None and line > 1 else ""


def _line(request: OpenRequest) -> int | None:
    """The passage's line in its file, read as the indexer decoded it; None when the file is not text."""
    from engine import ReadError, decode_text  # on the opening thread: the engine is loaded by the time results show

    try:
        if Path(request.path).stat().st_size > MAX_SCAN_BYTES:
            return None
        return line_of(decode_text(Path(request.path).read_bytes()), request.sentence, request.start)
    except (OSError, ReadError):
        return None
