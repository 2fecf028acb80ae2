"""Pooling and resizing: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d and
interpolate, as ``torch.nn.functional`` has them.

Max and average pooling copy the windows of :mod:`vizgrad.ops.conv` once, one plane
per kernel tap, and reduce over the taps; their backwards put each output gradient
back on its window with ``fold_windows``. Adaptive average pooling
and interpolation are linear maps along each spatial axis, so they are products with
small constant matrices: out = A_H · x · A_Wᵀ, and the gradient is A_Hᵀ · G · A_W.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..errors import ShapeError, format_shape, ArgumentError, ArgumentTypeError
from .conv import (BATCH_LAST_AXES, Windows, batch_first, batch_last, check_input, check_positive, fold_windows,
                   is_tensor, spatial_tuple, window_count, window_view)
from .registry import Sample, register
from .samples import values


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
    one on ties, as in PyTorch): a one-hot mask over the taps of each window says where,
    kept as booleans (a quarter of float32's memory) until backward needs it."""

    @staticmethod
    def forward(ctx, x, windows, return_indices):
        xp = ctx.xp
        ctx.windows = windows
        taps = _taps(xp, x, windows, -xp.inf)
        out = xp.max(taps, axis=0)
        hits = _first_max(xp, taps, out)
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


def _first_max(xp, taps, out):
    """True at the first tap of each window that holds its maximum: (K, C, *out, N)."""
    planes, seen = [], None
    for k in range(taps.shape[0]):
        hit = taps[k, ...] == out
        if seen is None:
            seen = hit
        else:
            hit = xp.logical_and(hit, xp.logical_not(seen))
            seen = xp.logical_or(seen, hit)
        planes.append(hit)
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
    check_input(op, input, d)
    kernel, stride, padding, dilation = _pool_arguments(op, d, kernel_size, stride, padding, dilation)
    windows = _pool_windows(op, tuple(input.shape[-d:]), kernel, stride, padding, dilation, ceil_mode)
    return _with_batch(input, d, lambda x: MaxPool.apply(x, windows=windows, return_indices=bool(return_indices)))


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


# --- average pooling -----------------------------------------------------------------------

class AvgPool(Op):
    """The mean of each window: the window sum over a divisor per output position."""

    @staticmethod
    def forward(ctx, x, windows, padding, count_include_pad, divisor_override):
        xp = ctx.xp
        ctx.windows = windows
        divisor = _divisor(xp, windows, padding, count_include_pad, divisor_override, x.dtype, x.device)
        ctx.save_for_backward(divisor)
        return batch_first(xp, xp.sum(_taps(xp, x, windows), axis=0)) / divisor

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
    check_input(op, input, d)
    kernel, stride, padding, dilation = _pool_arguments(op, d, kernel_size, stride, padding)
    if divisor_override is not None and (isinstance(divisor_override, bool) or divisor_override == 0):
        raise ArgumentError(f"{op}: divisor_override must be a non-zero number, got {divisor_override!r}")
    windows = _pool_windows(op, tuple(input.shape[-d:]), kernel, stride, padding, dilation, ceil_mode)
    return _with_batch(input, d, lambda x: AvgPool.apply(
        x, windows=windows, padding=padding, count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override))


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


# --- linear maps along each spatial axis: adaptive average pooling, interpolation -----------

def _along_axes(xp, x, matrices):
    """``x`` with one matrix applied along each trailing axis: (..., H, W) -> (..., h, w)."""
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
    @staticmethod
    def forward(ctx, x, output_size):
        xp = ctx.xp
        d = len(output_size)
        matrices = [_adaptive_matrix(xp, n, count, x.dtype, x.device)
                    for n, count in zip(x.shape[-d:], output_size)]
        ctx.save_for_backward(*matrices)
        return _along_axes(xp, x, matrices)

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


def _nearest_matrix(xp, n, count, scale, exact, dtype, device):
    """Row i picks x[min(floor(i·scale), n - 1)] (``nearest``) or x[min(floor((i + 0.5)·scale),
    n - 1)] (``nearest-exact``), computed in float32 as PyTorch does (which also special-cases
    ``nearest`` keeping or doubling the size)."""
    dst = xp.astype(xp.arange(count, device=device), xp.float32)
    if exact:
        dst = dst + 0.5
    if not exact and count in (n, 2 * n):   # PyTorch copies when the size is kept and halves when doubled
        source = xp.arange(count, dtype=xp.int64, device=device) // (count // n)
    else:
        source = xp.minimum(xp.astype(xp.floor(dst * (1.0 / scale if scale else n / count)), xp.int64), n - 1)
    taps = xp.arange(n, dtype=xp.int64, device=device)
    return xp.astype(taps == source[:, None], dtype)


def _linear_matrix(xp, n, count, scale, align_corners, dtype, device):
    """Row i mixes the two inputs around the source point src_i with weights 1 - λ and λ:
    src_i = i·(n-1)/(count-1) with ``align_corners``, else max((i + 0.5)·n/count - 0.5, 0)."""
    dst = xp.astype(xp.arange(count, device=device), xp.float64)
    if align_corners:
        source = dst * ((n - 1) / (count - 1) if count > 1 else 0.0)
    else:
        source = xp.maximum((dst + 0.5) * (1.0 / scale if scale else n / count) - 0.5, 0.0)
    left = xp.floor(source)
    weight = (source - left)[:, None]
    left = xp.astype(left, xp.int64)
    right = xp.minimum(left + 1, n - 1)
    taps = xp.arange(n, dtype=xp.int64, device=device)
    matrix = (xp.astype(taps == left[:, None], xp.float64) * (1.0 - weight)
              + xp.astype(taps == right[:, None], xp.float64) * weight)
    return xp.astype(matrix, dtype)


class Interpolate(Op):
    @staticmethod
    def forward(ctx, x, size, scales, mode, align_corners):
        xp = ctx.xp
        ctx.mode = mode      # (names the node as PyTorch does: UpsampleBilinear2DBackward0, ...)
        d = len(size)
        if mode in ("nearest", "nearest-exact"):
            matrices = [_nearest_matrix(xp, n, count, scale, mode == "nearest-exact", x.dtype, x.device)
                        for n, count, scale in zip(x.shape[-d:], size, scales)]
        else:
            matrices = [_linear_matrix(xp, n, count, scale, align_corners, x.dtype, x.device)
                        for n, count, scale in zip(x.shape[-d:], size, scales)]
        ctx.save_for_backward(*matrices)
        return _along_axes(xp, x, matrices)

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        return _along_axes(xp, grad, [xp.matrix_transpose(m) for m in ctx.saved_tensors])


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
    (i + 0.5)·scale - 0.5 (the default, False). Each mode is a fixed matrix per axis,
    out = A_H · x · A_Wᵀ, so dL/dx = A_Hᵀ · G · A_W.

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
