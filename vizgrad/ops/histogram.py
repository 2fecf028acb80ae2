"""Counting values: ``bincount``, ``histc``, ``histogram``, ``histogramdd``. No gradients (counts are
piecewise constant). The counting runs on the host with NumPy, whose histogram rules are
PyTorch's (bins closed on the left, the last one on both sides); results come back on the
input's device."""

import builtins

import math

import numpy as np

from .. import return_types
from ..errors import ArgumentError, DTypeError, ShapeError, as_number, check_size, format_shape, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, bind_method, register

HistogramResult = return_types.histogram


def _host(tensor):
    return np.asarray(tensor._backend().to_numpy(tensor._array))


def _like(host, input, dtype=None):
    target = input.device
    array = target.backend.asarray(np.ascontiguousarray(host if dtype is None else host.astype(dtype)), None,
                                   target.index or 0)
    return Tensor._make(array)


def _bincount_samples(rng):
    yield Sample((rng.integers(0, 5, size=(12,)),), name="counts")
    yield Sample((rng.integers(0, 5, size=(12,)),), {"minlength": 8}, name="minlength")
    yield Sample((rng.integers(0, 5, size=(6,)), rng.uniform(0.0, 2.0, size=(6,))), name="weights")
    yield Sample((np.zeros(0, dtype=np.int64),), name="empty")


@register(lambda x, weights=None, minlength=0: np.bincount(x, weights, minlength), _bincount_samples,
          differentiable=False)
def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ..., max(input) occurs in a 1-d tensor of non-negative
    integers (at least ``minlength`` bins); with ``weights``, their sum per value instead.

    Example::

        vizgrad.bincount(vizgrad.tensor([0, 1, 1, 3]))    # tensor([1, 2, 0, 1])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("bincount", "input", input)
    if weights is not None and not isinstance(weights, Tensor):
        raise not_a_tensor("bincount", "weights", weights)
    minlength = check_size("bincount", "minlength", minlength)
    if input.ndim != 1 or input.is_floating_point() or input.dtype.name == "bool":
        raise DTypeError(f"bincount only supports 1-d non-negative integral inputs, got dtype {input.dtype.name} "
                         f"and shape {format_shape(input.shape)}")
    values = _host(input)
    if values.size and values.min() < 0:
        raise ArgumentError(f"bincount: only supports 1-d non-negative integral inputs, got the value {values.min()}")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise ShapeError(f"bincount: weights of shape {format_shape(weights.shape)} should have the same shape "
                         f"as input {format_shape(input.shape)}")
    counts = np.bincount(values, None if weights is None else _host(weights), minlength)
    if weights is None:
        return _like(counts, input, np.int64)
    # floating weights keep their dtype; integer and bool weights sum in float64, as in PyTorch
    return _like(counts, input, weights.dtype.numpy if weights.is_floating_point() else np.float64)


def _range(op, values, low, high):
    if low > high:
        raise ArgumentError(f"{op}: max must be larger than min, got min={low} and max={high}")
    if low == high and values.size:
        low, high = float(values.min()), float(values.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):       # the data's own range holds inf or NaN
        raise ArgumentError(f"{op}: range of [{low}, {high}] is not finite")
    return low, high


def _floating(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"{op}: input must be floating point, got {input.dtype.name}")


def _histc_samples(rng):
    yield Sample((rng.uniform(-2.0, 2.0, size=(20,)),), {"bins": 5}, name="own range")
    yield Sample((rng.uniform(-2.0, 2.0, size=(4, 5)),), {"bins": 4, "min": -1, "max": 1}, name="clipped range")


def _histc_reference(x, bins=100, min=0, max=0):
    low, high = _range("histc", x, min, max)
    inside = x[(x >= low) & (x <= high)]
    return np.histogram(inside, bins, (low, high))[0].astype(x.dtype)


