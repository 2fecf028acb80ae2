"""Convolutions: conv1d, conv2d, conv3d and their transposes, as ``torch.nn.functional`` has them.

A convolution is a matrix product over windows (im2col). :class:`Windows` says where
the windows of a padded input sit; :class:`Unfold` cuts them out, a strided view
that is copied once into a matrix; :class:`Fold` sums windows back onto an input
(col2im). Unfold and Fold are adjoints, so each is the other's backward, and every
backward here is written with them plus ``matmul``, ``reshape`` and ``permute_dims``,
which gives second derivatives for free.

Shapes, with ``K = prod(kernel)`` and ``P = prod(out)``::

    input (N, C, *size)  --unfold-->  windows (C, *out, N, *kernel)  --copy-->  (C·K, P·N)
    weight (O, C/groups, *kernel)     output (N, O, *out) = weight (O, C·K) @ columns (C·K, P·N)

:mod:`vizgrad.ops.pooling` reuses the windows for pooling.
"""

import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

from ..autograd import function as _function
from ..autograd.function import Op
from ..errors import DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, not_a_tensor, DeviceError
from .activation import autocast_casts
from .registry import Sample, register
from .samples import values


# --- windows: where they sit, cutting them out (Unfold) and summing them back (Fold) ------

class Windows(NamedTuple):
    """Where the windows of an im2col sit, per spatial dim.

    Window ``j`` along a dim starts at ``j * stride - pads[0]`` of the input and takes
    ``kernel`` taps ``dilation`` apart; ``out`` windows are taken. ``size`` is the
    spatial size of the input (without padding), ``pads`` the (before, after) padding
    and ``axes`` where the spatial dims sit in the arrays.
    """

    kernel: tuple
    stride: tuple
    dilation: tuple
    pads: tuple
    size: tuple
    out: tuple
    axes: tuple


def window_view(xp, x, windows, value=0.0):
    """The windows of ``x`` padded with ``value``: a read-only strided view in which each
    spatial axis counts windows and the kernel axes come last, (..., *size, ...) ->
    (..., *out, ..., *kernel)."""
    if any(before or after for before, after in windows.pads):
        shape, inside = list(x.shape), [slice(None)] * x.ndim
        for axis, (before, after) in zip(windows.axes, windows.pads):
            shape[axis] += before + after
            inside[axis] = slice(before, before + x.shape[axis])
        padded = xp.full(tuple(shape), value, dtype=x.dtype, device=x.device)  # quicker than NumPy's pad
        padded[tuple(inside)] = x
        x = padded
    extent = tuple(dilation * (k - 1) + 1 for k, dilation in zip(windows.kernel, windows.dilation))
    view = xp.sliding_windows(x, extent, windows.axes)
    key = [slice(None)] * x.ndim
    for axis, stride, n in zip(windows.axes, windows.stride, windows.out):
        key[axis] = slice(0, stride * (n - 1) + 1, stride)
    return view[tuple(key) + tuple(slice(None, None, dilation) for dilation in windows.dilation)]


def _fold_arrays(xp, cols, windows):
    """Sum windows back where they came from: (..., *out, ..., *kernel) -> (..., *size, ...).
    Windows that tile the input only need moving (one copy); others take one strided add
    per kernel offset. The padding is cropped at the end."""
    ndim = cols.ndim - len(windows.kernel)
    shape, crop = list(cols.shape[:ndim]), [slice(None)] * ndim
    for axis, n, (before, after) in zip(windows.axes, windows.size, windows.pads):
        shape[axis], crop[axis] = n + before + after, slice(before, before + n)
    if _tiles(windows):
        return _untile(xp, cols, windows)[tuple(crop)]
    out = xp.zeros(tuple(shape), dtype=cols.dtype, device=cols.device)
    every = (slice(None),) * ndim
    # per spatial dim, where tap i of every window lands: i·dilation + j·stride for window j
    lands = [[slice(i * dilation, i * dilation + stride * (n - 1) + 1, stride) for i in range(k)]
             for k, dilation, stride, n in zip(windows.kernel, windows.dilation, windows.stride, windows.out)]
    for offset, slices in zip(itertools.product(*(range(k) for k in windows.kernel)), itertools.product(*lands)):
        target = list(every)
        for axis, where in zip(windows.axes, slices):
            target[axis] = where
        out[tuple(target)] += cols[every + offset]
    return out[tuple(crop)]


def _tiles(windows):
    """Whether the windows tile the padded input: side by side, without gaps or overlaps, up to
    its far end (as the default 2x2 max pooling does), so that no tap lands twice."""
    return all(stride == k and dilation == 1 and n * k >= before + size
               for k, stride, dilation, n, size, (before, after) in
               zip(windows.kernel, windows.stride, windows.dilation, windows.out, windows.size, windows.pads))


def _untile(xp, cols, windows):
    """Tiling windows put back side by side, (..., *out, ..., *kernel) -> (..., *(out·kernel), ...):
    each kernel axis moved next to its window axis, (..., out, k, ...), and the pair merged.
    The result spans the padded input from its start (one copy)."""
    ndim = cols.ndim - len(windows.kernel)
    order, shape = [], list(cols.shape[:ndim])
    for axis in range(ndim):
        order.append(axis)
        if axis in windows.axes:
            i = windows.axes.index(axis)
            order.append(ndim + i)
            shape[axis] *= windows.kernel[i]
    return xp.reshape(xp.permute_dims(cols, tuple(order)), tuple(shape))


