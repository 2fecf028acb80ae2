"""The functional forms of layers: linear maps, activations, softmax, dropout, embeddings.

Activations are single ops (one node each in the graph), written so that their
backward is differentiable too: derivatives that need σ(x) use the smooth
``σ(x) = (1 + tanh(x/2)) / 2`` rather than a branch on the sign of x. Where
``e^x`` could overflow (softplus, silu, mish) the forwards use
``softplus(x) = max(x, 0) + log(1 + e^-|x|)`` and ``σ(x)`` computed from ``e^-|x|``.

``relu``, ``sigmoid`` and ``tanh`` live in :mod:`vizgrad.ops.unary`; the activations composed of
other ops (hardsigmoid, celu, glu, prelu, ...) in :mod:`vizgrad.ops.composite_activations`.
"""

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd import observers
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, IndexingError,
                      not_a_tensor, as_int, as_integer_scalar, as_number, check_dim)
from ..tensor import Tensor
from . import reduce, shape
from .conversion import to_dtype
from .contractions import einsum
from .registry import Sample, register
from .samples import non_contiguous, unary, values

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _inplace(input, function, name):
    """Make ``input`` hold ``function(input)`` (PyTorch's ``inplace=True``)."""
    from .inplace import apply_inplace
    return apply_inplace(input, function, name)


def _smooth_sigmoid(xp, a):
    """σ(a) as (1 + tanh(a/2)) / 2: no overflow and differentiable to every order (for backwards)."""
    return (xp.tanh(a * 0.5) + 1) * 0.5


def _stable_sigmoid(xp, a):
    """σ(a) from e^-|a|, accurate in both tails (for forwards)."""
    small = xp.exp(-xp.abs(a))
    return xp.where(a >= 0, 1 / (1 + small), small / (1 + small))


def _stable_softplus(xp, a):
    """log(1 + e^a) = max(a, 0) + log(1 + e^-|a|), without overflow."""
    return xp.maximum(a, 0.0) + xp.log1p(xp.exp(-xp.abs(a)))


def _check_not_bool(op, input):
    """For the activations whose PyTorch CPU kernels take integer tensors, but not bools."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: bool inputs are not supported, as in PyTorch; convert them first, e.g. with "
                         ".int() or .float()")


def _check_floating(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype.name}")


# --- NumPy references (for the registry tests) --------------------------------------

def _np_sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def _np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype if x.dtype.kind == "f" else np.float64])(x)


# === linear maps =======================================================================

class Linear(Op):
    broadcasts = True

    @staticmethod
    def forward(ctx, x, weight, bias):
        xp = ctx.xp
        ctx.save_for_backward(x, weight)
        if x.ndim > 2:   # one GEMM over all batch rows: NumPy's batched matmul against Wᵀ is ~1.7x slower
            rows = xp.reshape(x, (math.prod(x.shape[:-1]), x.shape[-1]))
            out = xp.reshape(xp.matmul(rows, xp.matrix_transpose(weight)), x.shape[:-1] + weight.shape[:1])
        else:
            out = xp.matmul(x, xp.matrix_transpose(weight))
        if bias is None:
            return out
        if bias.dtype == out.dtype:            # into the fresh product: one allocation fewer
            out += bias
            return out
        return out + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_w, needs_b = ctx.needs_input_grad
        out_features, in_features = weight.shape
        rows = grad if grad.ndim == 2 else xp.reshape(grad, (-1, out_features))   # G over every batch row
        grad_x = grad_w = grad_b = None
        if needs_x:                                                             # G W, one GEMM over every row
            grad_x = xp.matmul(rows, weight)
            if grad.ndim != 2:
                grad_x = xp.reshape(grad_x, grad.shape[:-1] + (in_features,))
        if needs_w:                                                             # Gᵀ X
            x_rows = x if x.ndim == 2 else xp.reshape(x, (-1, in_features))
            grad_w = xp.matmul(xp.matrix_transpose(rows), x_rows)
        if needs_b:                                                             # Σ G
            grad_b = xp.sum(rows, axis=0)
        return grad_x, grad_w, grad_b


def _linear_reference(x, weight, bias=None):
    out = x @ weight.T
    return out if bias is None else out + bias


def _linear_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (5, 4)), values(rng, (5,))), name="batch")
    yield Sample((values(rng, (4,)), values(rng, (2, 4)), values(rng, (2,))), name="one vector")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (5, 4))), name="no bias, batch dims")
    yield Sample((non_contiguous(values(rng, (3, 4))), non_contiguous(values(rng, (2, 4))), values(rng, ())),
                 name="0-d bias, non-contiguous")


@register(_linear_reference, _linear_samples, method=False)
def linear(input, weight, bias=None):
    """The affine map ``y = x Wᵀ + b`` over the last dim of ``input``.

    ``weight`` has shape (out_features, in_features); ``bias`` (out_features,) or None.
    dL/dx = G W, dL/dW = Gᵀ x (summed over batch rows), dL/db = Σ G.

    Example::

        x = vizgrad.randn(8, 3)
        w, b = vizgrad.randn(4, 3), vizgrad.zeros(4)
        vizgrad.nn.functional.linear(x, w, b).shape    # (8, 4)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("linear", "input", input)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("linear", "weight", weight)
    if bias is not None and not isinstance(bias, Tensor):
        raise not_a_tensor("linear", "bias", bias)
    if weight.ndim != 2:
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                         f"{format_shape(weight.shape)}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise ShapeError(f"linear: input of shape {format_shape(input.shape)} does not fit weight of shape "
                         f"{format_shape(weight.shape)}: the last dim of the input must be in_features = "
                         f"{weight.shape[1]}")
    if bias is not None and (bias.ndim > 1 or bias.ndim == 1 and bias.shape[0] not in (1, weight.shape[0])):
        raise ShapeError(f"linear: bias of shape {format_shape(bias.shape)} does not fit out_features = "
                         f"{weight.shape[0]}")
    # (the raw dtypes first: Tensor.dtype costs a lookup; arrays of two backends differ in raw dtype)
    if input._array.dtype is not weight._array.dtype and input.dtype is not weight.dtype \
            and not autocast_casts(input, weight, bias):
        raise DTypeError(f"linear: input is {input.dtype.name} but weight is {weight.dtype.name}; "
                         "convert one with .to()")
    if bias is not None and bias._array.dtype is not weight._array.dtype and bias.dtype is not weight.dtype \
            and not autocast_casts(input, weight, bias):
        raise DTypeError(f"linear: bias is {bias.dtype.name} but weight is {weight.dtype.name}; "
                         "convert one with .to()")
    return Linear.apply(input, weight, bias)


