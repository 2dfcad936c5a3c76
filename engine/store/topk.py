"""The k best of a set of scores, the same k however many are asked for: ties at the cut go to the lowest key.

``np.argpartition`` alone keeps an arbitrary few of the scores tied at the k-th, so the 200 best of one read were not
the first 200 of a read of 2,000: a filtered search (which reads deeper) then saw documents a search without filters
did not (docs/decisions/0011-filtered-search-depth.md).
"""

from __future__ import annotations

import numpy as np


def best_k(scores: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores`` (all of them when there are no more), ties broken by the lowest
    ``keys``, ordered best first."""
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if scores.size > k:
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)
        chosen = np.concatenate([above, tied[np.argsort(keys[tied], kind="stable")][: k - above.size]])
    else:
        chosen = np.arange(scores.size)
    return chosen[np.lexsort((keys[chosen], -scores[chosen]))]
