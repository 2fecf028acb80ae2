"""einsum and logit on bool, integer and mixed-dtype operands, as PyTorch does them.

Every expected value and dtype below was obtained by running PyTorch 2.13 CPU and is
hard-coded, so these tests run without torch.
"""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import DTypeError

BOOLS = [[True, False, True], [False, True, True]]
SQUARE = [[True, False], [True, True]]


def _check(result, dtype, expected):
    assert result.dtype == dtype
    np.testing.assert_array_equal(result.numpy(), np.array(expected))


# einsum on bools (PyTorch 2.13 CPU)

def test_einsum_bool_full_sum_is_int64():
    _check(vg.einsum("ij->", vg.tensor(BOOLS)), vg.int64, 4)


def test_einsum_bool_row_sums_are_int64():
    _check(vg.einsum("ij->i", vg.tensor(BOOLS)), vg.int64, [2, 2])


def test_einsum_bool_trace_is_int64():
    _check(vg.einsum("ii", vg.tensor(SQUARE)), vg.int64, 2)


def test_einsum_bool_transpose_stays_bool():
    _check(vg.einsum("ij->ji", vg.tensor(BOOLS)), vg.bool,
           [[True, False], [False, True], [True, True]])


def test_einsum_bool_diagonal_stays_bool():
    _check(vg.einsum("ii->i", vg.tensor(SQUARE)), vg.bool, [True, True])


def test_einsum_bool_summed_letters_on_each_side_are_int64():
    a = vg.tensor(BOOLS)
    _check(vg.einsum("ij,kl->ik", a, a), vg.int64, [[4, 4], [4, 4]])


def test_einsum_bool_outer_product_is_logical_and():
    result = vg.einsum("i,j->ij", vg.tensor([True, False]), vg.tensor([True, True, False]))
    _check(result, vg.bool, [[True, True, False], [False, False, False]])


@pytest.mark.parametrize("equation, left, right", [
    ("ij,jk->ik", BOOLS, [[True, False], [False, True], [True, True]]),
    ("i,i->", [True, True, False], [True, False, True]),
])
def test_einsum_bool_contraction_raises_naming_bmm(equation, left, right):
    # PyTorch: NotImplementedError: "bmm" not implemented for 'Bool'
    with pytest.raises(DTypeError, match=r"^einsum: .*bmm.*Bool"):
        vg.einsum(equation, vg.tensor(left), vg.tensor(right))


def test_einsum_bool_contraction_over_empty_letter_with_int64_is_int64_zeros():
    a = vg.zeros((2, 0), dtype=vg.bool)
    b = vg.zeros((0, 2), dtype=vg.int64)
    _check(vg.einsum("ij,jk->ik", a, b), vg.int64, [[0, 0], [0, 0]])


# einsum on integers and mixed dtypes (PyTorch 2.13 CPU)

@pytest.mark.parametrize("equation, left, right", [
    ("ij,jk->ik", [[1, 2, 3], [4, 5, 6]], [[True, False], [False, True], [True, True]]),
    ("i,i->", [1, 2], [True, False]),
])
def test_einsum_int64_bool_contraction_raises(equation, left, right):
    # PyTorch: RuntimeError: expected scalar type Long but found Bool
    with pytest.raises(DTypeError, match=r"^einsum: .*Long.*Bool"):
        vg.einsum(equation, vg.tensor(left), vg.tensor(right))


def test_einsum_int64_bool_outer_product_is_int64():
    result = vg.einsum("i,j->ij", vg.tensor([1, 2]), vg.tensor([True, False]))
    _check(result, vg.int64, [[1, 0], [2, 0]])


def test_einsum_int32_int64_contraction_raises():
    # PyTorch: RuntimeError: expected scalar type Int but found Long
    a = vg.tensor([[1, 2], [3, 4]], dtype=vg.int32)
    with pytest.raises(DTypeError, match=r"^einsum: .*Int.*Long"):
        vg.einsum("ij,jk->ik", a, vg.tensor([[1, 2], [3, 4]]))


