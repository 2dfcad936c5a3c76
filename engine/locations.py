"""Where quire keeps its data unless told otherwise: light enough for the window to read before the engine loads."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def default_index_dir() -> Path:
    """Where indexes live unless told otherwise: the platform's user data folder (e.g. ~/.local/share/quire)."""
    return Path(platformdirs.user_data_dir("quire", appauthor=False)) / "index"