def autocast_casts(*tensors):
    """Whether autocast will cast these mismatched inputs to one dtype (:func:`vizgrad.amp.will_cast`,
    imported on this error path only: amp imports the ops)."""
    from ..amp import will_cast  # lazy: amp imports the ops it casts
    return will_cast(*tensors)


def _bilinear_reference(x1, x2, weight, bias=None):
    out = np.einsum("...i,oij,...j->...o", x1, weight, x2)
    return out if bias is None else out + bias


def _bilinear_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 2)), values(rng, (5, 4, 2)), values(rng, (5,))), name="batch")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (2, 3, 2)), values(rng, (1, 4, 2))), name="no bias, batch dims")


@register(_bilinear_reference, _bilinear_samples, method=False)
def bilinear(input1, input2, weight, bias=None):
    """The bilinear map ``yₒ = x₁ᵀ Aₒ x₂ + bₒ``.

    ``weight`` has shape (out, in1, in2); inputs (..., in1) and (..., in2) with equal
    batch dims. Computed as ``einsum('...i,oij,...j->...o')``, so its gradients are einsums.

    Example::

        w = vizgrad.randn(5, 3, 4)
        vizgrad.nn.functional.bilinear(vizgrad.randn(8, 3), vizgrad.randn(8, 4), w).shape  # (8, 5)
    """
    if not isinstance(input1, Tensor):
        raise not_a_tensor("bilinear", "input1", input1)
    if not isinstance(input2, Tensor):
        raise not_a_tensor("bilinear", "input2", input2)
    if not isinstance(weight, Tensor):
        raise not_a_tensor("bilinear", "weight", weight)
    if bias is not None and not isinstance(bias, Tensor):
        raise not_a_tensor("bilinear", "bias", bias)
    if weight.ndim != 3 or input1.shape[-1:] != weight.shape[1:2] or input2.shape[-1:] != weight.shape[2:]:
        raise ShapeError(f"bilinear: inputs of shapes {format_shape(input1.shape)} and {format_shape(input2.shape)} "
                         f"do not fit weight of shape {format_shape(weight.shape)} (out, in1, in2)")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: the batch dims of the inputs differ: {format_shape(input1.shape)} and "
                         f"{format_shape(input2.shape)}")
    for name, tensor in (("input1", input1), ("input2", input2), ("bias", bias)):
        if tensor is not None and tensor._array.dtype is not weight._array.dtype and tensor.dtype is not weight.dtype:
            raise DTypeError(f"bilinear: {name} is {tensor.dtype.name} but weight is {weight.dtype.name}; all "
                             "tensors must have the same dtype: convert one with .to()")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


# === elementwise activations =========================================================

