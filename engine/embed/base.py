"""The one interface every embedding method implements, so storage and search never care which one is in use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 rows.

    ``name`` selects the method on the command line; ``fingerprint`` changes whenever the same texts could get
    different vectors (other weights, other settings), and is what an index records to refuse mismatched queries.
    """

    name: str
    fingerprint: str

    @property
    def dim(self) -> int:
        """Embedding width."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised (or zero when a text has no content)."""
        ...


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Divide each row by its L2 norm in place; zero rows stay zero."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x
