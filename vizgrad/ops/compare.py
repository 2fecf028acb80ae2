"""Comparisons and logical ops: elementwise, broadcasting, returning bool tensors.
They have no gradient (their outputs never require grad)."""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import ArgumentTypeError, DTypeError, not_a_tensor
from ..tensor import Tensor
from .binary import _require_tensors
from .registry import Sample, bind_method, register
from .samples import binary, booleans, values


class Compare(Op):
    """Base of the elementwise predicates; ``function`` names the Array API function."""

    differentiable = False
    promotes = (0, 1)
    function = ""

    @classmethod
    def forward(cls, ctx, a, b):
        return getattr(ctx.xp, cls.function)(a, b)


class Eq(Compare):
    function = "equal"


class Ne(Compare):
    function = "not_equal"


class Lt(Compare):
    function = "less"


class Le(Compare):
    function = "less_equal"


class Gt(Compare):
    function = "greater"


class Ge(Compare):
    function = "greater_equal"


def _compare_samples(rng):
    yield from binary(scalar=0.5)(rng)
    same = values(rng, (4,))
    yield Sample((same, same.copy()), name="equal values")


@register(np.equal, _compare_samples, differentiable=False)
def eq(input, other):
    """Elementwise ``input == other`` as a bool tensor."""
    return Eq.apply(input, other)


@register(np.not_equal, _compare_samples, differentiable=False, aliases=("not_equal",))
def ne(input, other):
    """Elementwise ``input != other`` as a bool tensor."""
    return Ne.apply(input, other)


@register(np.less, _compare_samples, differentiable=False, aliases=("less",))
def lt(input, other):
    """Elementwise ``input < other`` as a bool tensor."""
    return Lt.apply(input, other)


@register(np.less_equal, _compare_samples, differentiable=False, aliases=("less_equal",))
def le(input, other):
    """Elementwise ``input <= other`` as a bool tensor."""
    return Le.apply(input, other)


@register(np.greater, _compare_samples, differentiable=False, aliases=("greater",))
def gt(input, other):
    """Elementwise ``input > other`` as a bool tensor."""
    return Gt.apply(input, other)


@register(np.greater_equal, _compare_samples, differentiable=False, aliases=("greater_equal",))
def ge(input, other):
    """Elementwise ``input >= other`` as a bool tensor."""
    return Ge.apply(input, other)


class LogicalAnd(Compare):
    function = "logical_and"


class LogicalOr(Compare):
    function = "logical_or"


class LogicalXor(Compare):
    function = "logical_xor"


class Predicate(Op):
    """Base of elementwise tests of one tensor (logical_not, isnan, isinf, isfinite)."""

    differentiable = False
    function = ""

    @classmethod
    def forward(cls, ctx, a):
        return getattr(ctx.xp, cls.function)(a)


class LogicalNot(Predicate):
    function = "logical_not"


class Isnan(Predicate):
    function = "isnan"


class Isinf(Predicate):
    function = "isinf"


class Isfinite(Predicate):
    function = "isfinite"


class Signbit(Predicate):
    function = "signbit"


def _isin_reference(elements, test_elements, *, assume_unique=False, invert=False):
    return np.isin(elements, test_elements, invert=invert)


def _isin_samples(rng):
    yield Sample((rng.integers(0, 6, size=(3, 4)), rng.integers(0, 6, size=(5,))), name="integers")
    yield Sample((rng.integers(0, 6, size=(4,)), rng.integers(0, 6, size=(2, 2))), {"invert": True}, name="invert")
    yield Sample((rng.integers(0, 4, size=(6,)), 2), name="a number")


def _is_number(value):
    return isinstance(value, (bool, int, float))


