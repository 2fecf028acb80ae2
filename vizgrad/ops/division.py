"""Division and the remainders, elementwise with broadcasting: div (true, trunc and floor
rounding), floor_divide, remainder (the divisor's sign) and fmod (the dividend's sign), split
from :mod:`vizgrad.ops.binary`. Integer quotients and remainders stay integers and refuse a
zero divisor with :class:`~vizgrad.errors.DivisionByZeroError`, as PyTorch's do.
"""

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..dtypes import bool_
from ..errors import ArgumentError, DivisionByZeroError, DTypeError, format_shape, not_a_tensor
from ..tensor import Tensor
from .binary import _integers, _reference_dtype
from .registry import Sample, register
from .samples import binary, values

class Div(Op):
    broadcasts = True
    promotes = (0, 1)
    int_to_float = True   # PyTorch's true division: int / int is the default float dtype

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad / b if needs_a else None
        grad_b = -grad * a / (b * b) if needs_b else None
        return grad_a, grad_b


class RoundedDiv(Op):
    """Division rounded towards zero or down: piecewise constant, so its gradient is zero.
    Integer operands stay integers (exact, with no detour through floats). Floor division is
    the floor of the exact quotient (``7 // -0.7`` is -11, where ``floor(7 / -0.7)`` is -10)
    and NaN for an infinite dividend, as PyTorch's."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b, rounding_mode, integral):
        xp = ctx.xp
        if rounding_mode == "floor":
            return a // b
        if integral:
            quotient = abs(a) // abs(b)
            return xp.where((a < 0) != (b < 0), -quotient, quotient)
        return xp.trunc(a / b)

    @staticmethod
    def backward(ctx, grad):
        zeros = ctx.xp.zeros_like(grad)
        return zeros, zeros


def _div_reference(a, b, rounding_mode=None):
    if rounding_mode is not None and all(np.asarray(x).dtype.kind in "biu" for x in (a, b)):
        quotient = np.floor_divide(a, b)
        if rounding_mode == "trunc":
            quotient = np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -(np.abs(a) // np.abs(b)), quotient)
        return quotient
    quotient = np.divide(a, b)
    rounded = {None: quotient, "trunc": np.trunc(quotient), "floor": np.floor(quotient)}[rounding_mode]
    return _reference_dtype(rounded, a, b)


def _div_samples(rng):
    yield from binary(other_low=0.5, other_high=2.0, scalar=1.5)(rng)
    yield Sample((values(rng, (3, 4), -3, 3), values(rng, (4,), 0.5, 2.0)), {"rounding_mode": "floor"})
    yield Sample((values(rng, (3, 4), -3, 3), 0.7), {"rounding_mode": "trunc"})
    integers, divisors = _integers(rng, (3, 4), -9, 10), _integers(rng, (4,), -4, 5, nonzero=True)
    yield Sample((integers, divisors), name="integers, true division")
    yield Sample((integers, divisors), {"rounding_mode": "floor"}, name="integers, floor")
    yield Sample((integers, divisors), {"rounding_mode": "trunc"}, name="integers, trunc")
    yield Sample((integers, -3), {"rounding_mode": "floor"}, name="integers, number, floor")


def _check_integer_divisor(op, input, other):
    """PyTorch raises where an integer division meets a zero divisor (floats give inf or nan)."""
    divisor_is_zero = bool((other == 0).any()) if isinstance(other, Tensor) else other == 0
    if divisor_is_zero:
        raise DivisionByZeroError(
            f"{op}: integer division by zero (ZeroDivisionError): the divisor "
            + (f"of shape {format_shape(other.shape)} and dtype {other.dtype.name} holds a zero"
               if isinstance(other, Tensor) else f"is {other!r}")
            + "; divide floating-point tensors (x.float()) to get inf or nan instead")


@register(_div_reference, _div_samples, aliases=("divide", "true_divide"))
def div(input, other, *, rounding_mode=None):
    """Elementwise ``input / other``, broadcasting; ``rounding_mode`` "trunc" or "floor"
    rounds the quotient (whose gradient is then zero).

    True division of integers gives the default float dtype; rounded division of
    integers stays integer (``//`` is ``rounding_mode="floor"``) and raises
    :class:`~vizgrad.errors.DivisionByZeroError` for a zero divisor, as in PyTorch.

    d(a/b)/da = 1/b, d(a/b)/db = -a/b².

    Example::

        vizgrad.tensor([5, -5]) / 2                          # tensor([ 2.5000, -2.5000])
        vizgrad.div(vizgrad.tensor([5, -5]), 2, rounding_mode="floor")   # tensor([ 2, -3])
    """
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ArgumentError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    integral = not dtypes.result_type(input, other).is_floating_point
    if integral:
        _check_integer_divisor("floor_divide" if rounding_mode == "floor" else "div", input, other)
    return RoundedDiv.apply(input, other, rounding_mode=rounding_mode, integral=integral)


def _floor_divide_samples(rng):
    yield Sample((values(rng, (3, 4), -3, 3), values(rng, (4,), 0.5, 2.0)), name="floats")
    yield Sample((values(rng, (5,), -3, 3), -0.7), name="float, number")
    yield Sample((_integers(rng, (3, 4), -9, 10), _integers(rng, (4,), -4, 5, nonzero=True)), name="integers")


@register(lambda a, b: _div_reference(a, b, "floor"), _floor_divide_samples)
def floor_divide(input, other):
    """Elementwise ``input // other``: the quotient rounded down (``div`` with
    ``rounding_mode="floor"``); integers stay integers. Its gradient is zero.

    Example::

        vizgrad.tensor([5, -5]) // 2        # tensor([ 2, -3])
    """
    return div(input, other, rounding_mode="floor")


class Remainder(Op):
    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a % b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return (grad if needs_a else None,
                -grad * ctx.xp.floor(a / b) if needs_b else None)


def _remainder_samples(rng):
    yield from binary(other_low=0.5, other_high=2.0, scalar=1.5)(rng)
    yield Sample((values(rng, (5,), -3, 3), values(rng, (5,), -2.0, -0.5)), name="negative divisor")
    yield Sample((_integers(rng, (3, 4), -9, 10), _integers(rng, (4,), -4, 5, nonzero=True)), name="integers")
    yield Sample((_integers(rng, (5,), -9, 10), 3), name="integers, number")


@register(np.remainder, _remainder_samples, smooth=False)
def remainder(input, other):
    """Elementwise ``input % other`` with the sign of ``other`` (Python's modulo), i.e.
    ``input - floor(input / other) * other``; integers stay integers and raise
    :class:`~vizgrad.errors.DivisionByZeroError` for a zero divisor.

    d/da = 1, d/db = -floor(a/b).

    Example::

        vizgrad.tensor([5, -5]) % 3          # tensor([2, 1])
    """
    if not dtypes.result_type(input, other).is_floating_point:
        _check_integer_divisor("remainder", input, other)
    return Remainder.apply(input, other)


class Fmod(Op):
    """C's fmod. Floats: Python's ``%`` by the divisor given the dividend's sign, which is
    exact (and the dividend itself for an infinite divisor, as PyTorch's); integers: ``%``,
    stepped back one divisor where its sign (the divisor's) is not the dividend's."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b, integral):
        xp = ctx.xp
        if integral:
            rest = a % b
            return xp.where((rest != 0) & ((rest < 0) != (a < 0)), rest - b, rest)
        ctx.save_for_backward(a, b)
        return a % xp.copysign(b, a)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        if not needs_b:
            return grad, None
        quotient = a / b
        truncated = xp.sign(quotient) * xp.floor(xp.abs(quotient))     # (no trunc under create_graph)
        return grad if needs_a else None, -grad * truncated


@register(np.fmod, _remainder_samples, smooth=False)
def fmod(input, other):
    """Elementwise remainder with the sign of ``input`` (C's ``fmod``), i.e.
    ``input - trunc(input / other) * other``; integers stay integers and raise
    :class:`~vizgrad.errors.DivisionByZeroError` for a zero divisor.

    d/da = 1, d/db = -trunc(a/b).

    Example::

        vizgrad.fmod(vizgrad.tensor([5, -5]), 3)     # tensor([ 2, -2])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("fmod", "input", input)
    result = dtypes.result_type(input, other)
    if result is bool_:
        raise DTypeError("fmod: input and other are bool (\"fmod\" is not implemented for 'Bool'); "
                         "convert them with .int() or .float() first")
    integral = not result.is_floating_point
    if integral:
        _check_integer_divisor("fmod", input, other)
    return Fmod.apply(input, other, integral=integral)