class Unfold(Op):
    """im2col: the windows of a zero-padded input. Its adjoint is :class:`Fold`."""

    @staticmethod
    def forward(ctx, x, windows):
        ctx.windows = windows
        return ctx.xp.asarray(window_view(ctx.xp, x, windows), copy=True)

    @staticmethod
    def backward(ctx, grad):
        return fold_windows(ctx.xp, grad, ctx.windows)


class Fold(Op):
    """col2im: overlapping windows summed back onto the input. Its adjoint is :class:`Unfold`."""

    @staticmethod
    def forward(ctx, cols, windows):
        ctx.windows = windows
        return _fold_arrays(ctx.xp, cols, windows)

    @staticmethod
    def backward(ctx, grad):
        return unfold_windows(ctx.xp, grad, ctx.windows)


# The two names backwards call besides ``xp``'s. They take arrays in a plain backward and
# Tensors under create_graph=True, where they apply the differentiable Unfold and Fold ops.

def unfold_windows(xp, x, windows):
    """The windows of ``x``: each spatial axis (``windows.axes``) counts windows, the kernel axes come last."""
    if is_tensor(x):
        return Unfold.apply(x, windows=windows)
    return window_view(xp, x, windows)


def fold_windows(xp, cols, windows):
    """Windows summed back onto the input: the adjoint of :func:`unfold_windows`."""
    if is_tensor(cols):
        return Fold.apply(cols, windows=windows)
    return _fold_arrays(xp, cols, windows)


def is_tensor(value):
    return isinstance(value, _function.Tensor)


# --- convolution as matrix products ------------------------------------------------------
# Inside, images are laid out (C, *size, N): the windows copied into a matrix and the sums
# of col2im then run over long contiguous stretches of (columns × batch). The outputs keep
# that layout in memory (a (N, O, *out) view of it), and pooling works in it too, so a
# network of convolutions and poolings never shuffles the batch back and forth.

BATCH_LAST_AXES = {1: (1,), 2: (1, 2), 3: (1, 2, 3)}   # the spatial axes of (C, *size, N)


def batch_last(xp, x):
    """(N, C, *size) -> (C, *size, N), a view."""
    return xp.permute_dims(x, (*range(1, x.ndim), 0))


def batch_first(xp, x):
    """(C, *size, N) -> (N, C, *size), a view."""
    return xp.permute_dims(x, (x.ndim - 1, *range(x.ndim - 1)))


def _columns(xp, x, windows, groups):
    """im2col, one matrix per group: (N, C, *size) -> (groups, C/groups · K, P · N), copied once."""
    d = len(windows.size)
    cols = unfold_windows(xp, batch_last(xp, x), windows)                          # (C, *out, N, *kernel)
    cols = xp.permute_dims(cols, (0, *range(2 + d, 2 + 2 * d), *range(1, 2 + d)))  # (C, *kernel, *out, N)
    return xp.reshape(cols, (groups, x.shape[1] // groups * math.prod(windows.kernel),
                             math.prod(windows.out) * x.shape[0]))


def _fold_columns(xp, cols, windows, channels, batch):
    """col2im, the adjoint of :func:`_columns`: (groups, C/groups · K, P · N) -> (N, C, *size)."""
    d = len(windows.size)
    cols = xp.reshape(cols, (channels, *windows.kernel, *windows.out, batch))
    cols = xp.permute_dims(cols, (0, *range(1 + d, 2 + 2 * d), *range(1, 1 + d)))  # (C, *out, N, *kernel)
    return batch_first(xp, fold_windows(xp, cols, windows))