@register(_histc_reference, _histc_samples, differentiable=False)
def histc(input, bins=100, min=0, max=0):
    """Counts of the values in ``bins`` equal-width bins from ``min`` to ``max`` (both 0:
    the data's own range); values outside are ignored. Returns ``input``'s dtype.

    Example::

        vizgrad.histc(vizgrad.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)   # tensor([0., 2., 1., 0.])
    """
    _floating("histc", input)
    bins = check_size("histc", "bins", bins, 1)
    if bins >= 2 ** 63:     # PyTorch's int64 argument
        raise ArgumentError(f"histc: bins {bins} does not fit in int64")
    min, max = as_number("histc", "min", min), as_number("histc", "max", max)
    values = _host(input).reshape(-1)
    return _like(_histc_reference(values, bins, min, max), input)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """A histogram of ``input`` as a named tuple ``(hist, bin_edges)``: ``bins`` equal-width
    bins over ``range`` (default: the data's range), or the edges given as a 1-d tensor.
    ``weight`` weighs each value; ``density=True`` normalises to a density.

    Example::

        hist, edges = vizgrad.histogram(vizgrad.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
    """
    _floating("histogram", input)
    values = _host(input).reshape(-1)
    if isinstance(bins, Tensor):
        edges_in = _host(bins)
    else:
        edges_in = bins = check_size("histogram", "bins", bins, 1)
        if range is None:
            range = _range("histogram", values, 0, 0) if values.size == 0 or values.min() == values.max() \
                else (float(values.min()), float(values.max()))
    weights = None if weight is None else _host(weight).reshape(-1)
    hist, edges = np.histogram(values, edges_in, None if isinstance(bins, Tensor) else range, weights=weights,
                               density=density)
    dtype = input.dtype.numpy
    return HistogramResult(_like(hist, input, dtype), _like(edges, input, dtype))


bind_method("histogram", histogram)


def _data_range(values):
    """The (low, high) of ``values``: (0, 1) when there are none, and ±0.5 around a single
    value (as PyTorch's histogramdd)."""
    if values.size == 0:
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """A D-dimensional histogram of the points in the last dim of ``input`` (shape (..., D)),
    as a named tuple ``(hist, bin_edges)``: ``bins`` is one count for every dim, a count per
    dim, or a list of 1-d tensors of edges; ``range`` the (low, high) of each dim flattened
    into 2·D numbers (default: the data's range); ``weight`` weighs each point and
    ``density=True`` normalises to a density. Bins are closed on the left, the last on both sides.

    Example::

        hist, edges = vizgrad.histogramdd(vizgrad.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=2)
        hist        # tensor([[1., 0.], [0., 1.]])
    """
    _floating("histogramdd", input)
    if input.ndim < 1:
        raise ShapeError("histogramdd: input must have at least one dim (points in the last), got a 0-d tensor")
    dims = input.shape[-1]
    points = _host(input).reshape(-1, dims)
    if isinstance(bins, (list, tuple)) and bins and all(isinstance(b, Tensor) for b in bins):
        if len(bins) != dims:
            raise ShapeError(f"histogramdd: expected {dims} sequences of bin edges for the {dims} dims of the "
                             f"points, got {len(bins)}")
        edges_in = [_host(b).astype(np.float64) for b in bins]
    else:
        counts = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
        if len(counts) != dims:
            raise ShapeError(f"histogramdd: expected {dims} bin counts for the {dims} dims of the points, got "
                             f"{len(counts)}")
        counts = [check_size("histogramdd", "bins", b, 1) for b in counts]
        if range is not None:
            limits = [as_number("histogramdd", "range", r) for r in range]
            if len(limits) != 2 * dims:
                raise ShapeError(f"histogramdd: range must hold 2 numbers per dim ({2 * dims}), got {len(limits)}")
            pairs = [(limits[2 * d], limits[2 * d + 1]) for d in builtins.range(dims)]
        else:
            pairs = [_data_range(points[:, d]) for d in builtins.range(dims)]
        for low, high in pairs:
            if low > high:
                raise ArgumentError(f"histogramdd: the range's low ({low}) must not exceed its high ({high})")
        # edges in the input's dtype (as PyTorch computes them), counted against those values
        edges_in = [np.linspace(low, high, n + 1).astype(input.dtype.numpy).astype(np.float64)
                    for (low, high), n in zip(pairs, counts)]
    weights = None
    if weight is not None:
        if not isinstance(weight, Tensor):
            raise not_a_tensor("histogramdd", "weight", weight)
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise ShapeError(f"histogramdd: weight must have the shape of the points, "
                             f"{format_shape(input.shape[:-1])}, got {format_shape(weight.shape)}")
        weights = _host(weight).reshape(-1)
    hist, edges = np.histogramdd(points, edges_in, weights=weights, density=density)
    dtype = input.dtype.numpy
    return return_types.histogramdd(_like(hist, input, dtype), tuple(_like(e, input, dtype) for e in edges))
