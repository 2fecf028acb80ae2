"""Resampling: interpolate, pixel_shuffle and pixel_unshuffle, grid_sample and affine_grid,
as ``torch.nn.functional`` has them.

Interpolation is a linear map along each spatial axis, out = A_H · x · A_Wᵀ: its forward
gathers the taps of each output (so that an inf or NaN reaches only the outputs that read it,
as in PyTorch), and the gradient is A_Hᵀ · G · A_W. Grid sampling is built from
differentiable ops.
"""

import itertools
import math
import warnings

import numpy as np

from ..autograd.function import Op
from ..errors import (ShapeError, format_shape, ArgumentError, ArgumentTypeError, DTypeError, UnsupportedError,
                      not_a_tensor)
from .conv import check_input, check_positive, is_tensor, spatial_tuple
from .registry import Sample, register
from .samples import values


# --- interpolate ---------------------------------------------------------------------------

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
        # gathers (of the nearest input, or of the two neighbours), not products with a matrix:
        # an inf or NaN reaches only the outputs that read it, as in PyTorch; backward scatters
        # each output's gradient back to those inputs alone (index_add), for the same reason
        ctx.sizes = tuple(x.shape[-d:])
        if mode in ("nearest", "nearest-exact"):
            sources = [_nearest_source(xp, n, count, scale, mode == "nearest-exact", x.device)
                       for n, count, scale in zip(x.shape[-d:], size, scales)]
            ctx.save_for_backward(*sources)
            for axis, source in zip(range(x.ndim - d, x.ndim), sources):
                x = xp.take(x, source, axis=axis)
            return x
        taps = [_linear_taps(xp, n, count, scale, align_corners, x.dtype, x.device)
                for n, count, scale in zip(x.shape[-d:], size, scales)]
        ctx.save_for_backward(*(array for tap in taps for array in tap))
        for axis, (left, right, weight) in zip(range(x.ndim - d, x.ndim), taps):
            weight = _along(xp, weight, axis, x.ndim)
            x = xp.take(x, left, axis=axis) * (1 - weight) + xp.take(x, right, axis=axis) * weight
        return x

    @staticmethod
    def backward(ctx, grad):
        xp, saved, sizes = ctx.xp, ctx.saved_tensors, ctx.sizes
        first = grad.ndim - len(sizes)
        for position, n in enumerate(sizes):     # one axis at a time: the transpose of each gather
            axis = first + position
            shape = grad.shape[:axis] + (n,) + grad.shape[axis + 1:]
            into = xp.zeros(shape, dtype=grad.dtype, device=grad.device)
            if len(saved) == len(sizes):                        # nearest: where each output came from
                grad = xp.index_add(into, axis, saved[position], grad)
            else:                                               # linear: 1 - λ to the left tap, λ to the right
                left, right, weight = saved[3 * position:3 * position + 3]
                weight = _along(xp, weight, axis, grad.ndim)
                grad = xp.index_add(xp.index_add(into, axis, left, grad * (1 - weight)), axis, right, grad * weight)
        return grad


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


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
    yield Sample((values(rng, (1, 2, 2, 3, 4)),), {"size": (3, 4, 5), "mode": "trilinear"}, name="trilinear")
    yield Sample((values(rng, (1, 2, 2, 3, 2)),), {"scale_factor": 2, "mode": "nearest"}, name="nearest, 5-D")


