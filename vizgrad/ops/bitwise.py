"""Bitwise ops on integer and bool tensors: and, or, xor, not and the shifts (the Tensor
operators ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``). On bools and/or/xor/not are the
logical ones; floating point operands are refused, as in PyTorch. No gradients."""

import numpy as np

from ..autograd.function import Op
from ..dtypes import bool_, result_type
from ..errors import ArgumentTypeError, DTypeError, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import booleans


class Bitwise(Op):
    """Base of the bitwise ops of two operands; ``function`` names the Array API function."""

    differentiable = False
    broadcasts = True
    promotes = (0, 1)
    function = ""

    @classmethod
    def forward(cls, ctx, a, b):
        return getattr(ctx.xp, cls.function)(*_arrays(ctx.xp, a, b))


def _arrays(xp, a, b):
    """``a`` and ``b`` as arrays of one dtype: a Python number takes the other's (promoted) dtype."""
    if not hasattr(a, "dtype"):
        a = xp.full_like(b, a)
    if not hasattr(b, "dtype"):
        b = xp.full_like(a, b)
    return a, b


class BitwiseAnd(Bitwise):
    function = "bitwise_and"


class BitwiseOr(Bitwise):
    function = "bitwise_or"


class BitwiseXor(Bitwise):
    function = "bitwise_xor"


class BitwiseNot(Op):
    differentiable = False

    @staticmethod
    def forward(ctx, a):
        return ctx.xp.bitwise_invert(a)


class Shift(Op):
    """``a << b`` or ``a >> b`` as PyTorch defines them for any count: a count below 0 or not
    below the width gives 0 (a right shift of a negative number: -1)."""

    differentiable = False
    broadcasts = True
    promotes = (0, 1)
    left = True

    @classmethod
    def forward(cls, ctx, a, b):
        xp = ctx.xp
        a, b = xp.broadcast_arrays(*_arrays(xp, a, b))
        width = 32 if a.dtype == xp.int32 else 64
        outside = (b < 0) | (b >= width)
        count = xp.where(outside, xp.zeros_like(b), b)
        if cls.left:
            return xp.where(outside, xp.zeros_like(a), xp.bitwise_left_shift(a, count))
        filled = xp.where(a < 0, -xp.ones_like(a), xp.zeros_like(a))
        return xp.where(outside, filled, xp.bitwise_right_shift(a, count))


class LeftShift(Shift):
    left = True


class RightShift(Shift):
    left = False


def _check(op, input, other, shifts=False):
    """Tensors and Python ints and bools whose promoted dtype is an integer one (or, except
    for shifts, bool)."""
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:   # the common cases, without result_type
        if type(other) is int:
            return
        if (isinstance(other, Tensor) and not other.dtype.is_floating_point
                and not (shifts and input.dtype is bool_ and other.dtype is bool_)):
            return
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise not_a_tensor(op, "input", input)
        input, other = other, input
    if isinstance(other, float):
        raise DTypeError(f"{op}: not implemented for a float operand ({other!r}); use integers")
    if not isinstance(other, (Tensor, int, bool, np.integer, np.bool_)):
        raise ArgumentTypeError(f"{op}: argument 'other' must be a Tensor or an int, not {type(other).__name__}")
    result = result_type(input, other)
    if result.is_floating_point or (shifts and result is bool_):
        raise DTypeError(f"{op}: not implemented for {result.name} operands (\"{op}\" is not implemented for "
                         f"'{result.torch_name}'); use integer{'' if shifts else ' or bool'} tensors")


def _integer_samples(shifts=False):
    def samples(rng):
        yield Sample((rng.integers(-50, 50, size=(3, 4)), rng.integers(0, 6, size=(4,))), name="integers")
        yield Sample((rng.integers(-50, 50, size=(5,)), 3), name="number")
        yield Sample((rng.integers(-50, 50, size=(2, 1)), rng.integers(0, 6, size=(3,)).astype(np.int32)),
                     name="int64 with int32")
        if not shifts:
            yield Sample((booleans(rng, (3, 4)), booleans(rng, (4,))), name="bools")
    return samples


