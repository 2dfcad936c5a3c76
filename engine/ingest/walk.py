"""Find the files to index under the folders a user gives, honouring ignore rules and surviving odd file systems."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from engine.filestate import FileState

log = logging.getLogger(__name__)

# Never worth indexing: version-control internals, dependency trees, caches and build output of common tools.
DEFAULT_IGNORE = (
    ".git/", ".hg/", ".svn/", "node_modules/", "__pycache__/", ".venv/", "venv/", ".tox/", ".mypy_cache/",
    ".pytest_cache/", ".cache/", "*.pyc", "*.tmp", "~$*", ".DS_Store", "Thumbs.db", "__MACOSX/",
)


@dataclass(frozen=True)
class Found:
    """A file to consider; ``problem`` is set when it cannot even be looked at (its reason is recorded)."""

    path: Path
    problem: str | None = None
    # failed: what could not be looked at; skipped: what is left out on purpose (a second path)
    status: FileState = FileState.FAILED


class IgnoreRules:
    """gitignore-style patterns, matched against paths relative to the root being walked; hidden files too."""

    def __init__(self, patterns: Iterable[str] = (), *, include_hidden: bool = False) -> None:
        self.patterns = tuple(patterns)
        self.include_hidden = include_hidden
        self._spec = pathspec.GitIgnoreSpec.from_lines([*DEFAULT_IGNORE, *self.patterns])

    def ignored(self, relative: str, name: str, is_dir: bool) -> bool:
        """True when the entry (path relative to its root, with ``/`` separators) should be left out."""
        if not self.include_hidden and name.startswith("."):
            return True
        return self._spec.match_file(relative + "/" if is_dir else relative)


def is_maildir(path: Path) -> bool:
    """Whether ``path`` is a Maildir folder (it holds ``cur``, ``new`` and ``tmp``): a mailbox whose messages are
    documents under its own path (``engine.ingest.mail``), walked as one entry, never as loose files."""
    return all(os.path.isdir(os.path.join(path, part)) for part in ("cur", "new", "tmp"))


def walk(roots: Iterable[Path], rules: IgnoreRules) -> Iterator[Found]:
    """Every file under ``roots`` (files given directly are yielded as they are), depth first, sorted by name; a
    Maildir folder (:func:`is_maildir`) is yielded as if it were a file.

    Symbolic links are followed as long as they stay inside the roots (a link to ``/etc/hostname`` in a folder of
    notes would index a system file), and each real directory and file is visited once, so link loops end and a
    file reachable by two paths is indexed once. Unreadable directories, broken links and links that lead outside
    or to something other than a file or folder are reported, not raised.
    """
    seen: set[tuple[int, int]] = set()
    roots = [Path(os.path.abspath(root)) for root in roots]
    inside = tuple(os.path.realpath(root) for root in roots)
    for root in roots:
        try:
            st = root.stat()
        except FileNotFoundError:
            yield Found(root, "not found")
            continue
        except OSError as e:
            yield Found(root, _reason(e))
            continue
        if root.is_dir() and not is_maildir(root):
            yield from _walk_dir(root, root, rules, seen, inside)
        elif (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            yield Found(root)


def _walk_dir(
    root: Path, folder: Path, rules: IgnoreRules, seen: set[tuple[int, int]], inside: tuple[str, ...]
) -> Iterator[Found]:
    try:
        st = folder.stat()
    except OSError as e:
        yield Found(folder, _reason(e))
        return
    key = (st.st_dev, st.st_ino)
    if key in seen:
        log.info("skipping %s: already visited (symbolic link loop or second path)", folder)
        if folder.is_symlink():
            # recorded, so that `status` says why nothing under this link was indexed
            yield Found(folder, "symbolic link to a folder already indexed (link loop or second path)",
                        FileState.SKIPPED)
        return
    seen.add(key)
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as e:
        yield Found(folder, _reason(e))
        return
    for entry in entries:
        path = Path(entry.path)
        relative = path.relative_to(root).as_posix()
        try:
            is_dir = entry.is_dir(follow_symlinks=True)
            is_file = entry.is_file(follow_symlinks=True)
        except OSError as e:
            yield Found(path, _reason(e))
            continue
        if rules.ignored(relative, entry.name, is_dir):
            continue
        if (is_dir or is_file) and entry.is_symlink() and not _within(os.path.realpath(path), inside):
            yield Found(path, "symbolic link leads outside the indexed folder", FileState.SKIPPED)
            continue
        if is_dir and not is_maildir(path):
            yield from _walk_dir(root, path, rules, seen, inside)
        elif is_file or is_dir:  # a file, or a Maildir folder: a mailbox
            try:
                fst = path.stat()
            except OSError as e:
                yield Found(path, _reason(e))
                continue
            if (fst.st_dev, fst.st_ino) not in seen:
                seen.add((fst.st_dev, fst.st_ino))
                yield Found(path)
        elif entry.is_symlink():
            if os.path.exists(path):
                yield Found(path, "not a regular file (a symbolic link to a device, pipe or socket)", FileState.SKIPPED)
            else:
                yield Found(path, "broken symbolic link")
        else:  # recorded, so that `status` accounts for every entry of the folder
            yield Found(path, f"not a regular file ({_kind(entry)})", FileState.SKIPPED)


def _kind(entry: os.DirEntry) -> str:
    """What a folder entry that is neither file, folder nor link is, in a few words."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return "cannot be looked at"
    kinds = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def _within(target: str, folders: tuple[str, ...]) -> bool:
    return any(target == folder or target.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _reason(error: OSError) -> str:
    if isinstance(error, PermissionError):
        return "permission denied"
    if isinstance(error, FileNotFoundError):
        return "not found"
    return f"cannot access: {error.strerror or error}"
