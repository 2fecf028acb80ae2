"""Cumulative reductions along one dim: cumsum, cumprod, cummax, cummin and logcumsumexp.

Each keeps the input's shape; backwards are scans too (a reversed cumsum for cumsum, a linear
recurrence for cumprod, a scatter to the running arg-extremum for cummax and cummin).
"""

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import ArgumentTypeError, DTypeError, DTypeNotImplementedError, check_dim, not_a_tensor
from ..tensor import Tensor
from . import binary
from .index import TakenAlong
from .reduce import _cast, _in_dtype, _is_int, numpy_names
from .registry import Sample, register
from .samples import non_contiguous, values


# --- cumsum --------------------------------------------------------------------------

class Cumsum(Op):
    @staticmethod
    def forward(ctx, a, axis):
        ctx.axis = axis
        if axis is None:                     # a 0-d tensor: its own running sum
            return ctx.xp.asarray(a, copy=True)
        return ctx.xp.cumulative_sum(a, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        # out_j = Σ_{i<=j} x_i, so d/dx_i collects the gradients of every j >= i:
        # a cumulative sum taken from the far end
        if ctx.axis is None:
            return grad
        return _reversed_cumsum(ctx.xp, grad, ctx.axis)


def _reversed_cumsum(xp, value, axis):
    """The running sum along ``axis`` taken from the far end: Σ_{j≥i} valueⱼ."""
    return xp.flip(xp.cumulative_sum(xp.flip(value, axis=axis), axis=axis), axis=axis)


def _cumulative_axis(op, input, dim):
    """The axis a cumulative op (cumsum, cumprod, cummax, ...) runs along; errors name ``op``."""
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if not _is_int(dim):
        raise ArgumentTypeError(f"{op}: dim must be an int, got {dim!r}")
    return check_dim(op, int(dim), input.ndim)


def _cumsum_reference(x, dim, dtype=None):
    return np.cumsum(x, axis=dim) if np.ndim(x) else np.array(x)


def _cumsum_samples(rng):
    for dim in (0, -1):
        yield Sample((values(rng, ()), dim), name=f"0-d dim={dim}")
    for dim in (0, 1, -1):
        yield Sample((values(rng, (3, 4, 2)), dim), name=f"dim={dim}")
    yield Sample((non_contiguous(values(rng, (4, 3))),), {"dim": 1}, name="non-contiguous")


def _refuse_bool_result(op, dtype):
    if dtype is dtypes.bool_:
        raise DTypeNotImplementedError(f"{op}: a running {'sum' if op == 'cumsum' else 'product'} in bool is not "
                                       "implemented (PyTorch has no kernel for it); ask for dtype=vizgrad.int64")


@register(_cumsum_reference, _cumsum_samples)
@numpy_names
def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``: outⱼ = Σ_{i≤j} xᵢ.

    The gradient is the reversed running sum of the output's gradient: d/dxᵢ = Σ_{j≥i} gⱼ.

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0]).cumsum(dim=0)   # tensor([1., 3., 6.])
    """
    axis = _cumulative_axis("cumsum", input, dim)
    _refuse_bool_result("cumsum", dtype)
    return _in_dtype(Cumsum.apply(_cast(input, dtype), axis=axis if input.ndim else None), dtype)


# --- cumprod, cummax, cummin, logcumsumexp ----------------------------------------------------


class Cumprod(Op):
    """Running product: outⱼ = Π_{i≤j} xᵢ. Its gradient d/dxᵢ = Σ_{j≥i} gⱼ Π_{k≤j, k≠i} xₖ is
    Lᵢ · Sᵢ with Lᵢ = Π_{k<i} xₖ (the exclusive running product) and Sᵢ = Σ_{j≥i} gⱼ Π_{i<k≤j} xₖ,
    which obeys Sᵢ = gᵢ + xᵢ₊₁ Sᵢ₊₁. Both are linear recurrences, solved by a doubling scan of
    products and sums only: no division, so the gradient and every derivative of it are exact
    where inputs are zero (one zero or several)."""

    @staticmethod
    def forward(ctx, a, axis):
        ctx.axis = axis
        xp = ctx.xp
        if axis is None:                     # a 0-d tensor: its own running product
            return xp.asarray(a, copy=True)
        ctx.save_for_backward(a)
        return xp.cumulative_prod(a, axis=axis)

    @staticmethod
    def backward(ctx, grad):
        axis = ctx.axis
        if axis is None:
            return grad
        a, = ctx.saved_tensors
        xp = ctx.xp
        x = xp.moveaxis(a, axis, -1)
        g = xp.moveaxis(grad, axis, -1)
        if x.shape[-1] == 0:
            return grad
        one = xp.ones_like(x[..., :1])
        zero = xp.zeros_like(x[..., :1])
        # Lᵢ = x_{i-1} L_{i-1}, L₀ = 1: the scan from the start with factors x shifted right
        left = _linear_scan(xp, xp.concat([one, x[..., :-1]], axis=-1),
                            xp.concat([one, xp.zeros_like(x[..., 1:])], axis=-1), reverse=False)
        # Sᵢ = gᵢ + x_{i+1} S_{i+1}: the scan from the end with factors x shifted left
        tail = _linear_scan(xp, xp.concat([x[..., 1:], zero], axis=-1), g, reverse=True)
        return xp.moveaxis(left * tail, -1, axis)


def _linear_scan(xp, factors, terms, reverse):
    """yᵢ = termsᵢ + factorsᵢ · y_{i∓1} along the last axis (y of the place before the first is
    0), from the start or (``reverse``) from the end: a doubling scan, log₂ n passes of products
    and sums, so it is differentiable to any order."""
    n = terms.shape[-1]
    step = 1
    while step < n:
        if reverse:      # y = B + A · y[i + step]
            new_terms = xp.concat([terms[..., :-step] + factors[..., :-step] * terms[..., step:],
                                   terms[..., n - step:]], axis=-1)
            factors = xp.concat([factors[..., :-step] * factors[..., step:], factors[..., n - step:]], axis=-1)
        else:            # y = B + A · y[i - step]
            new_terms = xp.concat([terms[..., :step], terms[..., step:] + factors[..., step:] * terms[..., :-step]],
                                  axis=-1)
            factors = xp.concat([factors[..., :step], factors[..., step:] * factors[..., :-step]], axis=-1)
        terms = new_terms
        step *= 2
    return terms


def _cumulative_samples(rng):
    for dim in (0, -1):
        yield Sample((values(rng, ()), dim), name=f"0-d dim={dim}")
    for dim in (0, 1, -1):
        yield Sample((values(rng, (3, 4, 2)), dim), name=f"dim={dim}")
    yield Sample((non_contiguous(values(rng, (4, 3))),), {"dim": 1}, name="non-contiguous")


def _cumprod_reference(x, dim, dtype=None):
    return np.cumprod(x, axis=dim) if np.ndim(x) else np.array(x)


def _cumprod_samples(rng):
    yield from _cumulative_samples(rng)
    for zeros in ((1,), (0, 2), (1, 2, 4)):      # one zero, several, adjacent: exact to second order
        x = values(rng, (2, 5), 0.5, 1.5)
        x[0, list(zeros)] = 0.0
        yield Sample((x, 1), name=f"zeros at {zeros}")


@register(_cumprod_reference, _cumprod_samples)     # (also tests/test_torch_api.py, against PyTorch)
def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``: outⱼ = Π_{i≤j} xᵢ. The gradient is exact where inputs
    are zero too: d/dxᵢ = Σ_{j≥i} gⱼ Π_{k≤j, k≠i} xₖ.

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0]).cumprod(dim=0)   # tensor([1., 2., 6.])
    """
    axis = _cumulative_axis("cumprod", input, dim)
    _refuse_bool_result("cumprod", dtype)
    return _in_dtype(Cumprod.apply(_cast(input, dtype), axis=axis if input.ndim else None), dtype)


