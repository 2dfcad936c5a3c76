"""transformers, quiet: its load report (a sentence-transformers folder's unused ``position_ids`` key, shown as an
"UNEXPECTED" table) and its "Loading weights" progress bar would land on the CLI's stderr at every start of a GPU
method, though nothing is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from transformers.utils import logging as hf_logging


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Errors only while loading a model, and no progress bars; the verbosity is restored afterwards."""
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
