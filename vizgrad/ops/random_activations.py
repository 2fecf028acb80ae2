"""PyTorch's activations that draw random numbers in training: rrelu (a leaky ReLU whose
negative slope is drawn per element), alpha_dropout and feature_alpha_dropout (dropout that
keeps the mean and variance of SELU activations), and gumbel_softmax (a differentiable sample
of a categorical). Composed of other ops; the draws come from vizgrad's generator
(``vizgrad.manual_seed``) and take no gradient.
"""

import math

from ..errors import ArgumentError, DTypeNotImplementedError, ShapeError, as_number, format_shape, not_a_tensor
from ..tensor import Tensor
from .activation import _check_dropout, _inplace, leaky_relu, softmax
from .binary import where

__all__ = ["rrelu", "rrelu_", "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax"]

# SELU's scale · alpha: alpha dropout sets a dropped unit to SELU's lower bound, -this
_SELU_SATURATION = 1.7580993408473766


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: ``x`` for x ≥ 0, ``a · x`` otherwise, with ``a`` drawn uniformly
    from [lower, upper] per element in training and ``(lower + upper) / 2`` in evaluation.
    d/dx = 1 or ``a``.

    Example::

        F.rrelu(vizgrad.tensor([-2.0, 3.0]))                 # tensor([-0.4583,  3.0000])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("rrelu", "input", input)
    lower, upper = as_number("rrelu", "lower", lower), as_number("rrelu", "upper", upper)
    if lower > upper:
        raise ArgumentError(f"rrelu: the lower bound should be at most the upper bound, got lower={lower} and "
                            f"upper={upper}")
    if not input.is_floating_point():
        raise DTypeNotImplementedError(f"rrelu: expected a floating-point input, got {input.dtype.name} (PyTorch "
                                       "has no kernel for it); convert with .float() first")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    from ..creation import rand
    slope = rand(input.shape, dtype=input.dtype, device=input.device) * (upper - lower) + lower

    def randomized(t):
        return where(t >= 0, t, t * slope)
    return _inplace(input, randomized, "rrelu_") if inplace else randomized(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """:func:`rrelu` in place."""
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout(op, input, p, training, inplace, channel_dims):
    """Keep each unit (or each channel, the first ``channel_dims`` dims) with probability 1 - p;
    a dropped one becomes SELU's lower bound -α', and then ``a · x + b`` brings the mean and
    variance of unit-Gaussian SELU outputs back to 0 and 1: a = ((1 - p)(1 + p α'²))^-½,
    b = α' a p. d/dx = a where kept, 0 where dropped."""
    _check_dropout(op, input, p, training)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if channel_dims and input.ndim < 2:
        raise ShapeError(f"{op}: feature dropout needs at least 2 dims (N, C, ...) in the input, got shape "
                         f"{format_shape(input.shape)}")
    if not input.is_floating_point():
        raise DTypeNotImplementedError(f"{op}: expected a floating-point input, got {input.dtype.name}: the "
                                       "result is rescaled; convert with .float() first")
    if p == 1.0:
        return _inplace(input, lambda t: t * 0.0, op + "_") if inplace else input * 0.0
    from ..creation import rand
    shape = tuple(input.shape[:channel_dims]) + (1,) * (input.ndim - channel_dims) if channel_dims else input.shape
    kept = rand(shape, dtype=input.dtype, device=input.device) >= p
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    scale = where(kept, a, 0.0).to(input.dtype)
    shift = where(kept, _SELU_SATURATION * a * p, _SELU_SATURATION * a * (p - 1)).to(input.dtype)

    def dropped(t):
        return t * scale + shift
    return _inplace(input, dropped, op + "_") if inplace else dropped(input)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for self-normalizing networks (SELU): a dropped unit takes SELU's negative
    saturation value, and an affine map keeps the mean and variance unchanged. The identity in
    evaluation.

    Example::

        vizgrad.manual_seed(0)
        F.alpha_dropout(vizgrad.randn(4), 0.5, training=True)
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, channel_dims=0)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels: one draw per (sample, channel), shared by every
    position of the channel."""
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, channel_dims=2)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample of the categorical ``softmax(logits)`` made differentiable: ``softmax((logits +
    g) / tau)`` with Gumbel noise ``g = -log(-log U)``. With ``hard=True`` the result is the
    one-hot of that sample's largest entry, whose gradient is the soft sample's (the
    straight-through estimator). ``eps`` is unused, as in PyTorch.

    Example::

        vizgrad.manual_seed(0)
        F.gumbel_softmax(vizgrad.zeros(2, 3), hard=True)     # one 1 per row
    """
    if not isinstance(logits, Tensor):
        raise not_a_tensor("gumbel_softmax", "logits", logits)
    tau = as_number("gumbel_softmax", "tau", tau)
    from ..creation import rand
    uniform = rand(logits.shape, dtype=logits.dtype, device=logits.device)
    gumbels = -(-uniform.log()).log()         # (an exponential draw's -log: the same law as PyTorch's)
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = soft.detach().new_zeros(soft.shape).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft
