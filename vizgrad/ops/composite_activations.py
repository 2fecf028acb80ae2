"""PyTorch's activations composed of other ops (no Op of their own): hardsigmoid,
logsigmoid, softsign, tanhshrink, hardshrink, softshrink, threshold, celu, glu and prelu; and
hardswish, whose gradient PyTorch takes as one product (two would make inf - inf of an
infinite gradient).

Their gradients come from the ops they are built of; the single-op activations live in
:mod:`vizgrad.ops.activation`.
"""

import numpy as np

from ..errors import (ArgumentError, DTypeError, ShapeError, as_integer_scalar, as_number, check_dim, format_shape,
                      not_a_tensor)
from ..tensor import Tensor
from . import joins, shape
from .activation import (Elu, _away_from, _check_floating, _check_not_bool, _inplace, _np_softplus, _with_kwargs,
                         hardtanh, softplus)
from ..autograd.function import Op
from .binary import where
from .registry import Sample, register
from .samples import unary, values


@register(lambda x, inplace=False: np.clip(x + 3.0, 0.0, 6.0) / 6.0,
          lambda rng: iter([Sample((_away_from(values(rng, (3, 4), -5.0, 5.0), -3.0, 3.0),))]), method=False)
def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between. d/dx = 1/6 inside.

    Example::

        F.hardsigmoid(vizgrad.tensor([-4.0, 0.0, 1.5]))    # tensor([0.0000, 0.5000, 0.7500])
    """
    _check_floating("hardsigmoid", input)
    if inplace:
        return _inplace(input, lambda t: hardtanh(t + 3.0, 0.0, 6.0) / 6.0, "hardsigmoid_")
    return hardtanh(input + 3.0, 0.0, 6.0) / 6.0


@register(lambda x, inplace=False: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
          lambda rng: iter([Sample((_away_from(values(rng, (3, 4), -5.0, 5.0), -3.0, 3.0),))]), method=False)
def hardswish(input, inplace=False):
    """``x · hardsigmoid(x)`` (MobileNetV3). d/dx = (2x + 3)/6 between -3 and 3.

    Example::

        F.hardswish(vizgrad.tensor([-4.0, 1.0, 4.0]))      # tensor([-0.0000, 0.6667, 4.0000])
    """
    _check_floating("hardswish", input)
    if inplace:
        return _inplace(input, Hardswish.apply, "hardswish_")
    return Hardswish.apply(input)


class Hardswish(Op):
    """``x · clip(x + 3, 0, 6) / 6``; the gradient is PyTorch's: 0 below -3 (whatever the
    gradient), ``grad · (x/3 + 1/2)`` up to 3, ``grad`` above."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * ctx.xp.clip(x + 3.0, 0.0, 6.0) / 6.0

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        xp = ctx.xp
        slope = xp.where(x <= 3.0, x / 3.0 + 0.5, xp.ones_like(x))
        return xp.keep_where(x >= -3.0, grad * slope)


@register(lambda x: -_np_softplus(-x), unary(-4.0, 4.0), method=False)
def logsigmoid(input):
    """``log σ(x) = -softplus(-x)``, computed without overflow. d/dx = 1 - σ(x).

    Example::

        F.logsigmoid(vizgrad.tensor([0.0]))                # tensor([-0.6931])
    """
    _check_floating("logsigmoid", input)
    return -softplus(-input)


@register(lambda x: x / (1 + np.abs(x)), unary(away_from=0.0), method=False)
def softsign(input):
    """``x / (1 + |x|)``. d/dx = 1 / (1 + |x|)². Integers give the default float dtype.

    Example::

        F.softsign(vizgrad.tensor([-1.0, 3.0]))            # tensor([-0.5000,  0.7500])
    """
    _check_not_bool("softsign", input)
    return input / (input.abs() + 1)


@register(lambda x: x - np.tanh(x), unary(), method=False)
def tanhshrink(input):
    """``x - tanh(x)``. d/dx = tanh²(x). Integers give the default float dtype.

    Example::

        F.tanhshrink(vizgrad.tensor([1.0]))                # tensor([0.2384])
    """
    _check_not_bool("tanhshrink", input)
    return input - input.tanh()


def _shrink_samples(rng):
    """Values away from the kinks at ±0.5 (the default lambd) and at ±1.0, with lambd=1.0 too."""
    for shape in ((3, 4), (5,), ()):
        yield Sample((_away_from(rng.uniform(-2.0, 2.0, shape), -0.5, 0.5),), name=f"shape{shape}")
    yield Sample((_away_from(rng.uniform(-2.0, 2.0, (3, 4)), -1.0, 1.0),), {"lambd": 1.0}, name="lambd=1.0")


@register(lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0.0), _shrink_samples, smooth=False, method=False)
def hardshrink(input, lambd=0.5):
    """``x`` where |x| > lambd, else 0. d/dx = 1 outside [-lambd, lambd], 0 inside.

    Example::

        F.hardshrink(vizgrad.tensor([-1.0, 0.2, 0.7]))   # tensor([-1.0000,  0.0000,  0.7000])
    """
    _check_floating("hardshrink", input)
    return where(input.abs() <= as_number("hardshrink", "lambd", lambd), 0.0, input)     # (NaN is kept)


