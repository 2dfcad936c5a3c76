"""What an index folder holds on disk, as another account or a forensic read of it would see it: the modes of its
files, and which files hold a removed document's words.

Used by tests/test_privacy.py, tests/test_removed_words.py and ``bench/hostile_privacy.py``.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.text.terms import stem, term_key


def modes(folder: Path) -> dict[str, int]:
    """The permission bits of ``folder`` and of each entry in it, by name."""
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.iterdir()]}


def traces(folder: Path, markers: Sequence[str]) -> dict[str, list[str]]:
    """Each file of the index folder holding one of ``markers``, as text or as the word index's int64 key of its
    stem (as lexical_blocks stores them)."""
    keys = {m: np.int64(term_key(stem(m))).tobytes() for m in markers}
    found = {}
    for path in folder.iterdir():
        if not path.is_file():
            continue
        data = path.read_bytes()
        held = [m for m in markers if m.encode() in data or keys[m] in data]
        if held:
            found[path.name] = held
    return found