@pytest.mark.parametrize("equation, expected_dtype, expected", [
    ("ij,jk->ik", "int32", [[7, 10], [15, 22]]),
    ("ij,j->i", "int32", [5, 11]),
    ("ij->ji", "int32", [[1, 3], [2, 4]]),
    ("ij->", "int64", 10),
    ("ij->j", "int64", [4, 6]),
    ("ii", "int64", 5),
])
def test_einsum_int32(equation, expected_dtype, expected):
    a = vg.tensor([[1, 2], [3, 4]], dtype=vg.int32)
    operands = [a] if "," not in equation else [a, a if equation.startswith("ij,jk") else a[0]]
    _check(vg.einsum(equation, *operands), getattr(vg, expected_dtype), expected)


def test_einsum_int32_dot_stays_int32():
    a = vg.tensor([[1, 2], [3, 4]], dtype=vg.int32)
    _check(vg.einsum("i,i->", a[0], a[1]), vg.int32, 11)


# einsum on floats (PyTorch 2.13 CPU)

def test_einsum_float_matmul_value_and_gradients_match_matmul():
    weights = vg.tensor([[1.0, 2.0], [3.0, 4.0]])
    grads = []
    for use_einsum in (True, False):
        a = vg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        b = vg.tensor([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]], requires_grad=True)
        result = vg.einsum("ij,jk->ik", a, b) if use_einsum else a @ b
        assert result.dtype == vg.float32
        np.testing.assert_allclose(result.detach().numpy(), [[11.0, 3.0], [24.5, 6.0]], rtol=1e-6)
        (result * weights).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    (a_grad, b_grad), (a_ref, b_ref) = grads
    np.testing.assert_allclose(a_grad, [[-1.0, 4.5, 3.0], [-1.0, 9.5, 9.0]], rtol=1e-6)
    np.testing.assert_allclose(b_grad, [[13.0, 18.0], [17.0, 24.0], [21.0, 30.0]], rtol=1e-6)
    np.testing.assert_allclose(a_grad, a_ref, rtol=1e-6)
    np.testing.assert_allclose(b_grad, b_ref, rtol=1e-6)


def test_einsum_float32_float64_outer_product_is_float64_with_gradients():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = vg.tensor([3.0, 4.0, 5.0], dtype=vg.float64, requires_grad=True)
    result = vg.einsum("i,j->ij", x, y)
    assert result.dtype == vg.float64
    np.testing.assert_allclose(result.detach().numpy(), [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]])
    result.sum().backward()
    assert x.grad.dtype == vg.float32 and y.grad.dtype == vg.float64
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 12.0])
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0, 3.0])


# logit on bools and integers (PyTorch 2.13 CPU)

def test_logit_bool_is_infinite_float32():
    _check(vg.logit(vg.tensor([True, False])), vg.float32, [np.inf, -np.inf])


def test_logit_bool_with_eps():
    result = vg.logit(vg.tensor([True, False]), eps=0.1)
    assert result.dtype == vg.float32
    np.testing.assert_allclose(result.numpy(), [2.1972, -2.1972], rtol=1e-4)


def test_logit_int64_is_float32():
    _check(vg.logit(vg.tensor([0, 1, 2])), vg.float32, [-np.inf, np.inf, np.nan])


def test_logit_int64_with_eps_above_half():
    result = vg.logit(vg.tensor([0, 1, 2]), eps=0.6)
    assert result.dtype == vg.float32
    np.testing.assert_allclose(result.numpy(), [0.4055, -0.4055, -0.4055], rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logit_eps_above_half(dtype):
    # PyTorch takes p < eps as eps, else p > 1 - eps as 1 - eps: with eps=0.6 every
    # p < 0.6 gives logit(0.6), every other p logit(0.4).
    p = vg.tensor([0.0, 0.2, 0.5, 0.55, 0.6, 0.7, 1.0], dtype=getattr(vg, dtype))
    result = vg.logit(p, eps=0.6)
    assert result.dtype == getattr(vg, dtype)
    expected = [0.4055, 0.4055, 0.4055, 0.4055, -0.4055, -0.4055, -0.4055]
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-4)