class RunningExtremum(TakenAlong):
    """Running maximum (or minimum) along ``axis`` and the index it came from: the latest
    index among equal values, a NaN once met staying (as PyTorch). Found by a doubling scan
    (log₂ n passes of the Array API). The gradient goes back to those indices."""

    @staticmethod
    def forward(ctx, a, axis, largest, floating):
        xp = ctx.xp
        ctx.shape, ctx.axis = a.shape, axis
        if a.ndim == 0:
            indices = xp.zeros((), dtype=xp.int64)
            out = xp.asarray(a, copy=True)
        else:
            out = xp.moveaxis(a, axis, -1)
            indices = xp.broadcast_to(xp.arange(out.shape[-1], dtype=xp.int64), out.shape)
            step = 1
            while step < out.shape[-1]:       # combine each place with the one `step` before it
                earlier = out[..., :-step]
                later = out[..., step:]
                keep_later = later >= earlier if largest else later <= earlier
                if floating:
                    keep_later = xp.logical_or(xp.logical_and(keep_later, ~xp.isnan(earlier)), xp.isnan(later))
                merged = xp.where(keep_later, later, earlier)
                merged_indices = xp.where(keep_later, indices[..., step:], indices[..., :-step])
                out = xp.concat([out[..., :step], merged], axis=-1)
                indices = xp.concat([indices[..., :step], merged_indices], axis=-1)
                step *= 2
            out, indices = xp.moveaxis(out, -1, axis), xp.moveaxis(indices, -1, axis)
        return TakenAlong.taken(ctx, out, indices)