@register(np.bitwise_and, _integer_samples(), differentiable=False)
def bitwise_and(input, other):
    """Elementwise bitwise and of integer or bool tensors (``&``), broadcasting.

    Example::

        vizgrad.bitwise_and(vizgrad.tensor([12, -1]), vizgrad.tensor([10, 6]))   # tensor([8, 6])
    """
    _check("bitwise_and", input, other)
    return BitwiseAnd.apply(input, other)


@register(np.bitwise_or, _integer_samples(), differentiable=False)
def bitwise_or(input, other):
    """Elementwise bitwise or of integer or bool tensors (``|``), broadcasting.

    Example::

        vizgrad.bitwise_or(vizgrad.tensor([12, 1]), vizgrad.tensor([10, 6]))   # tensor([14,  7])
    """
    _check("bitwise_or", input, other)
    return BitwiseOr.apply(input, other)


@register(np.bitwise_xor, _integer_samples(), differentiable=False)
def bitwise_xor(input, other):
    """Elementwise bitwise exclusive or of integer or bool tensors (``^``), broadcasting.

    Example::

        vizgrad.bitwise_xor(vizgrad.tensor([12, 1]), vizgrad.tensor([10, 6]))   # tensor([6, 7])
    """
    _check("bitwise_xor", input, other)
    return BitwiseXor.apply(input, other)


def _not_samples(rng):
    yield Sample((rng.integers(-50, 50, size=(3, 4)),), name="integers")
    yield Sample((booleans(rng, (5,)),), name="bools")


@register(np.invert, _not_samples, differentiable=False)
def bitwise_not(input):
    """Elementwise bitwise not of an integer or bool tensor (``~``): ``-x - 1`` for integers,
    logical not for bools.

    Example::

        vizgrad.bitwise_not(vizgrad.tensor([0, 5, -3]))   # tensor([-1, -6,  2])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("bitwise_not", "input", input)
    if input.is_floating_point():
        raise DTypeError(f"bitwise_not: ~ (operator.invert) is only implemented on integer and Boolean-type "
                         f"tensors, got {input.dtype.name}")
    return BitwiseNot.apply(input)


def _shift_reference(left):
    def reference(a, b):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        dtype = np.result_type(a, b) if isinstance(b, np.ndarray) and b.ndim else a.dtype
        a, b = a.astype(dtype), b.astype(dtype)
        width = dtype.itemsize * 8
        outside = (b < 0) | (b >= width)
        count = np.where(outside, 0, b)
        shifted = np.left_shift(a, count) if left else np.right_shift(a, count)
        fill = 0 if left else np.where(a < 0, -1, 0)
        return np.where(outside, fill, shifted).astype(dtype)
    return reference


def _shift_samples(rng):
    yield from _integer_samples(shifts=True)(rng)
    yield Sample((np.array([-8, 8, 1, -1, 5]), np.array([-1, 64, 63, 70, 0])), name="counts out of range")


@register(_shift_reference(True), _shift_samples, differentiable=False)
def bitwise_left_shift(input, other):
    """Elementwise ``input << other`` of integer tensors, broadcasting (``input · 2^other``,
    wrapping; 0 for a count below 0 or not below the width).

    Example::

        vizgrad.bitwise_left_shift(vizgrad.tensor([1, -3]), 2)   # tensor([  4, -12])
    """
    _check("bitwise_left_shift", input, other, shifts=True)
    return LeftShift.apply(input, other)


@register(_shift_reference(False), _shift_samples, differentiable=False)
def bitwise_right_shift(input, other):
    """Elementwise ``input >> other`` of integer tensors, broadcasting (arithmetic: the quotient
    by 2^other rounded down; for a count below 0 or not below the width, 0 or -1 by the sign).

    Example::

        vizgrad.bitwise_right_shift(vizgrad.tensor([8, -8]), 2)   # tensor([ 2, -2])
    """
    _check("bitwise_right_shift", input, other, shifts=True)
    return RightShift.apply(input, other)
