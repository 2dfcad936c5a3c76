"""Turn exceptions into sentences a person can act on: the app shows these, never a traceback (STYLE.md rule 9)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def describe(error: BaseException) -> str:
    """A one-line message for ``error``; unexpected errors are logged with their traceback for bug reports."""
    from engine import QuireError  # only workers call this, after the engine has loaded

    if isinstance(error, QuireError):
        return str(error)
    if isinstance(error, PermissionError):
        return f"quire is not allowed to read or write {error.filename or 'a file it needs'}: check its permissions"
    if isinstance(error, OSError):
        return f"a file operation failed: {error.strerror or error} ({error.filename or 'unknown file'})"
    log.error("unexpected error", exc_info=error)
    return f"something went wrong ({type(error).__name__}: {error}); details are in the log"