class LeakyRelu(Op):
    @staticmethod
    def forward(ctx, a, negative_slope):
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(a)
        return ctx.xp.where(a > 0, a, a * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return ctx.xp.where(a > 0, grad, grad * ctx.negative_slope)


@register(lambda x, negative_slope=0.01, inplace=False: np.where(x > 0, x, x * negative_slope),
          lambda rng: _with_kwargs(rng, unary(away_from=0.0), {}, {"negative_slope": 0.2}), method=False)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for x > 0, ``negative_slope · x`` otherwise.  The derivative is 1 or ``negative_slope``.

    Example::

        F.leaky_relu(vizgrad.tensor([-2.0, 3.0]), 0.1)    # tensor([-0.2000, 3.0000])
    """
    _check_floating("leaky_relu", input)
    if inplace:
        return _inplace(input, lambda t: LeakyRelu.apply(t, negative_slope=negative_slope), "leaky_relu_")
    return LeakyRelu.apply(input, negative_slope=negative_slope)


class Elu(Op):
    """scale · (x if x > 0 else alpha (e^x - 1)): ELU, and SELU with its fixed constants."""

    @staticmethod
    def forward(ctx, a, alpha, scale):
        xp = ctx.xp
        ctx.alpha, ctx.scale = alpha, scale
        ctx.save_for_backward(a)
        out = xp.where(a > 0, a, xp.expm1(xp.minimum(a, 0.0)) * alpha)
        return out * scale if scale != 1 else out

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        grad = grad * ctx.scale if ctx.scale != 1 else grad
        return xp.where(a > 0, grad, grad * (xp.exp(xp.minimum(a, 0.0)) * ctx.alpha))


def _elu_reference(x, alpha=1.0, inplace=False, scale=1.0):
    return scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


@register(_elu_reference, lambda rng: _with_kwargs(rng, unary(away_from=0.0), {}, {"alpha": 0.5}), method=False)
def elu(input, alpha=1.0, inplace=False):
    """Exponential linear unit: ``x`` for x > 0, ``alpha (eˣ - 1)`` otherwise.
    The derivative is 1, or ``alpha eˣ`` for x ≤ 0.

    Example::

        F.elu(vizgrad.tensor([-1.0, 2.0]))    # tensor([-0.6321, 2.0000])
    """
    _check_floating("elu", input)
    if inplace:
        return _inplace(input, lambda t: Elu.apply(t, alpha=alpha, scale=1.0), "elu_")
    return Elu.apply(input, alpha=alpha, scale=1.0)


@register(lambda x, inplace=False: _elu_reference(x, _SELU_ALPHA, scale=_SELU_SCALE), unary(away_from=0.0),
          method=False)
def selu(input, inplace=False):
    """Scaled ELU: ``λ · elu(x, α)`` with λ ≈ 1.0507 and α ≈ 1.6733 (self-normalizing networks).

    Example::

        F.selu(vizgrad.tensor([-1.0, 1.0]))    # tensor([-1.1113, 1.0507])
    """
    _check_floating("selu", input)
    if inplace:
        return _inplace(input, lambda t: Elu.apply(t, alpha=_SELU_ALPHA, scale=_SELU_SCALE), "selu_")
    return Elu.apply(input, alpha=_SELU_ALPHA, scale=_SELU_SCALE)


class Gelu(Op):
    @staticmethod
    def forward(ctx, a, approximate):
        xp = ctx.xp
        ctx.approximate = approximate
        if approximate == "tanh":   # in place on fresh buffers: these are the step's largest arrays
            half = a * a
            half *= _GELU_CUBIC * _SQRT_2_OVER_PI
            half += _SQRT_2_OVER_PI
            half *= a
            half = xp.tanh(half)
            half += 1
            half *= 0.5                    # h = (1 + t)/2, the tanh form of Φ(x)
            ctx.save_for_backward(a, half)    # tanh is the costly part of both passes: kept, as Φ(x) below
            return a * half
        # Φ(x), kept for the backward: erf is the costly part of both passes
        cdf = xp.erf(a * (1 / _SQRT_2))
        cdf += 1
        cdf *= 0.5
        ctx.save_for_backward(a, cdf)
        return a * cdf

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        if ctx.approximate == "tanh":
            a, half = ctx.saved_tensors
            # d/dx [x/2 (1 + t)] = (1 + t)/2 + x/2 (1 - t²) √(2/π) (1 + 3c x²),  t = tanh(√(2/π)(x + c x³))
            #              = h · (1 + 2 x (1 - h) √(2/π) (1 + 3c x²)),  h = (1 + t)/2  (as 1 - t² = 4h(1 - h))
            if isinstance(a, Tensor):    # create_graph: t from x again, so that this gradient stays differentiable in x
                square = a * a
                t = xp.tanh((square * _GELU_CUBIC + 1) * a * _SQRT_2_OVER_PI)
                return grad * ((t + 1) * 0.5) * ((1 - t) * a * ((square * (3 * _GELU_CUBIC) + 1) * _SQRT_2_OVER_PI) + 1)
            # in place on two fresh buffers: nine passes over the step's largest arrays
            slope = a * a
            slope *= 6 * _GELU_CUBIC * _SQRT_2_OVER_PI
            slope += 2 * _SQRT_2_OVER_PI
            slope *= a                      # 2x √(2/π) (1 + 3c x²)
            slope -= slope * half           # times (1 - h)
            slope += 1
            slope *= half
            slope *= grad
            return slope
        # d/dx [x Φ(x)] = Φ(x) + x φ(x), φ(x) = e^(-x²/2) / √(2π)
        a, cdf = ctx.saved_tensors
        if isinstance(a, Tensor):
            # create_graph: Φ(x) from x again, so that this gradient stays differentiable in x
            cdf = (xp.erf(a * (1 / _SQRT_2)) + 1) * 0.5
            return grad * (cdf + a * (xp.exp(a * a * -0.5) * _INV_SQRT_2PI))
        exponent = a * a                 # in place on two fresh buffers: these are the step's largest arrays
        exponent *= -0.5
        slope = xp.exp(exponent)
        slope *= a
        slope *= _INV_SQRT_2PI
        slope += cdf
        slope *= grad
        return slope


def _gelu_reference(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x ** 3)))
    return 0.5 * x * (1 + _np_erf(x / _SQRT_2))


@register(_gelu_reference, lambda rng: _with_kwargs(rng, unary(-3.0, 3.0), {}, {"approximate": "tanh"}),
          method=False)
def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x Φ(x)``, Φ the standard normal CDF:
    ``x/2 (1 + erf(x/√2))``; with ``approximate='tanh'``,
    ``x/2 (1 + tanh(√(2/π)(x + 0.044715 x³)))``.  d/dx = Φ(x) + x φ(x).

    Example::

        F.gelu(vizgrad.tensor([-1.0, 0.0, 1.0]))   # tensor([-0.1587, 0.0000, 0.8413])
    """
    _check_floating("gelu", input)
    if approximate not in ("none", "tanh"):
        raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(input, approximate=approximate)


class Silu(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * _stable_sigmoid(ctx.xp, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        s = _smooth_sigmoid(ctx.xp, a)
        return grad * s * (a * (1 - s) + 1)          # d(xσ)/dx = σ (1 + x (1 - σ))


@register(lambda x, inplace=False: x * _np_sigmoid(x), unary(-4.0, 4.0), method=False)
def silu(input, inplace=False):
    """Sigmoid linear unit (swish) ``x σ(x)``.  d/dx = σ(x)(1 + x(1 - σ(x))).

    Example::

        F.silu(vizgrad.tensor([-1.0, 1.0]))    # tensor([-0.2689, 0.7311])
    """
    _check_floating("silu", input)
    if inplace:
        return _inplace(input, Silu.apply, "silu_")
    return Silu.apply(input)


class Softplus(Op):
    @staticmethod
    def forward(ctx, a, beta, threshold):
        xp = ctx.xp
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(a)
        scaled = a * beta if beta != 1 else a
        soft = _stable_softplus(xp, scaled)
        return xp.where(scaled > threshold, a, soft / beta if beta != 1 else soft)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        scaled = a * ctx.beta if ctx.beta != 1 else a
        return xp.where(scaled > ctx.threshold, grad, grad * _smooth_sigmoid(xp, scaled))


def _softplus_reference(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, _np_softplus(beta * x) / beta)


def _softplus_samples(rng):
    yield from unary(-4.0, 4.0)(rng)
    yield Sample((values(rng, (3, 4), -3.0, 3.0),), {"beta": 2.0, "threshold": 4.0}, name="beta, threshold")
    yield Sample((np.array([-800.0, -30.0, 30.0, 800.0]),), name="large magnitudes")


@register(_softplus_reference, _softplus_samples, method=False)
def softplus(input, beta=1.0, threshold=20.0):
    """Smooth ReLU ``(1/β) log(1 + e^(βx))``, and ``x`` itself where βx > threshold.
    d/dx = σ(βx) (1 above the threshold).

    Example::

        F.softplus(vizgrad.tensor([0.0, 100.0]))    # tensor([0.6931, 100.0000])
    """
    _check_floating("softplus", input)
    return Softplus.apply(input, beta=beta, threshold=threshold)


class Mish(Op):
    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        ctx.save_for_backward(a)
        return a * xp.tanh(_stable_softplus(xp, a))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        t = xp.tanh(_stable_softplus(xp, a))          # d/dx [x tanh(sp(x))] = t + x (1 - t²) σ(x)
        return grad * (t + a * (1 - t * t) * _smooth_sigmoid(xp, a))


@register(lambda x, inplace=False: x * np.tanh(_np_softplus(x)), unary(-4.0, 4.0), method=False)
def mish(input, inplace=False):
    """``x tanh(softplus(x))``.  d/dx = tanh(sp(x)) + x (1 - tanh²(sp(x))) σ(x).

    Example::

        F.mish(vizgrad.tensor([-1.0, 1.0]))    # tensor([-0.3034, 0.8651])
    """
    _check_floating("mish", input)
    if inplace:
        return _inplace(input, Mish.apply, "mish_")
    return Mish.apply(input)


class Hardtanh(Op):
    @staticmethod
    def forward(ctx, a, min_val, max_val):
        xp = ctx.xp
        ctx.min_val, ctx.max_val = min_val, max_val
        ctx.save_for_backward(a)
        return xp.clip(a, min_val, max_val)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        return xp.where(xp.logical_and(a > ctx.min_val, a < ctx.max_val), grad, 0.0)


def _hardtanh_samples(rng):
    for shape_ in ((), (5,), (3, 4)):
        yield Sample((_away_from(values(rng, shape_, -2.0, 2.0), -1.0, 1.0),), name=f"shape{shape_}")
    yield Sample((_away_from(values(rng, (3, 4), -3.0, 8.0), -0.5, 6.0),), {"min_val": -0.5, "max_val": 6.0},
                 name="bounds")


@register(lambda x, min_val=-1.0, max_val=1.0, inplace=False: np.clip(x, min_val, max_val), _hardtanh_samples,
          method=False)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clipped to [min_val, max_val].  The derivative is 1 strictly inside, 0 outside.
    An integer input stays integer, its bounds truncated to integers, as in PyTorch.

    Example::

        F.hardtanh(vizgrad.tensor([-3.0, 0.5, 3.0]))   # tensor([-1.0000, 0.5000, 1.0000])
    """
    _check_not_bool("hardtanh", input)
    if min_val > max_val:
        raise ArgumentError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    if not input.is_floating_point():
        min_val, max_val = as_integer_scalar("hardtanh", "min_val", min_val), as_integer_scalar("hardtanh",
                                                                                               "max_val", max_val)
    if inplace:
        return _inplace(input, lambda t: Hardtanh.apply(t, min_val=min_val, max_val=max_val), "hardtanh_")
    return Hardtanh.apply(input, min_val=min_val, max_val=max_val)


@register(lambda x, inplace=False: np.clip(x, 0.0, 6.0),
          lambda rng: iter([Sample((_away_from(values(rng, (3, 4), -2.0, 8.0), 0.0, 6.0),))]), method=False)
def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``: ``hardtanh(x, 0, 6)``.

    Example::

        F.relu6(vizgrad.tensor([-1.0, 3.0, 9.0]))   # tensor([0., 3., 6.])
    """
    _check_not_bool("relu6", input)
    return hardtanh(input, 0.0, 6.0, inplace)


# === softmax =============================================================================

class Softmax(Op):
    @staticmethod
    def forward(ctx, a, axis):
        xp = ctx.xp
        ctx.axis = axis
        out = xp.exp(a - xp.max(a, axis=axis, keepdims=True))
        out /= xp.sum(out, axis=axis, keepdims=True)     # in place: these are an attention's largest arrays
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors                       # dL/dxᵢ = sᵢ (gᵢ - Σⱼ gⱼ sⱼ)
        xp = ctx.xp
        along = xp.sum(grad * out, axis=ctx.axis, keepdims=True)
        if isinstance(out, Tensor):                    # create_graph: out of place, every step recorded
            return out * (grad - along)
        result = grad - along                          # a fresh buffer, scaled in place
        result *= out
        return result


class LogSoftmax(Op):
    @staticmethod
    def forward(ctx, a, axis):
        xp = ctx.xp
        ctx.axis = axis
        out = a - xp.max(a, axis=axis, keepdims=True)
        out -= xp.log(xp.sum(xp.exp(out), axis=axis, keepdims=True))   # in place on the shifted copy
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors                       # dL/dxᵢ = gᵢ - softmaxᵢ Σⱼ gⱼ
        xp = ctx.xp
        total = xp.sum(grad, axis=ctx.axis, keepdims=True)
        if isinstance(out, Tensor):                    # create_graph: out of place, every step recorded
            return grad - xp.exp(out) * total
        result = xp.exp(out)                           # one fresh buffer: -softmax·Σg + g in place
        result *= -total
        result += grad
        return result


def _softmax_dim(op, ndim, dim, stacklevel=4):
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X "
                      "as an argument.", UserWarning, stacklevel=stacklevel)
        return 0 if ndim in (0, 1, 3) else 1
    return dim


def _softmax(op, cls, input, dim, dtype):
    if dtype is not None and isinstance(input, Tensor):
        input = to_dtype(input, dtype)
    _check_floating(op, input)
    axis = check_dim(op, _softmax_dim(op, input.ndim, dim, 5), max(input.ndim, 1))
    if input.ndim == 0:                               # one element: softmax 1, log_softmax 0
        return shape.reshape(cls.apply(shape.reshape(input, (1,)), axis=0), ())
    return cls.apply(input, axis=axis)


def _softmax_reference(x, dim=None, dtype=None):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_reference(x, dim=None, dtype=None):
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _softmax_samples(rng):
    for shape_, dim in (((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1)):
        yield Sample((values(rng, shape_),), {"dim": dim}, name=f"{shape_} dim={dim}")
    yield Sample((values(rng, (3, 4), 999.0, 1001.0),), {"dim": 1}, name="large values")
    yield Sample((values(rng, (3, 4), -1001.0, -999.0),), {"dim": 0}, name="very negative values")
    yield Sample((non_contiguous(values(rng, (3, 4))),), {"dim": 1}, name="non-contiguous")


@register(_softmax_reference, _softmax_samples)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(x)ᵢ = e^xᵢ / Σⱼ e^xⱼ`` along ``dim``, computed with the maximum subtracted
    (no overflow).  dL/dxᵢ = sᵢ (gᵢ - Σⱼ gⱼ sⱼ).

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0]).softmax(dim=0)   # tensor([0.0900, 0.2447, 0.6652])
    """
    return _softmax("softmax", Softmax, input, dim, dtype)


@register(_log_softmax_reference, _softmax_samples)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log softmax(x)ᵢ = xᵢ - logsumexp(x)`` along ``dim``, computed stably.
    dL/dxᵢ = gᵢ - softmax(x)ᵢ Σⱼ gⱼ.

    Example::

        vizgrad.tensor([1000.0, 1000.0]).log_softmax(dim=0)   # tensor([-0.6931, -0.6931])
    """
    return _softmax("log_softmax", LogSoftmax, input, dim, dtype)


@register(lambda x, dim=None, dtype=None: _softmax_reference(-x, dim), _softmax_samples, method=False)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim``.

    Example::

        F.softmin(vizgrad.tensor([1.0, 2.0]), dim=0)   # tensor([0.7311, 0.2689])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("softmin", "input", input)
    return _softmax("softmin", Softmax, -input, dim, dtype)


# === dropout ===============================================================================

class Dropout(Op):
    @staticmethod
    def forward(ctx, a, uniform, p):
        xp = ctx.xp
        keep = xp.astype(uniform >= p, a.dtype)
        mask = keep * (1 / (1 - p)) if p < 1 else keep
        ctx.save_for_backward(mask)                    # a constant: the kept entries, scaled
        return a * mask

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        return grad * mask, None


def _dropout_samples(rng):
    yield Sample((values(rng, (3, 4)),), {"p": 0.5, "training": False}, name="eval")
    yield Sample((values(rng, (3, 4)),), {"p": 0.0}, name="p=0")
    yield Sample((values(rng, (3, 4)),), {"p": 1.0}, name="p=1")


def _dropout_reference(x, p=0.5, training=True, inplace=False):
    return x * 0.0 if training and p == 1 else x


@register(_dropout_reference, _dropout_samples, method=False)
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (in training);
    the identity otherwise. The mask comes from vizgrad's generator (``vizgrad.manual_seed``).

    dL/dx = mask / (1 - p) elementwise.

    Example::

        vizgrad.manual_seed(0)
        F.dropout(vizgrad.ones(6), p=0.5)     # about half zeros, the rest 2.0
    """
    _check_dropout("dropout", input, p, training)
    if not training or p == 0.0:
        return input
    if not input.is_floating_point():
        return _zeroed(input, inplace, "dropout_")
    from ..creation import rand
    uniform = rand(input.shape, dtype=input.dtype, device=input.device)
    if inplace:
        return _inplace(input, lambda t: Dropout.apply(t, uniform, p=p), "dropout_")
    return Dropout.apply(input, uniform, p=p)


def _channel_dropout(op, input, p, training, inplace, channel_dims):
    """Zero whole channels: one draw per (sample, channel) — the first ``channel_dims`` dims —
    shared by every position of that channel (PyTorch's feature dropout)."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if not input.is_floating_point():
        return _zeroed(input, inplace, op + "_")
    if 0.0 < p < 1.0 and input.ndim < 2 and channel_dims == 2:
        raise ShapeError(f"{op}: channel-wise dropout needs at least 2 dims (N, C, ...) in the input, got shape "
                         f"{format_shape(input.shape)}")
    from ..creation import rand
    kept = min(channel_dims, input.ndim)
    uniform = rand(tuple(input.shape[:kept]) + (1,) * (input.ndim - kept), dtype=input.dtype, device=input.device)
    if inplace:
        return _inplace(input, lambda t: Dropout.apply(t, uniform, p=p), op + "_")
    return Dropout.apply(input, uniform, p=p)


def _check_dropout(op, input, p, training):
    """Dropout takes integer and bool tensors where it keeps or zeroes everything (not
    training, p = 0 or p = 1), as in PyTorch; scaling the kept entries needs floats."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if not 0.0 <= as_number(op, "p", p) <= 1.0:
        raise ArgumentError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if training and 0.0 < p < 1.0 and not input.is_floating_point():
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype.name}: the entries kept are "
                         f"scaled by 1/(1-p), which {input.dtype.name} cannot hold, as in PyTorch; convert with "
                         ".float() first")


def _zeroed(input, inplace, name):
    """Dropout with p = 1 of an integer or bool tensor: input times a 0-d zero, as PyTorch."""
    if inplace:
        return _inplace(input, lambda t: t * t.new_zeros(()), name)
    return input * input.new_zeros(())


def _channel_dropout_samples(shape_):
    def samples(rng):
        yield Sample((values(rng, shape_),), {"p": 0.5, "training": False}, name="eval")
        yield Sample((values(rng, shape_),), {"p": 0.0}, name="p=0")
        yield Sample((values(rng, shape_),), {"p": 1.0}, name="p=1")
    return samples


@register(_dropout_reference, _channel_dropout_samples((2, 3, 4)), method=False)
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs: each channel of each sample is zeroed
    with probability ``p`` (all its L entries together), the rest scaled by 1/(1-p); the
    identity when not ``training``. Suits features that are correlated along L.

    Example::

        F.dropout1d(vizgrad.ones(1, 4, 3))     # whole rows of zeros, the others 2.0
    """
    _check_dropout("dropout1d", input, p, training)
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2D (C, L) or 3D (N, C, L) input, but received a {input.ndim}D input "
                         f"of shape {format_shape(input.shape)}")
    return _channel_dropout("dropout1d", input, p, training, inplace, 2 if input.ndim == 3 else 1)


def _warn_unusual_rank(name, input, spatial):
    """PyTorch's deprecation warning when ``name`` (dropout2d or dropout3d) gets neither a
    (C, *spatial) nor an (N, C, *spatial) input; stacklevel points at ``name``'s caller."""
    if input.ndim not in (spatial + 1, spatial + 2):
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{spatial + 1}D or {spatial + 2}D inputs).", UserWarning, stacklevel=3)


