"""Opening a text file at the passage's line, and the launch route for every kind of request.

Nothing is launched here: ``line_command`` and ``launch_for`` only build command lines; the default application,
whether it runs in a terminal and the executables on PATH are given, as the desktop would report them.
"""

from __future__ import annotations

import pytest

from app.gui.launch import Launch, OpenRequest, launch_for
from app.gui.open_at_line import editor_for_desktop_id, line_of, text_mimes
from app.gui.open_at_line import line_command as _line_command

TXT = "/home/ann/notes/tides of the north.txt"


def installed(*names: str):
    """A PATH lookup that finds exactly ``names`` under /usr/bin."""
    return lambda name: f"/usr/bin/{name}" if name in names else None


def line_command(path, line, desktop_id, found, terminal=False, platform="linux"):
    return _line_command(path, lambda: line, platform=platform, default_app=lambda: desktop_id,
                         in_terminal=lambda _: terminal, which=installed(*found))


@pytest.mark.parametrize(("desktop_id", "found", "terminal", "expected"), [
    ("org.gnome.gedit.desktop", ("gedit",), False, ["/usr/bin/gedit", "+12", TXT]),
    ("org.kde.kate.desktop", ("kate",), False, ["/usr/bin/kate", "--line", "12", TXT]),
    ("org.kde.kwrite.desktop", ("kwrite",), False, ["/usr/bin/kwrite", "--line", "12", TXT]),
    ("emacs.desktop", ("emacs",), False, ["/usr/bin/emacs", "+12", TXT]),
    ("emacsclient.desktop", ("emacsclient", "emacs"), False,
     ["/usr/bin/emacsclient", "-c", "-n", "--alternate-editor=", "+12", TXT]),
    ("code.desktop", ("code",), False, ["/usr/bin/code", "--goto", f"{TXT}:12"]),
    ("com.visualstudio.code.desktop", ("code",), False, ["/usr/bin/code", "--goto", f"{TXT}:12"]),
    ("codium.desktop", ("codium",), False, ["/usr/bin/codium", "--goto", f"{TXT}:12"]),
    ("gvim.desktop", ("gvim", "vim"), False, ["/usr/bin/gvim", "+12", TXT]),
    # terminal editors run in the system's terminal, as their desktop entries ask
    ("vim.desktop", ("vim", "x-terminal-emulator"), True, ["/usr/bin/x-terminal-emulator", "-e", "/usr/bin/vim", "+12", TXT]),
    ("nvim.desktop", ("nvim", "vim", "gnome-terminal"), True, ["/usr/bin/gnome-terminal", "--", "/usr/bin/nvim", "+12", TXT]),
])
def test_editor_commands(desktop_id, found, terminal, expected):
    assert line_command(TXT, 12, desktop_id, found, terminal) == expected


@pytest.mark.parametrize(("path", "line", "desktop_id", "found", "terminal", "platform"), [
    (TXT, 12, "org.gnome.TextEditor.desktop", ("gnome-text-editor", "gedit"), False, "linux"),  # takes no line
    (TXT, 12, "org.gnome.gedit.desktop", (), False, "linux"),  # default but not installed
    (TXT, 12, None, ("gedit",), False, "linux"),  # no default editor
    (TXT, None, "org.gnome.gedit.desktop", ("gedit",), False, "linux"),  # the passage was not found in the file
    (TXT, 12, "vim.desktop", ("vim",), True, "linux"),  # a terminal editor and no terminal: the desktop finds one
    (TXT, 12, "code.desktop", ("code",), False, "darwin"),
    ("/home/ann/slides.pdf", 12, "org.gnome.gedit.desktop", ("gedit",), False, "linux"),  # not text
])
def test_fallback_to_the_default_application(path, line, desktop_id, found, terminal, platform):
    assert line_command(path, line, desktop_id, found, terminal, platform) is None


def test_the_file_is_read_only_for_an_editor_that_takes_a_line():
    def read() -> int:
        raise AssertionError("the file was read although no editor would take its line")

    assert _line_command(TXT, read, platform="linux", default_app=lambda: "firefox.desktop",
                         in_terminal=lambda _: False, which=installed("firefox")) is None


def test_editor_ids_match_whole_words():
    assert editor_for_desktop_id("nvim.desktop").name == "nvim"
    assert editor_for_desktop_id("vim.desktop").name == "vim"
    assert editor_for_desktop_id("org.gnome.gedit.desktop").name == "gedit"
    assert editor_for_desktop_id("vscodium.desktop").name == "vscodium"
    assert editor_for_desktop_id("org.gnome.TextEditor.desktop") is None
    assert editor_for_desktop_id("codeblocks.desktop") is None


def test_text_types_fall_back_to_plain_text():
    assert text_mimes("notes.md") == ("text/markdown", "text/plain")
    assert text_mimes("README") == ("text/plain",)
    assert text_mimes("paper.pdf") == ()


def test_line_of_finds_the_passage_as_the_reader_changed_it():
    text = "# Keepers\n\n*Storms* came in autumn.\nThe lamp's   Fresnel\nlens focused its beam.\n\nStorms came in autumn."
    assert line_of(text, "The lamp's Fresnel lens focused its beam.", 30) == 4  # white space folded by the reader
    assert line_of(text, "Storms came in autumn.", 11) == 3  # Markdown marks dropped by the reader
    assert line_of(text, "Storms came in autumn.", len(text) - 5) == 7  # the occurrence nearest its offset
    assert line_of(text, "Whales sing.", 0) is None
    assert line_of(text, "", 0) is None


@pytest.mark.parametrize(("request_", "platform", "expected"), [
    (OpenRequest("/d/a.pdf"), "linux", Launch(("xdg-open", "/d/a.pdf"))),
    (OpenRequest("/d/a.pdf", reveal=True), "linux", Launch(("xdg-open", "/d"))),
    (OpenRequest("/d/a.pdf"), "darwin", Launch(("open", "/d/a.pdf"))),
    (OpenRequest("/d/a.pdf", reveal=True), "darwin", Launch(("open", "-R", "/d/a.pdf"))),
    (OpenRequest(r"C:\d\a.pdf"), "win32", Launch(("explorer", r"C:\d\a.pdf"), checked=False)),
])
def test_plain_and_reveal_routes(request_, platform, expected):
    assert launch_for(request_, platform) == expected


def test_a_file_opened_at_its_start_says_where_the_passage_is(tmp_path, monkeypatch):
    """A new user's text opened at its first line (no line-aware route to their editor): the window says the line."""
    from app.gui import launch

    text = tmp_path / "trains.txt"
    text.write_text("Plans.\n\nThe night train to Vienna leaves at 22:10.\n", encoding="utf-8")
    monkeypatch.setattr(launch, "line_command", lambda *a, **k: None)
    sentence = "The night train to Vienna leaves at 22:10."
    opened = launch_for(OpenRequest(str(text), sentence=sentence, start=7), "linux")
    assert opened == Launch(("xdg-open", str(text)), note="trains.txt opened at its start: the passage is on line 3")
    # at its first line, or not found, there is nothing to say
    assert launch_for(OpenRequest(str(text), sentence="Plans.", start=0), "linux").note == ""
    assert launch_for(OpenRequest(str(text), sentence="Whales sing.", start=0), "linux").note == ""
    # a PDF the default viewer opens at its first page
    pdf = OpenRequest("/d/a.pdf", page=3, sentence="Tides turn.")
    assert launch_for(pdf, "darwin").note == "a.pdf opened at its start: the passage is on page 3"
