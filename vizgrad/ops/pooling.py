"""Pooling and resizing: max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d, max_unpool1d/2d/3d, lp_pool1d/2d/3d, local_response_norm,
interpolate, grid_sample and affine_grid, as ``torch.nn.functional`` has them.

Max and average pooling copy the windows of :mod:`vizgrad.ops.conv` once, one plane
per kernel tap, and reduce over the taps; their backwards put each output gradient
back on its window with ``fold_windows``. Adaptive average pooling
and interpolation are linear maps along each spatial axis, out = A_H · x · A_Wᵀ: their
forwards gather the taps of each output (so that an inf or NaN reaches only the outputs
that read it, as in PyTorch), and the gradient is A_Hᵀ · G · A_W.
"""

import itertools
import math

import numpy as np

from ..autograd.function import Op
from ..errors import ShapeError, format_shape, ArgumentError, ArgumentTypeError, DTypeError, not_a_tensor
from .conv import (BATCH_LAST_AXES, Windows, batch_first, batch_last, check_input, check_positive, fold_windows,
                   is_tensor, spatial_tuple, window_count, window_view)
from .registry import Sample, register
from .samples import values
from .shape import pad as _pad


# --- window geometry -----------------------------------------------------------------------

def _pool_windows(op, size, kernel, stride, padding, dilation, ceil_mode):
    """The windows of a pooling, as PyTorch places them. With ``ceil_mode`` a last, partial
    window is kept when it starts inside the input or the left padding; the input is then
    padded on the right far enough to cut it out (the padded values never count)."""
    if any(p > k // 2 for k, p in zip(kernel, padding)):
        raise ArgumentError(f"{op}: padding {padding} must be at most half of kernel_size {kernel}")
    counts = window_count(op, size, kernel, stride, tuple((p, p) for p in padding), dilation)
    out, pads = [], []
    for n, k, s, p, dil, count in zip(size, kernel, stride, padding, dilation, counts):
        extent = dil * (k - 1) + 1
        if ceil_mode:
            count = -(-(n + 2 * p - extent) // s) + 1
            if (count - 1) * s >= n + p:
                count -= 1
        out.append(count)
        pads.append((p, max(p, (count - 1) * s + extent - n - p)))
    return Windows(tuple(kernel), tuple(stride), tuple(dilation), tuple(pads), tuple(size), tuple(out),
                   axes=BATCH_LAST_AXES[len(size)])


def _pool_arguments(op, d, kernel_size, stride, padding, dilation=1):
    kernel = spatial_tuple(op, "kernel_size", kernel_size, d)
    stride = kernel if stride is None or stride == () or stride == [] else spatial_tuple(op, "stride", stride, d)
    padding = spatial_tuple(op, "padding", padding, d)
    dilation = spatial_tuple(op, "dilation", dilation, d)
    check_positive(op, "kernel_size", kernel)
    check_positive(op, "stride", stride)
    check_positive(op, "padding", padding, allow_zero=True)
    check_positive(op, "dilation", dilation)
    return kernel, stride, padding, dilation


def _with_batch(input, d, run):
    """Pool an unbatched (C, *size) input as a batch of one."""
    if input.ndim == d + 2:
        return run(input)
    out = run(input.unsqueeze(0))
    return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def _taps(xp, x, windows, value=0.0):
    """The windows of ``x``, one plane per kernel tap, batch last as convolutions lay images
    out: (N, C, *size) -> (K, C, *out, N), copied once, so that reductions over the taps run
    plane by plane."""
    d = len(windows.size)
    view = window_view(xp, batch_last(xp, x), windows, value)                  # (C, *out, N, *kernel)
    view = xp.permute_dims(view, (*range(2 + d, 2 + 2 * d), *range(2 + d)))    # (*kernel, C, *out, N)
    return xp.reshape(view, (math.prod(windows.kernel),) + tuple(view.shape[d:]))


def _fold_taps(xp, taps, windows):
    """The adjoint of :func:`_taps`: each plane summed back onto its taps, (K, C, *out, N) -> (N, C, *size)."""
    d = len(windows.size)
    cols = xp.reshape(taps, tuple(windows.kernel) + tuple(taps.shape[1:]))
    return batch_first(xp, fold_windows(xp, xp.permute_dims(cols, (*range(d, 2 + 2 * d), *range(d))), windows))


# --- max pooling ---------------------------------------------------------------------------

class MaxPool(Op):
    """The largest value of each window. Its gradient goes to that value alone (the first
    one on ties, the last NaN where the window holds NaN, as in PyTorch): a one-hot mask over
    the taps of each window says where, kept as booleans (a quarter of float32's memory)
    until backward needs it. Integers pad with their smallest value, floats with -inf."""

    @staticmethod
    def forward(ctx, x, windows, return_indices, lowest):
        xp = ctx.xp
        ctx.windows = windows
        taps = _taps(xp, x, windows, lowest)
        out = xp.max(taps, axis=0)
        hits = _first_max(xp, taps, out, floating=isinstance(lowest, float))
        ctx.save_for_backward(hits)
        if not return_indices:
            return batch_first(xp, out)
        best = xp.argmax(xp.astype(hits, out.dtype), axis=0)
        indices = _flat_indices(xp, batch_first(xp, best), windows, x.device)
        ctx.mark_non_differentiable(indices)
        return batch_first(xp, out), indices

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        hits, = ctx.saved_tensors
        xp = ctx.xp
        mask = xp.astype(hits, grad.dtype)
        mask *= xp.expand_dims(batch_last(xp, grad), axis=0)     # into the fresh mask: one temporary fewer
        return _fold_taps(xp, mask, ctx.windows)


def _first_max(xp, taps, out, floating):
    """True at the tap of each window that PyTorch's kernel picks, (K, C, *out, N): the first
    that holds the maximum, or the last NaN in a window that holds NaN (NaN equals nothing, so
    such windows are those left without a hit)."""
    planes, seen = [], None
    for k in range(taps.shape[0]):
        hit = taps[k, ...] == out
        if seen is None:
            seen = hit
        else:
            hit = xp.logical_and(hit, xp.logical_not(seen))
            seen = xp.logical_or(seen, hit)
        planes.append(hit)
    missing = xp.logical_not(seen)
    if floating and bool(xp.any(missing)):
        for k in reversed(range(taps.shape[0])):
            hit = xp.logical_and(missing, xp.isnan(taps[k, ...]))
            missing = xp.logical_and(missing, xp.logical_not(hit))
            planes[k] = xp.logical_or(planes[k], hit)
    return xp.stack(planes)


def _flat_indices(xp, best, windows, device):
    """PyTorch's ``return_indices``: where each maximum sits in its (unpadded) input plane,
    as a flat index; ``best`` is its position within the window."""
    d = len(windows.size)
    index = xp.zeros(best.shape, dtype=xp.int64, device=device)
    plane = 1
    rest = xp.astype(best, xp.int64)
    for axis in reversed(range(d)):
        k, s, dil = windows.kernel[axis], windows.stride[axis], windows.dilation[axis]
        tap, rest = rest % k, rest // k
        starts = xp.arange(windows.out[axis], dtype=xp.int64, device=device) * s - windows.pads[axis][0]
        starts = xp.reshape(starts, (windows.out[axis],) + (1,) * (d - 1 - axis))
        index = index + (starts + tap * dil) * plane
        plane *= windows.size[axis]
    return index


def _max_pool(op, d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    from ..dtypes import iinfo
    check_input(op, input, d, integers=d > 1 or bool(return_indices))    # (PyTorch's max_pool1d kernel: floats only)
    kernel, stride, padding, dilation = _pool_arguments(op, d, kernel_size, stride, padding, dilation)
    windows = _pool_windows(op, tuple(input.shape[-d:]), kernel, stride, padding, dilation, ceil_mode)
    lowest = -math.inf if input.is_floating_point() else iinfo(input.dtype).min       # the padding
    return _with_batch(input, d, lambda x: MaxPool.apply(x, windows=windows, return_indices=bool(return_indices),
                                                         lowest=lowest))


def _max_pool_reference(d):
    def reference(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        if input.ndim == d + 1:
            result = reference(input[None], kernel_size, stride, padding, dilation, ceil_mode, return_indices)
            return tuple(r[0] for r in result) if return_indices else result[0]
        kernel, stride, padding, dilation = _pool_arguments("", d, kernel_size, stride, padding, dilation)
        size = input.shape[2:]
        out_size = _reference_out_size(size, kernel, stride, padding, dilation, ceil_mode)
        out = np.zeros(input.shape[:2] + out_size, dtype=input.dtype)
        indices = np.zeros(out.shape, dtype=np.int64)
        for n, c in np.ndindex(*input.shape[:2]):
            for position in np.ndindex(*out_size):
                best, where = -np.inf, None
                for tap in np.ndindex(*kernel):   # the taps inside the input, in row-major order
                    point = tuple(p * s - pad + t * dil
                                  for p, s, pad, t, dil in zip(position, stride, padding, tap, dilation))
                    if all(0 <= i < m for i, m in zip(point, size)) and input[(n, c) + point] > best:
                        best, where = input[(n, c) + point], point
                out[(n, c) + position] = best
                indices[(n, c) + position] = np.ravel_multi_index(where, size)
        return (out, indices) if return_indices else out
    return reference


def _reference_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling output size."""
    out = []
    for n, k, s, p, dil in zip(size, kernel, stride, padding, dilation):
        span = n + 2 * p - dil * (k - 1) - 1
        count = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (count - 1) * s >= n + p:
            count -= 1
        out.append(count)
    return tuple(out)


def _distinct(rng, shape):
    """Values in [-2, 2] at least 4/size apart: no ties within a window, so max pooling is
    differentiable there and finite differences see the same maximum."""
    size = math.prod(shape)
    return (rng.permutation(size).reshape(shape) * (4.0 / size) - 2.0).astype(np.float64)


def _max_pool2d_samples(rng):
    yield Sample((_distinct(rng, (2, 2, 4, 6)), 2), name="kernel 2")
    yield Sample((_distinct(rng, (2, 2, 5, 5)), 3), {"stride": 2, "padding": 1}, name="overlapping, padding")
    yield Sample((_distinct(rng, (1, 2, 7, 6)), 2), {"stride": 3}, name="stride > kernel")
    yield Sample((_distinct(rng, (1, 2, 6, 7)), (2, 3)), {"stride": (1, 2), "dilation": (2, 1)}, name="dilation")
    yield Sample((_distinct(rng, (2, 2, 5, 6)), 2), {"ceil_mode": True}, name="ceil_mode")
    yield Sample((_distinct(rng, (1, 2, 6, 5)), 3), {"stride": 2, "padding": 1, "ceil_mode": True},
                 name="ceil_mode, padding")
    yield Sample((_distinct(rng, (2, 2, 5, 5)), 3), {"stride": 2, "padding": 1, "return_indices": True},
                 name="return_indices")
    yield Sample((_distinct(rng, (2, 5, 4)), 2), name="unbatched")


def _max_pool1d_samples(rng):
    yield Sample((_distinct(rng, (2, 3, 8)), 2), name="kernel 2")
    yield Sample((_distinct(rng, (2, 2, 9)), 3), {"stride": 2, "padding": 1, "dilation": 2}, name="dilation")
    yield Sample((_distinct(rng, (2, 2, 8)), 3), {"stride": 2, "ceil_mode": True, "return_indices": True},
                 name="ceil_mode, return_indices")
    yield Sample((_distinct(rng, (3, 7)), 2), {"stride": 3}, name="unbatched, stride > kernel")


@register(_max_pool_reference(1), _max_pool1d_samples, smooth=False, method=False)
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L); see :func:`max_pool2d`.

    Example::

        vizgrad.max_pool1d(vizgrad.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2)    # [[[3., 5.]]]
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@register(_max_pool_reference(2), _max_pool2d_samples, smooth=False, method=False)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W): the largest value of each window.

    out[n, c, i, j] = max_{a, b} x_pad[n, c, i·s + a·d, j·s + b·d], with padding that never
    wins (-inf). ``stride`` defaults to ``kernel_size``; ``ceil_mode`` keeps a last partial
    window; ``return_indices`` also returns where each maximum sits, as a flat index into
    its H·W plane. The gradient flows to the maximum of each window only (the first on ties).

    Example::

        x = vizgrad.randn(1, 1, 4, 4, requires_grad=True)
        y = vizgrad.max_pool2d(x, 2)                        # (1, 1, 2, 2)
        y, where = vizgrad.max_pool2d(x, 2, return_indices=True)
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool3d_samples(rng):
    yield Sample((_distinct(rng, (2, 2, 4, 4, 4)), 2), name="kernel 2")
    yield Sample((_distinct(rng, (1, 2, 5, 4, 5)), (3, 2, 3)), {"stride": (2, 1, 2), "padding": (1, 0, 1)},
                 name="overlapping, padding")
    yield Sample((_distinct(rng, (1, 2, 5, 5, 4)), 2), {"stride": 2, "dilation": (2, 1, 1), "ceil_mode": True,
                                                       "return_indices": True}, name="dilation, ceil_mode, indices")
    yield Sample((_distinct(rng, (2, 4, 3, 4)), 2), {"stride": 1}, name="unbatched")


@register(_max_pool_reference(3), _max_pool3d_samples, smooth=False, method=False)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W); see :func:`max_pool2d`.
    ``return_indices`` gives flat indices into each D·H·W volume.

    Example::

        vizgrad.max_pool3d(vizgrad.randn(1, 2, 4, 4, 4), 2).shape    # (1, 2, 2, 2, 2)
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool1d` returning (values, indices) whatever ``return_indices`` says."""
    return _max_pool("max_pool1d_with_indices", 1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool2d` returning (values, indices) whatever ``return_indices`` says."""
    return _max_pool("max_pool2d_with_indices", 2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool3d` returning (values, indices) whatever ``return_indices`` says."""
    return _max_pool("max_pool3d_with_indices", 3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


# --- average pooling -----------------------------------------------------------------------

class AvgPool(Op):
    """The mean of each window: the window sum over a divisor per output position. Integers
    (``integral``) stay integers, the quotient truncated towards zero, as PyTorch's kernel."""

    @staticmethod
    def forward(ctx, x, windows, padding, count_include_pad, divisor_override, integral=False):
        xp = ctx.xp
        ctx.windows = windows
        divisor = _divisor(xp, windows, padding, count_include_pad, divisor_override, x.dtype, x.device)
        ctx.save_for_backward(divisor)
        total = batch_first(xp, xp.sum(_taps(xp, x, windows), axis=0))
        if not integral:
            return total / divisor
        quotient = abs(total) // abs(divisor)
        return xp.where((total < 0) != (divisor < 0), -quotient, quotient)

    @staticmethod
    def backward(ctx, grad):
        divisor, = ctx.saved_tensors
        xp, windows = ctx.xp, ctx.windows
        share = xp.expand_dims(batch_last(xp, grad / divisor), axis=0)
        return _fold_taps(xp, xp.broadcast_to(share, (math.prod(windows.kernel),) + tuple(share.shape[1:])), windows)


def _divisor(xp, windows, padding, count_include_pad, divisor_override, dtype, device):
    """What each window sum is divided by, as PyTorch counts: the window clipped to the
    padded input, or (``count_include_pad=False``) to the input itself."""
    if divisor_override:
        return xp.asarray(divisor_override, dtype=dtype, device=device)
    d = len(windows.size)
    divisor = xp.ones((1,) * d, dtype=dtype, device=device)
    for axis, (n, k, s, p, count) in enumerate(zip(windows.size, windows.kernel, windows.stride, padding,
                                                   windows.out)):
        start = xp.arange(count, dtype=xp.int64, device=device) * s - p
        end = xp.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, n)
        divisor = divisor * xp.reshape(xp.astype(end - start, dtype), (count,) + (1,) * (d - 1 - axis))
    return divisor


def _avg_pool(op, d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    check_input(op, input, d, integers="int64")
    kernel, stride, padding, dilation = _pool_arguments(op, d, kernel_size, stride, padding)
    if divisor_override is not None and (isinstance(divisor_override, bool) or divisor_override == 0):
        raise ArgumentError(f"{op}: divisor_override must be a non-zero number, got {divisor_override!r}")
    windows = _pool_windows(op, tuple(input.shape[-d:]), kernel, stride, padding, dilation, ceil_mode)
    return _with_batch(input, d, lambda x: AvgPool.apply(
        x, windows=windows, padding=padding, count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override, integral=not input.is_floating_point()))


def _avg_pool_reference(d):
    def reference(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None):
        if input.ndim == d + 1:
            return reference(input[None], kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)[0]
        kernel, stride, padding, ones = _pool_arguments("", d, kernel_size, stride, padding)
        size = input.shape[2:]
        out_size = _reference_out_size(size, kernel, stride, padding, ones, ceil_mode)
        out = np.zeros(input.shape[:2] + out_size, dtype=input.dtype)
        for n, c in np.ndindex(*input.shape[:2]):
            for position in np.ndindex(*out_size):
                total, inside, in_padded = 0.0, 1, 1
                for p, s, pad, k, m in zip(position, stride, padding, kernel, size):
                    start, end = p * s - pad, min(p * s - pad + k, m + pad)
                    in_padded *= end - start
                    inside *= min(end, m) - max(start, 0)
                for tap in np.ndindex(*kernel):
                    point = tuple(p * s - pad + t for p, s, pad, t in zip(position, stride, padding, tap))
                    if all(0 <= i < m for i, m in zip(point, size)):
                        total += input[(n, c) + point]
                divisor = divisor_override or (in_padded if count_include_pad else inside)
                out[(n, c) + position] = total / divisor
        return out
    return reference


def _avg_pool2d_samples(rng):
    yield Sample((values(rng, (2, 2, 4, 6)), 2), name="kernel 2")
    yield Sample((values(rng, (2, 2, 5, 5)), 3), {"stride": 2, "padding": 1}, name="overlapping, padding")
    yield Sample((values(rng, (2, 2, 5, 5)), 3), {"stride": 2, "padding": 1, "count_include_pad": False},
                 name="count_include_pad False")
    yield Sample((values(rng, (1, 2, 7, 6)), (2, 3)), {"stride": 3}, name="stride > kernel")
    yield Sample((values(rng, (1, 2, 6, 5)), 3), {"stride": 2, "padding": 1, "ceil_mode": True},
                 name="ceil_mode, padding")
    yield Sample((values(rng, (1, 2, 6, 5)), 3), {"stride": 2, "padding": 1, "ceil_mode": True,
                                                  "count_include_pad": False}, name="ceil_mode, exclude padding")
    yield Sample((values(rng, (1, 2, 5, 4)), 2), {"stride": 1, "divisor_override": 3}, name="divisor_override")
    yield Sample((values(rng, (2, 5, 4)), 2), name="unbatched")


def _avg_pool1d_samples(rng):
    yield Sample((values(rng, (2, 3, 8)), 2), name="kernel 2")
    yield Sample((values(rng, (2, 2, 9)), 3), {"stride": 2, "padding": 1, "count_include_pad": False},
                 name="padding, count_include_pad False")
    yield Sample((values(rng, (2, 2, 8)), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil_mode")
    yield Sample((values(rng, (3, 7)), 2), {"stride": 3}, name="unbatched, stride > kernel")


@register(_avg_pool_reference(1), _avg_pool1d_samples, method=False)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L); see :func:`avg_pool2d`.

    Example::

        vizgrad.avg_pool1d(vizgrad.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)    # [[[2., 4.]]]
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@register(_avg_pool_reference(2), _avg_pool2d_samples, method=False)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W): the mean of each window.

    out[n, c, i, j] = (1 / D_ij) Σ_{a, b} x_pad[n, c, i·s + a, j·s + b], with zero padding.
    D_ij is the window size clipped to the padded input (``count_include_pad=True``) or to
    the input (False), or ``divisor_override``. ``stride`` defaults to ``kernel_size``;
    ``ceil_mode`` keeps a last partial window. dL/dx: each G_ij / D_ij spread over its window.

    Example::

        x = vizgrad.randn(1, 3, 8, 8, requires_grad=True)
        vizgrad.avg_pool2d(x, 3, stride=2, padding=1).shape      # (1, 3, 4, 4)
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _avg_pool3d_samples(rng):
    yield Sample((values(rng, (2, 2, 4, 4, 4)), 2), name="kernel 2")
    yield Sample((values(rng, (1, 2, 5, 4, 5)), (3, 2, 3)), {"stride": (2, 1, 2), "padding": (1, 0, 1),
                                                             "count_include_pad": False}, name="padding, exclude it")
    yield Sample((values(rng, (1, 2, 5, 5, 4)), 3), {"stride": 2, "padding": 1, "ceil_mode": True},
                 name="ceil_mode, padding")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), 2), {"stride": 1, "divisor_override": 5}, name="divisor_override")
    yield Sample((values(rng, (2, 4, 3, 4)), 2), {"stride": 1}, name="unbatched")


@register(_avg_pool_reference(3), _avg_pool3d_samples, method=False)
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W); see :func:`avg_pool2d`.

    Example::

        vizgrad.avg_pool3d(vizgrad.randn(1, 2, 4, 4, 4), 2).shape    # (1, 2, 2, 2, 2)
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# --- linear maps along each spatial axis: adaptive average pooling, interpolation -----------

def _along_axes(xp, x, matrices):
    """``x`` with one matrix applied along each trailing axis: (..., H, W) -> (..., h, w),
    (..., D, H, W) -> (..., d, h, w); the depth axis is a product with (..., D, H·W)."""
    if len(matrices) == 3:
        *lead, depth, height, width = x.shape
        flat = xp.matmul(matrices[0], xp.reshape(x, (*lead, depth, height * width)))
        x = xp.reshape(flat, (*lead, matrices[0].shape[0], height, width))
        matrices = matrices[1:]
    if len(matrices) == 2:
        x = xp.matmul(matrices[0], x)
    return xp.matmul(x, xp.matrix_transpose(matrices[-1]))


def _adaptive_matrix(xp, n, count, dtype, device):
    """Row i averages x[start_i:end_i], start_i = floor(i·n/count), end_i = ceil((i+1)·n/count)."""
    i = xp.arange(count, dtype=xp.int64, device=device)
    start, end = (i * n) // count, ((i + 1) * n + count - 1) // count
    taps = xp.arange(n, dtype=xp.int64, device=device)
    inside = xp.logical_and(taps >= start[:, None], taps < end[:, None])
    return xp.astype(inside, dtype) / xp.astype(end - start, dtype)[:, None]


class AdaptiveAvgPool(Op):
    """The mean of each adaptive window, along one axis at a time: the window's taps gathered
    (the last repeated to the longest window's length, and left out), so that an inf or NaN
    reaches only the windows that hold it, as in PyTorch. Backward is the transposed linear
    map, the averaging matrices' products."""

    @staticmethod
    def forward(ctx, x, output_size):
        xp = ctx.xp
        d = len(output_size)
        size = tuple(x.shape[-d:])
        ctx.save_for_backward(*(_adaptive_matrix(xp, n, count, x.dtype, x.device)
                                for n, count in zip(size, output_size)))
        for k, (n, count) in enumerate(zip(size, output_size)):
            axis = x.ndim - d + k
            if n % count == 0:             # windows side by side, of one length (global pooling): a reshape
                x = xp.mean(xp.reshape(x, tuple(x.shape[:axis]) + (count, n // count) + tuple(x.shape[axis + 1:])),
                            axis=axis + 1)
                continue
            taps = _adaptive_taps(xp, n, count, x.device)                  # (count, L)
            i = xp.arange(count, dtype=xp.int64, device=x.device)
            start, end = (i * n) // count, ((i + 1) * n + count - 1) // count
            length = taps.shape[1]
            kept = start[:, None] + xp.arange(length, dtype=xp.int64, device=x.device)[None, :] < end[:, None]
            cut = xp.reshape(xp.take(x, xp.reshape(taps, (-1,)), axis=axis),
                             tuple(x.shape[:axis]) + (count, length) + tuple(x.shape[axis + 1:]))
            trailing = (1,) * (x.ndim - axis - 1)
            total = xp.sum(xp.where(xp.reshape(kept, (count, length) + trailing), cut, xp.zeros_like(cut)),
                           axis=axis + 1)
            x = total / xp.reshape(xp.astype(end - start, x.dtype), (count,) + trailing)
        return x

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        return _along_axes(xp, grad, [xp.matrix_transpose(m) for m in ctx.saved_tensors])


def _adaptive_avg_pool(op, d, input, output_size):
    check_input(op, input, d)
    size = tuple(input.shape[-d:])
    if output_size is None or isinstance(output_size, int):
        output_size = (output_size,) * d
    elif not isinstance(output_size, (tuple, list)) or len(output_size) != d:
        raise ArgumentError(f"{op}: output_size must be an int or a tuple of {d} ints (or None), got {output_size!r}")
    output_size = tuple(n if o is None else spatial_tuple(op, "output_size", o, 1)[0]
                        for n, o in zip(size, output_size))
    check_positive(op, "output_size", output_size)
    if 0 in size:
        raise ShapeError(f"{op}: the input has an empty spatial dim: shape {format_shape(input.shape)}")
    return AdaptiveAvgPool.apply(input, output_size=output_size)


def _adaptive_reference(d):
    def reference(input, output_size):
        size = input.shape[-d:]
        output_size = (output_size,) * d if output_size is None or isinstance(output_size, int) else output_size
        output_size = tuple(n if o is None else o for n, o in zip(size, output_size))
        out = np.zeros(input.shape[:-d] + output_size, dtype=input.dtype)
        for position in np.ndindex(*output_size):
            window = tuple(slice(i * n // o, -(-(i + 1) * n // o)) for i, n, o in zip(position, size, output_size))
            out[(...,) + position] = input[(...,) + window].mean(axis=tuple(range(-d, 0)))
        return out
    return reference


def _adaptive2d_samples(rng):
    yield Sample((values(rng, (2, 3, 7, 6)), (3, 4)), name="non-divisible")
    yield Sample((values(rng, (2, 2, 6, 4)), 2), name="divisible")
    yield Sample((values(rng, (2, 2, 5, 4)), 1), name="global")
    yield Sample((values(rng, (1, 2, 3, 4)), (5, None)), name="upsampling, None keeps a size")
    yield Sample((values(rng, (2, 5, 7)), (2, 3)), name="unbatched")


def _adaptive1d_samples(rng):
    yield Sample((values(rng, (2, 3, 7)), 3), name="non-divisible")
    yield Sample((values(rng, (3, 5)), 4), name="unbatched, overlapping windows")


@register(_adaptive_reference(1), _adaptive1d_samples, method=False)
def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over (N, C, L) or (C, L); see :func:`adaptive_avg_pool2d`.

    Example::

        vizgrad.adaptive_avg_pool1d(vizgrad.arange(6.0).reshape(1, 1, 6), 3)   # [[[0.5, 2.5, 4.5]]]
    """
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


@register(_adaptive_reference(2), _adaptive2d_samples, method=False)
def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed ``output_size`` (an int, or a pair whose entries may be
    None to keep that size) over (N, C, H, W) or (C, H, W).

    Output row i averages input rows floor(i·H/h) to ceil((i+1)·H/h) - 1 (columns alike),
    so windows differ in size and may overlap when H is not a multiple of h. As a matrix
    product: out = A_H · x · A_Wᵀ, and dL/dx = A_Hᵀ · G · A_W.

    Example::

        x = vizgrad.randn(2, 64, 7, 7, requires_grad=True)
        vizgrad.adaptive_avg_pool2d(x, 1).shape          # (2, 64, 1, 1)
    """
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def _adaptive3d_samples(rng):
    yield Sample((values(rng, (2, 2, 5, 4, 7)), (2, 3, 3)), name="non-divisible")
    yield Sample((values(rng, (1, 2, 4, 3, 2)), (2, None, 1)), name="None keeps a size")
    yield Sample((values(rng, (2, 3, 4, 5)), 2), name="unbatched")


@register(_adaptive_reference(3), _adaptive3d_samples, method=False)
def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling over (N, C, D, H, W) or (C, D, H, W); see
    :func:`adaptive_avg_pool2d` (one more averaging matrix, along the depth).

    Example::

        vizgrad.adaptive_avg_pool3d(vizgrad.randn(2, 8, 5, 7, 7), 1).shape   # (2, 8, 1, 1, 1)
    """
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def _nearest_source(xp, n, count, scale, exact, device):
    """Output i takes x[min(floor(i·scale), n - 1)] (``nearest``) or x[min(floor((i + 0.5)·scale),
    n - 1)] (``nearest-exact``), computed in float32 as PyTorch does (which also special-cases
    ``nearest`` keeping or doubling the size)."""
    dst = xp.astype(xp.arange(count, device=device), xp.float32)
    if exact:
        dst = dst + 0.5
    if not exact and count in (n, 2 * n):   # PyTorch copies when the size is kept and halves when doubled
        source = xp.arange(count, dtype=xp.int64, device=device) // (count // n)
    else:
        source = xp.minimum(xp.astype(xp.floor(dst * (1.0 / scale if scale else n / count)), xp.int64), n - 1)
    return source


def _selection_matrix(xp, source, n, dtype, device):
    """Row i is one at column source[i]: the transpose sums the gradients back (``nearest``)."""
    taps = xp.arange(n, dtype=xp.int64, device=device)
    return xp.astype(taps == source[:, None], dtype)


def _linear_taps(xp, n, count, scale, align_corners, dtype, device):
    """Output i mixes the two inputs around the source point src_i, x[left_i] and x[right_i],
    with weights 1 - λ_i and λ_i: src_i = i·(n-1)/(count-1) with ``align_corners``, else
    max((i + 0.5)·n/count - 0.5, 0); right_i = min(left_i + 1, n - 1)."""
    dst = xp.astype(xp.arange(count, device=device), xp.float64)
    if align_corners:
        source = dst * ((n - 1) / (count - 1) if count > 1 else 0.0)
    else:
        source = xp.maximum((dst + 0.5) * (1.0 / scale if scale else n / count) - 0.5, 0.0)
    left = xp.floor(source)
    weight = xp.astype(source - left, dtype)
    left = xp.astype(left, xp.int64)
    return left, xp.minimum(left + 1, n - 1), weight


def _along(xp, weight, axis, ndim):
    """The per-position weights shaped to broadcast along ``axis`` of an ``ndim``-D array."""
    return xp.reshape(weight, (weight.shape[0],) + (1,) * (ndim - axis - 1))


class Interpolate(Op):
    @staticmethod
    def forward(ctx, x, size, scales, mode, align_corners):
        xp = ctx.xp
        ctx.mode = mode      # (names the node as PyTorch does: UpsampleBilinear2DBackward0, ...)
        d = len(size)
        if mode in ("nearest", "nearest-exact"):    # copies, not products: one inf stays one inf
            sources = [_nearest_source(xp, n, count, scale, mode == "nearest-exact", x.device)
                       for n, count, scale in zip(x.shape[-d:], size, scales)]
            ctx.save_for_backward(*(_selection_matrix(xp, source, n, x.dtype, x.device)
                                    for source, n in zip(sources, x.shape[-d:])))
            for axis, source in zip(range(x.ndim - d, x.ndim), sources):
                x = xp.take(x, source, axis=axis)
            return x
        # gathers of the two neighbours, not products with a matrix: an inf or NaN reaches only
        # the outputs that read it, as in PyTorch (backward, the transposed map, is the product)
        taps = [_linear_taps(xp, n, count, scale, align_corners, x.dtype, x.device)
                for n, count, scale in zip(x.shape[-d:], size, scales)]
        ctx.save_for_backward(*(_linear_matrix(xp, n, *tap) for n, tap in zip(x.shape[-d:], taps)))
        for axis, (left, right, weight) in zip(range(x.ndim - d, x.ndim), taps):
            weight = _along(xp, weight, axis, x.ndim)
            x = xp.take(x, left, axis=axis) * (1 - weight) + xp.take(x, right, axis=axis) * weight
        return x

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        return _along_axes(xp, grad, [xp.matrix_transpose(m) for m in ctx.saved_tensors])


def _linear_matrix(xp, n, left, right, weight):
    """The (count, n) matrix of the linear taps: row i holds 1 - λ_i at left_i and λ_i at right_i."""
    taps = xp.arange(n, dtype=xp.int64, device=weight.device)
    weight = weight[:, None]
    return (xp.astype(taps == left[:, None], weight.dtype) * (1 - weight)
            + xp.astype(taps == right[:, None], weight.dtype) * weight)


_LINEAR_MODES = {"linear": 1, "bilinear": 2}


def _interpolate_reference(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                           recompute_scale_factor=None, antialias=False):
    spatial = input.shape[2:]
    d = len(spatial)
    if size is not None:
        size, factors = spatial_tuple("", "", size, d), (None,) * d
    else:
        factors = tuple(scale_factor) if hasattr(scale_factor, "__len__") else (scale_factor,) * d
        size = tuple(math.floor(n * f) for n, f in zip(spatial, factors))
        factors = (None,) * d if recompute_scale_factor else factors
    out = np.zeros(input.shape[:2] + size, dtype=input.dtype)
    for position in np.ndindex(*size):
        # per axis: the input points and their weights
        axes = []
        for i, n, count, factor in zip(position, spatial, size, factors):
            scale = 1.0 / factor if factor else n / count
            if mode == "nearest":   # PyTorch copies when the size is kept and halves when doubled
                source = i if count == n else i // 2 if count == 2 * n else min(
                    int(np.floor(np.float32(i) * np.float32(scale))), n - 1)
                axes.append([(source, 1.0)])
            elif mode == "nearest-exact":
                axes.append([(min(int(np.floor(np.float32(i + 0.5) * np.float32(scale))), n - 1), 1.0)])
            else:
                source = i * (n - 1) / (count - 1) if align_corners and count > 1 else (
                    0.0 if align_corners else max((i + 0.5) * scale - 0.5, 0.0))
                left = int(np.floor(source))
                axes.append([(left, 1 - (source - left)), (min(left + 1, n - 1), source - left)])
        total = 0.0
        for combination in np.ndindex(*(len(a) for a in axes)):
            point = tuple(axes[k][j][0] for k, j in enumerate(combination))
            weight = math.prod(axes[k][j][1] for k, j in enumerate(combination))
            total = total + weight * input[(slice(None), slice(None)) + point]
        out[(slice(None), slice(None)) + position] = total
    return out


def _interpolate_samples(rng):
    yield Sample((values(rng, (2, 2, 3, 4)),), {"size": (5, 7)}, name="nearest, size")
    yield Sample((values(rng, (1, 2, 3, 3)),), {"scale_factor": 2}, name="nearest, scale_factor 2")
    yield Sample((values(rng, (1, 2, 6, 5)),), {"size": (4, 3)}, name="nearest, downsampling")
    yield Sample((values(rng, (1, 2, 3, 4)),), {"scale_factor": 1.5, "mode": "nearest-exact"}, name="nearest-exact")
    yield Sample((values(rng, (2, 2, 3, 4)),), {"size": (5, 7), "mode": "bilinear"}, name="bilinear")
    yield Sample((values(rng, (2, 2, 3, 4)),), {"size": (5, 7), "mode": "bilinear", "align_corners": True},
                 name="bilinear, align_corners")
    yield Sample((values(rng, (1, 2, 3, 4)),), {"scale_factor": (1.5, 2), "mode": "bilinear"},
                 name="bilinear, scale_factor")
    yield Sample((values(rng, (1, 2, 6, 5)),), {"size": (4, 2), "mode": "bilinear"}, name="bilinear, downsampling")
    yield Sample((values(rng, (2, 3, 4)),), {"size": 7, "mode": "linear", "align_corners": True},
                 name="linear, align_corners")
    yield Sample((values(rng, (2, 3, 5)),), {"scale_factor": 1.7, "mode": "linear"}, name="linear, scale_factor")
    yield Sample((values(rng, (2, 3, 5)),), {"size": 8}, name="nearest, 3-D")


@register(_interpolate_reference, _interpolate_samples, method=False)
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, L) or (N, C, H, W) inputs to ``size``, or by ``scale_factor``.

    ``mode``: ``'nearest'`` copies x[floor(i·scale)] (scale = in/out, or 1/scale_factor);
    ``'nearest-exact'`` uses floor((i + 0.5)·scale); ``'linear'`` (3-D) and ``'bilinear'``
    (4-D) mix the two (four) nearest inputs around the source point, which
    ``align_corners`` places at i·(in-1)/(out-1) (corners meet) instead of
    (i + 0.5)·scale - 0.5 (the default, False). Each mode is linear, one fixed map per axis
    (out = A_H · x · A_Wᵀ), so dL/dx = A_Hᵀ · G · A_W; computed by gathers, an inf or NaN
    reaches only the outputs that read it.

    Example::

        x = vizgrad.randn(1, 3, 4, 4, requires_grad=True)
        vizgrad.interpolate(x, scale_factor=2, mode="bilinear").shape   # (1, 3, 8, 8)
    """
    op = "interpolate"
    if not is_tensor(input):
        raise ArgumentTypeError(f"{op}: input must be a Tensor, got a {type(input).__name__}")
    if input.ndim not in (3, 4):
        raise ShapeError(f"{op}: expected a 3-D (N, C, L) or 4-D (N, C, H, W) input, got shape "
                         f"{format_shape(input.shape)}")
    d = input.ndim - 2
    check_input(op, input, d)
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear"):
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported by vizgrad; use 'nearest', "
                                  "'nearest-exact', 'linear' (3-D) or 'bilinear' (4-D)")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != d:
        raise ShapeError(f"{op}: mode {mode!r} needs a {_LINEAR_MODES[mode] + 2}-D input, got shape "
                         f"{format_shape(input.shape)}")
    if mode not in _LINEAR_MODES and align_corners is not None:
        raise ArgumentError(f"{op}: align_corners can only be set with the interpolating modes 'linear' and "
                            f"'bilinear', not with mode {mode!r}")
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported by vizgrad")
    spatial = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ArgumentError(f"{op}: give exactly one of size and scale_factor")
    if size is not None:
        size = spatial_tuple(op, "size", size, d)
        scales = (None,) * d
    else:
        factors = tuple(float(f) for f in scale_factor) if hasattr(scale_factor, "__len__") else (
            float(scale_factor),) * d
        if len(factors) != d or any(f <= 0 for f in factors):
            raise ArgumentError(f"{op}: scale_factor must be a positive number or {d} of them, got {scale_factor!r}")
        size = tuple(math.floor(n * f) for n, f in zip(spatial, factors))
        scales = (None,) * d if recompute_scale_factor else factors
    check_positive(op, "the output size", size)
    return Interpolate.apply(input, size=size, scales=scales, mode=mode, align_corners=bool(align_corners))


# --- pixel_shuffle, pixel_unshuffle --------------------------------------------------------

def _pixel_shuffle_reference(x, upscale_factor):
    r = upscale_factor
    *lead, channels, height, width = x.shape
    x = x.reshape(*lead, channels // (r * r), r, r, height, width)
    x = np.moveaxis(x, (-4, -3), (-3, -1))                   # (..., C, H, r, W, r)
    return x.reshape(*lead, channels // (r * r), height * r, width * r)


def _pixel_shuffle_samples(rng):
    yield Sample((values(rng, (2, 8, 3, 2)), 2), name="batch")
    yield Sample((values(rng, (9, 2, 2)), 3), name="unbatched")


def _resampling_input(op, input, factor_name, factor):
    from ..errors import as_int, not_a_tensor
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    factor = as_int(op, factor_name, factor)
    if factor < 1:
        raise ArgumentError(f"{op}: {factor_name} must be at least 1, got {factor}")
    if input.ndim < 3:
        raise ShapeError(f"{op}: expected an input of shape (*, C, H, W), got {format_shape(input.shape)}")
    return factor


@register(_pixel_shuffle_reference, _pixel_shuffle_samples, method=False)
def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C·r², H, W) into (*, C, H·r, W·r) with r = ``upscale_factor``: each group
    of r² channels becomes an r×r block of pixels (sub-pixel convolution's upsampling). A
    permutation, so the gradient is the inverse rearrangement.

    Example::

        F.pixel_shuffle(vizgrad.randn(1, 8, 3, 3), 2).shape    # (1, 2, 6, 6)
    """
    r = _resampling_input("pixel_shuffle", input, "upscale_factor", upscale_factor)
    *lead, channels, height, width = input.shape
    if channels % (r * r):
        raise ShapeError(f"pixel_shuffle: the channels ({channels}, dim -3 of the input of shape "
                         f"{format_shape(input.shape)}) must be divisible by upscale_factor² ({r * r})")
    lead = tuple(lead)
    blocks = input.reshape(lead + (channels // (r * r), r, r, height, width))
    order = tuple(range(len(lead))) + tuple(len(lead) + k for k in (0, 3, 1, 4, 2))
    return blocks.permute(order).reshape(lead + (channels // (r * r), height * r, width * r))


def _pixel_unshuffle_reference(x, downscale_factor):
    r = downscale_factor
    *lead, channels, height, width = x.shape
    x = x.reshape(*lead, channels, height // r, r, width // r, r)
    x = np.moveaxis(x, (-3, -1), (-4, -3))                   # (..., C, r, r, H/r, W/r)
    return x.reshape(*lead, channels * r * r, height // r, width // r)


def _pixel_unshuffle_samples(rng):
    yield Sample((values(rng, (2, 2, 6, 4)), 2), name="batch")
    yield Sample((values(rng, (1, 6, 3)), 3), name="unbatched")


@register(_pixel_unshuffle_reference, _pixel_unshuffle_samples, method=False)
def pixel_unshuffle(input, downscale_factor):
    """The inverse of :func:`pixel_shuffle`: (*, C, H·r, W·r) into (*, C·r², H, W).

    Example::

        F.pixel_unshuffle(vizgrad.randn(1, 2, 6, 6), 2).shape    # (1, 8, 3, 3)
    """
    r = _resampling_input("pixel_unshuffle", input, "downscale_factor", downscale_factor)
    *lead, channels, height, width = input.shape
    if height % r or width % r:
        raise ShapeError(f"pixel_unshuffle: the height and width ({height}, {width}) of the input of shape "
                         f"{format_shape(input.shape)} must be divisible by downscale_factor ({r})")
    lead = tuple(lead)
    pixels = input.reshape(lead + (channels, height // r, r, width // r, r))
    order = tuple(range(len(lead))) + tuple(len(lead) + k for k in (0, 2, 4, 1, 3))
    return pixels.permute(order).reshape(lead + (channels * r * r, height // r, width // r))


# --- adaptive max pooling ------------------------------------------------------------------
# Window i along an axis of n inputs covers [floor(i·n/count), ceil((i+1)·n/count)), as in
# adaptive average pooling; windows differ in length by at most one, so each is cut out at the
# longest length L with its last tap repeated (a repeat never wins over the first: argmax takes
# the first maximum). Cutting out is ``take`` along each axis; its adjoint, in backward, is a
# product with the one-hot matrix (count·L, n) of the taps, transposed.

def _adaptive_taps(xp, n, count, device):
    """(count, L) indices of each window's taps, the last repeated to the common length L."""
    i = xp.arange(count, dtype=xp.int64, device=device)
    start, end = (i * n) // count, ((i + 1) * n + count - 1) // count
    length = max(-(-(k + 1) * n // count) - k * n // count for k in range(count))
    taps = start[:, None] + xp.arange(length, dtype=xp.int64, device=device)[None, :]
    return xp.minimum(taps, end[:, None] - 1)


class AdaptiveMaxPool(Op):
    """The largest value of each adaptive window; the gradient goes to it alone (the first on
    ties, the last NaN where the window holds NaN, as in PyTorch)."""

    @staticmethod
    def forward(ctx, x, output_size, return_indices):
        xp = ctx.xp
        d = len(output_size)
        size = tuple(x.shape[-d:])
        lead = tuple(x.shape[:-d])
        taps = [_adaptive_taps(xp, n, count, x.device) for n, count in zip(size, output_size)]
        lengths = tuple(t.shape[1] for t in taps)
        cut = x
        for axis, t in enumerate(taps):
            cut = xp.take(cut, xp.reshape(t, (-1,)), axis=len(lead) + axis)
        split = xp.reshape(cut, lead + tuple(v for pair in zip(output_size, lengths) for v in pair))
        k = len(lead)
        order = tuple(range(k)) + tuple(k + 2 * a for a in range(d)) + tuple(k + 2 * a + 1 for a in range(d))
        windows = xp.reshape(xp.permute_dims(split, order), lead + tuple(output_size) + (math.prod(lengths),))
        best = xp.argmax(windows, axis=-1)
        out = xp.max(windows, axis=-1)
        nan = xp.isnan(out)
        if bool(xp.any(nan)):         # PyTorch's kernel keeps the last NaN of a window (argmax: the first)
            last = windows.shape[-1] - 1 - xp.argmax(xp.astype(xp.flip(xp.isnan(windows), axis=-1), xp.int64), axis=-1)
            best = xp.where(nan, last, best)
        hits = xp.arange(math.prod(lengths), dtype=best.dtype, device=x.device) == xp.expand_dims(best, axis=-1)
        ctx.output_size, ctx.lengths, ctx.lead = tuple(output_size), lengths, lead
        ctx.save_for_backward(hits, *[xp.astype(xp.reshape(t, (-1,))[:, None] == xp.arange(n, device=x.device),
                                                x.dtype) for t, n in zip(taps, size)])
        if not return_indices:
            return out
        # where the maximum sits in its input plane: the tap's position along each axis, flattened
        index = xp.zeros(out.shape, dtype=xp.int64, device=x.device)
        rest = xp.astype(best, xp.int64)
        plane = 1
        for axis in reversed(range(d)):
            tap, rest = rest % lengths[axis], rest // lengths[axis]
            along = taps[axis]                                                       # (count, L)
            shape = (output_size[axis],) + (1,) * (d - 1 - axis)
            starts = xp.reshape(along[:, 0], shape)
            ends = xp.reshape(along[:, -1], shape)
            index = index + xp.minimum(starts + tap, ends) * plane
            plane *= size[axis]
        ctx.mark_non_differentiable(index)
        return out, index

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        hits, *one_hots = ctx.saved_tensors
        xp, lead, output_size, lengths = ctx.xp, ctx.lead, ctx.output_size, ctx.lengths
        d, k = len(output_size), len(lead)
        spread = xp.astype(hits, grad.dtype) * xp.expand_dims(grad, axis=-1)      # (*lead, *out, K)
        spread = xp.reshape(spread, lead + output_size + lengths)
        order = tuple(range(k)) + tuple(v for a in range(d) for v in (k + a, k + d + a))
        spread = xp.reshape(xp.permute_dims(spread, order),
                            lead + tuple(count * length for count, length in zip(output_size, lengths)))
        return _along_axes(xp, spread, [xp.matrix_transpose(m) for m in one_hots])


def _output_size(op, d, input, output_size):
    """``output_size`` as ``d`` positive ints, None keeping the input's size."""
    size = tuple(input.shape[-d:])
    if output_size is None or isinstance(output_size, int):
        output_size = (output_size,) * d
    elif not isinstance(output_size, (tuple, list)) or len(output_size) not in (1, d):
        raise ArgumentError(f"{op}: output_size must be an int or a tuple of {d} ints (or None), got {output_size!r}")
    output_size = tuple(output_size) * (d if len(output_size) == 1 else 1)
    output_size = tuple(n if o is None else spatial_tuple(op, "output_size", o, 1)[0]
                        for n, o in zip(size, output_size))
    check_positive(op, "output_size", output_size)
    if 0 in size:
        raise ShapeError(f"{op}: the input has an empty spatial dim: shape {format_shape(input.shape)}")
    return output_size


def _adaptive_max_pool(op, d, input, output_size, return_indices):
    check_input(op, input, d)
    output_size = _output_size(op, d, input, output_size)
    return AdaptiveMaxPool.apply(input, output_size=output_size, return_indices=bool(return_indices))


def _adaptive_max_reference(d):
    def reference(input, output_size, return_indices=False):
        size = input.shape[-d:]
        output_size = (output_size,) * d if output_size is None or isinstance(output_size, int) else output_size
        output_size = tuple(n if o is None else o for n, o in zip(size, output_size))
        out = np.zeros(input.shape[:-d] + output_size, dtype=input.dtype)
        indices = np.zeros(out.shape, dtype=np.int64)
        for position in np.ndindex(*output_size):
            starts = [i * n // o for i, n, o in zip(position, size, output_size)]
            window = tuple(slice(s, -(-(i + 1) * n // o)) for s, i, n, o in zip(starts, position, size, output_size))
            block = input[(...,) + window]
            flat = block.reshape(block.shape[:-d] + (-1,))
            out[(...,) + position] = flat.max(axis=-1)
            where = np.unravel_index(flat.argmax(axis=-1), block.shape[-d:])
            indices[(...,) + position] = np.ravel_multi_index(tuple(w + s for w, s in zip(where, starts)), size)
        return (out, indices) if return_indices else out
    return reference


def _adaptive_max1d_samples(rng):
    yield Sample((_distinct(rng, (2, 3, 7)), 3), name="non-divisible")
    yield Sample((_distinct(rng, (2, 3, 5)), 4), {"return_indices": True}, name="overlapping windows, indices")
    yield Sample((_distinct(rng, (3, 8)), 4), name="unbatched")


def _adaptive_max2d_samples(rng):
    yield Sample((_distinct(rng, (2, 2, 7, 6)), (3, 4)), name="non-divisible")
    yield Sample((_distinct(rng, (1, 2, 5, 4)), (2, None)), {"return_indices": True}, name="None, indices")
    yield Sample((_distinct(rng, (2, 5, 5)), 1), name="unbatched, global")


def _adaptive_max3d_samples(rng):
    yield Sample((_distinct(rng, (1, 2, 5, 4, 3)), (2, 3, 2)), {"return_indices": True}, name="non-divisible")
    yield Sample((_distinct(rng, (2, 4, 4, 3)), 2), name="unbatched")


@register(_adaptive_max_reference(1), _adaptive_max1d_samples, smooth=False, method=False)
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling over (N, C, L) or (C, L); see :func:`adaptive_max_pool2d`.

    Example::

        vizgrad.adaptive_max_pool1d(vizgrad.tensor([[[1.0, 4.0, 2.0, 3.0]]]), 2)   # [[[4., 3.]]]
    """
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


@register(_adaptive_max_reference(2), _adaptive_max2d_samples, smooth=False, method=False)
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` (an int or a pair; None keeps that size) over
    (N, C, H, W) or (C, H, W).

    Output row i takes the largest value of input rows floor(i·H/h) to ceil((i+1)·H/h) - 1
    (columns alike), as :func:`adaptive_avg_pool2d` places its windows. ``return_indices``
    also returns each maximum's flat index into its H·W plane. The gradient goes to the
    maximum of each window (the first on ties).

    Example::

        x = vizgrad.randn(2, 64, 7, 7, requires_grad=True)
        vizgrad.adaptive_max_pool2d(x, 1).shape          # (2, 64, 1, 1)
    """
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


@register(_adaptive_max_reference(3), _adaptive_max3d_samples, smooth=False, method=False)
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling over (N, C, D, H, W) or (C, D, H, W); see :func:`adaptive_max_pool2d`.

    Example::

        vizgrad.adaptive_max_pool3d(vizgrad.randn(1, 2, 5, 6, 7), 2).shape   # (1, 2, 2, 2, 2)
    """
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool1d` returning (values, indices)."""
    return _adaptive_max_pool("adaptive_max_pool1d_with_indices", 1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool2d` returning (values, indices)."""
    return _adaptive_max_pool("adaptive_max_pool2d_with_indices", 2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool3d` returning (values, indices)."""
    return _adaptive_max_pool("adaptive_max_pool3d_with_indices", 3, input, output_size, True)


# --- max unpooling ----------------------------------------------------------------------------

class MaxUnpool(Op):
    """Values put back at the flat ``indices`` max pooling returned, zeros elsewhere. An index
    met twice (overlapping windows sharing a maximum) holds that value once. The gradient
    reads the output gradient back at the indices."""

    @staticmethod
    def forward(ctx, x, indices, size):
        xp = ctx.xp
        lead = tuple(x.shape[:2])
        flat = xp.reshape(x, lead + (-1,))
        where = xp.reshape(indices, lead + (-1,))
        ctx.save_for_backward(where)
        ctx.input_shape = tuple(x.shape)
        zeros = xp.zeros(lead + (math.prod(size),), dtype=x.dtype, device=x.device)
        total = xp.scatter_add(zeros, 2, where, flat)
        count = xp.scatter_add(zeros, 2, where, xp.ones_like(flat))
        out = xp.where(count > 1, total / xp.maximum(count, xp.ones_like(count)), total)
        return xp.reshape(out, lead + tuple(size))

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        where, = ctx.saved_tensors
        xp = ctx.xp
        flat = xp.reshape(grad, tuple(grad.shape[:2]) + (-1,))
        return xp.reshape(xp.take_along_axis(flat, where, axis=2), ctx.input_shape), None


def _unpool_size(op, d, input, kernel, stride, padding, output_size):
    """PyTorch's output size: (in - 1)·stride - 2·padding + kernel, or ``output_size`` when it
    is within a stride of that."""
    size_in = tuple(input.shape[-d:])
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(size_in, stride, padding, kernel))
    if output_size is None:
        return default
    output_size = tuple(output_size)
    if len(output_size) == d + 2:
        output_size = output_size[2:]
    if len(output_size) != d:
        raise ArgumentError(f"{op}: output_size should be a sequence containing {d} or {d + 2} elements, but it "
                            f"has a length of '{len(output_size)}'")
    for n, want, s in zip(default, output_size, stride):
        if not n - s < want < n + s:
            raise ArgumentError(f"{op}: invalid output_size {output_size!r} (dim {output_size.index(want)} must "
                                f"be between {n - s} and {n + s})")
    return tuple(int(v) for v in output_size)


def _max_unpool(op, d, input, indices, kernel_size, stride, padding, output_size):
    unbatched = check_input(op, input, d)
    if not is_tensor(indices):
        raise not_a_tensor(op, "indices", indices)
    if indices.dtype.name != "int64":
        raise DTypeError(f"{op}: indices must be an int64 tensor, got {indices.dtype.name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected indices of the input's shape {format_shape(input.shape)}, got "
                         f"{format_shape(indices.shape)}")
    kernel, stride, padding, _ = _pool_arguments(op, d, kernel_size, stride, padding)
    size = _unpool_size(op, d, input, kernel, stride, padding, output_size)
    plane = math.prod(size)
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= plane):
        bad = int(indices.max()) if int(indices.max()) >= plane else int(indices.min())
        raise ArgumentError(f"{op}: found an invalid max index {bad} (output volumes are of size "
                            f"{'x'.join(str(n) for n in size)})")
    if unbatched:
        return MaxUnpool.apply(input.unsqueeze(0), indices.unsqueeze(0), size=size).squeeze(0)
    return MaxUnpool.apply(input, indices, size=size)


def _max_unpool_reference(d):
    def reference(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        kernel, stride, padding, _ = _pool_arguments("", d, kernel_size, stride, padding)
        size = output_size[-d:] if output_size is not None else tuple(
            (n - 1) * s - 2 * p + k for n, s, p, k in zip(input.shape[-d:], stride, padding, kernel))
        lead = input.shape[:-d]
        out = np.zeros(lead + (math.prod(size),), dtype=input.dtype)
        flat_x, flat_i = input.reshape(lead + (-1,)), indices.reshape(lead + (-1,))
        for position in np.ndindex(*flat_x.shape):
            out[position[:-1] + (flat_i[position],)] = flat_x[position]
        return out.reshape(lead + tuple(size))
    return reference


def _unpool_sample(rng, d, shape, kernel, **options):
    """An input and the indices of a max pooling of a larger input: what unpooling is given
    (windows that do not overlap, so that no index is met twice)."""
    pooled_options = {k: v for k, v in options.items() if k in ("stride", "padding")}
    big = _distinct(rng, shape)
    out, indices = _max_pool_reference(d)(big, kernel, return_indices=True, **pooled_options)
    kernel_, stride, padding, _ = _pool_arguments("", d, kernel, options.get("stride"), options.get("padding", 0))
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(out.shape[-d:], stride, padding, kernel_))
    if default != shape[-d:]:
        options = {**options, "output_size": shape[-d:]}
    return Sample((values(rng, out.shape), indices, kernel), options)


def _max_unpool1d_samples(rng):
    yield _unpool_sample(rng, 1, (2, 3, 8), 2)
    yield _unpool_sample(rng, 1, (2, 2, 9), 3, stride=3, padding=1)
    yield _unpool_sample(rng, 1, (2, 7), 2, output_size=(7,))


def _max_unpool2d_samples(rng):
    yield _unpool_sample(rng, 2, (2, 2, 4, 6), 2)
    yield _unpool_sample(rng, 2, (1, 2, 7, 5), 3, stride=(3, 4), padding=1)
    yield _unpool_sample(rng, 2, (1, 2, 5, 5), 2, output_size=(1, 2, 5, 5))
    yield _unpool_sample(rng, 2, (2, 4, 4), 2)


def _max_unpool3d_samples(rng):
    yield _unpool_sample(rng, 3, (1, 2, 4, 4, 2), 2)
    yield _unpool_sample(rng, 3, (2, 3, 5, 4), (2, 3, 2), stride=(2, 3, 2), padding=(1, 1, 0))


@register(_max_unpool_reference(1), _max_unpool1d_samples, method=False)
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool1d`: see :func:`max_unpool2d`.

    Example::

        y, where = vizgrad.max_pool1d(vizgrad.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2, return_indices=True)
        vizgrad.max_unpool1d(y, where, 2)                  # [[[0., 3., 0., 5.]]]
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@register(_max_unpool_reference(2), _max_unpool2d_samples, method=False)
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d`: each value of ``input`` (N, C, h, w) is put
    at its flat index (``indices``, as ``max_pool2d(..., return_indices=True)`` gives them)
    in an (N, C, H, W) output of zeros, H = (h - 1)·stride - 2·padding + kernel (or
    ``output_size``). dL/dinput[i] = G[indices[i]].

    Example::

        x = vizgrad.randn(1, 1, 4, 4)
        y, where = vizgrad.max_pool2d(x, 2, return_indices=True)
        vizgrad.max_unpool2d(y, where, 2).shape               # (1, 1, 4, 4)
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@register(_max_unpool_reference(3), _max_unpool3d_samples, method=False)
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d`: see :func:`max_unpool2d`.

    Example::

        y, where = vizgrad.max_pool3d(vizgrad.randn(1, 1, 4, 4, 4), 2, return_indices=True)
        vizgrad.max_unpool3d(y, where, 2).shape               # (1, 1, 4, 4, 4)
    """
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# --- power-average pooling and local response normalization -----------------------------------

def _lp_pool(op, d, input, norm_type, kernel_size, stride, ceil_mode):
    # integers and bools are PyTorch's too: x^p is then an average pooling's input (int64 or float)
    check_input(op, input, d, integers=True, bools=True)
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)) or norm_type == 0:
        raise ArgumentError(f"{op}: norm_type must be a non-zero number, got {norm_type!r}")
    kernel = spatial_tuple(op, "kernel_size", kernel_size, d)
    check_positive(op, "kernel_size", kernel)
    pooled = _avg_pool(op, d, input.pow(norm_type), kernel, stride, 0, ceil_mode, True, None)
    return (pooled * math.prod(kernel)).pow(1.0 / norm_type)


def _lp_pool_reference(d):
    def reference(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        kernel = spatial_tuple("", "", kernel_size, d)
        pooled = _avg_pool_reference(d)(input ** norm_type, kernel, stride, 0, ceil_mode)
        return (pooled * math.prod(kernel)) ** (1.0 / norm_type)
    return reference


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, size=shape)


def _lp_pool1d_samples(rng):
    yield Sample((_positive(rng, (2, 3, 8)), 2, 2), name="p 2")
    yield Sample((_positive(rng, (2, 2, 9)), 3, 3), {"stride": 2, "ceil_mode": True}, name="p 3, ceil_mode")
    yield Sample((_positive(rng, (3, 7)), 1.5, 2), {"stride": 1}, name="unbatched, p 1.5")


def _lp_pool2d_samples(rng):
    yield Sample((_positive(rng, (2, 2, 4, 6)), 2, 2), name="p 2")
    yield Sample((_positive(rng, (1, 2, 5, 5)), 3, (2, 3)), {"stride": (1, 2), "ceil_mode": True},
                 name="p 3, ceil_mode")
    yield Sample((_positive(rng, (2, 5, 4)), 1.5, 2), name="unbatched")


def _lp_pool3d_samples(rng):
    yield Sample((_positive(rng, (1, 2, 4, 4, 4)), 2, 2), name="p 2")
    yield Sample((_positive(rng, (2, 3, 5, 4)), 3, (2, 2, 3)), {"stride": 1}, name="unbatched, p 3")


@register(_lp_pool_reference(1), _lp_pool1d_samples, method=False)
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-D power-average pooling over (N, C, L) or (C, L); see :func:`lp_pool2d`.

    Example::

        vizgrad.lp_pool1d(vizgrad.tensor([[[3.0, 4.0]]]), 2, 2)    # [[[5.]]]
    """
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


@register(_lp_pool_reference(2), _lp_pool2d_samples, method=False)
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling over (N, C, H, W) or (C, H, W): the p-norm of each window,
    out = (Σ_window x^p)^(1/p) with p = ``norm_type`` (p = 1: sum pooling; p → ∞: max
    pooling). Computed as (K · avg_pool(x^p))^(1/p), K the kernel's size, so gradients are
    those of the pieces. No padding, as in PyTorch.

    Example::

        vizgrad.lp_pool2d(vizgrad.rand(1, 3, 8, 8), 2, 2).shape    # (1, 3, 4, 4)
    """
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


@register(_lp_pool_reference(3), _lp_pool3d_samples, method=False)
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling over (N, C, D, H, W) or (C, D, H, W); see :func:`lp_pool2d`.

    Example::

        vizgrad.lp_pool3d(vizgrad.rand(1, 2, 4, 4, 4), 2, 2).shape    # (1, 2, 2, 2, 2)
    """
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def _local_response_norm_reference(input, size, alpha=1e-4, beta=0.75, k=1.0):
    squares = np.pad(input ** 2, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (input.ndim - 2))
    channels = input.shape[1]
    window = sum(squares[:, i:i + channels] for i in range(size)) / size
    return input / (k + alpha * window) ** beta


def _local_response_norm_samples(rng):
    yield Sample((values(rng, (2, 5, 3)), 3), name="3-D")
    yield Sample((values(rng, (2, 6, 3, 4)), 2), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, name="4-D, even size")
    yield Sample((values(rng, (1, 4, 2, 3, 2)), 5), {"alpha": 0.2}, name="5-D, size > channels")


@register(_local_response_norm_reference, _local_response_norm_samples, method=False)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization (AlexNet's) over (N, C, *) inputs: each value divided by
    the mean square of its ``size`` neighbouring channels (zero-padded at the ends),

    out[n, c] = x[n, c] / (k + alpha/size · Σ_{c' = c - size//2}^{c + (size-1)//2} x[n, c']²)^beta.

    The channel window is an average pooling of x² along the channels.

    Example::

        F.local_response_norm(vizgrad.randn(2, 8, 5, 5), size=3).shape    # (2, 8, 5, 5)
    """
    op = "local_response_norm"
    if not is_tensor(input):
        raise not_a_tensor(op, "input", input)
    if input.ndim < 3:
        raise ShapeError(f"{op}: expected 3D or higher dimensionality input (got {input.ndim} dimensions, shape "
                         f"{format_shape(input.shape)})")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ArgumentError(f"{op}: size must be a positive int, got {size!r}")
    if input.dtype.name == "bool":       # (integers are averaged as PyTorch's int64 average pooling does)
        raise DTypeError(f"{op}: input must be a floating-point or int64 tensor, got bool, as in PyTorch; convert "
                         "with .float() first")
    if input.numel() == 0:
        return input.clone()
    shape = tuple(input.shape)
    channels = shape[1]
    # (N, C, *rest) -> (N·rest, 1, C): the channels become a length to pool along
    along = input.reshape(shape[0], channels, -1).permute(0, 2, 1).reshape(-1, 1, channels)
    padded = _pad(along * along, (size // 2, (size - 1) // 2))
    window = _avg_pool(op, 1, padded, size, 1, 0, False, True, None)
    window = window.reshape(shape[0], -1, channels).permute(0, 2, 1).reshape(shape)
    return input / (window * alpha + k).pow(beta)



# --- grid_sample, affine_grid: sampling at arbitrary points ---------------------------------------
# Compositions of differentiable ops: the sampling points come from the grid (unnormalized, then
# clipped or reflected per padding_mode), the input values at the neighbouring pixels are gathered
# (their gradient scatters back) and mixed with weights that are differentiable in the grid, so
# both gradients, and second derivatives, come from the pieces.

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _unnormalize(coordinate, size, align_corners):
    """[-1, 1] to pixel coordinates: -1 and 1 are the corner pixels' centres (align_corners) or
    their outer edges."""
    if align_corners:
        return (coordinate + 1) * ((size - 1) / 2)
    return ((coordinate + 1) * size - 1) / 2


def _reflect(coordinate, twice_low, twice_high):
    """``coordinate`` folded back and forth into [twice_low/2, twice_high/2]."""
    from . import unary, binary
    if twice_low == twice_high:
        return coordinate * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = unary.abs(coordinate - low)
    extra = binary.fmod(distance, span)
    flips = unary.floor(distance.detach() / span)
    even = binary.remainder(flips, 2) == 0
    return binary.where(even, extra + low, (span - extra) + low)


def _source_coordinate(coordinate, size, padding_mode, align_corners):
    from . import binary
    coordinate = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "reflection":
        coordinate = (_reflect(coordinate, 0, 2 * (size - 1)) if align_corners
                      else _reflect(coordinate, -1, 2 * size - 1))
    if padding_mode in ("border", "reflection"):
        coordinate = binary.clamp(coordinate, 0, size - 1)
    return coordinate


def _grid_sample_reference(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    d = input.ndim - 2
    size = input.shape[2:]
    out = np.zeros(input.shape[:2] + grid.shape[1:-1], dtype=input.dtype)

    def reflect(x, twice_low, twice_high):
        if twice_low == twice_high:
            return 0.0
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        x = abs(x - low)
        extra, flips = math.fmod(x, span), math.floor(x / span)
        return extra + low if flips % 2 == 0 else span - extra + low

    for n in range(input.shape[0]):
        for position in np.ndindex(*grid.shape[1:-1]):
            point = []
            for axis in range(d):
                n_axis = size[axis]
                c = float(grid[(n,) + position + (d - 1 - axis,)])
                c = (c + 1) / 2 * (n_axis - 1) if align_corners else ((c + 1) * n_axis - 1) / 2
                if padding_mode == "reflection":
                    c = reflect(c, 0, 2 * (n_axis - 1)) if align_corners else reflect(c, -1, 2 * n_axis - 1)
                if padding_mode != "zeros":
                    c = min(max(c, 0), n_axis - 1)
                point.append(c)
            if mode == "nearest":
                corners = [(tuple(int(np.rint(c)) for c in point), 1.0)]
            else:
                corners = []
                for bits in np.ndindex(*(2,) * d):
                    index = tuple(int(math.floor(c)) + b for c, b in zip(point, bits))
                    weight = math.prod((c - math.floor(c)) if b else (1 - (c - math.floor(c)))
                                       for c, b in zip(point, bits))
                    corners.append((index, weight))
            for index, weight in corners:
                if all(0 <= i < m for i, m in zip(index, size)):
                    out[(n, slice(None)) + position] += weight * input[(n, slice(None)) + index]
    return out


def _grid(rng, shape):
    """Sampling points in [-1.2, 1.2], off the pixel lattice (where bilinear weights have kinks)."""
    return rng.uniform(-1.2, 1.2, size=shape) + 0.0137


def _grid_sample_samples(rng):
    yield Sample((values(rng, (2, 2, 4, 5)), _grid(rng, (2, 3, 4, 2))), {"align_corners": False},
                 name="bilinear, zeros")
    yield Sample((values(rng, (1, 3, 4, 3)), _grid(rng, (1, 2, 5, 2))), {"align_corners": True},
                 name="bilinear, align_corners")
    yield Sample((values(rng, (1, 2, 4, 5)), _grid(rng, (1, 3, 3, 2))),
                 {"padding_mode": "border", "align_corners": False}, name="border")
    yield Sample((values(rng, (1, 2, 4, 5)), _grid(rng, (1, 3, 3, 2)) * 1.5),
                 {"padding_mode": "reflection", "align_corners": False}, name="reflection")
    yield Sample((values(rng, (1, 2, 4, 5)), _grid(rng, (1, 3, 3, 2)) * 1.5),
                 {"padding_mode": "reflection", "align_corners": True}, name="reflection, align_corners")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), _grid(rng, (1, 2, 2, 3, 3))), {"align_corners": False},
                 name="trilinear")
    yield Sample((values(rng, (2, 2, 4, 5)), _grid(rng, (2, 3, 4, 2))), {"mode": "nearest", "align_corners": False},
                 name="nearest")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), _grid(rng, (1, 2, 2, 3, 3))),
                 {"mode": "nearest", "padding_mode": "border", "align_corners": True}, name="nearest, 3-D, border")


@register(_grid_sample_reference, _grid_sample_samples, method=False)
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """The values of ``input`` (N, C, H, W) at the points of ``grid`` (N, H_out, W_out, 2), in
    normalized coordinates: x = -1 is the left edge, 1 the right (y alike); 5-D inputs take
    (N, D_out, H_out, W_out, 3) grids (x, y, z).

    ``mode='bilinear'`` mixes the 2^d pixels around each point with weights (1 - λ) and λ per
    axis (trilinear in 3-D); ``'nearest'`` takes the closest pixel. Points outside read zeros
    (``padding_mode='zeros'``), the border pixel (``'border'``) or the reflected point
    (``'reflection'``). ``align_corners`` puts ±1 on the corner pixels' centres instead of
    their outer edges (default False, with PyTorch's warning when not given). Gradients
    flow to the input (scattered back to the pixels read) and to the grid (through the
    weights; none for ``nearest``).

    Example::

        x = vizgrad.arange(16.0).reshape(1, 1, 4, 4)
        grid = vizgrad.zeros(1, 1, 1, 2)                        # the centre
        F.grid_sample(x, grid, align_corners=False)             # tensor([[[[7.5000]]]])
    """
    import warnings
    from . import binary, compare, unary, index
    from .. import dtypes
    op = "grid_sample"
    for name, value in (("input", input), ("grid", grid)):
        if not is_tensor(value):
            raise not_a_tensor(op, name, value)
    if input.ndim not in (4, 5):
        raise ShapeError(f"{op}: expected a 4-D or 5-D input, got shape {format_shape(input.shape)}")
    d = input.ndim - 2
    if grid.ndim != input.ndim or grid.shape[-1] != d or grid.shape[0] != input.shape[0]:
        raise ShapeError(f"{op}: grid of shape {format_shape(grid.shape)} must be (N={input.shape[0]}, "
                         f"{', '.join(['*'] * d)}, {d}) for an input of shape {format_shape(input.shape)}")
    if not input.is_floating_point() or grid.dtype != input.dtype:
        raise DTypeError(f"{op}: expected input and grid of one floating point dtype, got {input.dtype.name} "
                         f"and {grid.dtype.name}")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ArgumentError(f"{op}: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'")
    if mode == "bicubic":
        raise NotImplementedError(f"{op}: mode 'bicubic' is not supported by vizgrad; use 'bilinear' or 'nearest'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ArgumentError(f"{op}: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                            f"'{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    batch, channels = input.shape[:2]
    size = tuple(input.shape[2:])
    out_shape = tuple(grid.shape[1:-1])
    points = [_source_coordinate(grid[..., d - 1 - axis], size[axis], padding_mode, align_corners)
              for axis in range(d)]                                        # per spatial axis, (N, *out)
    flat_input = input.reshape(batch, channels, -1)
    strides = [math.prod(size[axis + 1:]) for axis in range(d)]

    def read(indices):
        """input at integer points (per axis, (N, *out) int64), zero outside."""
        inside = None
        flat = 0
        for i, n, stride in zip(indices, size, strides):
            ok = compare.logical_and(i >= 0, i < n)
            inside = ok if inside is None else compare.logical_and(inside, ok)
            flat = flat + binary.clamp(i, 0, n - 1) * stride
        where = flat.reshape(batch, 1, -1).expand(batch, channels, flat.numel() // batch)
        picked = index.gather(flat_input, 2, where).reshape((batch, channels) + out_shape)
        return picked, inside.unsqueeze(1)

    if mode == "nearest":
        picked, inside = read([unary.round(p.detach()).to(dtype=dtypes.int64) for p in points])
        return binary.where(inside, picked, picked * 0)
    lows = [unary.floor(p.detach()) for p in points]
    fractions = [p - low for p, low in zip(points, lows)]
    total = None
    for bits in itertools.product((0, 1), repeat=d):
        picked, inside = read([(low + b).to(dtype=dtypes.int64) for low, b in zip(lows, bits)])
        weight = None
        for fraction, b in zip(fractions, bits):
            factor = fraction if b else 1 - fraction
            weight = factor if weight is None else weight * factor
        term = binary.where(inside, picked, picked * 0) * weight.unsqueeze(1)
        total = term if total is None else total + term
    return total


def _affine_grid_reference(theta, size, align_corners=None):
    d = len(size) - 2
    axes = []
    for n in reversed(size[2:]):   # x (W) first
        if n <= 1:
            axes.append(np.zeros(max(n, 1)))
        elif align_corners:
            axes.append(np.linspace(-1, 1, n))
        else:
            axes.append((np.arange(n) * 2 + 1) / n - 1)
    mesh = np.meshgrid(*reversed(axes), indexing="ij")                        # (D, H, W) order
    base = np.stack(list(reversed(mesh)) + [np.ones_like(mesh[0])], axis=-1)  # (..., x, y, z, 1)
    return np.einsum("...k,njk->n...j", base, theta).astype(theta.dtype)


def _affine_grid_samples(rng):
    yield Sample((values(rng, (2, 2, 3)), (2, 3, 4, 5)), {"align_corners": False}, name="2-D")
    yield Sample((values(rng, (1, 2, 3)), (1, 1, 3, 2)), {"align_corners": True}, name="2-D, align_corners")
    yield Sample((values(rng, (2, 3, 4)), (2, 1, 2, 3, 4)), {"align_corners": False}, name="3-D")


@register(_affine_grid_reference, _affine_grid_samples, method=False)
def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) for a ``size`` (N, C, H, W)
    output (or (N, 3, 4) for (N, C, D, H, W)): each output pixel's normalized coordinates
    (x, y[, z], 1), mapped by theta, ready for :func:`grid_sample` (a spatial transformer).

    grid[n, i, j] = theta[n] · (x_j, y_i, 1), with x_j = -1 + (2j + 1)/W (or linspace(-1, 1, W)
    with ``align_corners``). A matrix product, so dL/dtheta = Σ G ⊗ base.

    Example::

        theta = vizgrad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])         # the identity
        F.affine_grid(theta, (1, 1, 2, 2), align_corners=False)[0, 0]       # [[-0.5, -0.5], [0.5, -0.5]]
    """
    import warnings
    from .. import creation
    op = "affine_grid"
    if not is_tensor(theta):
        raise not_a_tensor(op, "theta", theta)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise DTypeError(f"{op}: expected theta to have floating point type, but got {theta.dtype.name}")
    from ..errors import as_int
    if isinstance(size, (str, bytes)) or not hasattr(size, "__len__"):
        raise ArgumentTypeError(f"{op}: size must be a sequence of 4 or 5 ints (N, C, *spatial), got {size!r}")
    size = tuple(as_int(op, "size", n) for n in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"{op}: only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {format_shape(size)}.")
    d = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (d, d + 1):
        raise ShapeError(f"{op}: expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size "
                         f"{format_shape(size)}. Got {format_shape(theta.shape)}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ShapeError(f"{op}: expected non-zero, positive output size. Got {format_shape(size)}")
    if theta.shape[0] != size[0]:
        raise ShapeError(f"{op}: theta has {theta.shape[0]} matrices but size asks for a batch of {size[0]}")
    base = _affine_grid_reference(np.eye(d, d + 1)[None], (1, 1) + size[2:], align_corners)[0]
    base = np.concatenate([base, np.ones(base.shape[:-1] + (1,))], axis=-1)      # (*spatial, d + 1)
    points = creation.tensor(base.reshape(-1, d + 1), dtype=theta.dtype, device=theta.device)
    return (points @ theta.transpose(1, 2)).reshape((size[0],) + size[2:] + (d,))


# exported by nn.functional besides the registered ops
__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]