def _matrices(xp, y, groups):
    """(N, O, *out) -> (groups, O/groups, P · N)."""
    return xp.reshape(batch_last(xp, y), (groups, y.shape[1] // groups, math.prod(y.shape[2:]) * y.shape[0]))


def _images(xp, y, windows, batch):
    """(groups, O/groups, P · N) -> (N, O, *out), the inverse of :func:`_matrices` (a view)."""
    return batch_first(xp, xp.reshape(y, (y.shape[0] * y.shape[1], *windows.out, batch)))


def _weight_matrices(xp, weight, groups):
    """(O, C/groups, *kernel) -> (groups, O/groups, C/groups · K)."""
    return xp.reshape(weight, (groups, weight.shape[0] // groups, math.prod(weight.shape[1:])))


def _add_bias(xp, out, bias, groups):
    """``out`` (groups, O/groups, P · N), fresh from a matmul, plus bias[o] in place."""
    if bias is not None:
        out += xp.reshape(bias, (groups, bias.shape[0] // groups, 1))
    return out


def _bias_grad(xp, g):
    """dL/dbias[o] = Σ_{n, p} G[n, o, p], from G as (groups, O/groups, P · N)."""
    return xp.reshape(xp.sum(g, axis=-1), (g.shape[0] * g.shape[1],))


# out = W · columns(x): one matrix product per group. The input gradient spreads Wᵀ · G back
# over the windows (col2im); the weight gradient is G · columnsᵀ. conv_transpose swaps the roles.

class Conv(Op):
    @staticmethod
    def forward(ctx, x, weight, bias, windows, groups):
        xp = ctx.xp
        ctx.windows, ctx.groups = windows, groups
        cols = _columns(xp, x, windows, groups)
        # the columns are kept for the weight gradient of a plain backward; under create_graph
        # (Tensors) backward recomputes them from x, so that gradient stays differentiable in x
        needs = ctx.needs_input_grad
        ctx.save_for_backward(x, weight, cols if needs and needs[1] else None)
        out = _add_bias(xp, xp.matmul(_weight_matrices(xp, weight, groups), cols), bias, groups)
        return _images(xp, out, windows, x.shape[0])

    @staticmethod
    def backward(ctx, grad):
        x, weight, cols = ctx.saved_tensors
        xp, windows, groups = ctx.xp, ctx.windows, ctx.groups
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad
        g = _matrices(xp, grad, groups)
        grad_x = grad_weight = None
        if needs_x:
            spread = xp.matmul(xp.matrix_transpose(_weight_matrices(xp, weight, groups)), g)
            grad_x = _fold_columns(xp, spread, windows, x.shape[1], x.shape[0])
        if needs_weight:
            if is_tensor(x):
                cols = _columns(xp, x, windows, groups)
            grad_weight = xp.reshape(xp.matmul(g, xp.matrix_transpose(cols)), weight.shape)
        return grad_x, grad_weight, _bias_grad(xp, g) if needs_bias else None


class ConvTranspose(Op):
    """The adjoint of :class:`Conv` in its input: forward spreads, backward correlates."""

    @staticmethod
    def forward(ctx, x, weight, bias, windows, groups):
        xp = ctx.xp
        ctx.windows, ctx.groups = windows, groups
        ctx.save_for_backward(x, weight)
        channels = weight.shape[1] * groups
        spread = xp.matmul(xp.matrix_transpose(_weight_matrices(xp, weight, groups)), _matrices(xp, x, groups))
        out = _fold_columns(xp, spread, windows, channels, x.shape[0])
        return out if bias is None else out + xp.reshape(bias, (channels,) + (1,) * len(windows.size))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        xp, windows, groups = ctx.xp, ctx.windows, ctx.groups
        needs_x, needs_weight, needs_bias = ctx.needs_input_grad
        cols = _columns(xp, grad, windows, groups)
        grad_x = grad_weight = grad_bias = None
        if needs_x:
            grad_x = _images(xp, xp.matmul(_weight_matrices(xp, weight, groups), cols), windows, x.shape[0])
        if needs_weight:
            grad_weight = xp.reshape(xp.matmul(_matrices(xp, x, groups), xp.matrix_transpose(cols)), weight.shape)
        if needs_bias:
            grad_bias = xp.sum(grad, axis=(0, *range(2, grad.ndim)))
        return grad_x, grad_weight, grad_bias


# --- argument checks ---------------------------------------------------------------------

def spatial_tuple(op, name, value, d):
    """An int or a sequence of ``d`` ints as a tuple of ``d`` ints."""
    try:
        return (operator.index(value),) * d
    except TypeError:
        pass
    try:
        result = tuple(operator.index(v) for v in value)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {name} must be an int or a tuple of {d} ints, got {value!r}") from None
    if len(result) == 1:
        result = result * d
    if len(result) != d:
        raise ArgumentError(f"{op}: {name} must be an int or a tuple of {d} ints, got {value!r}")
    return result


def check_positive(op, name, values_, allow_zero=False):
    if any(v < 0 or (v == 0 and not allow_zero) for v in values_):
        raise ArgumentError(f"{op}: {name} must be {'non-negative' if allow_zero else 'positive'}, got {values_}")


def check_input(op, input, d, name="input", integers=False, bools=False):
    """Whether ``input`` is unbatched ((C, *size)); raises unless it is (C, *size) or (N, C, *size)
    of a dtype PyTorch's CPU kernel of ``op`` takes: floating point, and with ``integers`` every
    integer dtype (True) or int64 alone ("int64"), with ``bools`` bool too."""
    if not is_tensor(input):
        raise not_a_tensor(op, name, input)
    if input.ndim not in (d + 1, d + 2):
        raise ShapeError(f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) {name}, "
                         f"got shape {format_shape(input.shape)}")
    if not input.is_floating_point():
        dtype = input.dtype
        taken = bools if dtype.name == "bool" else integers is True or integers == dtype.name
        if not taken:
            accepted = {False: "", True: " or integer", "int64": " or int64"}[integers]
            raise DTypeError(f"{op}: {name} must be a floating-point{accepted} tensor, got {dtype.name}: PyTorch "
                             f"has no {dtype.name} kernel for it either; convert with .float() first")
    return input.ndim == d + 1


def _check_weight_and_bias(op, input, weight, bias, d, groups, transposed):
    """Types, dtypes and shapes of ``weight`` (O, C/groups, *kernel) or, transposed,
    (C, O/groups, *kernel), and of ``bias`` (O,), against the (batched) ``input``."""
    if not is_tensor(weight):
        raise not_a_tensor(op, "weight", weight)
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and not is_tensor(value):
            raise not_a_tensor(op, name, value)
        if value is not None and type(value._array) is not type(input._array):
            raise DeviceError(f"{op}: input is on {input.device} but {name} is on {value.device}; move one "
                              f"with .to('{input.device}')")
        if value is not None and value._array.dtype != input._array.dtype and not autocast_casts(input, weight, bias):
            raise DTypeError(f"{op}: input is {input.dtype.name} but {name} is {value.dtype.name}; "
                             "convert one with .to()")
    if weight.ndim != d + 2:
        raise ShapeError(f"{op}: expected a {d + 2}-D weight, got shape {format_shape(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ArgumentError(f"{op}: groups must be a positive int, got {groups!r}")
    if weight.shape[0] % groups:
        what = "in_channels" if transposed else "out_channels"
        raise ShapeError(f"{op}: {what} (weight.shape[0] = {weight.shape[0]}) must be divisible by "
                         f"groups={groups}")
    expected = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != expected:
        raise ShapeError(f"{op}: the input has {input.shape[1]} channels but the weight expects {expected} "
                         f"(weight shape {format_shape(weight.shape)}, groups={groups})")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise ShapeError(f"{op}: bias must have shape ({out_channels},), one value per output channel, "
                         f"got {format_shape(bias.shape)}")


def window_count(op, size, kernel, stride, pads, dilation):
    """How many windows fit per dim, or a ShapeError when the kernel is larger than the padded input."""
    extents = tuple(dil * (k - 1) + 1 for k, dil in zip(kernel, dilation))
    padded = tuple(n + before + after for n, (before, after) in zip(size, pads))
    if any(extent > n for extent, n in zip(extents, padded)):
        spans = f" (dilation {format_shape(dilation)}: it spans {format_shape(extents)})" if extents != kernel else ""
        raise ShapeError(f"{op}: the kernel {format_shape(kernel)}{spans} is larger than the padded input "
                         f"{format_shape(padded)} (input size {format_shape(size)}, padding "
                         f"{', '.join(f'{before}+{after}' for before, after in pads)})")
    return tuple((n - extent) // s + 1 for n, extent, s in zip(padded, extents, stride))


def _conv_padding(op, padding, kernel, stride, dilation, d):
    """(before, after) per dim for an int, a tuple, 'valid' or 'same' (as PyTorch: extra on the right)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * d
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ArgumentError(f"{op}: padding='same' is not supported for strided convolutions "
                                    f"(stride={stride}); use stride=1 or give the padding explicitly")
            totals = [dil * (k - 1) for k, dil in zip(kernel, dilation)]
            return tuple((total // 2, total - total // 2) for total in totals)
        raise ArgumentError(f"{op}: padding must be an int, a tuple of {d} ints, 'valid' or 'same'; "
                            f"got {padding!r}")
    pads = spatial_tuple(op, "padding", padding, d)
    check_positive(op, "padding", pads, allow_zero=True)
    return tuple((p, p) for p in pads)


def _batched(op, input, d, run):
    """Run ``run`` on a batched input: an unbatched (C, *size) one gets a batch dim of 1 and loses it after."""
    if input.ndim == d + 2:
        return run(input)
    return run(input.unsqueeze(0)).squeeze(0)


def _conv(op, d, input, weight, bias, stride, padding, dilation, groups):
    check_input(op, input, d, integers=True)
    stride = spatial_tuple(op, "stride", stride, d)
    dilation = spatial_tuple(op, "dilation", dilation, d)
    check_positive(op, "stride", stride)
    check_positive(op, "dilation", dilation)

    def run(x):
        _check_weight_and_bias(op, x, weight, bias, d, groups, transposed=False)
        kernel = tuple(weight.shape[2:])
        pads = _conv_padding(op, padding, kernel, stride, dilation, d)
        size = tuple(x.shape[2:])
        counts = window_count(op, size, kernel, stride, pads, dilation)
        windows = Windows(kernel, stride, dilation, pads, size, counts, axes=BATCH_LAST_AXES[d])
        return Conv.apply(x, weight, bias, windows=windows, groups=groups)
    return _batched(op, input, d, run)


def _conv_transpose(op, d, input, weight, bias, stride, padding, output_padding, groups, dilation):
    check_input(op, input, d, integers="int64")
    stride = spatial_tuple(op, "stride", stride, d)
    dilation = spatial_tuple(op, "dilation", dilation, d)
    if isinstance(padding, str):
        raise ArgumentError(f"{op}: padding must be an int or a tuple of {d} ints, got {padding!r}")
    padding = spatial_tuple(op, "padding", padding, d)
    output_padding = spatial_tuple(op, "output_padding", output_padding, d)
    check_positive(op, "stride", stride)
    check_positive(op, "dilation", dilation)
    check_positive(op, "padding", padding, allow_zero=True)
    check_positive(op, "output_padding", output_padding, allow_zero=True)
    for extra, s, dil in zip(output_padding, stride, dilation):
        if extra >= s and extra >= dil:
            raise ArgumentError(f"{op}: output_padding {output_padding} must be smaller than either the stride "
                                f"{stride} or the dilation {dilation}")

    def run(x):
        _check_weight_and_bias(op, x, weight, bias, d, groups, transposed=True)
        kernel = tuple(weight.shape[2:])
        size_in = tuple(x.shape[2:])
        size = tuple((n - 1) * s - 2 * p + dil * (k - 1) + extra + 1
                     for n, s, p, dil, k, extra in zip(size_in, stride, padding, dilation, kernel, output_padding))
        if any(n < 1 for n in size):
            raise ShapeError(f"{op}: the output size {format_shape(size)} would not be positive (input size "
                             f"{format_shape(size_in)}, kernel {format_shape(kernel)}, padding {padding})")
        windows = Windows(kernel, stride, dilation, tuple((p, p) for p in padding), size, size_in,
                          axes=BATCH_LAST_AXES[d])
        return ConvTranspose.apply(x, weight, bias, windows=windows, groups=groups)
    return _batched(op, input, d, run)


# --- references: the definitions, looped --------------------------------------------------

def _reference_padding(padding, kernel, dilation, d):
    if padding == "valid":
        return ((0, 0),) * d
    if padding == "same":
        return tuple((dil * (k - 1) // 2, dil * (k - 1) - dil * (k - 1) // 2) for k, dil in zip(kernel, dilation))
    return tuple((p, p) for p in spatial_tuple("reference", "padding", padding, d))


def _conv_reference(d):
    def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if input.ndim == d + 1:
            return reference(input[None], weight, bias, stride, padding, dilation, groups)[0]
        stride, dilation = spatial_tuple("", "", stride, d), spatial_tuple("", "", dilation, d)
        kernel = weight.shape[2:]
        x = np.pad(input, ((0, 0), (0, 0)) + _reference_padding(padding, kernel, dilation, d))
        extent = [dil * (k - 1) + 1 for k, dil in zip(kernel, dilation)]
        out_size = [(n - e) // s + 1 for n, e, s in zip(x.shape[2:], extent, stride)]
        out_channels, per_group = weight.shape[0], weight.shape[1]
        out = np.zeros((input.shape[0], out_channels, *out_size))
        for n in range(input.shape[0]):
            for o in range(out_channels):
                group = o // (out_channels // groups)
                for position in np.ndindex(*out_size):
                    window = x[(n, slice(group * per_group, (group + 1) * per_group)) + tuple(
                        slice(p * s, p * s + e, dil) for p, s, e, dil in zip(position, stride, extent, dilation))]
                    out[(n, o) + position] = np.sum(window * weight[o]) + (0 if bias is None else bias[o])
        return out.astype(input.dtype)
    return reference


def _conv_transpose_reference(d):
    def reference(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        if input.ndim == d + 1:
            return reference(input[None], weight, bias, stride, padding, output_padding, groups, dilation)[0]
        stride, dilation = spatial_tuple("", "", stride, d), spatial_tuple("", "", dilation, d)
        padding, output_padding = spatial_tuple("", "", padding, d), spatial_tuple("", "", output_padding, d)
        kernel = weight.shape[2:]
        extent = [dil * (k - 1) + 1 for k, dil in zip(kernel, dilation)]
        per_group = weight.shape[1]
        full_size = [(n - 1) * s + e + extra for n, s, e, extra in zip(input.shape[2:], stride, extent, output_padding)]
        full = np.zeros((input.shape[0], per_group * groups, *full_size))
        for n in range(input.shape[0]):
            for c in range(input.shape[1]):
                group = c // (input.shape[1] // groups)
                for position in np.ndindex(*input.shape[2:]):
                    # each input value spreads its kernel over the output
                    full[(n, slice(group * per_group, (group + 1) * per_group)) + tuple(
                        slice(p * s, p * s + e, dil) for p, s, e, dil in zip(position, stride, extent, dilation)
                    )] += input[(n, c) + position] * weight[c]
        out = full[(slice(None), slice(None)) + tuple(slice(p, n - p) for p, n in zip(padding, full_size))]
        if bias is not None:
            out = out + bias.reshape((-1,) + (1,) * d)
        return out.astype(input.dtype)
    return reference


# --- samples: small, so gradcheck stays fast ---------------------------------------------

def _conv2d_samples(rng):
    yield Sample((values(rng, (2, 3, 5, 5)), values(rng, (4, 3, 3, 3)), values(rng, (4,))), name="basic")
    yield Sample((values(rng, (2, 2, 6, 5)), values(rng, (3, 2, 3, 3))), {"stride": 2, "padding": 1},
                 name="stride 2, padding 1, no bias")
    yield Sample((values(rng, (2, 2, 7, 6)), values(rng, (3, 2, 2, 2)), values(rng, (3,))), {"stride": 3},
                 name="stride > kernel")
    yield Sample((values(rng, (1, 2, 7, 6)), values(rng, (2, 2, 3, 2))),
                 {"stride": (2, 1), "padding": (1, 2), "dilation": 2}, name="dilation, tuple stride and padding")
    yield Sample((values(rng, (2, 4, 5, 5)), values(rng, (4, 2, 3, 3)), values(rng, (4,))), {"groups": 2},
                 name="groups")
    yield Sample((values(rng, (2, 2, 5, 6)), values(rng, (3, 2, 2, 4)), values(rng, (3,))), {"padding": "same"},
                 name="same, even kernel")
    yield Sample((values(rng, (1, 2, 6, 6)), values(rng, (2, 2, 3, 3))), {"padding": "same", "dilation": 2},
                 name="same, dilation")
    yield Sample((values(rng, (1, 2, 5, 4)), values(rng, (2, 2, 3, 3))), {"padding": "valid"}, name="valid")
    yield Sample((values(rng, (2, 5, 5)), values(rng, (3, 2, 3, 3)), values(rng, (3,))), {"padding": 1},
                 name="unbatched")


def _conv1d_samples(rng):
    yield Sample((values(rng, (2, 3, 7)), values(rng, (4, 3, 3)), values(rng, (4,))), name="basic")
    yield Sample((values(rng, (2, 2, 9)), values(rng, (3, 2, 3))), {"stride": 2, "padding": 1, "dilation": 2},
                 name="stride, padding, dilation")
    yield Sample((values(rng, (2, 2, 8)), values(rng, (2, 2, 2))), {"stride": 3}, name="stride > kernel")
    yield Sample((values(rng, (2, 4, 6)), values(rng, (4, 2, 3)), values(rng, (4,))), {"groups": 2}, name="groups")
    yield Sample((values(rng, (2, 2, 6)), values(rng, (3, 2, 4))), {"padding": "same"}, name="same, even kernel")
    yield Sample((values(rng, (2, 7)), values(rng, (3, 2, 3)), values(rng, (3,))), name="unbatched")


def _conv_transpose2d_samples(rng):
    yield Sample((values(rng, (2, 3, 4, 4)), values(rng, (3, 2, 3, 3)), values(rng, (2,))), name="basic")
    yield Sample((values(rng, (2, 2, 3, 4)), values(rng, (2, 3, 3, 3))),
                 {"stride": 2, "padding": 1, "output_padding": 1}, name="stride, padding, output_padding")
    yield Sample((values(rng, (1, 4, 3, 3)), values(rng, (4, 1, 2, 3)), values(rng, (2,))),
                 {"groups": 2, "dilation": (2, 1), "stride": (1, 2)}, name="groups, dilation")
    yield Sample((values(rng, (2, 2, 3, 2)), values(rng, (2, 2, 2, 2))), {"stride": 3}, name="stride > kernel")
    yield Sample((values(rng, (2, 3, 3)), values(rng, (2, 2, 3, 3)), values(rng, (2,))),
                 {"stride": 2, "output_padding": (1, 0)}, name="unbatched")


def _conv_transpose1d_samples(rng):
    yield Sample((values(rng, (2, 3, 5)), values(rng, (3, 2, 3)), values(rng, (2,))), name="basic")
    yield Sample((values(rng, (2, 2, 4)), values(rng, (2, 3, 3))),
                 {"stride": 2, "padding": 1, "output_padding": 1, "dilation": 2}, name="stride, padding, dilation")
    yield Sample((values(rng, (2, 4, 4)), values(rng, (4, 1, 3))), {"groups": 2}, name="groups")
    yield Sample((values(rng, (2, 5)), values(rng, (2, 2, 2)), values(rng, (2,))), {"stride": 3},
                 name="unbatched, stride > kernel")


# --- the public ops -----------------------------------------------------------------------

@register(_conv_reference(1), _conv1d_samples, method=False)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as in PyTorch) over (N, C, L) or (C, L).

    out[n, o, l] = bias[o] + Σ_{c, k} weight[o, c, k] · x[n, g·C/groups + c, l·stride + k·dilation - padding]

    ``padding`` is an int, a 1-tuple, ``'valid'`` (none) or ``'same'`` (output length =
    input length; stride 1 only). See :func:`conv2d` for the gradients.

    Example::

        x = vizgrad.randn(8, 3, 32)                     # (batch, channels, length)
        w = vizgrad.randn(16, 3, 5, requires_grad=True)
        vizgrad.conv1d(x, w, padding="same").shape     # (8, 16, 32)
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@register(_conv_reference(2), _conv2d_samples, method=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in PyTorch) over (N, C, H, W) or (C, H, W).

    out[n, o, i, j] = bias[o] + Σ_{c, a, b} weight[o, c, a, b] · x_pad[n, c', i·s + a·d, j·s + b·d]

    with c' = c + (o // (O/groups)) · C/groups: each group of output channels sees its own
    group of input channels. Computed as im2col plus one matrix product; gradients:
    dL/dx spreads each output gradient over its window (col2im of Gᵀ-weighted columns),
    dL/dweight = G · columnsᵀ, dL/dbias = Σ G.

    ``stride``, ``dilation``: an int or a pair; ``padding``: an int, a pair, ``'valid'``
    or ``'same'`` (stride 1 only; any odd total goes on the right, as in PyTorch).

    Example::

        x = vizgrad.randn(32, 1, 28, 28)
        w = vizgrad.randn(8, 1, 3, 3, requires_grad=True)
        y = vizgrad.conv2d(x, w, padding=1)              # (32, 8, 28, 28)
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@register(_conv_transpose_reference(1), _conv_transpose1d_samples, method=False)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L): the gradient of
    :func:`conv1d` with respect to its input, as a layer. ``weight`` is (C_in, C_out/groups, k).

    L_out = (L - 1)·stride - 2·padding + dilation·(k - 1) + output_padding + 1.

    Example::

        vizgrad.conv_transpose1d(vizgrad.randn(1, 4, 10), vizgrad.randn(4, 2, 3), stride=2).shape  # (1, 2, 21)
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


@register(_conv_transpose_reference(2), _conv_transpose2d_samples, method=False)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W): each input value
    spreads a copy of its kernel, scaled by itself, onto the output (stride apart), and
    overlaps add up. It is the adjoint of :func:`conv2d` in its input, so its forward is
    conv2d's input gradient (col2im) and its input gradient is a conv2d.
    ``weight`` is (C_in, C_out/groups, kH, kW).

    H_out = (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1 (W alike);
    ``padding`` crops the border, ``output_padding`` adds rows and columns at the end.

    Example::

        x = vizgrad.randn(2, 8, 7, 7)
        w = vizgrad.randn(8, 4, 4, 4, requires_grad=True)
        vizgrad.conv_transpose2d(x, w, stride=2, padding=1).shape    # (2, 4, 14, 14)
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


def _conv3d_samples(rng):
    yield Sample((values(rng, (2, 2, 4, 4, 3)), values(rng, (3, 2, 2, 3, 2)), values(rng, (3,))), name="basic")
    yield Sample((values(rng, (1, 2, 5, 4, 5)), values(rng, (2, 2, 2, 2, 3))),
                 {"stride": (2, 1, 2), "padding": (1, 0, 1), "dilation": (1, 2, 1)}, name="stride, padding, dilation")
    yield Sample((values(rng, (1, 4, 3, 3, 3)), values(rng, (4, 2, 2, 2, 2)), values(rng, (4,))), {"groups": 2},
                 name="groups")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), values(rng, (2, 2, 2, 3, 2))), {"padding": "same"},
                 name="same, even kernel")
    yield Sample((values(rng, (2, 3, 4, 3)), values(rng, (2, 2, 2, 2, 2)), values(rng, (2,))), {"padding": 1},
                 name="unbatched")


def _conv_transpose3d_samples(rng):
    yield Sample((values(rng, (2, 2, 3, 2, 3)), values(rng, (2, 3, 2, 2, 2)), values(rng, (3,))), name="basic")
    yield Sample((values(rng, (1, 2, 2, 3, 2)), values(rng, (2, 2, 3, 2, 2))),
                 {"stride": (2, 1, 2), "padding": 1, "output_padding": (1, 0, 0), "dilation": (1, 2, 1)},
                 name="stride, padding, output_padding, dilation")
    yield Sample((values(rng, (1, 4, 2, 2, 2)), values(rng, (4, 1, 2, 2, 2)), values(rng, (2,))), {"groups": 2},
                 name="groups")
    yield Sample((values(rng, (2, 2, 3, 2)), values(rng, (2, 2, 2, 2, 2))), {"stride": 2}, name="unbatched")


@register(_conv_reference(3), _conv3d_samples, method=False)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation, as in PyTorch) over (N, C, D, H, W) or (C, D, H, W).

    out[n, o, i, j, l] = bias[o] + Σ_{c, a, b, e} weight[o, c, a, b, e] · x_pad[n, c', i·s + a·d, j·s + b·d, l·s + e·d]

    The same im2col and matrix product as :func:`conv2d`, one more window axis; gradients alike.

    Example::

        x = vizgrad.randn(2, 1, 8, 16, 16)
        w = vizgrad.randn(4, 1, 3, 3, 3, requires_grad=True)
        vizgrad.conv3d(x, w, padding=1).shape            # (2, 4, 8, 16, 16)
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@register(_conv_transpose_reference(3), _conv_transpose3d_samples, method=False)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); see
    :func:`conv_transpose2d`. ``weight`` is (C_in, C_out/groups, kD, kH, kW).

    Example::

        vizgrad.conv_transpose3d(vizgrad.randn(1, 4, 3, 3, 3), vizgrad.randn(4, 2, 2, 2, 2), stride=2).shape
        # (1, 2, 6, 6, 6)
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


# --- unfold, fold: im2col and col2im as functions ---------------------------------------------

def _window_arguments(op, kernel_size, dilation, padding, stride):
    kernel = spatial_tuple(op, "kernel_size", kernel_size, 2)
    dilation = spatial_tuple(op, "dilation", dilation, 2)
    pads = spatial_tuple(op, "padding", padding, 2)
    stride = spatial_tuple(op, "stride", stride, 2)
    for name, numbers in (("kernel_size", kernel), ("dilation", dilation), ("stride", stride)):
        check_positive(op, name, numbers)
    check_positive(op, "padding", pads, allow_zero=True)
    return kernel, dilation, tuple((p, p) for p in pads), stride


def _no_integers(op, input):
    """PyTorch's im2col and col2im take floating point (and bool) tensors only."""
    if not input.is_floating_point() and input.dtype.name != "bool":
        raise DTypeError(f"{op}: input must be a floating point tensor, got {input.dtype.name}")


def _unfold_reference(x, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = (v if isinstance(v, tuple) else (v, v) for v in (kernel_size, dilation, padding, stride))
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    rows = (x.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    cols = (x.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.empty((x.shape[0], x.shape[1], k[0], k[1], rows, cols), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i, j] = x[:, :, i * d[0]:i * d[0] + s[0] * (rows - 1) + 1:s[0],
                                j * d[1]:j * d[1] + s[1] * (cols - 1) + 1:s[1]]
    return out.reshape(x.shape[0], x.shape[1] * k[0] * k[1], rows * cols)


def _unfold_samples(rng):
    yield Sample((values(rng, (2, 3, 5, 4)), 2), name="2x2")
    yield Sample((values(rng, (1, 2, 6, 7)), (3, 2)), {"stride": 2, "padding": 1, "dilation": (1, 2)},
                 name="strided, padded, dilated")


@register(_unfold_reference, _unfold_samples, method=False)
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: the sliding ``kernel_size`` blocks of an (N, C, H, W) input (zero ``padding``)
    as columns, (N, C·kH·kW, L) with L the number of blocks (row by row). A convolution is
    this followed by a matrix product; its adjoint, and gradient, is :func:`fold`.

    Example::

        F.unfold(vizgrad.randn(1, 3, 4, 4), kernel_size=2).shape   # (1, 12, 9)
    """
    if not is_tensor(input):
        raise not_a_tensor("unfold", "input", input)
    if input.ndim not in (3, 4):
        raise ShapeError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, got shape "
                         f"{format_shape(input.shape)}")
    _no_integers("unfold", input)
    kernel, dilation, pads, stride = _window_arguments("unfold", kernel_size, dilation, padding, stride)
    size = tuple(input.shape[-2:])
    out = window_count("unfold", size, kernel, stride, pads, dilation)
    windows = Windows(kernel, stride, dilation, pads, size, out, (2, 3))

    def columns(images):
        blocks = Unfold.apply(images, windows=windows)                          # (N, C, oH, oW, kH, kW)
        batch, channels = images.shape[:2]
        return blocks.permute(0, 1, 4, 5, 2, 3).reshape(batch, channels * math.prod(kernel), math.prod(out))
    return _batched("unfold", input, 2, columns)


def _fold_reference(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    size, k, d, p, s = (v if isinstance(v, tuple) else (v, v) for v in (output_size, kernel_size, dilation, padding,
                                                                        stride))
    rows = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    cols = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    blocks = x.reshape(x.shape[0], -1, k[0], k[1], rows, cols)
    out = np.zeros((x.shape[0], blocks.shape[1], size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]:i * d[0] + s[0] * (rows - 1) + 1:s[0],
                j * d[1]:j * d[1] + s[1] * (cols - 1) + 1:s[1]] += blocks[:, :, i, j]
    return out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


def _fold_samples(rng):
    yield Sample((values(rng, (2, 12, 9)), (4, 4), 2), name="2x2 overlapping")
    yield Sample((values(rng, (1, 12, 12)), (6, 7), (3, 2)), {"stride": 2, "padding": 1, "dilation": (1, 2)},
                 name="strided, padded, dilated")


@register(_fold_reference, _fold_samples, method=False)
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: columns of blocks (N, C·kH·kW, L), as :func:`unfold` makes them, summed back
    into an (N, C, H, W) image of ``output_size`` (overlapping blocks add up). The adjoint,
    and gradient, of :func:`unfold`.

    Example::

        x = vizgrad.randn(1, 2, 4, 4)
        F.fold(F.unfold(x, 2, stride=2), (4, 4), 2, stride=2)   # x again: the blocks do not overlap
    """
    if not is_tensor(input):
        raise not_a_tensor("fold", "input", input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input of columns, got shape "
                         f"{format_shape(input.shape)}")
    _no_integers("fold", input)
    size = spatial_tuple("fold", "output_size", output_size, 2)
    check_positive("fold", "output_size", size)
    kernel, dilation, pads, stride = _window_arguments("fold", kernel_size, dilation, padding, stride)
    out = window_count("fold", size, kernel, stride, pads, dilation)
    rows, blocks = input.shape[-2:]
    if rows % math.prod(kernel) or blocks != math.prod(out):
        raise ShapeError(f"fold: input of shape {format_shape(input.shape)} must be (N, C·{math.prod(kernel)}, "
                         f"{math.prod(out)}): C times the kernel's {math.prod(kernel)} taps rows, and one column for "
                         f"each of the {format_shape(out)} blocks of output_size {format_shape(size)}")

    def image(columns):
        columns = columns.reshape(columns.shape[0], rows // math.prod(kernel), *kernel, *out)
        return Fold.apply(columns.permute(0, 1, 4, 5, 2, 3),                   # (N, C, oH, oW, kH, kW)
                          windows=Windows(kernel, stride, dilation, pads, size, out, (2, 3)))
    return _batched("fold", input, 1, image)       # (columns: one "spatial" dim, the blocks)
