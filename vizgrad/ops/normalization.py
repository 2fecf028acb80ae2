"""Normalization: layer_norm, batch_norm, group_norm, and normalize (unit p-norm).

layer, batch (in training) and group norm are one op, :class:`Normalize`:
standardize over some axes, then scale and shift per feature,

    x̂ = (x - μ) / √(σ² + ε),   y = γ x̂ + β,

with μ, σ² the mean and biased variance over the normalized axes. Its backward is
the closed form (n elements per statistic, g = γ·dL/dy)

    dL/dx = (g - mean(g) - x̂ · mean(g x̂)) / √(σ² + ε),   dL/dγ = Σ dL/dy · x̂,   dL/dβ = Σ dL/dy,

computed from the saved input (not from a saved x̂), so second derivatives are right.
"""

import math

import numpy as np

from ..autograd import observers
from ..autograd.function import Op
from ..autograd.grad_mode import no_grad
from ..errors import (ArgumentError, ArgumentTypeError, DTypeError, ShapeError, as_number, check_sizes,
                      format_shape, not_a_tensor)
from ..dtypes import finfo
from . import reduce
from .unary import rsqrt
from .registry import Sample, register
from .samples import values


def _tensor_type():
    from ..tensor import Tensor
    return Tensor


def _standardize(xp, x, axes, eps):
    """(x̂, μ, 1/√(σ² + ε)) over ``axes`` (statistics kept as size-1 dims)."""
    mean = xp.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    inv_std = 1 / xp.sqrt(xp.mean(centred * centred, axis=axes, keepdims=True) + eps)
    if isinstance(x, _tensor_type()):    # create_graph: out of place, every step recorded
        return centred * inv_std, mean, inv_std
    centred *= inv_std                   # the fresh centred copy becomes x̂
    return centred, mean, inv_std


class Normalize(Op):
    """Standardize over ``axes`` of ``x`` viewed as ``stats_shape`` (None: as is), then
    ``x̂ · weight + bias``: the parameters have ``param_shape`` and are viewed as
    ``param_view`` against x; their gradients are summed over x's dims ``param_axes``."""

    @staticmethod
    def forward(ctx, x, weight, bias, axes, eps, stats_shape, param_shape, param_view, param_axes):
        xp = ctx.xp
        ctx.axes, ctx.eps, ctx.stats_shape = axes, eps, stats_shape
        ctx.param_shape, ctx.param_view, ctx.param_axes = param_shape, param_view, param_axes
        dims = len(axes)
        fused = None
        trailing = axes == tuple(range(x.ndim - dims, x.ndim)) and tuple(param_view) == tuple(x.shape[x.ndim - dims:])
        if ctx.backend.fused_layer_norm is not None and stats_shape is None and trailing:
            # layer norm (the trailing dims, parameters of their shape): one kernel where the backend has one
            fused = ctx.backend.fused_layer_norm(x, weight, bias, eps, dims)
        ctx.fused = fused is not None
        ctx.rows = trailing and stats_shape is None    # layer norm: a row of x per statistic
        if ctx.fused:
            out, mean, inv_std = fused
            ctx.save_for_backward(x, weight, mean, inv_std)
            return out
        grouped = x if stats_shape is None else xp.reshape(x, stats_shape)
        out, mean, inv_std = _standardize(xp, grouped, axes, eps)
        ctx.save_for_backward(x, weight, mean, inv_std)    # the statistics are small: x̂ is rebuilt from them
        if stats_shape is not None:
            out = xp.reshape(out, x.shape)
        # into the fresh result where the dtypes agree (float32 parameters of a float16 input promote)
        if weight is not None:
            weight = xp.reshape(weight, param_view)
            if weight.dtype == out.dtype:
                out *= weight
            else:
                out = out * weight
        if bias is not None:
            bias = xp.reshape(bias, param_view)
            if bias.dtype == out.dtype:
                out += bias
            else:
                out = out + bias
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, inv_std = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_w, needs_b = ctx.needs_input_grad
        axes, stats_shape = ctx.axes, ctx.stats_shape
        if ctx.rows and not ctx.fused and _fits_rows(xp, x, grad, weight, len(axes)):
            return _layer_norm_backward(ctx, xp, grad, x, weight, mean, inv_std)
        grouped = x if stats_shape is None else xp.reshape(x, stats_shape)
        grad_x = grad_w = grad_b = None
        if isinstance(x, _tensor_type()):    # create_graph: the statistics as functions of x
            normalized, _, inv_std = _standardize(xp, grouped, axes, ctx.eps)
        elif ctx.fused:
            fused_grad_x, normalized = ctx.backend.fused_layer_norm_backward(grad, x, weight, mean, inv_std, len(axes))
            grad_x = fused_grad_x if needs_x else None
        else:
            normalized = grouped - mean
            normalized *= inv_std
        if needs_x and grad_x is None:
            g = grad if weight is None else grad * xp.reshape(weight, ctx.param_view)
            if stats_shape is not None:
                g = xp.reshape(g, stats_shape)
            along = xp.mean(g * normalized, axis=axes, keepdims=True)
            if isinstance(x, _tensor_type()):    # create_graph: out of place, every step recorded
                grad_x = (g - xp.mean(g, axis=axes, keepdims=True) - normalized * along) * inv_std
            else:                                 # arrays: in place (fresh large arrays cost more than arithmetic)
                grad_x = g - xp.mean(g, axis=axes, keepdims=True)
                grad_x -= normalized * along
                grad_x *= inv_std
            if stats_shape is not None:
                grad_x = xp.reshape(grad_x, x.shape)
        if needs_w:
            if stats_shape is not None:
                normalized = xp.reshape(normalized, x.shape)
            grad_w = xp.reshape(_sum_over(xp, grad * normalized, ctx.param_axes), ctx.param_shape)
        if needs_b:
            grad_b = xp.reshape(_sum_over(xp, grad, ctx.param_axes), ctx.param_shape)
        return grad_x, grad_w, grad_b