@register(_isin_reference, _isin_samples, differentiable=False, method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (a tensor or a number), as a
    bool tensor of ``elements``' shape (the opposite with ``invert``). No gradient.

    Example::

        vizgrad.isin(vizgrad.tensor([1, 2, 3, 4]), vizgrad.tensor([2, 4]))   # tensor([False,  True, False,  True])
    """
    if isinstance(test_elements, Tensor) and _is_number(elements):       # a number among a tensor's
        found = eq(test_elements.reshape(-1), elements).any()
    elif not isinstance(elements, Tensor):
        raise not_a_tensor("isin", "elements", elements)
    elif _is_number(test_elements):             # compared in the promoted dtype: 2 is not 2.5
        found = eq(elements, test_elements)
    else:
        if not isinstance(test_elements, Tensor):
            raise not_a_tensor("isin", "test_elements", test_elements)
        found = eq(elements.unsqueeze(-1), test_elements.reshape(-1)).any(-1)
    return found.logical_not() if invert else found


def _bools(rng):
    for left, right in (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2,))):
        yield Sample((booleans(rng, left), booleans(rng, right)))


def _bool(rng):
    yield Sample((booleans(rng, (3, 4)),))


def _special_values(rng):
    yield Sample((np.array([0.0, -1.5, np.inf, -np.inf, np.nan]),))


def _as_bool(value, op, name):
    if not isinstance(value, Tensor):
        if not isinstance(value, (bool, int, float)):
            raise not_a_tensor(op, name, value)
        return value
    if value.dtype is dtypes.bool_:
        return value
    return value != 0


@register(np.logical_and, _bools, differentiable=False)
def logical_and(input, other):
    """Elementwise logical and; non-bool inputs count as true where non-zero."""
    return LogicalAnd.apply(_as_bool(input, "logical_and", "input"), _as_bool(other, "logical_and", "other"))


@register(np.logical_or, _bools, differentiable=False)
def logical_or(input, other):
    """Elementwise logical or; non-bool inputs count as true where non-zero."""
    return LogicalOr.apply(_as_bool(input, "logical_or", "input"), _as_bool(other, "logical_or", "other"))


@register(np.logical_xor, _bools, differentiable=False)
def logical_xor(input, other):
    """Elementwise logical exclusive or."""
    return LogicalXor.apply(_as_bool(input, "logical_xor", "input"), _as_bool(other, "logical_xor", "other"))


@register(np.logical_not, _bool, differentiable=False)
def logical_not(input):
    """Elementwise logical not."""
    return LogicalNot.apply(_as_bool(input, "logical_not", "input"))


@register(np.isnan, _special_values, differentiable=False)
def isnan(input):
    """Elementwise test for NaN."""
    return Isnan.apply(input)


@register(np.isinf, _special_values, differentiable=False)
def isinf(input):
    """Elementwise test for positive or negative infinity."""
    return Isinf.apply(input)


@register(np.isfinite, _special_values, differentiable=False)
def isfinite(input):
    """Elementwise test for finite values (not NaN, not infinite)."""
    return Isfinite.apply(input)


def _signbit_samples(rng):
    yield Sample((np.array([0.0, -0.0, -1.5, np.inf, -np.inf, np.nan]),), name="special values")
    yield Sample((np.array([[3, -2], [0, 7]]),), name="integers")


@register(np.signbit, _signbit_samples, differentiable=False)
def signbit(input):
    """Elementwise test of the sign bit: True for negative numbers, -0.0 and -inf (and a NaN
    whose sign bit is set).

    Example::

        vizgrad.signbit(vizgrad.tensor([-1.0, -0.0, 0.0, 2.0]))   # tensor([ True,  True, False, False])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("signbit", "input", input)
    if not input.is_floating_point():         # integers: the sign bit is set below zero
        return input < 0
    return Signbit.apply(input)


class IsClose(Op):
    """``|a - b| <= atol + rtol·|b|``, equal values (infinities included) always close,
    NaNs close to each other only with ``equal_nan``."""

    differentiable = False

    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan, floating, integer):
        xp = ctx.xp
        close = xp.equal(a, b)
        if floating:
            finite = xp.logical_and(xp.isfinite(a), xp.isfinite(b))
            finite_a, finite_b = xp.where(finite, a, 0.0), xp.where(finite, b, 0.0)   # no inf - inf
            within = xp.abs(finite_a - finite_b) <= atol + rtol * xp.abs(finite_b)
            close = xp.logical_or(close, xp.logical_and(finite, within))
            if equal_nan:
                close = xp.logical_or(close, xp.logical_and(xp.isnan(a), xp.isnan(b)))
        elif integer:      # the difference exact, compared in float64 with the tolerance
            difference = xp.astype(xp.maximum(a, b) - xp.minimum(a, b), xp.float64)
            size = xp.abs(xp.astype(b, xp.float64)) if hasattr(b, "shape") else abs(float(b))
            close = xp.logical_or(close, difference <= atol + rtol * size)
        return close