@register(_dropout_reference, _channel_dropout_samples((2, 3, 4, 2)), method=False)
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, H, W) inputs: each (H, W) feature map is zeroed with
    probability ``p``, the rest scaled by 1/(1-p); the identity when not ``training``.
    As PyTorch, a 3D input is read as (N, C, L) (with a warning) and other ranks warn.

    Example::

        F.dropout2d(vizgrad.ones(2, 4, 3, 3)).sum(dim=(2, 3))   # each entry 0 or 18
    """
    _check_dropout("dropout2d", input, p, training)
    _warn_unusual_rank("dropout2d", input, 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", UserWarning, stacklevel=2)
    return _channel_dropout("dropout2d", input, p, training, inplace, 2)


@register(_dropout_reference, _channel_dropout_samples((2, 3, 2, 2, 2)), method=False)
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs: each (D, H, W) volume is
    zeroed with probability ``p``, the rest scaled by 1/(1-p); the identity when not
    ``training``. Other ranks warn, as in PyTorch.

    Example::

        F.dropout3d(vizgrad.ones(2, 4, 2, 2, 2), p=0.25)
    """
    _check_dropout("dropout3d", input, p, training)
    _warn_unusual_rank("dropout3d", input, 3)
    if input.ndim == 0 and training and 0.0 < p < 1.0:
        raise ShapeError("dropout3d: channel-wise dropout needs at least 1 dim (C, ...) in the input, got a 0-d "
                         "tensor")
    return _channel_dropout("dropout3d", input, p, training, inplace, 2 if input.ndim == 5 else 1)


