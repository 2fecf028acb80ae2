"""The NumPy backend's vectorised erf (Cody's rational approximations) against math.erf."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import gradcheck, gradgradcheck
from vizgrad.backends.numpy_backend import erf

_math_erf = np.vectorize(math.erf, otypes=[np.float64])


def _grid():
    """Dense over [-8, 8], every range boundary and its neighbours, tiny and subnormal magnitudes."""
    magnitudes = np.concatenate([np.geomspace(5e-324, 1e-3, 2_000), np.linspace(0, 8, 40_001),
                                 np.geomspace(8, 1e30, 500)])
    edges = np.array([0.46875, 4.0, 6.0])
    magnitudes = np.concatenate([magnitudes, edges, np.nextafter(edges, 0), np.nextafter(edges, 10)])
    return np.concatenate([magnitudes, -magnitudes])


def test_float64_matches_math_erf_to_rounding():
    x = _grid()
    got, expected = erf(x), _math_erf(x)
    ulps = np.abs(got - expected) / np.spacing(np.abs(expected))
    assert got.dtype == np.float64
    assert ulps.max() <= 4                       # relative error below 1e-15
    assert np.mean(ulps == 0) > 0.9              # and most values are the correctly rounded one


def test_float32_is_correctly_rounded():
    x = _grid().astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _math_erf(x.astype(np.float64)).astype(np.float32))


def test_special_values_and_shapes():
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    got = erf(specials)
    np.testing.assert_array_equal(got[:2], [1.0, -1.0])
    assert np.isnan(got[2])
    assert got[3] == 0 and not np.signbit(got[3]) and np.signbit(got[4])
    assert erf(np.float64(0.5)).shape == () and erf(np.float64(0.5)) == math.erf(0.5)
    assert erf(np.zeros((2, 0, 3), np.float32)).shape == (2, 0, 3)
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)[:, ::2].transpose(2, 0, 1)   # strided, not contiguous
    np.testing.assert_allclose(erf(x), _math_erf(x), rtol=1e-15, atol=0)


def test_erf_and_exact_gelu_gradients_through_it():
    x = vg.tensor(np.linspace(-5, 5, 23), dtype=vg.float64, requires_grad=True)
    assert gradcheck(vg.erf, (x,))
    assert gradgradcheck(vg.erf, (x,))
    gelu = vg.nn.GELU()
    assert gradcheck(gelu, (x,))
    assert gradgradcheck(gelu, (x,))


def test_exact_gelu_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float32) * 3
    ours = vg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    vg.nn.GELU()(ours).sum().backward()
    torch.nn.GELU()(theirs).sum().backward()
    # for x < -2 both engines' float32 results carry cancellation error (1 + erf(x/√2), and
    # Φ(x) + x φ(x) in the gradient) of about 1e-7 each
    np.testing.assert_allclose(vg.nn.GELU()(ours).detach().numpy(), torch.nn.GELU()(theirs).detach().numpy(),
                               rtol=1e-5, atol=5e-7)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=5e-7)


def test_erfc_matches_math_erfc_to_rounding_far_into_its_tail():
    """erfc keeps its relative accuracy where it is tiny (erfc(26) ≈ 6e-296, where 1 - erf is 0):
    e^(-x²) from x² split in two, as Cody does."""
    from vizgrad.backends.numpy_backend import erfc
    x = np.concatenate([_grid(), np.linspace(8, 27, 20_001), [np.inf, -np.inf, np.nan]])
    expected = np.vectorize(math.erfc, otypes=[np.float64])(x)
    got = erfc(x)
    finite = np.isfinite(x)
    normal = finite & (expected >= np.finfo(np.float64).tiny)
    ulps = np.abs(got[normal] - expected[normal]) / np.spacing(expected[normal])
    assert ulps.max() <= 8                       # relative error below 2e-15, down to 1e-308
    assert np.all(np.abs(got[finite & ~normal] - expected[finite & ~normal]) <= 1e-323)    # subnormal: 2 steps
    np.testing.assert_array_equal(got[-3:-1], [0.0, 2.0])
    assert np.isnan(got[-1])
    x32 = _grid().astype(np.float32)
    np.testing.assert_array_equal(erfc(x32), np.vectorize(math.erfc, otypes=[np.float64])(x32.astype(np.float64))
                                  .astype(np.float32))


def test_erfc_and_ndtr_gradients():
    x = vg.tensor(np.linspace(-5, 5, 23), dtype=vg.float64, requires_grad=True)
    assert gradcheck(vg.erfc, (x,))
    assert gradgradcheck(vg.erfc, (x,))
    assert gradcheck(vg.special.ndtr, (x,))
    np.testing.assert_allclose(vg.special.ndtr(vg.tensor([-10.0, 0.0, 1.0], dtype=vg.float64)).numpy(),
                               [7.619853024160527e-24, 0.5, 0.8413447460685429], rtol=1e-14)
