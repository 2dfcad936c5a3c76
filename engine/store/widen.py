"""float16 vectors widened to float32 by their bits.

numpy converts float16 one element at a time on this path: 1.7-2.2 ms for 4,096 rows of 256 dimensions, most of what
reading a query's candidate sentences (engine.search.meaning) costs. Moving each half's bits into place with integer
operations over the whole array gives the same floats, every finite value exact (subnormals included), in
about a quarter of the time (docs/benchmarks-archive.md, "Vectors read and summed in fewer passes").
"""

from __future__ import annotations

import numpy as np

# float32's exponent bias (127) less float16's (15): a half's exponent and mantissa bits, moved up to float32's
# places, read as a float 2**-112 times the half's value (a subnormal half as a subnormal float, so exactly too)
_SCALE = np.float32(2.0**112)
_MAGNITUDE, _SIGN, _EXPONENT = 0x7FFF, 0x8000, 0x7C00


def as_float32(rows: np.ndarray) -> np.ndarray:
    """``rows`` as float32: float16 ones widened exactly (a new array), float32 ones as they are, others converted."""
    if rows.dtype != np.float16:
        return rows.astype(np.float32, copy=False)
    bits = rows.view(np.uint16).astype(np.uint32)
    sign = bits & _SIGN
    bits &= _MAGNITUDE
    if bits.size and bits.max() >= _EXPONENT:
        return rows.astype(np.float32)  # infinities or NaN: not in vectors of unit rows, but kept as numpy keeps them
    bits <<= 13
    sign <<= 16
    out = bits.view(np.float32)
    out *= _SCALE
    bits |= sign
    return out