# pow with integer or bool bases and negative integer tensor exponents (PyTorch 2.13 CPU):
# 1 where the base is 1, (-1)^e where it is -1, 0 elsewhere (0 ** -1 too)

def test_pow_int64_base_negative_tensor_exponent():
    base = vg.tensor([1, -1, -1, 0, 2, -2, 3])
    exponent = vg.tensor([-1, -2, -3, -1, -1, -1, -2])
    for result in (base ** exponent, vg.pow(base, exponent), base.pow(exponent)):
        _check(result, vg.int64, [1, 1, -1, 0, 0, 0, 0])


def test_pow_int64_mixed_sign_exponents_broadcast():
    _check(vg.tensor([[1], [-1], [2]]) ** vg.tensor([-1, -2, 2]), vg.int64,
           [[1, 1, 1], [-1, 1, 1], [0, 0, 4]])


def test_pow_bool_base_int64_tensor_exponent_is_int64():
    _check(vg.tensor([True, False, True]) ** vg.tensor([-1, 2, 0]), vg.int64, [1, 0, 1])


def test_pow_bool_base_int32_tensor_exponent_is_int32():
    _check(vg.tensor([True, False]) ** vg.tensor([-1, -1], dtype=vg.int32), vg.int32, [1, 0])


def test_pow_python_int_base_negative_tensor_exponent():
    _check(vg.pow(2, vg.tensor([-1, 2])), vg.int64, [0, 4])
    _check(2 ** vg.tensor([-1, 2]), vg.int64, [0, 4])
    _check((-1) ** vg.tensor([-1, -2, -3]), vg.int64, [-1, 1, -1])
    _check(0 ** vg.tensor([-1, 0]), vg.int64, [0, 1])
    _check(True ** vg.tensor([-1, 2]), vg.int64, [1, 1])


def test_pow_int32_base_zero_dim_int64_exponent_stays_int32():
    base = vg.tensor([1, -1, 2, 0], dtype=vg.int32)
    _check(base ** vg.tensor(-1), vg.int32, [1, -1, 0, 0])
    _check(base ** vg.tensor([-1]), vg.int64, [1, -1, 0, 0])       # 1-d exponent: int64


def test_pow_int32_both_negative_exponents():
    _check(vg.tensor([2, -1], dtype=vg.int32) ** vg.tensor([-1, -1], dtype=vg.int32), vg.int32, [0, -1])


def test_pow_in_place_negative_tensor_exponent():
    x = vg.tensor([1, -1, 2])
    x.pow_(vg.tensor([-1, -1, -1]))
    _check(x, vg.int64, [1, -1, 0])


@pytest.mark.parametrize("base", [[1, 2], [True, False]])
@pytest.mark.parametrize("exponent", [-1, -2])
def test_pow_integer_tensor_to_negative_python_int_is_an_error(base, exponent):
    # PyTorch: RuntimeError "Integers to negative integer powers are not allowed."
    with pytest.raises(vg.errors.ArgumentError, match="negative integer powers are not allowed"):
        vg.tensor(base) ** exponent
    with pytest.raises(ValueError, match="negative integer powers are not allowed"):
        vg.pow(vg.tensor(base), exponent)


def test_pow_float_with_negative_exponents_unchanged():
    _check(vg.tensor([1.0, 2.0]) ** -1, vg.float32, [1.0, 0.5])
    _check(vg.tensor([2.0, 4.0]) ** vg.tensor([-1, -2]), vg.float32, [0.5, 0.0625])


# pad on bool tensors (PyTorch 2.13 CPU): constant and circular stay bool; a constant
# value fills True when nonzero; reflect and replicate raise NotImplementedError
# ('"reflection_pad1d" not implemented for 'Bool'')

