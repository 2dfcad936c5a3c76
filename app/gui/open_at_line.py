"""The command that opens a text file at the passage's line in the user's own editor, where that editor takes a line.

The counterpart of :mod:`app.gui.open_at_page` for text: ``None`` from :func:`line_command` means "no line-aware
route" and the file opens plainly. The user's default editor is respected (the XDG default for the file's type); an
editor that runs in a terminal (vim, nvim) is started in the system's terminal, as its desktop entry asks. Qt-free,
so every editor's command line can be checked without launching anything.
"""

from __future__ import annotations

import mimetypes
import re
import shutil
import sys
from collections.abc import Callable

from app.gui.open_at_page import Launcher, Which, desktop_entry_runs_in_terminal, linux_default_app

# Matched against the words of a desktop entry's id ("org.kde.kate"). Line arguments from each editor's manual: all
# count lines from 1.
LINUX_EDITORS = (
    Launcher("nvim", ("nvim",), ("+{at}", "{path}")),
    Launcher("gvim", ("gvim",), ("+{at}", "{path}")),
    Launcher("vim", ("vim",), ("+{at}", "{path}")),
    # -c: a frame of its own; --alternate-editor='': start the Emacs server when none runs, as the desktop entry does
    Launcher("emacsclient", ("emacsclient",), ("-c", "-n", "--alternate-editor=", "+{at}", "{path}")),
    Launcher("emacs", ("emacs",), ("+{at}", "{path}")),
    Launcher("gedit", ("gedit",), ("+{at}", "{path}")),
    Launcher("kate", ("kate",), ("--line", "{at}", "{path}")),
    Launcher("kwrite", ("kwrite",), ("--line", "{at}", "{path}")),
    Launcher("vscodium", ("codium",), ("--goto", "{path}:{at}")),
    Launcher("code", ("code",), ("--goto", "{path}:{at}")),
)
# Terminals that run a command given after a flag, Debian's alternatives link first (it names the user's choice).
TERMINALS = (
    ("x-terminal-emulator", "-e"),
    ("gnome-terminal", "--"),
    ("konsole", "-e"),
    ("xfce4-terminal", "-x"),
    ("xterm", "-e"),
)
# A passage is found again in its file by its first words, with anything but word characters allowed between them:
# readers drop Markdown marks and fold white space, so the indexed text is not the file's byte for byte.
MATCH_WORDS = 8
# Files larger than this are not read to find a line: it would delay the editor for no more than a line number.
MAX_SCAN_BYTES = 20_000_000


def text_mimes(path: str) -> tuple[str, ...]:
    """The MIME types whose default application should open ``path``: its own, then text/plain, which every text
    type inherits in the shared MIME database (an editor chosen for plain text opens .md and .py files too)."""
    guessed = mimetypes.guess_type(path, strict=False)[0]
    if guessed is not None and not guessed.startswith("text/"):
        return ()
    return tuple(dict.fromkeys([*([guessed] if guessed else []), "text/plain"]))


def line_command(path: str, line: Callable[[], int | None], *, platform: str = sys.platform,
                 default_app: Callable[[], str | None] | None = None, in_terminal: Callable[[str], bool] | None = None,
                 which: Which = shutil.which) -> list[str] | None:
    """The command line that opens ``path`` at the passage's line in the default editor for its type, or None to open
    it plainly (not a text type, an editor that takes no line, not installed, no line found, or not Linux).

    ``line`` finds the line; it is called only once a line-aware editor is known to be the default, since it reads
    the file. ``default_app`` returns the desktop id of the default application for the file's type;
    ``in_terminal`` says whether a desktop id runs in a terminal. They and ``which`` are parameters so that tests
    can name any editor.
    """
    if not (platform.startswith("linux") or "bsd" in platform):
        return None
    mimes = text_mimes(path)
    if not mimes:
        return None
    app = (default_app or (lambda: linux_default_app(mimes)))()
    editor = editor_for_desktop_id(app) if app else None
    executable = next((found for name in editor.executables if (found := which(name))), None) if editor else None
    if app is None or editor is None or executable is None:
        return None
    terminal: tuple[str, ...] = ()
    if (in_terminal or desktop_entry_runs_in_terminal)(app):
        terminal = next(((found, flag) for name, flag in TERMINALS if (found := which(name))), ())
        if not terminal:
            return None  # the plain route lets the desktop find a terminal of its own
    number = line()
    return [*terminal, *editor.command(executable, path, number)] if number and number >= 1 else None


def editor_for_desktop_id(desktop_id: str) -> Launcher | None:
    """The line-aware editor a desktop entry id ("org.gnome.gedit.desktop") belongs to, if any."""
    name = desktop_id.lower().removesuffix(".desktop")
    words = set(re.split(r"[^a-z0-9]+", name))  # whole words: "vim" must not match "nvim", nor "code" "vscodium"
    return next((e for e in LINUX_EDITORS if words & {e.name, *e.executables}), None)


def line_of(text: str, sentence: str, start: int) -> int | None:
    """The 1-based line of ``text`` where ``sentence`` begins, ``start`` being its offset in the indexed text.

    The occurrence nearest ``start`` wins (a sentence may repeat); None when the sentence's words are not found
    in that order, so that the file opens at its top rather than at a wrong line.
    """
    words = re.findall(r"\w+", sentence)[:MATCH_WORDS]
    if not words:
        return None
    pattern = re.compile(r"\W+".join(re.escape(w) for w in words))
    found = min(pattern.finditer(text), key=lambda m: abs(m.start() - start), default=None)
    return text.count("\n", 0, found.start()) + 1 if found else None
