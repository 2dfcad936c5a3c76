"""quire's exception hierarchy: one base class, so edges can catch engine errors without catching bugs."""

from __future__ import annotations

from typing import Protocol

from engine.filestate import FileState


class QuireError(Exception):
    """Base class of every error the engine raises on purpose."""


class ConfigError(QuireError):
    """An argument or setting is invalid; the message says which and what is allowed."""


class IndexNotFoundError(QuireError):
    """No index exists at the given location."""


class IndexDamagedError(QuireError):
    """The index's database file is damaged or empty; the message says how to make the index again."""


class IndexReadOnlyError(QuireError):
    """The index's folder cannot be written (a read-only mount or folder): it can be searched but not changed."""


class MethodMismatchError(QuireError):
    """The index was built with another embedding method than the one asked for."""


class MethodUnavailableError(QuireError):
    """An embedding method cannot run here (missing extra, missing weights)."""


class QueryError(QuireError):
    """A query is empty, too long or otherwise unusable."""


class ReadError(QuireError):
    """A document could not be read; ``reason`` is the short text stored on the file's record."""

    def __init__(self, reason: str, *, status: FileState = FileState.FAILED) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class DiskFullError(QuireError):
    """The disk holding the index is full; what was written before is kept and the next run goes on from there."""


class GraphUnavailableError(QuireError):
    """A method's saved vectors (its meanings index) are missing, damaged or far behind the database, and only an
    indexing run rebuilds them (searches rank by words meanwhile); the message says which."""

    @property
    def note(self) -> str:
        """The note on a search ranked by words alone because of it."""
        return f"{self}: these results are ranked by their words alone until `quire index` rebuilds it"


class ReaderStartError(QuireError):
    """No reader process could be started (the interpreter cannot be run again, processes are limited); the message
    says how to index without them."""


class Cancelled(QuireError):
    """Work was stopped on request; everything finished before the request is kept."""


class CancelFlag(Protocol):
    """What a long run checks between batches to know it should stop: a ``threading.Event``, or a
    ``multiprocessing`` one set by another process (the app's window)."""

    def is_set(self) -> bool:
        """True once the run should stop."""
        ...


class BenchmarkError(QuireError):
    """A benchmark step failed (a `quire` subprocess exited non-zero or timed out, a data file is malformed)."""
