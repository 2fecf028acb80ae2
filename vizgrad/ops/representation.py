"""Elementwise ops of two operands about how numbers are represented: copysign, ldexp and
nextafter (the sign, exponent and grid of floats) and gcd and lcm (of integers), with broadcasting."""

import math

import numpy as np

from ..autograd.function import Op
from .binary import _integers, _reference_dtype, _require_promoted, _require_tensors, where
from .registry import Sample, register
from .samples import binary, values


class Copysign(Op):
    broadcasts = True
    promotes = (0, 1)
    int_to_float = True   # as PyTorch: copysign of integers is the default float dtype

    @staticmethod
    def forward(ctx, a, b):
        out = ctx.xp.copysign(a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        # out = ±|a|: d out/d a = sign(a)·sign(out) (0 at a = 0); b gives only the sign (gradient 0)
        return (grad * (xp.sign(a) * xp.sign(out)) if needs_a else None,
                xp.zeros_like(grad) if needs_b else None)


@register(np.copysign, binary(away_from=0.25, scalar=-1.5))
def copysign(input, other):
    """``|input|`` with the sign of ``other`` (its sign bit: -0.0 counts as negative),
    broadcasting; integers give the default float dtype. d/d input = sign(input)·sign(out),
    d/d other = 0.

    Example::

        vizgrad.copysign(vizgrad.tensor([1.0, -2.0, 3.0]), -1.0)   # tensor([-1., -2., -3.])
    """
    return Copysign.apply(input, other)


class Gcd(Op):
    """Euclid's algorithm, elementwise on integers (gcd(0, 0) = 0); no gradient."""

    differentiable = False
    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        a, b = xp.broadcast_arrays(xp.abs(a), xp.abs(b))
        while bool(xp.any(b != 0)):
            going = b != 0
            remainder = a % xp.where(going, b, xp.ones_like(b))
            a, b = xp.where(going, b, a), xp.where(going, remainder, xp.zeros_like(b))
        return a


def _integer_pairs(rng):
    yield Sample((_integers(rng, (3, 4), -30, 31), _integers(rng, (4,), -12, 13)), name="integers")
    yield Sample((np.array([0, 0, 6, -4, 7]), np.array([0, 5, 0, 6, -21])), name="zeros and signs")
    yield Sample((_integers(rng, (), -30, 31), _integers(rng, (2, 3), -30, 31)), name="0-d")


@register(np.gcd, _integer_pairs, differentiable=False)
def gcd(input, other):
    """Elementwise greatest common divisor of two integer tensors, broadcasting
    (non-negative; gcd(0, 0) is 0).

    Example::

        vizgrad.gcd(vizgrad.tensor([12, -9, 0]), vizgrad.tensor([18, 6, 5]))   # tensor([6, 3, 5])
    """
    _require_promoted("gcd", input, other, floating=False)
    return Gcd.apply(input, other)


@register(np.lcm, _integer_pairs, differentiable=False)
def lcm(input, other):
    """Elementwise least common multiple of two integer tensors, broadcasting (non-negative;
    0 where either is 0).

    Example::

        vizgrad.lcm(vizgrad.tensor([4, -6, 0]), vizgrad.tensor([6, 4, 5]))   # tensor([12, 12,  0])
    """
    _require_promoted("lcm", input, other, floating=False)
    divisor = gcd(input, other)
    safe = where(divisor == 0, divisor.new_ones(()), divisor)
    return (input // safe * other).abs()


def _ldexp_samples(rng):
    yield Sample((values(rng, (3, 4)), _integers(rng, (4,), -3, 4)), name="integer exponents")
    yield Sample((values(rng, (2, 3)), values(rng, (3,), -1.5, 1.5)), name="floating exponents")
    yield Sample((_integers(rng, (5,), -9, 10), _integers(rng, (5,), -2, 3)), name="integers")


class Ldexp(Op):
    broadcasts = True
    promotes = (0, 1)
    int_to_float = True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a, b):
        out = a * ctx.xp.pow(2.0, b)
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return (grad * ctx.xp.pow(2.0, b) if needs_a else None,
                grad * out * math.log(2.0) if needs_b else None)


@register(lambda a, b: _reference_dtype(np.asarray(a * np.power(2.0, b)), a, b), _ldexp_samples)
def ldexp(input, other):
    """``input · 2^other``, elementwise and broadcasting (integers give the default float
    dtype). d/d input = 2^other, d/d other = input · 2^other · ln 2.

    Example::

        vizgrad.ldexp(vizgrad.tensor([1.5, 3.0]), vizgrad.tensor([3, -1]))   # tensor([12.0000,  1.5000])
    """
    _require_tensors("ldexp", input=input, other=other)
    return Ldexp.apply(input, other)


class Nextafter(Op):
    """One step of the float grid: ∂/∂input = 1 where input ≠ other (0 where it stays put),
    ∂/∂other = 0 (PyTorch's)."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a != b)      # a constant: where the value moves
        return ctx.xp.nextafter(a, b)

    @staticmethod
    def backward(ctx, grad):
        moves, = ctx.saved_tensors
        _, needs_other = ctx.needs_input_grad
        return ctx.xp.where(moves, grad, grad * 0), grad * 0 if needs_other else None


def _nextafter_samples(rng):     # (the special values, where no finite difference exists: tests/test_silently_wrong.py)
    yield from binary(scalar=None)(rng)


@register(np.nextafter, _nextafter_samples, smooth=False)
def nextafter(input, other):
    """The next floating point value after ``input`` in the direction of ``other``,
    elementwise and broadcasting. Its gradient is 1 in ``input`` (0 where input = other) and 0
    in ``other``, as PyTorch's.

    Example::

        one = vizgrad.tensor([1.0], dtype=vizgrad.float64)
        vizgrad.nextafter(one, one + 1) - one      # tensor([2.2204e-16], dtype=vizgrad.float64)
    """
    _require_promoted("nextafter", input, other, floating=True)
    return Nextafter.apply(input, other)
