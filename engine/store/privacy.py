"""Who may read an index: its owner alone, whatever the umask (docs/decisions/0027-index-files-private.md).

An index holds the text of every file it read, so it must be no easier to read than the most private of them: a
file its owner made 0600 in a 0700 folder was readable by any account through an index.db of 0644 in a folder of
0755. The process umask is the entry point's to set, not the engine's (it is process-wide), so the modes are given
explicitly where a folder or file is made and set again right after (an umask can only remove bits, and an umask of
0777 removes all). SQLite gives the write-ahead log and shared-memory file the database file's own mode, so a
private index.db makes them private too.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

# Read and write (and, for a folder, enter) for the owner only.
FOLDER_MODE = 0o700
FILE_MODE = 0o600
# The files an index folder holds, as globs: the database and its log, the lock files, the saved vectors and
# sidecars and their temporary files, and the graphs an earlier quire kept. Only these are tightened, should anything
# else be kept in the folder.
INDEX_FILES = ("index.db", "index.db-*", "*.lock", "vectors-*", "hnsw-*")


def make_folder(folder: Path) -> None:
    """Create ``folder`` and the parents it lacks, each for its owner only; folders that exist are left as they are.
    Raises what os.mkdir raises."""
    missing = []
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        missing.append(path)
    for path in reversed(missing):
        try:
            os.mkdir(path, FOLDER_MODE)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # made meanwhile by another process: its own
        os.chmod(path, FOLDER_MODE)


def create_file(path: Path) -> None:
    """Create ``path`` empty for its owner only, unless it exists. Raises what os.open raises."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        if os.fstat(fd).st_size == 0:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def tighten(folder: Path) -> list[Path]:
    """Make an index folder and its files (:data:`INDEX_FILES`) its owner's alone where they are looser: an index
    made by an earlier quire, or with a permissive umask. Returns what was changed; what this account does not own is
    left (logged)."""
    changed = []
    files = {path for pattern in INDEX_FILES for path in folder.glob(pattern)}
    for path, mode in [(folder, FOLDER_MODE), *((f, FILE_MODE) for f in sorted(files))]:
        try:
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                continue
            os.chmod(path, mode)
            changed.append(path)
        except OSError as e:
            log.info("could not make %s private (%s)", path, e)
    if changed:
        log.info("made %d files of %s readable by their owner only", len(changed), folder)
    return changed