@register(_interpolate_reference, _interpolate_samples, method=False)
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) inputs to ``size``, or by ``scale_factor``.

    ``mode``: ``'nearest'`` copies x[floor(i·scale)] (scale = in/out, or 1/scale_factor);
    ``'nearest-exact'`` uses floor((i + 0.5)·scale); ``'linear'`` (3-D), ``'bilinear'`` (4-D)
    and ``'trilinear'`` (5-D) mix the two (four, eight) nearest inputs around the source point,
    which ``align_corners`` places at i·(in-1)/(out-1) (corners meet) instead of
    (i + 0.5)·scale - 0.5 (the default, False). Each mode is linear, one fixed map per axis
    (out = A_D · A_H · x · A_Wᵀ), so dL/dx is the transposed map; computed by gathers forward and
    scatters backward, an inf or NaN reaches only the outputs that read it, and an inf or NaN
    gradient only the inputs its output read.

    Example::

        x = vizgrad.randn(1, 3, 4, 4, requires_grad=True)
        vizgrad.interpolate(x, scale_factor=2, mode="bilinear").shape   # (1, 3, 8, 8)
    """
    op = "interpolate"
    if not is_tensor(input):
        raise ArgumentTypeError(f"{op}: input must be a Tensor, got a {type(input).__name__}")
    if input.ndim not in (3, 4, 5):
        raise ShapeError(f"{op}: expected a 3-D (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got "
                         f"shape {format_shape(input.shape)}")
    d = input.ndim - 2
    check_input(op, input, d)
    if mode in ("bicubic", "area"):
        raise UnsupportedError(f"{op}: mode {mode!r} is not supported by vizgrad; use 'nearest', "
                               "'nearest-exact', 'linear' (3-D), 'bilinear' (4-D) or 'trilinear' (5-D)")
    if mode not in ("nearest", "nearest-exact", *_LINEAR_MODES):
        raise ArgumentError(f"{op}: mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear' or "
                            f"'trilinear', got {mode!r}")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != d:
        raise ShapeError(f"{op}: mode {mode!r} needs a {_LINEAR_MODES[mode] + 2}-D input, got shape "
                         f"{format_shape(input.shape)}")
    if mode not in _LINEAR_MODES and align_corners is not None:
        raise ArgumentError(f"{op}: align_corners can only be set with the interpolating modes 'linear', "
                            f"'bilinear' and 'trilinear', not with mode {mode!r}")
    if antialias:
        raise UnsupportedError(f"{op}: antialias=True is not supported by vizgrad")
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


def _deprecated_upsample(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
                  DeprecationWarning, stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """:func:`interpolate`, under its old name (deprecated, as in PyTorch)."""
    _deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """``interpolate(input, size, scale_factor, mode='nearest')`` (deprecated, as in PyTorch)."""
    _deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)`` (deprecated,
    as in PyTorch)."""
    _deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["upsample", "upsample_nearest", "upsample_bilinear"]


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


# --- grid_sample, affine_grid: sampling at arbitrary points ---------------------------------------
# Compositions of differentiable ops: the sampling points come from the grid (unnormalized, then
# clipped or reflected per padding_mode), the input values at the neighbouring pixels are gathered
# (their gradient scatters back) and mixed with weights that are differentiable in the grid, so
# both gradients, and second derivatives, come from the pieces. Nearest samples are piecewise
# constant in the grid: NearestGridSample gives it PyTorch's zero gradient.

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
    from . import binary, division, unary
    if twice_low == twice_high:
        return coordinate * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = unary.abs(coordinate - low)
    extra = division.fmod(distance, span)
    flips = unary.floor(distance.detach() / span)
    even = division.remainder(flips, 2) == 0
    return binary.where(even, extra + low, (span - extra) + low)


def _source_coordinate(coordinate, size, padding_mode, align_corners, spatial):
    """Pixel coordinates, reflected and clipped per ``padding_mode``. As in PyTorch, the clip
    passes the gradient only strictly inside (0, size - 1): a point on the border pixel, or
    clipped onto it, gets none. A NaN goes where PyTorch's CPU kernels put it: clipped, to 0
    (2-D) or size - 1 (3-D); unclipped, outside (a zero sample) in 3-D and NaN in 2-D. An
    unclipped ±inf is outside too in 3-D (PyTorch's 3-D kernel adds only the corners within
    bounds, so their NaN weights are never computed); 2-D's vectorized kernel multiplies the
    zeros it reads there by those NaN weights."""
    from . import binary, compare
    coordinate = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "reflection":
        coordinate = (_reflect(coordinate, 0, 2 * (size - 1)) if align_corners
                      else _reflect(coordinate, -1, 2 * size - 1))
    if padding_mode in ("border", "reflection"):
        inside = compare.logical_and(coordinate > 0, coordinate < size - 1)
        coordinate = binary.where(inside, coordinate, binary.clamp(coordinate.detach(), 0, size - 1))
        nan_to = 0 if spatial == 2 else size - 1
    else:
        nan_to = None if spatial == 2 else -2
    if nan_to is not None:          # (a clipped coordinate is finite or NaN)
        coordinate = binary.where(compare.logical_not(compare.isfinite(coordinate.detach())), nan_to, coordinate)
    return coordinate


class NearestGridSample(Op):
    """The nearest samples: the pixels ``picked`` where ``inside``, zero elsewhere. They are
    piecewise constant in the grid, which gets PyTorch's zero gradient (so the output needs a
    gradient when the grid does)."""

    @staticmethod
    def forward(ctx, picked, inside, grid):
        ctx.save_for_backward(inside, grid)
        return ctx.xp.where(inside, picked, ctx.xp.zeros_like(picked))

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        inside, grid = ctx.saved_tensors
        return xp.where(inside, grad, xp.zeros_like(grad)), None, xp.zeros_like(grid)


