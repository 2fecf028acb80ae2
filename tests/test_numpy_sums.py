"""The CPU backend's sums: through BLAS over leading or trailing axes, NumPy's reduce elsewhere,
the same values either way (to rounding), shapes and dtypes."""

import numpy as np
import pytest

from vizgrad.backends.numpy_backend import NumpyBackend, _blas_sum

xp = NumpyBackend.xp

AXES = [((32, 32, 64), (2,)), ((32, 32, 64), -1), ((32, 32, 64), (0, 1)), ((32, 32, 64), (-3, -2)),
        ((1024, 256), 0), ((256, 1024), 1), ((8, 16, 8, 8), (2, 3)), ((8, 16, 8, 8), (0,)),
        ((64, 128), (0, 1)), ((40, 40, 40), (0, 2)), ((3, 5000), 1), ((8, 16, 8, 8), (0, 2, 3))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", AXES)
def test_sum_and_mean_agree_with_numpy(shape, axis, keepdims, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) + 3
    tolerance = 2e-6 if dtype == np.float32 else 1e-14
    for ours, numpys in ((xp.sum, np.sum), (xp.mean, np.mean)):
        got, expected = ours(x, axis=axis, keepdims=keepdims), numpys(x, axis=axis, keepdims=keepdims)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=tolerance)


def test_which_sums_go_through_blas():
    x = np.ones((32, 32, 64), np.float32)
    assert _blas_sum(x, (2,), False) is not None                    # a dot per row
    assert _blas_sum(x, (0, 1), False) is not None                  # rows added in order
    assert _blas_sum(x, (1,), False) is None                        # a middle axis
    assert _blas_sum(x, (0, 2), False) is not None                  # both ends: rows, then the rest
    assert _blas_sum(np.ones((8, 4, 8, 8)), (0, 2), False) is None   # axis 3 is kept between
    assert _blas_sum(x, None, False) is None                        # everything: NumPy's pairwise sum
    assert _blas_sum(x, (0, 1, 2), False) is None
    assert _blas_sum(x.astype(np.int64), (2,), False) is None       # integers: no BLAS
    assert _blas_sum(x.astype(np.float16), (2,), False) is None
    assert _blas_sum(x[:, :, ::2], (2,), False) is None             # not contiguous
    assert _blas_sum(np.ones((4, 8), np.float32), 1, False) is None  # small: NumPy is quicker
    assert _blas_sum(np.ones((4, 2048), np.float32), 1, False) is None   # long rows: pairwise sum


@pytest.mark.filterwarnings("ignore:invalid value encountered")     # inf - inf, as NumPy's reduce warns
def test_blas_sums_propagate_nan_and_inf_and_keep_empty_rows():
    x = np.ones((128, 64), np.float32)
    x[3, 5], x[7, 1], x[7, 2] = np.nan, np.inf, -np.inf
    x[9, 0] = np.inf
    rows, columns = xp.sum(x, axis=1), xp.sum(x, axis=0)
    assert np.isnan(rows[3]) and np.isnan(rows[7]) and rows[9] == np.inf and rows[0] == 64
    assert np.isnan(columns[5]) and columns[1] == np.inf and columns[2] == -np.inf and columns[0] == np.inf
    empty = np.ones((0, 64), np.float32)
    assert xp.sum(empty, axis=0).shape == (64,) and not xp.sum(empty, axis=0).any()


def test_blas_sums_leave_their_input_untouched_and_return_a_fresh_array():
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    before = x.copy()
    total = xp.sum(x, axis=0)
    total += 1                                   # writable: not the shared vector of ones
    assert np.array_equal(x, before)
    np.testing.assert_allclose(xp.sum(x, axis=0), before.sum(axis=0), atol=1e-4)
