"""trapezoid/trapz, mvlgamma and polygamma at infinities and NaN, as PyTorch computes them.

The expected values are PyTorch 2.13's (CPU), hard-coded so these tests run without torch."""
import math

import numpy as np
import pytest

import vizgrad as vg

inf, nan = math.inf, math.nan


def _assert_values(tensor, expected, rtol=1e-12):
    np.testing.assert_allclose(tensor.detach().numpy(), np.array(expected), rtol=rtol, atol=0, equal_nan=True)


# --- trapezoid, trapz: PyTorch's dx · (Σ y - (y₀ + yₙ)/2) and Σ (yᵢ + yᵢ₊₁) Δx / 2 ---------------

ROWS = [[1.0, inf, 2.0, -inf], [inf, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, inf]]


@pytest.mark.parametrize("op", [vg.trapezoid, vg.trapz])
def test_trapezoid_with_even_spacing_takes_inf_minus_inf_at_the_ends(op):
    y = vg.tensor(ROWS, dtype=vg.float64)
    _assert_values(op(y), [nan, nan, nan])            # an inf at an end: inf - inf/2 ... = NaN
    _assert_values(op(y, dx=0.5), [nan, nan, nan])
    _assert_values(op(y, dim=0), [inf, nan, 4.5, nan])
    _assert_values(op(vg.tensor([inf])), [nan])       # one sample: y₀ - (y₀ + y₀)/2
    assert op(vg.tensor([inf, 1.0], dtype=vg.float32)).dtype is vg.float32


@pytest.mark.parametrize("op", [vg.trapezoid, vg.trapz])
def test_trapezoid_with_sample_points_sums_the_pairs(op):
    y = vg.tensor(ROWS, dtype=vg.float64)
    x = vg.tensor([0.0, 1.0, 3.0, 4.0], dtype=vg.float64)
    _assert_values(op(y, x), [nan, inf, inf])


def test_trapezoid_overflows_where_pytorch_does():
    y = vg.tensor([6e307] * 3, dtype=vg.float64)
    assert vg.trapezoid(y).item() == inf
    assert vg.trapezoid(y, vg.tensor([0.0, 1.0, 2.0], dtype=vg.float64)).item() == inf


def test_trapezoid_finite_values_and_gradients():
    y = vg.tensor([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]], dtype=vg.float64, requires_grad=True)
    x = vg.tensor([0.0, 0.5, 2.0], dtype=vg.float64, requires_grad=True)
    vg.trapezoid(y, dx=0.25).sum().backward()
    _assert_values(y.grad, [[0.125, 0.25, 0.125], [0.125, 0.25, 0.125]])
    y.grad = None
    out = vg.trapezoid(y, x)
    _assert_values(out, [5.25, 0.125])
    out.sum().backward()
    _assert_values(y.grad, [[0.25, 1.0, 0.75], [0.25, 1.0, 0.75]])
    _assert_values(x.grad, [-2.5, -0.25, 2.75])


# --- mvlgamma: NaN gives NaN (PyTorch does not refuse it) --------------------------------------

MVLGAMMA = {   # p: (values, gradients) at [3.0, nan, 1.5, 7.25] in float64
    1: ([0.6931471805599453, nan, -0.12078223763524522, 7.0521854507385395],
        [0.922784335098467, nan, 0.036489973978576194, 1.910453526883736]),
    2: ([1.5501949939575645, nan, 0.4515827052894549, 13.740466285094787],
        [1.6259409757437102, nan, -0.5407256909229565, 3.744096941429933]),
    3: ([2.694924879806965, nan, 2.1686775340635553, 20.104800157934413],
        [2.048725310842177, nan, -2.5042357169443794, 5.494550468313669]),
}


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("dtype, rtol", [(vg.float64, 1e-12), (vg.float32, 1e-5)])
def test_mvlgamma_passes_nan_through(p, dtype, rtol):
    x = vg.tensor([3.0, nan, 1.5, 7.25], dtype=dtype, requires_grad=True)
    out = vg.mvlgamma(x, p)
    assert out.dtype is dtype
    out.sum().backward()
    values, gradients = MVLGAMMA[p]
    _assert_values(out, values, rtol)
    _assert_values(x.grad, gradients, rtol)


# --- polygamma at ±inf: PyTorch's Hurwitz zeta gives NaN at inf, (-1)ⁿ⁺¹ inf at -inf (n ≥ 2) ------

POLYGAMMA = {   # n: values at [inf, -inf, nan, 2.5, -2.5] in float64
    0: [inf, nan, nan, 0.7031566406452431, 1.1031566406452433],
    1: [0.0, nan, nan, 0.4903577562398206, 9.53924664493752],
    2: [nan, -inf, nan, -0.23620405164172736, -0.1082040516417282],
    3: [nan, inf, nan, 0.2239058488172521, 194.74787621918756],
    4: [nan, -inf, nan, -0.3137559995067314, -0.06799599950675606],
    5: [nan, inf, nan, 0.5785691785671833, 15382.140048026304],
}


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype, rtol", [(vg.float64, 1e-9), (vg.float32, 1e-5)])   # (PyTorch's ψ⁽¹⁾(2.5) is 3e-10 off)
def test_polygamma_at_infinities(n, dtype, rtol):
    x = vg.tensor([inf, -inf, nan, 2.5, -2.5], dtype=dtype, requires_grad=True)
    out = vg.polygamma(n, x)
    assert out.dtype is dtype
    out.sum().backward()                       # d/dx ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾, with the same infinities
    _assert_values(out, POLYGAMMA[n], rtol)
    _assert_values(x.grad, POLYGAMMA[n + 1], rtol)


def test_digamma_and_trigamma_at_infinities():
    x = vg.tensor([inf, -inf], dtype=vg.float64, requires_grad=True)
    out = vg.digamma(x)
    out.sum().backward()
    _assert_values(out, [inf, nan])
    _assert_values(x.grad, [0.0, nan])
