"""What an index reports: the outcome of an indexing run, and what the index holds, file by file."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field

from engine.filestate import FileState
from engine.indexing.run import FileIssue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexReport:
    """Outcome of one ``add`` run."""

    method: str
    documents: int
    sentences: int
    unchanged: int
    removed: int
    issues: tuple[FileIssue, ...]
    seconds: float
    cancelled: bool = False

    def to_json(self) -> dict:
        """JSON of `quire index --json`."""
        return {
            "method": self.method, "documents": self.documents, "sentences": self.sentences,
            "unchanged": self.unchanged, "removed": self.removed, "seconds": round(self.seconds, 3),
            "cancelled": self.cancelled,
            "skipped": [{"path": i.path, "status": i.status, "reason": i.reason} for i in self.issues],
        }


@dataclass(frozen=True)
class FileStatus:
    """One file of an index: indexed, skipped or failed, with the reason for the last two (or a note on an indexed
    file, such as a cut at the sentence limit), its sentences in the index, its title and kind (format)."""

    path: str
    status: FileState
    reason: str | None
    sentences: int | None
    title: str | None
    kind: str | None


@dataclass(frozen=True)
class IndexStatus:
    """What an index holds; ``files`` lists every file with its status and reason."""

    folder: str
    method: str | None
    fingerprint: str | None
    documents: int
    indexed: int
    skipped: int
    failed: int
    sentences: int
    roots: tuple[str, ...]
    methods_embedded: tuple[str, ...]
    bytes_on_disk: int
    files: tuple[FileStatus, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        """JSON of `quire status --json`."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}
