"""The command that opens a PDF at a given page in the user's own PDF viewer, where that viewer takes a page argument.

Qt-free so that every viewer's command line can be checked without launching anything. ``None`` from
:func:`page_command` means "no page-aware route": the caller opens the file with the platform's default application
instead. The user's default viewer is respected: when it is an application we cannot pass a page to (a browser,
macOS Preview), the file opens there at page 1 rather than in some other viewer that happens to be installed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

PDF_MIME = "application/pdf"
Which = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Launcher:
    """A program that opens a file at a 1-based place (a PDF viewer's page, an editor's line); ``args`` lists its
    arguments with ``{at}`` for the place and ``{path}``."""

    name: str
    executables: tuple[str, ...]
    args: tuple[str, ...]

    def command(self, executable: str, path: str, at: int) -> list[str]:
        """The full command line for ``path`` at ``at``."""
        return [executable, *(a.format(at=at, path=path) for a in self.args)]


# Linux viewers, in the order their names are tried against a desktop entry's id (zathura's PDF plug-in ids name
# mupdf, so zathura comes before mupdf). Page flags from each viewer's manual page: all count pages from 1.
LINUX_VIEWERS = (
    Launcher("evince", ("evince",), ("--page-index={at}", "{path}")),
    Launcher("okular", ("okular",), ("-p", "{at}", "{path}")),
    Launcher("zathura", ("zathura",), ("-P", "{at}", "{path}")),
    Launcher("qpdfview", ("qpdfview",), ("{path}#{at}",)),
    Launcher("xreader", ("xreader",), ("--page-index={at}", "{path}")),
    Launcher("atril", ("atril",), ("--page-index={at}", "{path}")),
    Launcher("mupdf", ("mupdf", "mupdf-gl", "mupdf-x11"), ("{path}", "{at}")),
)
# Windows viewers by executable name (the default application's command line names the executable).
WINDOWS_VIEWERS = (
    Launcher("sumatrapdf", ("sumatrapdf.exe",), ("-page", "{at}", "{path}")),
    Launcher("acrobat", ("acrord32.exe", "acrobat.exe"), ("/A", "page={at}", "{path}")),
)


def page_command(path: str, page: int | None, *, platform: str = sys.platform,
                 default_app: Callable[[], str | None] | None = None, which: Which = shutil.which) -> list[str] | None:
    """The command line that opens ``path`` at ``page`` in the default PDF viewer, or None to open it plainly.

    ``default_app`` returns the platform's default PDF application: a desktop entry id on Linux, an open command
    line on Windows (None: unknown). It and ``which`` are parameters so that tests can name any viewer.
    """
    if not page or page < 1 or Path(path).suffix.lower() != ".pdf":
        return None
    if platform.startswith("linux") or "bsd" in platform:
        app = (default_app or linux_default_pdf_app)()
        viewer = viewer_for_desktop_id(app) if app else None
        executable = next((found for name in viewer.executables if (found := which(name))), None) if viewer else None
        return viewer.command(executable, path, page) if viewer and executable else None
    if platform == "win32":
        app = (default_app or windows_default_pdf_app)()
        executable = executable_of(app) if app else None
        viewer = next((v for v in WINDOWS_VIEWERS if executable and PureWindowsPath(executable).name.lower() in v.executables),
                      None)
        return viewer.command(executable, path, page) if viewer and executable else None
    return None  # macOS: `open` takes no page, and Preview has no command line of its own


def viewer_for_desktop_id(desktop_id: str) -> Launcher | None:
    """The page-aware viewer a desktop entry id ("org.gnome.Evince.desktop") belongs to, if any."""
    name = desktop_id.lower().removesuffix(".desktop")
    return next((v for v in LINUX_VIEWERS if v.name in name), None)


def executable_of(command: str) -> str | None:
    """The program of a Windows open command (``"C:\\Program Files\\X\\x.exe" "%1"`` or ``C:\\x.exe %1``)."""
    command = command.strip()
    if command.startswith('"'):
        end = command.find('"', 1)
        return command[1:end] if end > 1 else None
    match = re.match(r"(.+?\.exe)\b", command, re.IGNORECASE)
    if match:
        return match.group(1)
    words = command.split()
    return words[0] if words else None


# -- Linux: the default application per the XDG MIME applications spec -----------------------------------------------
def _xdg_dirs(given: Mapping[str, str] | None) -> tuple[list[Path], list[Path]]:
    """(config folders, data folders) of the XDG base directory spec, most important first."""
    env = os.environ if given is None else given
    home = Path(env.get("HOME", "~")).expanduser()
    config = [Path(env.get("XDG_CONFIG_HOME") or home / ".config"),
              *(Path(p) for p in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if p)]
    data = [Path(env.get("XDG_DATA_HOME") or home / ".local/share"),
            *(Path(p) for p in (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":") if p)]
    return config, data


def mimeapps_files(env: dict[str, str] | None = None) -> list[Path]:
    """The ``mimeapps.list`` files in the spec's order of precedence (desktop-specific ones first in each folder)."""
    config, data = _xdg_dirs(env)
    desktops = [d.lower() for d in (os.environ if env is None else env).get("XDG_CURRENT_DESKTOP", "").split(":") if d]
    folders = [*config, *(d / "applications" for d in data)]
    return [folder / f"{prefix}mimeapps.list" for folder in folders for prefix in (*(f"{d}-" for d in desktops), "")]


