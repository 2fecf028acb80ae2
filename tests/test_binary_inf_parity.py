"""logaddexp and fmod at infinities (and fmod's exact finite remainders), values and
gradients; the expected numbers are PyTorch 2.13's (torch.logaddexp, torch.fmod on CPU)."""

import numpy as np
import pytest

import vizgrad as vg

INF = float("inf")
NAN = float("nan")


def _forward_backward(function, a, b, dtype=vg.float64):
    x = vg.tensor(a, dtype=dtype, requires_grad=True)
    y = vg.tensor(b, dtype=dtype, requires_grad=True)
    out = function(x, y)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy(), y.grad.numpy()


def test_logaddexp_at_infinities_is_pytorchs_with_its_gradients():
    a = [INF, -INF, INF, -INF, 2.0, INF, -1.5, -INF, 1000.0]
    b = [INF, -INF, -INF, INF, INF, -1.5, -INF, 2.0, 1000.0]
    out, grad_a, grad_b = _forward_backward(vg.logaddexp, a, b)
    # PyTorch 2.13: the same infinity twice is itself, its gradient NaN (1 / (1 + e^(inf - inf)))
    np.testing.assert_allclose(out, [INF, -INF, INF, INF, INF, INF, -1.5, 2.0, 1000.6931471805599], rtol=1e-15)
    np.testing.assert_array_equal(grad_a, [NAN, NAN, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.5])
    np.testing.assert_array_equal(grad_b, [NAN, NAN, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5])


def test_logaddexp_float32_infinities_and_a_promoted_integer_operand():
    out, grad_a, grad_b = _forward_backward(vg.logaddexp, [INF, 0.5, -INF], [0.25, INF, -INF], dtype=vg.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [INF, INF, -INF])
    np.testing.assert_array_equal(grad_a, [1.0, 0.0, NAN])
    np.testing.assert_array_equal(grad_b, [0.0, 1.0, NAN])
    # PyTorch 2.13 promotes float32 with int64 (tensor([1.4741, inf])); two integers it refuses
    mixed = vg.logaddexp(vg.tensor([0.5, INF]), vg.tensor([1, 2]))
    assert mixed.dtype == vg.float32
    np.testing.assert_allclose(mixed.numpy(), [1.4740769863128662, INF], rtol=1e-7)
    with pytest.raises(vg.errors.DTypeError, match="logaddexp"):
        vg.logaddexp(vg.tensor([1, 2]), vg.tensor([1, 2]))


def test_fmod_by_and_of_infinities_is_pytorchs_with_its_gradients():
    a = [-1.5, 2.0, 0.0, -0.0, 5.0, INF, -INF, -5.0, -1e-20]
    b = [INF, -INF, INF, -INF, -3.0, 2.0, INF, 3.0, 1.0]
    out, grad_a, grad_b = _forward_backward(vg.fmod, a, b)
    # PyTorch 2.13: a finite dividend over an infinite divisor is itself; an infinite dividend NaN
    expected = [-1.5, 2.0, 0.0, -0.0, 2.0, NAN, NAN, -2.0, -1e-20]
    np.testing.assert_array_equal(out, expected)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(out[numbers]), np.signbit(np.array(expected)[numbers]))   # -0.0, -1e-20
    np.testing.assert_array_equal(grad_a, [1.0] * 9)
    np.testing.assert_array_equal(grad_b, [0.0, 0.0, 0.0, 0.0, 1.0, -INF, NAN, 1.0, 0.0])


def test_fmod_by_an_infinite_number_in_float32():
    x = vg.tensor([-1.5, 2.5, INF], dtype=vg.float32, requires_grad=True)
    out = vg.fmod(x, -INF)
    out.sum().backward()
    assert out.dtype == vg.float32
    np.testing.assert_array_equal(out.detach().numpy(), [-1.5, 2.5, NAN])     # PyTorch 2.13's
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


def test_fmod_of_integers_and_bools_is_pytorchs():
    low = -9223372036854775808
    out = vg.fmod(vg.tensor([low, 5, -5, 7]), vg.tensor([3, low, low, -2]))
    assert out.dtype == vg.int64
    assert out.tolist() == [-2, 5, -5, 1]                 # PyTorch 2.13's
    with pytest.raises(vg.errors.DivisionByZeroError, match="fmod"):
        vg.fmod(vg.tensor([5, -5]), vg.tensor([0, 1]))
    with pytest.raises(vg.errors.DTypeError, match="fmod.*Bool"):   # PyTorch: not implemented for 'Bool'
        vg.fmod(vg.tensor([True, False]), vg.tensor([True, True]))
