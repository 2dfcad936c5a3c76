"""Opening a PDF at its page: the command line built for each viewer, and the fallback to the default application.

Nothing is launched here: ``page_command`` only builds command lines, and the default application and the
executables found on PATH are given to it, as the desktop would report them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.gui.open_at_page import executable_of, linux_default_pdf_app, mimeapps_files, page_command

PDF = "/home/ann/papers/tides of the north.pdf"


def installed(*names: str):
    """A PATH lookup that finds exactly ``names`` under /usr/bin."""
    return lambda name: f"/usr/bin/{name}" if name in names else None


@pytest.mark.parametrize(("desktop_id", "found", "expected"), [
    ("org.gnome.Evince.desktop", "evince", ["/usr/bin/evince", "--page-index=7", PDF]),
    ("evince.desktop", "evince", ["/usr/bin/evince", "--page-index=7", PDF]),
    ("org.kde.okular.desktop", "okular", ["/usr/bin/okular", "-p", "7", PDF]),
    ("okularApplication_pdf.desktop", "okular", ["/usr/bin/okular", "-p", "7", PDF]),
    ("org.pwmt.zathura-pdf-mupdf.desktop", "zathura", ["/usr/bin/zathura", "-P", "7", PDF]),
    ("qpdfview.desktop", "qpdfview", ["/usr/bin/qpdfview", f"{PDF}#7"]),
    ("xreader.desktop", "xreader", ["/usr/bin/xreader", "--page-index=7", PDF]),
    ("atril.desktop", "atril", ["/usr/bin/atril", "--page-index=7", PDF]),
    ("mupdf.desktop", "mupdf-gl", ["/usr/bin/mupdf-gl", PDF, "7"]),
])
def test_linux_viewer_commands(desktop_id, found, expected):
    command = page_command(PDF, 7, platform="linux", default_app=lambda: desktop_id, which=installed(found))
    assert command == expected


@pytest.mark.parametrize(("open_command", "expected"), [
    (r'"C:\Users\ann\AppData\Local\SumatraPDF\SumatraPDF.exe" "%1"',
     [r"C:\Users\ann\AppData\Local\SumatraPDF\SumatraPDF.exe", "-page", "3", PDF]),
    (r"C:\Tools\sumatrapdf.exe %1", [r"C:\Tools\sumatrapdf.exe", "-page", "3", PDF]),
    (r'"C:\Program Files\Adobe\Acrobat DC\Acrobat\Acrobat.exe" "%1"',
     [r"C:\Program Files\Adobe\Acrobat DC\Acrobat\Acrobat.exe", "/A", "page=3", PDF]),
])
def test_windows_viewer_commands(open_command, expected):
    assert page_command(PDF, 3, platform="win32", default_app=lambda: open_command) == expected


@pytest.mark.parametrize(("path", "page", "platform", "default", "found"), [
    (PDF, 4, "darwin", None, ()),  # `open` takes no page argument
    (PDF, 4, "linux", "firefox.desktop", ("firefox", "evince")),  # the user's viewer is not page-aware: respect it
    (PDF, 4, "linux", "org.gnome.Evince.desktop", ()),  # listed as default but not installed
    (PDF, 4, "linux", None, ("evince",)),  # no default PDF application at all
    (PDF, None, "linux", "evince.desktop", ("evince",)),  # the passage has no page
    ("/home/ann/slides.pptx", 4, "linux", "evince.desktop", ("evince",)),  # slides: no viewer takes a slide number
    (PDF, 4, "win32", r'"C:\Program Files\Microsoft\Edge\Application\msedge.exe" --single-argument %1', ()),
    (PDF, 4, "win32", None, ()),
])
def test_fallback_to_the_default_application(path, page, platform, default, found):
    assert page_command(path, page, platform=platform, default_app=lambda: default, which=installed(*found)) is None


def test_executable_of_windows_open_commands():
    assert executable_of(r'"C:\A B\x.exe" "%1"') == r"C:\A B\x.exe"
    assert executable_of(r"C:\Program Files\X\x.exe %1") == r"C:\Program Files\X\x.exe"
    assert executable_of("viewer %1") == "viewer"
    assert executable_of('"unterminated') is None


def _desktop_entry(folder: Path, desktop_id: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / desktop_id).write_text(f"[Desktop Entry]\nType=Application\nName={desktop_id}\nExec=x %U\n")


def test_linux_default_follows_the_xdg_mimeapps_order(tmp_path):
    config, data, system = tmp_path / "config", tmp_path / "data", tmp_path / "system"
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(config), "XDG_CONFIG_DIRS": str(tmp_path / "etc"),
           "XDG_DATA_HOME": str(data), "XDG_DATA_DIRS": str(system), "XDG_CURRENT_DESKTOP": "KDE"}
    for desktop_id in ("org.kde.okular.desktop", "org.gnome.Evince.desktop"):
        _desktop_entry(system / "applications", desktop_id)
    assert linux_default_pdf_app(env) is None

    # the system's cache of what handles PDFs is the last resort
    (system / "applications" / "mimeinfo.cache").write_text(
        "[MIME Cache]\napplication/pdf=org.gnome.Evince.desktop;\ntext/plain=gedit.desktop;\n")
    assert linux_default_pdf_app(env) == "org.gnome.Evince.desktop"

    # the user's choice wins; an id that is not installed is passed over
    config.mkdir()
    (config / "mimeapps.list").write_text(
        "[Added Associations]\napplication/pdf=org.kde.okular.desktop;\n\n"
        "[Default Applications]\napplication/pdf=gone.desktop;org.gnome.Evince.desktop\n")
    assert linux_default_pdf_app(env) == "org.gnome.Evince.desktop"

    # a desktop-specific list comes before the generic one in the same folder
    (config / "kde-mimeapps.list").write_text("[Default Applications]\napplication/pdf=org.kde.okular.desktop\n")
    assert linux_default_pdf_app(env) == "org.kde.okular.desktop"
    assert mimeapps_files(env)[:2] == [config / "kde-mimeapps.list", config / "mimeapps.list"]

    command = page_command(PDF, 2, platform="linux", default_app=lambda: linux_default_pdf_app(env),
                           which=installed("okular"))
    assert command == ["/usr/bin/okular", "-p", "2", PDF]


def test_opener_module_is_qt_free():
    code = "import sys, app.gui.open_at_page; print(sorted(m for m in sys.modules if m.startswith('PySide6')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