# === embeddings ============================================================================

class Embedding(Op):
    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        xp = ctx.xp
        ctx.padding_idx = padding_idx
        flat = xp.reshape(indices, (-1,))
        ctx.save_for_backward(weight, flat)
        return xp.reshape(xp.take(weight, flat, axis=0), tuple(indices.shape) + (weight.shape[1],))

    @staticmethod
    def backward(ctx, grad):
        weight, flat = ctx.saved_tensors
        xp = ctx.xp
        rows = xp.reshape(grad, (-1, weight.shape[1]))
        if ctx.padding_idx is not None:                # the padding row never learns
            rows = xp.where(xp.expand_dims(flat != ctx.padding_idx, axis=1), rows, 0.0)
        # each looked-up row receives the sum of its gradients
        return xp.index_add(xp.zeros_like(weight), 0, flat, rows), None


def _embedding_reference(indices, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                         scale_grad_by_freq=False, sparse=False):
    return weight[indices]


def _embedding_samples(rng):
    yield Sample((rng.integers(0, 5, size=(3, 4)), values(rng, (5, 3))), name="2-D indices")
    yield Sample((np.array([0, 2, 2, 4, 0]), values(rng, (5, 2))), name="repeated indices")
    yield Sample((np.asarray(3), values(rng, (5, 2))), name="0-d index")