def _entries(path: Path, section: str, mime: str) -> list[str]:
    """The desktop ids listed for ``mime`` in one section of a mimeapps.list (or mimeinfo.cache) file."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    current, out = None, []
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            current = line
        elif current == section and line.partition("=")[0].strip() == mime:
            out += [i.strip() for i in line.partition("=")[2].split(";") if i.strip()]
    return out


def linux_default_app(mimes: Sequence[str], env: dict[str, str] | None = None) -> str | None:
    """The desktop id of the default application for the first of ``mimes`` that has one: the first installed entry
    under ``[Default Applications]``, then ``[Added Associations]``, then the system's ``mimeinfo.cache``, as
    ``xdg-mime query default`` finds it (read here directly: running xdg-mime, a shell script, would cost a
    noticeable pause on each Enter)."""
    installed = [d / "applications" for d in _xdg_dirs(env)[1]]
    lists = mimeapps_files(env)
    for mime in mimes:
        candidates: Iterable[str] = [
            *(i for f in lists for i in _entries(f, "[Default Applications]", mime)),
            *(i for f in lists for i in _entries(f, "[Added Associations]", mime)),
            *(i for d in installed for i in _entries(d / "mimeinfo.cache", "[MIME Cache]", mime)),
        ]
        found = next((i for i in candidates if any((d / i).is_file() for d in installed)), None)
        if found:
            return found
    return None


def linux_default_pdf_app(env: dict[str, str] | None = None) -> str | None:
    """The desktop id of the default PDF application (see :func:`linux_default_app`)."""
    return linux_default_app((PDF_MIME,), env)


def desktop_entry_runs_in_terminal(desktop_id: str, env: dict[str, str] | None = None) -> bool:
    """Whether the installed desktop entry ``desktop_id`` says ``Terminal=true`` (vim, nvim: no window of their own)."""
    for folder in (d / "applications" for d in _xdg_dirs(env)[1]):
        entry = folder / desktop_id
        if entry.is_file():
            return any(line.strip().lower().replace(" ", "") == "terminal=true"
                       for line in entry.read_text(encoding="utf-8", errors="replace").splitlines())
    return False


# -- Windows: the open command of the .pdf association ------------------------------------------------------------------
def windows_default_pdf_app() -> str | None:
    """The command line Explorer runs to open a .pdf (the user's choice first, then the machine's class)."""
    if sys.platform != "win32":  # winreg exists only there
        return None
    import winreg

    def value(root, key: str, name: str | None = None) -> str | None:
        try:
            with winreg.OpenKey(root, key) as handle:
                return str(winreg.QueryValueEx(handle, name)[0])
        except OSError:
            return None

    explorer = r"Software\Microsoft\Windows\CurrentVersion\Explorer\FileExts\.pdf\UserChoice"
    prog_id = value(winreg.HKEY_CURRENT_USER, explorer, "ProgId") or value(winreg.HKEY_CLASSES_ROOT, ".pdf")
    return value(winreg.HKEY_CLASSES_ROOT, rf"{prog_id}\shell\open\command") if prog_id else None