def _fits_rows(xp, x, grad, weight, dims):
    """Whether :func:`_layer_norm_backward` applies: arrays (no create_graph) of one float32 or
    float64 dtype, with rows and features."""
    if isinstance(x, _tensor_type()) or not (x.dtype == xp.float32 or x.dtype == xp.float64):
        return False
    if grad.dtype != x.dtype or (weight is not None and weight.dtype != x.dtype):
        return False
    return math.prod(x.shape) > 0


def _layer_norm_backward(ctx, xp, grad, x, weight, mean, inv_std):
    """Layer norm's backward over x as (rows, n) with s = 1/√(σ² + ε) per row, c = x - μ:

        dL/dx = (g - mean(g) - x̂ · mean(g x̂)) s = -(c · s² Σ(G c w)/n + Σ(G w)/n - G w) · s,
        dL/dγ = Σ_rows G x̂ = sᵀ (G c),   dL/dβ = Σ_rows G,   with g = G w.

    The sums weighted by w or s are matrix-vector products, and dL/dx is built in place on c:
    eleven passes over the rows where the general backward takes thirteen, three fresh
    arrays where it takes six."""
    needs_x, needs_w, needs_b = ctx.needs_input_grad
    n = math.prod(x.shape[x.ndim - len(ctx.axes):])
    shape2 = (math.prod(x.shape) // n, n)
    centred = xp.reshape(x - mean, shape2)          # fresh: worked on in place below
    scale = xp.reshape(inv_std, (shape2[0], 1))
    rows = xp.reshape(grad, shape2)
    w = None if weight is None else xp.reshape(weight, (n,))
    grad_x = grad_w = grad_b = None
    product = rows * centred if needs_x or needs_w else None        # G c
    if needs_w:
        grad_w = xp.reshape(xp.matmul(xp.reshape(inv_std, (shape2[0],)), product), ctx.param_shape)
    if needs_b:
        grad_b = xp.reshape(xp.sum(rows, axis=0), ctx.param_shape)
    if needs_x:
        if w is None:
            along, mean_g, g = xp.sum(product, axis=1, keepdims=True), xp.sum(rows, axis=1, keepdims=True), rows
        else:
            along = xp.reshape(xp.matmul(product, w), (shape2[0], 1))  # Σ G c w per row
            mean_g = xp.reshape(xp.matmul(rows, w), (shape2[0], 1))    # Σ G w per row
            g = rows * w
        centred *= along * (scale * scale) / n
        centred += mean_g / n
        centred -= g
        centred *= -scale
        grad_x = xp.reshape(centred, x.shape)
    return grad_x, grad_w, grad_b


class NormalizeWithStatistics(Op):
    """``(x - m)·s·γ + β`` with s = 1/√(v + ε), for given statistics m and v (batch_norm in
    evaluation; PyTorch's node is NativeBatchNormBackward0 there too). With x̂ = (x - m)·s:
    d/dx = g γ s, d/dγ = Σ g x̂, d/dβ = Σ g, d/dm = -Σ g γ s, d/dv = -½ Σ g γ x̂ s²
    (sums over every dim but the channel's)."""

    @staticmethod
    def forward(ctx, x, weight, bias, mean, var, eps, view, param_axes):
        xp = ctx.xp
        ctx.eps, ctx.view, ctx.param_axes = eps, view, param_axes
        ctx.save_for_backward(x, weight, mean, var)
        out = (x - xp.reshape(mean, view)) * xp.reshape((var + eps) ** -0.5, view)
        if weight is not None:
            out = out * xp.reshape(weight, view)
        if bias is not None:
            out = out + xp.reshape(bias, view)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, var = ctx.saved_tensors
        xp = ctx.xp
        needs_x, needs_w, needs_b, needs_m, needs_v = ctx.needs_input_grad
        view, axes = ctx.view, ctx.param_axes
        inv_std = xp.reshape((var + ctx.eps) ** -0.5, view)
        normalized = (x - xp.reshape(mean, view)) * inv_std
        scaled = grad if weight is None else grad * xp.reshape(weight, view)      # g γ
        channel = (x.shape[1],)
        grad_x = scaled * inv_std if needs_x else None
        grad_w = xp.reshape(_sum_over(xp, grad * normalized, axes), channel) if needs_w else None
        grad_b = xp.reshape(_sum_over(xp, grad, axes), channel) if needs_b else None
        grad_m = -xp.reshape(_sum_over(xp, scaled * inv_std, axes), channel) if needs_m else None
        grad_v = (xp.reshape(_sum_over(xp, scaled * normalized * inv_std * inv_std, axes), channel) * -0.5
                  if needs_v else None)
        return grad_x, grad_w, grad_b, grad_m, grad_v


def _sum_over(xp, value, axes):
    """Σ over ``axes``; none at all when ``axes`` is empty (vizgrad's tensor namespace reads
    ``axis=()`` as every axis)."""
    return xp.sum(value, axis=axes) if axes else value


def _normalize(x, weight, bias, axes, eps, param_shape, param_view, stats_shape=None):
    """Apply :class:`Normalize`; the parameter gradients are summed over the dims where
    ``param_view`` (aligned to the right of x) is 1 or absent."""
    lead = x.ndim - len(param_view)
    param_axes = tuple(d for d in range(x.ndim) if d < lead or param_view[d - lead] == 1)
    return Normalize.apply(x, weight, bias, axes=axes, eps=eps, stats_shape=stats_shape,
                           param_shape=tuple(param_shape), param_view=tuple(param_view), param_axes=param_axes)


def _check_parameter(op, name, tensor, expected, input):
    if tensor is None:
        return
    if not isinstance(tensor, _tensor_type()):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor or None, got {type(tensor).__name__}")
    if tuple(tensor.shape) != tuple(expected):
        raise ShapeError(f"{op}: {name} has shape {format_shape(tensor.shape)} but must have shape "
                         f"{format_shape(expected)}")
    # PyTorch's "mixed dtype" rule: one dtype, except float32 parameters of a float16 input
    if tensor.dtype is not input.dtype and not (input.dtype.name == "float16" and tensor.dtype.name == "float32"):
        raise DTypeError(f"{op}: {name} is {tensor.dtype.name} but input is {input.dtype.name}; all inputs must "
                         "share one dtype (convert the input, or the module with .to())")


def _check_input(op, input):
    if not isinstance(input, _tensor_type()):
        raise not_a_tensor(op, "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype.name}")


# --- layer_norm --------------------------------------------------------------------------

def _layer_norm_reference(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(tuple(np.atleast_1d(normalized_shape))), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def _layer_norm_samples(rng):
    yield Sample((values(rng, (3, 4)), (4,), values(rng, (4,)), values(rng, (4,))), name="affine")
    yield Sample((values(rng, (2, 3, 4)), (3, 4), values(rng, (3, 4))), {"eps": 1e-3}, name="two dims, no bias")
    yield Sample((values(rng, (2, 5)), 5), name="no affine")
    yield Sample((values(rng, (4,)), (4,), None, values(rng, (4,))), name="bias only")


@register(_layer_norm_reference, _layer_norm_samples, method=False)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims, then ``γ x̂ + β``:
    x̂ = (x - μ)/√(σ² + ε) with μ, σ² (biased) per sample.

    Example::

        x = vizgrad.randn(8, 16)
        F.layer_norm(x, (16,)).mean(dim=-1)    # ~0 for every row
    """
    _check_input("layer_norm", input)
    if not isinstance(normalized_shape, (tuple, list)) and not hasattr(normalized_shape, "__iter__"):
        normalized_shape = (normalized_shape,)
    normalized_shape = check_sizes("layer_norm", tuple(normalized_shape), "normalized_shape")
    k = len(normalized_shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise ShapeError(f"layer_norm: normalized_shape {normalized_shape} must match the last dims of the "
                         f"input, whose shape is {format_shape(input.shape)}")
    _check_parameter("layer_norm", "weight", weight, normalized_shape, input)
    _check_parameter("layer_norm", "bias", bias, normalized_shape, input)
    axes = tuple(range(input.ndim - k, input.ndim))
    return _normalize(input, weight, bias, axes, eps, normalized_shape, normalized_shape)


# --- rms_norm ----------------------------------------------------------------------------

def _rms_norm_reference(x, normalized_shape, weight=None, eps=None):
    axes = tuple(range(x.ndim - len(tuple(np.atleast_1d(normalized_shape))), x.ndim))
    eps = np.finfo(x.dtype).eps if eps is None else eps
    out = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return out if weight is None else out * weight


def _rms_norm_samples(rng):
    yield Sample((values(rng, (4, 5)), (5,)), name="rows")
    yield Sample((values(rng, (2, 3, 4)), (3, 4), values(rng, (3, 4))), {"eps": 1e-3}, name="two dims, weight, eps")
    yield Sample((values(rng, (6,)), 6, values(rng, (6,))), name="a vector, an int shape")


@register(_rms_norm_reference, _rms_norm_samples, method=False)
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last dims ``normalized_shape``, then an
    elementwise scale: ``y = x / √(mean(x²) + ε) · γ`` (no centring, no shift; Zhang and
    Sennrich, 2019). ``eps=None`` is the input dtype's machine epsilon, as in PyTorch.

    Example::

        F.rms_norm(vizgrad.tensor([[3.0, 4.0]]), (2,))    # tensor([[0.8485, 1.1314]])
    """
    _check_input("rms_norm", input)
    if not isinstance(normalized_shape, (tuple, list)) and not hasattr(normalized_shape, "__iter__"):
        normalized_shape = (normalized_shape,)
    normalized_shape = check_sizes("rms_norm", tuple(normalized_shape), "normalized_shape")
    k = len(normalized_shape)
    if k == 0:
        raise ShapeError("rms_norm: normalized_shape must hold at least one size, got ()")
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise ShapeError(f"rms_norm: given normalized_shape={list(normalized_shape)}, expected an input of shape "
                         f"[*, {', '.join(map(str, normalized_shape))}], but got an input of shape "
                         f"{format_shape(input.shape)}")
    if weight is not None:
        if not isinstance(weight, _tensor_type()):
            raise ArgumentTypeError(f"rms_norm: weight must be a Tensor or None, got {type(weight).__name__}")
        if tuple(weight.shape) != normalized_shape:
            raise ShapeError(f"rms_norm: weight has shape {format_shape(weight.shape)} but must have "
                             f"normalized_shape {format_shape(normalized_shape)}")
        if weight.dtype is not input.dtype:        # as PyTorch: the result has the input's dtype
            weight = weight.to(input.dtype)
    eps = finfo(input.dtype).eps if eps is None else as_number("rms_norm", "eps", eps)
    axes = tuple(range(input.ndim - k, input.ndim))
    out = input * rsqrt(reduce.mean(input * input, dim=axes, keepdim=True) + eps)
    return out if weight is None else out * weight


# --- batch_norm ---------------------------------------------------------------------------

def _batch_norm_reference(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                          eps=1e-5):
    view = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        axes = (0,) + tuple(range(2, x.ndim))
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = running_mean.reshape(view), running_var.reshape(view)
    out = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(view)
    return out if bias is None else out + bias.reshape(view)


def _batch_norm_samples(rng):
    yield Sample((values(rng, (4, 3)), None, None, values(rng, (3,)), values(rng, (3,)), True), name="train (N, C)")
    yield Sample((values(rng, (2, 3, 4)), None, None, values(rng, (3,)), None), {"training": True},
                 name="train (N, C, L)")
    yield Sample((values(rng, (2, 3, 2, 2)), None, None), {"training": True, "eps": 1e-3}, name="train, no affine")
    yield Sample((values(rng, (4, 3)), values(rng, (3,)), values(rng, (3,), 0.5, 2.0), values(rng, (3,)),
                  values(rng, (3,))), name="eval")
    yield Sample((values(rng, (2, 3, 2, 2)), values(rng, (3,)), values(rng, (3,), 0.5, 2.0)), name="eval, no affine")


@register(_batch_norm_reference, _batch_norm_samples, method=False)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) of an (N, C, ...) input, then ``γ x̂ + β`` per channel.

    In training the batch statistics are used (mean and biased variance over N and the
    spatial dims), and ``running_mean``/``running_var`` (if given) are updated in place:
    r ← (1 - momentum) r + momentum · s, with the unbiased variance (as PyTorch). In
    evaluation the running statistics are used.

    Example::

        x = vizgrad.randn(16, 3)
        mean, var = vizgrad.zeros(3), vizgrad.ones(3)
        F.batch_norm(x, mean, var, training=True)   # mean, var moved 10% towards the batch's
    """
    _check_input("batch_norm", input)
    if input.ndim < 2:
        raise ShapeError(f"batch_norm: expected an input of shape (N, C, ...), got {format_shape(input.shape)}")
    channels, view = _channel_parameters("batch_norm", input, running_mean, running_var, weight, bias)
    axes = (0,) + tuple(range(2, input.ndim))
    if not training:
        return _with_running_statistics("batch_norm", "training=False", input, running_mean, running_var, weight,
                                        bias, eps, view)
    count = input.numel() // channels if channels else 0
    if count <= 1:
        raise ArgumentError(f"batch_norm: expected more than 1 value per channel when "
                            f"training, got input size {format_shape(input.shape)}")
    batch = input.detach()
    _update_running_statistics(running_mean, running_var, momentum, lambda: reduce.mean(batch, dim=axes),
                               lambda: reduce.var(batch, dim=axes, correction=1))
    return _normalize(input, weight, bias, axes, eps, (channels,), view)


def _channel_parameters(op, input, running_mean, running_var, weight, bias):
    """Check the per-channel tensors of an (N, C, ...) input; its channel count and the view
    that lines a (C,) tensor up with it."""
    channels = input.shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                         ("bias", bias)):
        _check_parameter(op, name, tensor, (channels,), input)
    return channels, (channels,) + (1,) * (input.ndim - 2)


def _with_running_statistics(op, when, input, running_mean, running_var, weight, bias, eps, view):
    """Normalize each channel with ``running_mean`` and ``running_var`` (evaluation)."""
    if running_mean is None or running_var is None:
        raise ArgumentError(f"{op}: running_mean and running_var are needed when {when}")
    lead_axes = tuple(d for d in range(input.ndim) if d != 1)
    return NormalizeWithStatistics.apply(input, weight, bias, running_mean, running_var, eps=eps, view=view,
                                         param_axes=lead_axes)


def _update_running_statistics(running_mean, running_var, momentum, mean, variance):
    """r ← (1 - momentum) r + momentum · s for the buffers given, s from ``mean()`` and
    ``variance()``: buffer updates, no part of the differentiable graph."""
    if running_mean is None and running_var is None:
        return
    with no_grad(), observers.quiet_ops:
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean() * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(variance() * momentum)


# --- group_norm --------------------------------------------------------------------------

def _group_norm_reference(x, num_groups, weight=None, bias=None, eps=1e-5):
    grouped = x.reshape(x.shape[0], num_groups, -1)
    out = ((grouped - grouped.mean(axis=2, keepdims=True)) / np.sqrt(grouped.var(axis=2, keepdims=True) + eps))
    out = out.reshape(x.shape)
    view = (1, -1) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(view)
    return out if bias is None else out + bias.reshape(view)


def _group_norm_samples(rng):
    yield Sample((values(rng, (2, 4, 3)), 2, values(rng, (4,)), values(rng, (4,))), name="(N, C, L)")
    yield Sample((values(rng, (2, 6, 2, 2)), 3, values(rng, (6,))), {"eps": 1e-3}, name="(N, C, H, W)")
    yield Sample((values(rng, (3, 4)), 1), name="one group, no affine")


@register(_group_norm_reference, _group_norm_samples, method=False)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the C channels of an (N, C, ...) input into ``num_groups`` groups, normalize
    each group of each sample, then ``γ x̂ + β`` per channel.

    Example::

        F.group_norm(vizgrad.randn(2, 6, 5, 5), 3).shape    # (2, 6, 5, 5)
    """
    _check_input("group_norm", input)
    if input.ndim < 2:
        raise ShapeError(f"group_norm: expected an input of shape (N, C, ...), got {format_shape(input.shape)}")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise ArgumentError(f"group_norm: the number of channels ({channels}) must be divisible by num_groups "
                            f"({num_groups})")
    _check_parameter("group_norm", "weight", weight, (channels,), input)
    _check_parameter("group_norm", "bias", bias, (channels,), input)
    per_group = (channels // num_groups) * math.prod(input.shape[2:])
    stats_shape = (input.shape[0], num_groups, per_group)
    view = (channels,) + (1,) * (input.ndim - 2)
    return _normalize(input, weight, bias, (2,), eps, (channels,), view, stats_shape)


# --- instance_norm -----------------------------------------------------------------------

def _instance_norm_reference(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                             momentum=0.1, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    out = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    view = (1, -1) + (1,) * (x.ndim - 2)
    out = out if weight is None else out * weight.reshape(view)
    return out if bias is None else out + bias.reshape(view)


def _instance_norm_samples(rng):
    yield Sample((values(rng, (2, 3, 5)),), {"weight": values(rng, (3,)), "bias": values(rng, (3,))}, name="1-d, affine")
    yield Sample((values(rng, (2, 3, 4, 4)),), name="2-d")


@register(_instance_norm_reference, _instance_norm_samples, method=False)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample of an (N, C, ...) input over its spatial dims
    (mean and biased variance of that one instance), then ``γ x̂ + β`` per channel.

    ``running_mean``/``running_var``, when given, move towards the batch's average instance
    statistics (unbiased variance): r ← (1 - momentum) r + momentum · s, as PyTorch; with
    ``use_input_stats=False`` they normalize instead (evaluation with tracked statistics).

    Example::

        F.instance_norm(vizgrad.randn(2, 3, 8, 8)).mean(dim=(2, 3))   # ~0 for every sample and channel
    """
    _check_input("instance_norm", input)
    if input.ndim < 3:
        raise ShapeError(f"instance_norm: expected an input of shape (N, C, ...) with at least one spatial dim, "
                         f"got {format_shape(input.shape)}")
    channels, view = _channel_parameters("instance_norm", input, running_mean, running_var, weight, bias)
    if not use_input_stats:
        return _with_running_statistics("instance_norm", "use_input_stats=False", input, running_mean, running_var,
                                        weight, bias, eps, view)
    spatial = math.prod(input.shape[2:])
    if spatial <= 1:
        raise ArgumentError(f"instance_norm: expected more than 1 spatial element per channel, got input of "
                            f"shape {format_shape(input.shape)}")
    instances, axes = input.detach(), tuple(range(2, input.ndim))
    _update_running_statistics(running_mean, running_var, momentum,
                               lambda: reduce.mean(reduce.mean(instances, dim=axes), dim=0),
                               lambda: reduce.mean(reduce.var(instances, dim=axes, correction=1), dim=0))
    stats_shape = (input.shape[0], channels, spatial)
    return _normalize(input, weight, bias, (2,), eps, (channels,), view, stats_shape)


# --- normalize --------------------------------------------------------------------------

def _normalize_reference(x, p=2.0, dim=1, eps=1e-12):
    norm = np.sum(np.abs(x) ** p, axis=dim, keepdims=True) ** (1 / p)
    return x / np.maximum(norm, eps)


def _normalize_samples(rng):
    yield Sample((values(rng, (3, 4)),), name="rows")
    yield Sample((values(rng, (3, 4)),), {"dim": 0, "p": 1.0}, name="columns, p=1")
    yield Sample((values(rng, (5,)),), {"dim": -1}, name="vector")


@register(_normalize_reference, _normalize_samples, method=False)
def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``x / max(‖x‖ₚ, eps)`` along ``dim``: unit-norm vectors.

    Example::

        F.normalize(vizgrad.tensor([[3.0, 4.0]]))    # tensor([[0.6000, 0.8000]])
    """
    _check_input("normalize", input)
    norm = reduce.norm(input, p=p, dim=dim, keepdim=True)
    return input / norm.clamp(min=eps)