@register(_embedding_reference, _embedding_samples, method=False)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` looked up by the integer ``input``: ``out[..., :] = weight[input[...], :]``.

    The gradient of each row of ``weight`` is the sum of the gradients of the outputs
    that used it; the ``padding_idx`` row gets none. With ``max_norm``, looked-up rows whose
    ``norm_type``-norm exceeds it are rescaled in place first, as in PyTorch.

    Example::

        w = vizgrad.randn(10, 3)
        F.embedding(vizgrad.tensor([[1, 2], [4, 9]]), w).shape    # (2, 2, 3)
    """
    if not isinstance(input, Tensor) or input.is_floating_point() or input.dtype is dtypes.bool_:
        raise DTypeError("embedding: input must be a tensor of integer indices, got "
                         + (input.dtype.name if isinstance(input, Tensor) else type(input).__name__))
    if not isinstance(weight, Tensor):
        raise not_a_tensor("embedding", "weight", weight)
    if weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                         f"{format_shape(weight.shape)}")
    count = weight.shape[0]
    if padding_idx is not None:
        if not -count <= padding_idx < count:
            raise ArgumentError(f"embedding: padding_idx {padding_idx} must be within num_embeddings ({count})")
        padding_idx = padding_idx % count
    if input.numel():
        with observers.quiet_ops:     # the index check is no part of the user's graph
            low, high = reduce.amin(input).item(), reduce.amax(input).item()
        if low < 0 or high >= count:
            raise IndexingError(f"embedding: index out of range: indices must be in [0, {count}), got values from "
                                f"{low} to {high}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported by vizgrad")
    if max_norm is not None:
        _renormalize_rows(weight, input, max_norm, norm_type)
    return Embedding.apply(weight, input, padding_idx=padding_idx)


def _renormalize_rows(weight, indices, max_norm, norm_type):
    """Scale the looked-up rows whose norm exceeds ``max_norm`` down to it, in place (no gradient)."""
    from ..autograd.grad_mode import no_grad
    from . import index
    with no_grad():
        flat = shape.reshape(indices, (-1,))
        rows = index.index_select(weight, 0, flat)
        norms = reduce.norm(rows, p=norm_type, dim=1, keepdim=True)
        scale = (norms > max_norm).to(weight.dtype) * (max_norm / (norms + 1e-7) - 1) + 1
        weight[flat] = rows * scale


def _one_hot_reference(x, num_classes=-1):
    classes = int(x.max()) + 1 if num_classes == -1 else num_classes
    return (np.arange(classes) == x[..., None]).astype(np.int64)


def _one_hot_samples(rng):
    yield Sample((rng.integers(0, 4, size=(5,)),), {"num_classes": 4}, name="vector")
    yield Sample((np.array([[0, 2], [1, 2]]),), name="inferred classes")
    yield Sample((np.asarray(1),), {"num_classes": 3}, name="0-d")


@register(_one_hot_reference, _one_hot_samples, differentiable=False, method=False)
def one_hot(tensor, num_classes=-1):
    """int64 one-hot codes: ``out[..., c] = 1`` where ``tensor[...] == c``; ``num_classes=-1``
    takes the largest value plus one. Not differentiable.

    Example::

        F.one_hot(vizgrad.tensor([0, 2]), 3)    # tensor([[1, 0, 0], [0, 0, 1]])
    """
    if not isinstance(tensor, Tensor) or tensor.dtype is not dtypes.int64:
        got = f"dtype {tensor.dtype.name}" if isinstance(tensor, Tensor) else f"a {type(tensor).__name__}"
        raise DTypeError(f"one_hot: is only applicable to index tensors of dtype int64, got {got}")
    num_classes = as_int("one_hot", "num_classes", num_classes)
    if num_classes < -1:
        raise ArgumentError(f"one_hot: num_classes must be -1 (inferred) or non-negative, got {num_classes}")
    low = reduce.amin(tensor).item() if tensor.numel() else 0
    high = reduce.amax(tensor).item() if tensor.numel() else -1
    if low < 0:
        raise ArgumentError(f"one_hot: class values must be non-negative, got {low}")
    if num_classes == -1:
        num_classes = high + 1
    elif high >= num_classes:
        raise ArgumentError(f"one_hot: class values must be smaller than num_classes ({num_classes}), got {high}")
    from ..creation import arange
    classes = arange(num_classes, dtype=tensor.dtype, device=tensor.device)
    return to_dtype(shape.unsqueeze(tensor, -1) == classes, dtypes.int64)


# --- sample helpers ---------------------------------------------------------------------

def _away_from(array, *points):
    """``array`` with every value within 0.1 of one of ``points`` moved 0.2 away from it (kinks)."""
    for point in points:
        side = np.where(array >= point, 1.0, -1.0)
        array = np.where(np.abs(array - point) < 0.1, array + 0.2 * side, array)
    return np.asarray(array, dtype=np.float64)


def _with_kwargs(rng, base, *extra):
    """``base``'s samples, plus one (3, 4) sample per dict of keyword arguments in ``extra``."""
    yield from base(rng)
    for kwargs in extra:
        if kwargs:
            name = " ".join(f"{key}={value}" for key, value in kwargs.items())
            yield Sample((values(rng, (3, 4), away_from=0.0),), kwargs, name=name)
