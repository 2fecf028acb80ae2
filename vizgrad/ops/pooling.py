"""Window pooling: max_pool1d/2d/3d, avg_pool1d/2d/3d, max_unpool1d/2d/3d, lp_pool1d/2d/3d
and local_response_norm, as ``torch.nn.functional`` has them. Adaptive pooling is in
:mod:`vizgrad.ops.adaptive_pooling`, interpolation and grid sampling in
:mod:`vizgrad.ops.resampling`.

Max and average pooling copy the windows of :mod:`vizgrad.ops.conv` once, one plane
per kernel tap, and reduce over the taps; their backwards put each output gradient
back on its window with ``fold_windows``.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..errors import ShapeError, format_shape, ArgumentError, DTypeError, not_a_tensor
from .conv import (BATCH_LAST_AXES, Windows, batch_first, batch_last, check_input, check_positive, fold_windows,
                   is_tensor, spatial_tuple, window_count, window_view)
from .registry import Sample, register
from .samples import values
from .padding import pad as _pad


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
        # the other taps get 0, not 0 times the gradient: an inf or NaN reaches its maximum alone
        return _fold_taps(xp, xp.keep_where(hits, xp.expand_dims(batch_last(xp, grad), axis=0)), ctx.windows)


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




# exported by nn.functional besides the registered ops
__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices"]