def _running_reference(largest):
    def reference(x, dim):
        if not np.ndim(x):
            return np.array(x), np.zeros((), dtype=np.int64)
        moved = np.moveaxis(x, dim, -1)
        out, index = np.empty_like(moved), np.zeros(moved.shape, dtype=np.int64)
        for position in np.ndindex(moved.shape[:-1]):
            best, at = moved[position][0], 0
            for i, value in enumerate(moved[position]):
                if np.isnan(value) or (not np.isnan(best) and (value >= best if largest else value <= best)):
                    best, at = value, i
                out[position + (i,)], index[position + (i,)] = best, at
        return np.moveaxis(out, -1, dim), np.moveaxis(index, -1, dim)
    return reference


def _running_samples(rng):
    yield from _cumulative_samples(rng)
    yield Sample((np.array([[1, 3, 3, 2, 5, 5, 0], [4, 4, 1, 4, 6, 2, 6]]), 1), name="ties (integers)")
    # (NaN: tests/test_torch_api.py, against PyTorch; floats with ties have no numerical gradient)


def _running(op, input, dim, largest):
    axis = _cumulative_axis(op, input, dim)
    result = return_types.cummax if largest else return_types.cummin
    if input.dtype is dtypes.bool_:         # as PyTorch: bools are compared as 0 and 1, and stay bools
        values, indices = RunningExtremum.apply(input.to(dtypes.int64), axis=axis if input.ndim else 0,
                                                largest=largest, floating=False)
        return result(values.to(dtypes.bool_), indices)
    return result(*RunningExtremum.apply(input, axis=axis if input.ndim else 0, largest=largest,
                                         floating=input.is_floating_point()))


@register(_running_reference(True), _running_samples, smooth=False)
def cummax(input, dim):
    """The running maximum along ``dim`` and where each came from, as a named tuple
    ``(values, indices)``: among equal values the latest index, and a NaN, once met, stays.
    The gradient goes back to those indices.

    Example::

        vizgrad.tensor([1.0, 3.0, 2.0, 5.0]).cummax(dim=0)   # values tensor([1., 3., 3., 5.]), indices tensor([0, 1, 1, 3])
    """
    return _running("cummax", input, dim, largest=True)


@register(_running_reference(False), _running_samples, smooth=False)
def cummin(input, dim):
    """The running minimum along ``dim`` and its indices: :func:`cummax` with the order reversed.

    Example::

        vizgrad.tensor([3.0, 1.0, 2.0, 0.5]).cummin(dim=0)   # values tensor([3.0, 1.0, 1.0, 0.5]), indices tensor([0, 1, 1, 3])
    """
    return _running("cummin", input, dim, largest=False)


def _logcumsumexp_reference(x, dim):
    return np.logaddexp.accumulate(x, axis=dim) if np.ndim(x) else np.array(x)


def _logcumsumexp_samples(rng):
    yield from _cumulative_samples(rng)
    yield Sample((np.array([-1000.0, 0.0, 1000.0, -5.0]), 0), name="far apart")


@register(_logcumsumexp_reference, _logcumsumexp_samples)
def logcumsumexp(input, dim):
    """log Σ_{i≤j} exp(xᵢ) along ``dim``, without overflow or underflow: a doubling scan of
    logaddexp (log₂ n passes), so its gradient (softmax weights of each prefix) and higher
    derivatives are those of the ops it is made of.

    Example::

        vizgrad.tensor([0.0, 0.0, 0.0]).logcumsumexp(dim=0)   # tensor([0.0000, 0.6931, 1.0986])
    """
    from .joins import cat
    from .shape import narrow
    axis = _cumulative_axis("logcumsumexp", input, dim)
    if not input.is_floating_point():
        raise DTypeError(f"logcumsumexp: input must be a floating point tensor, got {input.dtype.name}")
    if input.ndim == 0:
        return input.clone()
    out, size, step = input, input.shape[axis], 1
    while step < size:
        later, earlier = narrow(out, axis, step, size - step), narrow(out, axis, 0, size - step)
        larger = binary.maximum(later, earlier)
        finite = larger.isfinite()            # -inf and -inf: no inf - inf
        top = binary.where(finite, larger, 0.0)
        merged = top + ((later - top).exp() + (earlier - top).exp()).log()
        merged = binary.where(finite, merged, larger)
        out = cat([narrow(out, axis, 0, step), merged], axis)
        step *= 2
    return out