@register(lambda x, lambd=0.5: x - np.clip(x, -lambd, lambd), _shrink_samples, smooth=False, method=False)
def softshrink(input, lambd=0.5):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between: ``x - clamp(x, -lambd, lambd)``.
    d/dx = 1 outside [-lambd, lambd], 0 inside.

    Example::

        F.softshrink(vizgrad.tensor([-1.0, 0.2, 0.7]))   # tensor([-0.5000,  0.0000,  0.2000])
    """
    _check_floating("softshrink", input)
    lambd = as_number("softshrink", "lambd", lambd)
    if lambd < 0:
        raise ArgumentError(f"softshrink: lambd must be at least 0, got {lambd}")
    # x ∓ lambd outside, 0 inside, NaN kept: the gradient passes (not through a product) outside alone
    shift = where(input > 0, -lambd, lambd).to(input.dtype)
    return where(input.abs() <= lambd, 0.0, input + shift)


def _threshold_samples(rng):
    for shape in ((3, 4), (5,), ()):
        yield Sample((_away_from(rng.uniform(-2.0, 2.0, shape), 0.1), 0.1, 20.0), name=f"shape{shape}")
    yield Sample((_away_from(rng.uniform(-2.0, 2.0, (3, 4)), -1.0), -1.0, -3.0), name="negative threshold")


@register(lambda x, threshold, value, inplace=False: np.where(x > threshold, x, value), _threshold_samples,
          smooth=False, method=False)
def threshold(input, threshold, value, inplace=False):
    """``x`` where x > threshold, else ``value``. d/dx = 1 above the threshold, 0 elsewhere.
    An integer input stays integer, threshold and value truncated to integers, as in PyTorch.

    Example::

        F.threshold(vizgrad.tensor([0.1, 0.2]), 0.1, 20.0)   # tensor([20.0000,  0.2000])
    """
    _check_not_bool("threshold", input)
    number = as_number if input.is_floating_point() else as_integer_scalar
    limit, value = number("threshold", "threshold", threshold), number("threshold", "value", value)
    if inplace:      # (x <= threshold, not x > threshold: NaN is kept, as in PyTorch)
        return _inplace(input, lambda t: where(t <= limit, value, t), "threshold_")
    return where(input <= limit, value, input)


def _celu_reference(x, alpha=1.0, inplace=False):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))


@register(_celu_reference, lambda rng: _with_kwargs(rng, unary(away_from=0.0), {"alpha": 0.5}, {"alpha": 2.0}),
          method=False)
def celu(input, alpha=1.0, inplace=False):
    """Continuously differentiable ELU: ``x`` for x > 0, ``alpha (e^(x/alpha) - 1)`` otherwise.
    d/dx = 1, or e^(x/alpha) for x ≤ 0.

    Example::

        F.celu(vizgrad.tensor([-1.0, 2.0]), alpha=2.0)   # tensor([-0.7869,  2.0000])
    """
    _check_floating("celu", input)
    alpha = as_number("celu", "alpha", alpha)
    if alpha == 0:
        raise ArgumentError("celu: alpha must not be 0 (it divides x)")
    if inplace:
        return _inplace(input, lambda t: Elu.apply(t / alpha, alpha=1.0, scale=alpha), "celu_")
    return Elu.apply(input / alpha, alpha=1.0, scale=alpha)


def _glu_reference(x, dim=-1):
    first, second = np.split(x, 2, axis=dim)
    return first / (1 + np.exp(-second))


def _glu_samples(rng):
    yield Sample((values(rng, (3, 4)),), name="last dim")
    yield Sample((values(rng, (4, 3)),), {"dim": 0}, name="dim 0")


@register(_glu_reference, _glu_samples, method=False)
def glu(input, dim=-1):
    """Gated linear unit: the input split in halves a, b along ``dim``, then ``a · σ(b)``.

    Example::

        F.glu(vizgrad.tensor([[1.0, 2.0, 0.0, 0.0]]))      # tensor([[0.5000, 1.0000]])
    """
    _check_floating("glu", input)
    if input.ndim == 0:
        raise ShapeError("glu: a 0-d tensor has no dim to halve")
    size = input.shape[check_dim("glu", dim, input.ndim)]
    if size % 2:
        raise ShapeError(f"glu: dim {dim} has size {size}; halving it needs an even size (input of shape "
                         f"{format_shape(input.shape)})")
    first, second = joins.chunk(input, 2, dim)
    return first * second.sigmoid()


def _prelu_reference(x, weight):
    shape_ = [1] * x.ndim
    if x.ndim > 1:
        shape_[1] = weight.size
    return np.where(x >= 0, x, np.reshape(weight, shape_) * x)


def _prelu_samples(rng):
    yield Sample((_away_from(values(rng, (3, 4)), 0.0), values(rng, (1,), 0.1, 0.5)), name="one weight")
    yield Sample((_away_from(values(rng, (2, 3, 4)), 0.0), values(rng, (3,), 0.1, 0.5)), name="one per channel")


@register(_prelu_reference, _prelu_samples, smooth=False, method=False)
def prelu(input, weight):
    """``x`` where x ≥ 0, ``weight · x`` otherwise, with a learned ``weight``: one number,
    or one per channel (dim 1). d/dx = 1 or weight; d/dweight = x where x < 0.

    Example::

        F.prelu(vizgrad.tensor([-2.0, 3.0]), vizgrad.tensor([0.25]))   # tensor([-0.5000,  3.0000])
    """
    _check_floating("prelu", input)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("prelu", "weight", weight)
    if weight.dtype is not input.dtype:
        raise DTypeError(f"prelu: weight is {weight.dtype.name} but input is {input.dtype.name}; they must have "
                         "the same dtype")
    channels = input.shape[1] if input.ndim > 1 else 1
    if weight.numel() not in (1, channels):
        raise ShapeError(f"prelu: weight has {weight.numel()} elements; it must have 1 or one per channel "
                         f"({channels}, dim 1 of input of shape {format_shape(input.shape)})")
    if input.ndim > 1:
        weight = weight.reshape([1, weight.numel()] + [1] * (input.ndim - 2))
    return where(input >= 0, input, weight * input)
