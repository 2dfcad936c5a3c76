"""Turns whatever a third-party parser raises into a :class:`ReadError` that names the format.

Parsers fail in many ways on damaged files (zipfile, lxml and pdfium each have their own exceptions, and
some raise KeyError or AttributeError from deep inside). The file's record needs one short line a person can read,
and the engine must never crash on a bad file, so every reader parses inside :func:`parser_errors`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from engine.errors import ReadError

log = logging.getLogger(__name__)

_MAX_CAUSE_CHARS = 120


def short_cause(error: BaseException) -> str:
    """The first line of an exception's message, cut to a length that fits a status line."""
    lines = str(error).strip().splitlines()
    text = lines[0].strip() if lines else ""
    if not text:
        return type(error).__name__
    return text if len(text) <= _MAX_CAUSE_CHARS else text[: _MAX_CAUSE_CHARS - 1] + "…"


def megabytes(n: float) -> str:
    """A byte count as megabytes for a reason text: "150", "2.5"."""
    return f"{n / 1_000_000:,.1f}".removesuffix(".0")


@contextmanager
def parser_errors(fmt: str) -> Iterator[None]:
    """Re-raise anything but a ReadError as ``ReadError("corrupt <fmt>: <cause>")``, chained to the original."""
    try:
        yield
    except ReadError:
        raise
    except ImportError:
        # Readers import their parser library on first use, inside this guard: a missing one is a broken install,
        # to be told as such, not a corrupt file (before, it stopped `import engine` itself).
        raise
    except PermissionError as e:
        raise ReadError("permission denied") from e
    except OSError as e:
        # An errno means the file system failed us; without one it is a parser using OSError for bad data.
        if e.errno is not None:
            raise ReadError(f"cannot read: {e.strerror or short_cause(e)}") from e
        log.debug("%s parser failed", fmt, exc_info=True)
        raise ReadError(f"corrupt {fmt}: {short_cause(e)}") from e
    except Exception as e:  # deliberately broad: no parser exception may escape a reader
        log.debug("%s parser failed", fmt, exc_info=True)
        raise ReadError(f"corrupt {fmt}: {short_cause(e)}") from e
