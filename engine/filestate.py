"""The state a file's record is in: indexed, skipped on purpose, or failed to read."""

from __future__ import annotations

from enum import Enum


class FileState(str, Enum):
    """A file's state, stored as its value in the ``documents`` table's ``status`` column.

    ``SKIPPED`` is a file declined on purpose (binary, too large, empty, a second path to one already indexed);
    ``FAILED`` one that was tried and could not be read (corrupt, encrypted, unreadable).
    """

    INDEXED = "indexed"
    SKIPPED = "skipped"
    FAILED = "failed"

    def __str__(self) -> str:
        # a user reads the state (`quire status`, the app's file list): its value, not the member's name
        return self.value