@pytest.mark.parametrize("value, expected", [
    (None, [[False, True, False, True, False, False]]),
    (0, [[False, True, False, True, False, False]]),
    (False, [[False, True, False, True, False, False]]),
    (1, [[True, True, False, True, True, True]]),
    (True, [[True, True, False, True, True, True]]),
    (0.5, [[True, True, False, True, True, True]]),
    (-1, [[True, True, False, True, True, True]]),
])
def test_pad_bool_constant_stays_bool(value, expected):
    x = vg.tensor([[True, False, True]])
    result = vg.nn.functional.pad(x, (1, 2)) if value is None else vg.nn.functional.pad(x, (1, 2), value=value)
    _check(result, vg.bool, expected)


def test_pad_bool_constant_crop():
    _check(vg.nn.functional.pad(vg.tensor([True, False, True]), (-1, 1), value=True), vg.bool,
           [False, True, True])


def test_pad_bool_circular_stays_bool():
    F = vg.nn.functional
    _check(F.pad(vg.tensor([[True, False, True]]), (1, 2), mode="circular"), vg.bool,
           [[True, True, False, True, True, False]])
    _check(F.pad(vg.tensor([[True, False, True]]), (-1, -1), mode="circular"), vg.bool, [[False]])
    _check(F.pad(vg.tensor([[[True, False], [False, False]]]), (1, 1, 1, 0), mode="circular"), vg.bool,
           [[[False, False, False, False], [False, True, False, True], [False, False, False, False]]])


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("pad", [(1, 1), (1, 1, 1, 0)])
def test_pad_bool_reflect_replicate_raise(mode, pad):
    x = vg.tensor([[[True, False], [False, False]]])
    with pytest.raises(DTypeError, match=f"pad: mode '{mode}' does not support bool tensors .*dtype is bool"):
        vg.nn.functional.pad(x, pad, mode=mode)


# pow on bool with bool (PyTorch 2.13 CPU): a Python-bool exponent is x ** 1 (a copy) or
# x ** 0 (all True); a bool tensor exponent, or a bool base with one, raises
# NotImplementedError '"pow" not implemented for 'Bool''

def test_pow_bool_tensor_to_python_bool():
    x = vg.tensor([True, False])
    _check(x ** True, vg.bool, [True, False])
    _check(vg.pow(x, False), vg.bool, [True, True])
    assert (x ** True) is not x


@pytest.mark.parametrize("expression", [
    "vg.tensor([True, False]) ** vg.tensor([True, False])", "vg.tensor([True]) ** vg.tensor(True)",
    "True ** vg.tensor([True, False])", "vg.pow(False, vg.tensor([True]))"])
def test_pow_bool_with_bool_tensor_raises(expression):
    with pytest.raises(DTypeError, match="pow: not implemented for a bool input with a bool exponent"):
        eval(expression)


LOGIT_POINTS = [-0.5, 0.0, 0.005, 0.3, 1.0, 1.5, math.nan, 0.995]
# PyTorch 2.13 CPU's gradients of logit(x, eps).sum() at LOGIT_POINTS (float64)
LOGIT_GRADIENTS = {
    None: [math.nan, math.inf, 201.00502512562815, 4.761904761904762, math.inf, math.nan, math.nan, 201.00502512562815],
    0.01: [0.0, 0.0, 0.0, 4.761904761904762, 0.0, 0.0, 0.0, 0.0],
    0.6: [0.0] * 8,
    0.0: [0.0, math.inf, 201.00502512562815, 4.761904761904762, math.inf, 0.0, 0.0, 201.00502512562815],
}


@pytest.mark.parametrize("eps", list(LOGIT_GRADIENTS), ids=str)
def test_logit_differentiates_as_pytorch_outside_the_clamp_and_at_nan(eps):
    x = vg.tensor(LOGIT_POINTS, dtype=vg.float64, requires_grad=True)
    vg.logit(x, eps).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), LOGIT_GRADIENTS[eps], rtol=1e-12)