def _isclose_samples(rng):
    a = values(rng, (6,))
    b = a + np.array([0.0, 1e-9, 1e-3, -1e-6, 0.5, 2e-5])
    yield Sample((a, b), name="near and far")
    yield Sample((a, b), {"rtol": 0.0, "atol": 1e-4}, name="atol only")
    special = np.array([np.nan, np.inf, -np.inf, 1.0])
    yield Sample((special, special.copy()), name="nan and inf")
    yield Sample((special, special.copy()), {"equal_nan": True}, name="equal_nan")


def _check_same_dtype(op, input, other):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if isinstance(other, Tensor) and input.dtype is not other.dtype:
        raise DTypeError(f"{op}: expected both inputs to have the same dtype, but got {input.dtype.name} and "
                         f"{other.dtype.name}")


@register(np.isclose, _isclose_samples, differentiable=False)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol·|other|`` as a bool tensor (equal values,
    infinities included, are close; NaNs only with ``equal_nan=True``).

    Example::

        vizgrad.isclose(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0 + 1e-9, 2.1]))   # tensor([ True, False])
    """
    _check_same_dtype("isclose", input, other)
    floating = input.is_floating_point()
    return IsClose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan, floating=floating,
                         integer=not floating and input.dtype is not dtypes.bool_)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`;
    broadcasting as PyTorch does).

    Example::

        vizgrad.allclose(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 2.0 + 1e-7]))   # True
    """
    _check_same_dtype("allclose", input, other)
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """True when both tensors have the same shape and the same values (NaN is never equal).

    Example::

        vizgrad.equal(vizgrad.tensor([1, 2]), vizgrad.tensor([1, 2]))   # True
    """
    if not isinstance(other, Tensor):
        raise ArgumentTypeError(f"equal: argument 'other' must be a Tensor, not {type(other).__name__}")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(eq(input, other).all().item())


bind_method("allclose", allclose)
bind_method("equal", equal)


def _infinities_samples(rng):
    yield Sample((np.array([0.0, -0.0, -1.5, np.inf, -np.inf, np.nan, 3.0]),), name="special values")
    yield Sample((np.array([[3, -2], [0, 7]]),), name="integers")
    yield Sample((booleans(rng, (4,)),), name="bools")


@register(np.isposinf, _infinities_samples, differentiable=False)
def isposinf(input):
    """Elementwise test for positive infinity (always False for integer and bool tensors).

    Example::

        vizgrad.isposinf(vizgrad.tensor([float("inf"), float("-inf"), 1.0]))   # tensor([ True, False, False])
    """
    _require_tensors("isposinf", input=input)
    return eq(input, float("inf")) if input.is_floating_point() else ne(input, input)


@register(np.isneginf, _infinities_samples, differentiable=False)
def isneginf(input):
    """Elementwise test for negative infinity (always False for integer and bool tensors).

    Example::

        vizgrad.isneginf(vizgrad.tensor([float("inf"), float("-inf"), 1.0]))   # tensor([False,  True, False])
    """
    _require_tensors("isneginf", input=input)
    return eq(input, float("-inf")) if input.is_floating_point() else ne(input, input)


@register(np.isreal, _infinities_samples, differentiable=False)
def isreal(input):
    """Elementwise test for a zero imaginary part: True everywhere, as vizgrad's tensors are
    real (NaN and infinities included).

    Example::

        vizgrad.isreal(vizgrad.tensor([1.0, float("nan")]))   # tensor([True, True])
    """
    _require_tensors("isreal", input=input)
    return logical_or(eq(input, input), ne(input, input))
