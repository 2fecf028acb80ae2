"""Adaptive pooling: adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d (with their
``*_with_indices`` forms), as ``torch.nn.functional`` has them: windows that tile the input
into a given output size.

Both gather the taps of each window along each spatial axis, so that an inf or NaN reaches
only the outputs that read it, as in PyTorch; their gradients scatter each output's gradient
back to its window's taps alone (``_to_taps``, an index_add), so that an inf or NaN gradient
reaches only the inputs of its window (a product with the 0/1 averaging or selection matrix
would make NaN of every 0 times it).
"""

import math

import numpy as np

from ..autograd.function import Op
from ..errors import ShapeError, format_shape, ArgumentError
from .conv import check_input, check_positive, spatial_tuple
from .pooling import _distinct
from .registry import Sample, register
from .samples import values


# --- the windows along each spatial axis --------------------------------------------------

def _windows(xp, n, count, device):
    """``(taps, kept, lengths)`` of the ``count`` windows tiling ``n``: window i is
    x[start_i:end_i], start_i = floor(i·n/count), end_i = ceil((i+1)·n/count); ``taps`` (count, L)
    its indices, the last repeated to the longest window's length L, ``kept`` (count, L) whether
    a tap is the window's own (not a repeat), ``lengths`` (count,) end_i - start_i."""
    i = xp.arange(count, dtype=xp.int64, device=device)
    start, end = (i * n) // count, ((i + 1) * n + count - 1) // count
    longest = max(-(-(k + 1) * n // count) - k * n // count for k in range(count))
    taps = start[:, None] + xp.arange(longest, dtype=xp.int64, device=device)[None, :]
    return xp.minimum(taps, end[:, None] - 1), taps < end[:, None], end - start


def _to_taps(xp, spread, axis, n, taps):
    """The gradient of gathering ``taps`` (count, L) along ``axis``: ``spread`` holds, along
    ``axis``, count·L values (window by window, 0 for a tap that is no window's own), each added
    into the input position its tap read (an input of ``n`` along ``axis``)."""
    shape = spread.shape[:axis] + (n,) + spread.shape[axis + 1:]
    into = xp.zeros(shape, dtype=spread.dtype, device=spread.device)
    return xp.index_add(into, axis, xp.reshape(taps, (-1,)), spread)


class AdaptiveAvgPool(Op):
    """The mean of each adaptive window, along one axis at a time: the window's taps gathered
    (the last repeated to the longest window's length, and left out), so that an inf or NaN
    reaches only the windows that hold it, as in PyTorch. Backward gives each tap of a window
    its gradient over the window's length, one axis at a time."""

    @staticmethod
    def forward(ctx, x, output_size):
        xp = ctx.xp
        d = len(output_size)
        size = ctx.size = tuple(x.shape[-d:])
        windows = [_windows(xp, n, count, x.device) for n, count in zip(size, output_size)]
        ctx.save_for_backward(*(array for window in windows for array in window))
        for k, (n, count) in enumerate(zip(size, output_size)):
            axis = x.ndim - d + k
            if n % count == 0:             # windows side by side, of one length (global pooling): a reshape
                x = xp.mean(xp.reshape(x, tuple(x.shape[:axis]) + (count, n // count) + tuple(x.shape[axis + 1:])),
                            axis=axis + 1)
                continue
            taps, kept, lengths = windows[k]
            length = taps.shape[1]
            cut = xp.reshape(xp.take(x, xp.reshape(taps, (-1,)), axis=axis),
                             tuple(x.shape[:axis]) + (count, length) + tuple(x.shape[axis + 1:]))
            trailing = (1,) * (x.ndim - axis - 1)
            total = xp.sum(xp.where(xp.reshape(kept, (count, length) + trailing), cut, xp.zeros_like(cut)),
                           axis=axis + 1)
            x = total / xp.reshape(xp.astype(lengths, x.dtype), (count,) + trailing)
        return x

    @staticmethod
    def backward(ctx, grad):
        xp, size, saved = ctx.xp, ctx.size, ctx.saved_tensors
        for k, n in enumerate(size):
            axis = grad.ndim - len(size) + k
            count = grad.shape[axis]
            taps, kept, lengths = saved[3 * k:3 * k + 3]
            trailing = (1,) * (grad.ndim - axis - 1)
            share = grad / xp.reshape(xp.astype(lengths, grad.dtype), (count,) + trailing)
            spread = xp.keep_where(xp.reshape(kept, (count, taps.shape[1]) + trailing),
                                   xp.expand_dims(share, axis=axis + 1))
            grad = _to_taps(xp, xp.reshape(spread, tuple(grad.shape[:axis]) + (-1,) + tuple(grad.shape[axis + 1:])),
                            axis, n, taps)
        return grad


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


# --- adaptive max pooling ------------------------------------------------------------------
# Window i along an axis of n inputs covers [floor(i·n/count), ceil((i+1)·n/count)), as in
# adaptive average pooling; windows differ in length by at most one, so each is cut out at the
# longest length L with its last tap repeated (a repeat never wins over the first: argmax takes
# the first maximum). Cutting out is ``take`` along each axis; its adjoint, in backward, is a
# product with the one-hot matrix (count·L, n) of the taps, transposed.

class AdaptiveMaxPool(Op):
    """The largest value of each adaptive window; the gradient goes to it alone (the first on
    ties, the last NaN where the window holds NaN, as in PyTorch)."""

    @staticmethod
    def forward(ctx, x, output_size, return_indices):
        xp = ctx.xp
        d = len(output_size)
        size = tuple(x.shape[-d:])
        lead = tuple(x.shape[:-d])
        taps = [_windows(xp, n, count, x.device)[0] for n, count in zip(size, output_size)]
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
        ctx.output_size, ctx.lengths, ctx.lead, ctx.size = tuple(output_size), lengths, lead, size
        ctx.save_for_backward(hits, *taps)
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
        hits, *taps = ctx.saved_tensors
        xp, lead, output_size, lengths = ctx.xp, ctx.lead, ctx.output_size, ctx.lengths
        d, k = len(output_size), len(lead)
        spread = xp.keep_where(hits, xp.expand_dims(grad, axis=-1))   # (*lead, *out, K): the maximum's tap alone
        spread = xp.reshape(spread, lead + output_size + lengths)
        order = tuple(range(k)) + tuple(v for a in range(d) for v in (k + a, k + d + a))
        spread = xp.reshape(xp.permute_dims(spread, order),
                            lead + tuple(count * length for count, length in zip(output_size, lengths)))
        for axis, (n, window_taps) in enumerate(zip(ctx.size, taps), start=k):
            spread = _to_taps(xp, spread, axis, n, window_taps)
        return spread


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



# exported by nn.functional besides the registered ops
__all__ = ["adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]
