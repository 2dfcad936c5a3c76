"""float16 rows widened by their bits give exactly numpy's float32 values."""

import numpy as np

from engine.store.widen import as_float32


def _halves(finite: bool) -> np.ndarray:
    """Every float16 bit pattern (only the finite ones with ``finite``), as rows of 256."""
    halves = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if finite:
        halves = halves[np.isfinite(halves)]
        halves = halves[: halves.size // 256 * 256]
    return halves.reshape(-1, 256)


def test_every_finite_half_is_widened_exactly_and_keeps_its_shape():
    halves = _halves(finite=True)
    widened = as_float32(halves)
    assert widened.dtype == np.float32 and widened.shape == halves.shape
    expected = halves.astype(np.float32)
    # bit for bit: the signs of zeros and the subnormals included
    assert np.array_equal(widened.view(np.uint32), expected.view(np.uint32))


def test_infinities_and_nan_are_kept_as_numpy_keeps_them():
    halves = _halves(finite=False)
    assert np.array_equal(as_float32(halves), halves.astype(np.float32), equal_nan=True)


def test_rows_picked_out_of_a_larger_array_are_widened_as_read():
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((1_000, 256)).astype(np.float16)
    picked = matrix[::7, ::2]  # not contiguous
    assert np.array_equal(as_float32(picked), picked.astype(np.float32))


def test_float32_rows_are_returned_as_they_are():
    rows = np.ones((3, 4), np.float32)
    assert as_float32(rows) is rows
    assert as_float32(np.ones(3, np.float64)).dtype == np.float32