def _pixel_reader(input, out_shape):
    """``read(indices)``: input (N, C, *size) at integer points (per spatial axis an (N, *out_shape)
    int64 tensor) as (N, C, *out_shape), with where they lie inside (N, 1, *out_shape): a gather,
    so the gradient scatters back to the pixels read; an index outside reads a clipped pixel,
    which callers replace by zero."""
    from . import binary, compare, gather_scatter
    batch, channels = input.shape[:2]
    size = tuple(input.shape[2:])
    flat_input = input.reshape(batch, channels, -1)
    strides = [math.prod(size[axis + 1:]) for axis in range(len(size))]

    def read(indices):
        inside = None
        flat = 0
        for i, n, stride in zip(indices, size, strides):
            ok = compare.logical_and(i >= 0, i < n)
            inside = ok if inside is None else compare.logical_and(inside, ok)
            flat = flat + binary.clamp(i, 0, n - 1) * stride
        where = flat.reshape(batch, 1, -1).expand(batch, channels, flat.numel() // batch)
        picked = gather_scatter.gather(flat_input, 2, where).reshape((batch, channels) + tuple(out_shape))
        return picked, inside.unsqueeze(1)
    return read


# grid_sample's bicubic mode, as PyTorch's: the point (unnormalized, neither clipped nor
# reflected) mixes the 4 × 4 pixels around it, x₀ - 1 … x₀ + 2 with x₀ = floor(x) per axis,
# with cubic-convolution weights of t = x - x₀; padding_mode moves each of those pixel indices
# (clipped for 'border', reflected then clipped for 'reflection'; 'zeros' reads zero outside).
# The weights are polynomials in t, differentiable in the grid (through t) to any order, and
# the pixels are gathered, differentiable in the input; the indices are constants.
_CUBIC_A = -0.75             # PyTorch's (and OpenCV's) cubic convolution constant


def _cubic_weights(t):
    """The weights of the pixels at offsets -1, 0, 1, 2 from x₀ (t = x - x₀ in [0, 1)): Keys'
    kernel W(s) = (A+2)|s|³ - (A+3)|s|² + 1 for |s| ≤ 1, A|s|³ - 5A|s|² + 8A|s| - 4A for
    1 < |s| < 2, at the distances s = t + 1, t, 1 - t, 2 - t."""
    a = _CUBIC_A

    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic_index(index, size, padding_mode, align_corners):
    """A pixel index (a float tensor of whole numbers, no gradient) moved per padding_mode, as
    int64. A NaN (from a NaN point, whose weights are NaN too) goes where PyTorch's vectorized
    kernel puts it: outside for 'zeros', to pixel 0 when clipped (so its gradient is NaN there)."""
    from . import binary, compare
    from .. import dtypes
    if padding_mode == "reflection":
        index = _reflect(index, 0, 2 * (size - 1)) if align_corners else _reflect(index, -1, 2 * size - 1)
    if padding_mode != "zeros":
        index = binary.clamp(index, 0, size - 1)
    index = binary.where(compare.isfinite(index), index, -1 if padding_mode == "zeros" else 0)
    return index.to(dtype=dtypes.int64)


def _bicubic_grid_sample(input, grid, padding_mode, align_corners):
    """grid_sample(mode='bicubic') of a 4-D input: Σᵢ W(tʸ)ᵢ Σⱼ W(tˣ)ⱼ input[y₀ - 1 + i, x₀ - 1 + j]."""
    from . import binary, unary
    height, width = input.shape[2:]
    read = _pixel_reader(input, tuple(grid.shape[1:-1]))
    x = _unnormalize(grid[..., 0], width, align_corners)
    y = _unnormalize(grid[..., 1], height, align_corners)
    x0, y0 = unary.floor(x.detach()), unary.floor(y.detach())
    across, down = _cubic_weights(x - x0), _cubic_weights(y - y0)
    columns = [_bicubic_index(x0 + (j - 1), width, padding_mode, align_corners) for j in range(4)]
    total = None
    for i, row_weight in enumerate(down):
        row = _bicubic_index(y0 + (i - 1), height, padding_mode, align_corners)
        mixed = None
        for column, weight in zip(columns, across):
            picked, inside = read([row, column])
            term = binary.where(inside, picked, 0.0) * weight.unsqueeze(1)
            mixed = term if mixed is None else mixed + term
        term = mixed * row_weight.unsqueeze(1)
        total = term if total is None else total + term
    return total


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

    def pad(c, n_axis):
        if padding_mode == "reflection":
            c = reflect(c, 0, 2 * (n_axis - 1)) if align_corners else reflect(c, -1, 2 * n_axis - 1)
        return c if padding_mode == "zeros" else min(max(c, 0), n_axis - 1)

    def cubic(s):                     # Keys' kernel, A = -0.75, at the distance |s|
        s, a = abs(s), _CUBIC_A
        return ((a + 2) * s - (a + 3)) * s * s + 1 if s <= 1 else ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    for n in range(input.shape[0]):
        for position in np.ndindex(*grid.shape[1:-1]):
            point, raw = [], []
            for axis in range(d):
                n_axis = size[axis]
                c = float(grid[(n,) + position + (d - 1 - axis,)])
                c = (c + 1) / 2 * (n_axis - 1) if align_corners else ((c + 1) * n_axis - 1) / 2
                raw.append(c)
                point.append(pad(c, n_axis))
            if mode == "bicubic":     # the 4 × 4 pixels around the unpadded point, each index padded
                corners = []
                for offsets in np.ndindex(4, 4):
                    taps = [math.floor(c) - 1 + k for c, k in zip(raw, offsets)]
                    index = tuple(int(pad(t, m)) for t, m in zip(taps, size))
                    corners.append((index, math.prod(cubic(c - t) for c, t in zip(raw, taps))))
            elif mode == "nearest":
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
    yield Sample((values(rng, (2, 2, 4, 5)), _grid(rng, (2, 3, 4, 2))), {"mode": "bicubic", "align_corners": False},
                 name="bicubic")
    yield Sample((values(rng, (1, 2, 4, 5)), _grid(rng, (1, 3, 3, 2)) * 1.5),
                 {"mode": "bicubic", "padding_mode": "reflection", "align_corners": True}, name="bicubic, reflection")
    yield Sample((values(rng, (1, 2, 4, 5)), _grid(rng, (1, 3, 3, 2)) * 1.5),
                 {"mode": "bicubic", "padding_mode": "border", "align_corners": False}, name="bicubic, border")


@register(_grid_sample_reference, _grid_sample_samples, method=False)
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """The values of ``input`` (N, C, H, W) at the points of ``grid`` (N, H_out, W_out, 2), in
    normalized coordinates: x = -1 is the left edge, 1 the right (y alike); 5-D inputs take
    (N, D_out, H_out, W_out, 3) grids (x, y, z).

    ``mode='bilinear'`` mixes the 2^d pixels around each point with weights (1 - λ) and λ per
    axis (trilinear in 3-D); ``'nearest'`` takes the closest pixel; ``'bicubic'`` (4-D input
    only) mixes the 4 × 4 pixels around it with cubic-convolution weights (A = -0.75), the
    padding applied to those pixels rather than to the point, as PyTorch. Points outside read zeros
    (``padding_mode='zeros'``), the border pixel (``'border'``) or the reflected point
    (``'reflection'``). ``align_corners`` puts ±1 on the corner pixels' centres instead of
    their outer edges (default False, with PyTorch's warning when not given). Gradients
    flow to the input (scattered back to the pixels read) and to the grid (through the
    weights; zero for ``nearest``).

    Example::

        x = vizgrad.arange(16.0).reshape(1, 1, 4, 4)
        grid = vizgrad.zeros(1, 1, 1, 2)                        # the centre
        F.grid_sample(x, grid, align_corners=False)             # tensor([[[[7.5000]]]])
    """
    import warnings
    from . import binary, unary
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
    if mode == "bicubic" and d != 2:
        raise ShapeError(f"{op}: bicubic interpolation only supports 4-D input, got shape {format_shape(input.shape)}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ArgumentError(f"{op}: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                            f"'{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if mode == "bicubic":
        return _bicubic_grid_sample(input, grid, padding_mode, align_corners)
    size = tuple(input.shape[2:])
    points = [_source_coordinate(grid[..., d - 1 - axis], size[axis], padding_mode, align_corners, d)
              for axis in range(d)]                                        # per spatial axis, (N, *out)
    read = _pixel_reader(input, tuple(grid.shape[1:-1]))
    if mode == "nearest":
        picked, inside = read([unary.round(p.detach()).to(dtype=dtypes.int64) for p in points])
        return NearestGridSample.apply(picked, inside, grid)
    lows = [unary.floor(p.detach()) for p in points]
    fractions = [p - low for p, low in zip(points, lows)]
    total = None
    for bits in itertools.product((0, 1), repeat=d):
        picked, inside = read([(low + b).to(dtype=dtypes.int64) for low, b in zip(lows, bits)])
        weight = None
        for fraction, b in zip(fractions, bits):
            factor = fraction if b else 1 - fraction
            weight = factor if weight is None else weight * factor
        term = binary.where(inside, picked, 0.0) * weight.unsqueeze(1)
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
