"""Order statistics and other statistics: ``median``, ``nanmedian``, ``kthvalue``, ``mode``,
``msort``, ``quantile``, ``nanquantile``, ``cov``, ``corrcoef``; integrals and derivatives of
samples: ``trapezoid`` (``trapz``), ``cumulative_trapezoid``, ``gradient``.

The selections (median along a dim, kthvalue, mode) sort each row stably (NaN last) and take
one place of it: the value and the index it came from, as a named tuple; the gradient goes
back to that index. ``median(input)`` over every element shares its gradient evenly among the
elements equal to it, as PyTorch's. Quantiles, covariances and the trapezoid rule are built
from differentiable ops (sort, gather, lerp, matmul, sums), so their derivatives of every
order are those of the ops they are made of.
"""

import builtins
import functools
import math
import numbers

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, _describe, as_int, check_dim, \
    format_shape, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import values


# --- selections along a dim: median, nanmedian, kthvalue, mode ---------------------------

def _running_max(xp, a):
    """The running maximum along the last axis (a doubling scan: log₂ n passes)."""
    step, n = 1, a.shape[-1]
    while step < n:
        a = xp.concat([a[..., :step], xp.maximum(a[..., step:], a[..., :-step])], axis=-1)
        step *= 2
    return a


class Selection(Op):
    """One element of each row along ``axis``, chosen from the row sorted stably (NaN last),
    and its index (the dim kept when ``keepdim``); the gradient goes back to that index.
    ``kind`` says which element: ``median`` (the lower median; the first NaN when the row has
    one), ``nanmedian`` (the lower median of the numbers), ``kthvalue`` (the k-th smallest) or
    ``mode`` (the most frequent value, the smallest among equally frequent ones, at its last
    index)."""

    @staticmethod
    def forward(ctx, a, axis, kind, k, keepdim, chosen=None):
        xp = ctx.xp
        ctx.shape, ctx.axis, ctx.keepdim = a.shape, axis, keepdim
        if a.ndim == 0:
            indices = xp.zeros((), dtype=xp.int64)
            ctx.save_for_backward(indices)
            ctx.mark_non_differentiable(indices)
            return xp.asarray(a, copy=True), indices
        row = xp.moveaxis(a, axis, -1)
        n = row.shape[-1]
        order = xp.astype(xp.argsort(row, axis=-1, stable=True), xp.int64)
        ordered = xp.take_along_axis(row, order, axis=-1)
        missing = xp.sum(xp.astype(xp.isnan(row), xp.int64), axis=-1, keepdims=True)
        if kind == "median":
            place = xp.where(missing > 0, n - missing, (n - 1) // 2)
        elif kind == "nanmedian":
            place = xp.where(missing < n, (n - missing - 1) // 2, 0)
        elif kind == "kthvalue":
            place = xp.full(missing.shape, k - 1, dtype=xp.int64)
        else:
            place = _mode_place(xp, ordered, order)
        picked = xp.take_along_axis(order, place, axis=-1)
        if kind == "nanmedian":     # a row of NaN only: the NaN PyTorch's selection reports
            picked = xp.where(missing == n, _among_equals(n), picked)
        indices = xp.moveaxis(picked, -1, axis)
        if chosen is not None:      # the caller's choice among equal values (kthvalue: PyTorch's)
            indices = xp.where(chosen >= 0, chosen, indices)
        out = xp.take_along_axis(a, indices, axis=axis)
        ctx.save_for_backward(indices)          # (kept dims: where the gradient goes back)
        if not keepdim:
            out, indices = xp.squeeze(out, axis=axis), xp.squeeze(indices, axis=axis)
        ctx.mark_non_differentiable(indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        xp = ctx.xp
        if len(ctx.shape) == 0:
            return grad
        if not ctx.keepdim:
            grad = xp.expand_dims(grad, axis=ctx.axis)
        return xp.scatter_add(xp.zeros(ctx.shape, dtype=grad.dtype, device=grad.device), ctx.axis, indices, grad)


class MedianDim(Selection):
    """:class:`Selection` of the median (PyTorch's node ``MedianBackward1``)."""


@functools.lru_cache(maxsize=None)
def _among_equals(n):
    """The position PyTorch's CPU nanmedian reports for a row of n NaNs: where an introselect
    for the first place (pivot the median of three moved to the front, Hoare partition) leaves
    the elements when none compares below another. A function of n alone."""
    order = list(range(n))
    first, last = 0, n
    while last - first > 3:
        middle = first + (last - first) // 2
        order[first], order[middle] = order[middle], order[first]
        low, high = first + 1, last
        while True:
            high -= 1
            if not low < high:
                break
            order[low], order[high] = order[high], order[low]
            low += 1
        last = low
    return order[0]


def _mode_place(xp, ordered, order):
    """Where, in rows sorted stably, the mode's last occurrence is: each run of equal values
    is measured from its first place (a running maximum of run starts) to its last."""
    n = ordered.shape[-1]
    places = xp.broadcast_to(xp.arange(n, dtype=xp.int64), ordered.shape)
    differs = ordered[..., 1:] != ordered[..., :-1]
    edge = xp.ones(ordered.shape[:-1] + (1,), dtype=xp.bool)
    starts = _running_max(xp, xp.where(xp.concat([edge, differs], axis=-1), places, 0))
    # a run's last place: its first place in the reversed row, read back
    ends_reversed = xp.flip(xp.concat([differs, edge], axis=-1), axis=-1)
    ends = n - 1 - xp.flip(_running_max(xp, xp.where(ends_reversed, places, 0)), axis=-1)
    counts = ends - starts + 1
    best = xp.max(counts, axis=-1, keepdims=True)
    first = xp.argmax(xp.astype(counts == best, xp.int64), axis=-1, keepdims=True)     # the smallest value
    return xp.take_along_axis(ends, first, axis=-1)


class Kthvalue(Selection):
    """:class:`Selection` of the k-th smallest (its own class, so the node is ``KthvalueBackward0``)."""


class Mode(Selection):
    """:class:`Selection` of the most frequent value."""


class MedianAll(Op):
    """The lower median of every element (NaN if there is one; ``ignore_nan``: of the
    numbers). The gradient is shared evenly among the elements equal to it (among the NaNs
    when it is NaN), as PyTorch's."""

    @staticmethod
    def forward(ctx, a, ignore_nan):
        xp = ctx.xp
        row = xp.reshape(a, (-1,))
        n = row.shape[0]
        ordered = xp.sort(row, stable=True)
        missing = xp.sum(xp.astype(xp.isnan(row), xp.int64), keepdims=True)
        if ignore_nan:
            place = xp.where(missing < n, (n - missing - 1) // 2, 0)
        else:
            place = xp.where(missing > 0, n - missing, (n - 1) // 2)
        out = xp.reshape(xp.take(ordered, place), ())
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        chosen = xp.logical_or(a == out, xp.logical_and(xp.isnan(a), xp.isnan(out)))
        ties = xp.sum(xp.astype(chosen, a.dtype))
        return xp.where(chosen, grad / ties, 0.0)


class NanmedianAll(MedianAll):
    """:class:`MedianAll` of the numbers (its own class, so the node is ``NanmedianBackward0``)."""


def _number_input(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: input must be a number tensor, got dtype bool; convert it first, e.g. x.int()")


def _select(op, result, cls, input, dim, keepdim, kind, k=None):
    axis = check_dim(op, as_int(op, "dim", dim), input.ndim)
    if input.ndim and input.shape[axis] == 0:
        raise ShapeError(f"{op}: cannot take the {kind} of an empty dim: dim {dim} of input of shape "
                         f"{format_shape(input.shape)} has size 0")
    chosen = _kth_among_ties(input, axis, k) if kind == "kthvalue" and input.ndim else None
    return result(*cls.apply(input, axis=axis, kind=kind, k=k, keepdim=bool(keepdim), chosen=chosen))


def _kth_among_ties(input, axis, k):
    """Which of several elements equal to the k-th smallest PyTorch's kthvalue reports (on the
    CPU): the one its partition-based selection leaves at place k - 1. Found on the host for
    the rows with such ties only, as an index array in the keepdim shape (-1 elsewhere), or
    None when no row has a tie."""
    backend = input._backend()
    host = np.asarray(backend.to_numpy(input.detach()._array))
    rows = np.moveaxis(host, axis, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    kth = np.sort(flat, axis=-1, kind="stable")[:, k - 1:k]
    equal = (flat == kth) | (np.isnan(flat) & np.isnan(kth)) if flat.dtype.kind == "f" else flat == kth
    tied = np.flatnonzero(equal.sum(axis=1) > 1)
    if not tied.size:
        return None
    chosen = np.full(flat.shape[0], -1, dtype=np.int64)
    for row in tied:
        chosen[row] = _partition_select(flat[row].tolist(), k - 1)
    chosen = np.moveaxis(chosen.reshape(rows.shape[:-1] + (1,)), -1, axis)
    device = input.device
    return device.backend.asarray(np.ascontiguousarray(chosen), None, device.index or 0)


def _partition_select(values, place):
    """The original position of the element a partition-based selection (Hoare's, with the
    median of the first, middle and last elements as pivot, NaN above every number) puts at
    ``place``: how PyTorch's CPU kthvalue chooses among equal values."""
    order = list(range(len(values)))

    def above(p, q):
        x, y = values[order[p]], values[order[q]]
        return (x != x and y == y) or x > y

    def swap(p, q):
        order[p], order[q] = order[q], order[p]

    low, high = 0, len(values) - 1
    while high > low:
        if high == low + 1:
            if above(low, high):
                swap(low, high)
            break
        swap(low + (high - low) // 2, low + 1)
        for p, q in ((low + 1, high), (low, high), (low + 1, low)):
            if above(p, q):
                swap(p, q)
        i, j = low + 1, high
        while True:            # the pivot sits at low; move smaller ones left, larger ones right
            i += 1
            while above(low, i):
                i += 1
            j -= 1
            while above(j, low):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= place:
            low = i
        if j >= place:
            high = j - 1
    return order[place]


def _median(op, input, dim, keepdim, ignore_nan):
    _number_input(op, input)
    kind = "nanmedian" if ignore_nan else "median"
    if dim is None:
        if input.numel() == 0:
            if not input.is_floating_point():
                raise ShapeError(f"{op}: cannot take the median of an empty tensor")
            return input.new_tensor(math.nan)
        return (NanmedianAll if ignore_nan else MedianAll).apply(input, ignore_nan=ignore_nan)
    return _select(op, getattr(return_types, op), NanmedianDim if ignore_nan else MedianDim, input, dim, keepdim,
                   kind)


class NanmedianDim(Selection):
    """:class:`Selection` of the median of the numbers (the node is ``NanmedianBackward1``)."""


def _median_reference(ignore_nan):
    def reference(x, dim=None, keepdim=False):
        def lower(row):
            row = np.sort(row[~np.isnan(row)] if ignore_nan else row)
            if not ignore_nan and np.isnan(row).any():
                return np.nan
            return row[(len(row) - 1) // 2] if len(row) else np.nan
        if dim is None:
            return np.asarray(lower(np.ravel(x)), dtype=x.dtype)
        if np.ndim(x) == 0:
            return x, np.asarray(0)
        moved = np.moveaxis(x, dim, -1)
        out = np.apply_along_axis(lower, -1, moved).astype(x.dtype)
        index = np.empty(out.shape, dtype=np.int64)
        for position in np.ndindex(out.shape):
            row = moved[position]
            index[position] = int(np.flatnonzero(np.isnan(row))[0]) if np.isnan(out[position]) else \
                int(np.flatnonzero(row == out[position])[0])
        if keepdim:
            out, index = np.expand_dims(out, dim), np.expand_dims(index, dim)
        return out, index
    return reference


def _distinct_values(rng, shape):
    """Values without ties (so the index of a selection is unique and gradcheck is defined)."""
    return np.asarray(rng.permutation(math.prod(shape)).reshape(shape).astype(np.float64) / 4 - 1 \
        + rng.uniform(0, 0.01, size=shape))


def _median_samples(rng):
    yield Sample((_distinct_values(rng, (3, 5)),), name="all")
    yield Sample((_distinct_values(rng, (4, 6)),), name="all, even count")
    yield Sample((_distinct_values(rng, (3, 4, 5)), 1), name="dim=1")
    yield Sample((_distinct_values(rng, (3, 4)), -1, True), name="dim=-1 keepdim")
    yield Sample((_distinct_values(rng, ()), 0), name="0-d")
    # (NaN: tests/test_reduce_random_more.py, against PyTorch: gradcheck has no NaN outputs)


@register(_median_reference(False), _median_samples, smooth=False)
def median(input, dim=None, keepdim=False):
    """The lower median: of every element (a 0-d tensor) or along ``dim``, as a named tuple
    ``(values, indices)``. Of an even count of values the smaller middle one (PyTorch's, not
    the mean of the two); a row holding NaN has median NaN (its first NaN's index). Among
    equal values the index is PyTorch's on the CPU: the first in the row. Gradient: to the element at
    ``indices`` along ``dim``; over every element, shared evenly among those equal to the median.

    Example::

        vizgrad.tensor([3.0, 1.0, 4.0, 2.0]).median()           # tensor(2.)
        vizgrad.tensor([[3.0, 1.0, 2.0]]).median(dim=1)         # values tensor([2.]), indices tensor([2])
    """
    return _median("median", input, dim, keepdim, ignore_nan=False)


@register(_median_reference(True), _median_samples, smooth=False)
def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN: the lower median of the numbers (NaN where there are none).

    Example::

        vizgrad.tensor([1.0, float("nan"), 3.0, 2.0]).nanmedian()   # tensor(2.)
    """
    return _median("nanmedian", input, dim, keepdim, ignore_nan=True)


def _kthvalue_reference(x, k, dim=-1, keepdim=False):
    if np.ndim(x) == 0:
        return x, np.asarray(0)
    order = np.argsort(x, axis=dim, kind="stable")
    index = np.take(order, [k - 1], axis=dim)
    out = np.take_along_axis(x, index, axis=dim)
    return (out, index) if keepdim else (np.squeeze(out, dim), np.squeeze(index, dim))


def _kthvalue_samples(rng):
    yield Sample((_distinct_values(rng, (3, 5)), 2), name="k=2")
    yield Sample((_distinct_values(rng, (4, 3)), 4, 0, True), name="k=4 dim=0 keepdim")
    yield Sample((_distinct_values(rng, (2, 3, 4)), 1, 1), name="k=1 dim=1")
    yield Sample((_distinct_values(rng, ()), 1), name="0-d")


@register(_kthvalue_reference, _kthvalue_samples, smooth=False)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (k counts from 1) and its index, as a named
    tuple ``(values, indices)``; NaN counts as the largest. Among equal values the index is the
    one PyTorch's CPU selection reports. The gradient goes to that index.

    Example::

        vizgrad.tensor([3.0, 1.0, 2.0]).kthvalue(2)     # values tensor(2.), indices tensor(2)
    """
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_ and input.ndim == 0:   # PyTorch's one bool case
        values, indices = kthvalue(input.to(dtypes.int64), k, dim, keepdim)
        return return_types.kthvalue(values.to(dtypes.bool_), indices)
    _number_input("kthvalue", input)
    k = as_int("kthvalue", "k", k)
    axis = check_dim("kthvalue", as_int("kthvalue", "dim", dim), input.ndim)
    size = input.shape[axis] if input.ndim else 1
    if not 1 <= k <= size:
        raise ArgumentError(f"kthvalue: k ({k}) is out of range for dim {dim} of size {size}: "
                            f"it must be in [1, {size}]")
    return _select("kthvalue", return_types.kthvalue, Kthvalue, input, dim, keepdim, "kthvalue", k)


def _mode_reference(x, dim=-1, keepdim=False):
    if np.ndim(x) == 0:
        return x, np.asarray(0)
    moved = np.moveaxis(x, dim, -1)
    out = np.empty(moved.shape[:-1], dtype=x.dtype)
    index = np.empty(moved.shape[:-1], dtype=np.int64)
    for position in np.ndindex(out.shape):
        row = moved[position]
        distinct, counts = np.unique(row, return_counts=True)
        value = distinct[np.argmax(counts)]
        out[position], index[position] = value, np.flatnonzero(row == value)[-1]
    if keepdim:
        out, index = np.expand_dims(out, dim), np.expand_dims(index, dim)
    return out, index


def _mode_samples(rng):
    yield Sample((rng.integers(0, 4, size=(3, 7)),), name="integers")
    yield Sample((rng.integers(0, 3, size=(4, 5)), 0, True), name="dim=0 keepdim")
    yield Sample((np.array([[1, 2, 2, 3, 3], [5, 5, 5, 1, 1]]),), name="ties in count")
    # (floats with repeated values have no numerical gradient; distinct ones: the mode is the smallest)
    yield Sample((_distinct_values(rng, (3, 4)), 1), name="distinct floats")


@register(_mode_reference, _mode_samples, smooth=False)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence, as a named tuple ``(values, indices)``; the gradient goes
    to that index. Bools too, as PyTorch.

    Example::

        vizgrad.tensor([1, 2, 2, 3, 3]).mode()      # values tensor(2), indices tensor(2)
    """
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:     # counted as 0 and 1, bools again after
        values, indices = _select("mode", return_types.mode, Mode, input.to(dtypes.int64), dim, keepdim, "mode")
        return return_types.mode(values.to(dtypes.bool_), indices)
    _number_input("mode", input)
    return _select("mode", return_types.mode, Mode, input, dim, keepdim, "mode")


@register(lambda x: np.sort(x, axis=0) if np.ndim(x) else x, lambda rng: iter([
    Sample((values(rng, (4, 3)),), name="2-d"), Sample((values(rng, (5,)),), name="1-d")]), smooth=False)
def msort(input):
    """``input`` sorted along its first dim: ``sort(input, dim=0).values``.

    Example::

        vizgrad.msort(vizgrad.tensor([[2.0, 1.0], [0.0, 3.0]]))   # tensor([[0., 1.], [2., 3.]])
    """
    from .sorting import sort
    if not isinstance(input, Tensor):
        raise not_a_tensor("msort", "input", input)
    return sort(input, 0).values


# --- quantile, nanquantile ---------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    from .binary import lerp, where
    from .sorting import sort
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"{op}: input tensor must be either float or double dtype, got {input.dtype.name}")
    if interpolation not in _INTERPOLATIONS:
        raise ArgumentError(f"{op}: interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
                            f"got {interpolation!r}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ShapeError(f"{op}: q must be a scalar or 1D tensor, got shape {format_shape(q.shape)}")
        if q.dtype is not input.dtype:
            raise DTypeError(f"{op}: q tensor must be same dtype as the input tensor, got q {q.dtype.name} "
                             f"and input {input.dtype.name}")
        scalar_q = q.ndim == 0
        q_values = q.reshape(-1)          # (the linear weights are differentiable in q, as PyTorch's)
        if q_values.numel() and bool(((q_values.detach() < 0) | (q_values.detach() > 1)).any()):
            raise ArgumentError(f"{op}: q values must be in the range [0, 1], got {q.detach().tolist()}")
    else:
        if isinstance(q, bool) or not isinstance(q, numbers.Real):
            raise ArgumentTypeError(f"{op}: q must be a number or a Tensor, got {type(q).__name__}")
        if not 0 <= q <= 1:
            raise ArgumentError(f"{op}: q must be in the range [0, 1] but got {q}")
        scalar_q = True
        q_values = input.new_tensor([float(q)]).detach()
    if input.numel() == 0:
        raise ShapeError(f"{op}: input tensor must be non-empty")
    if dim is None:
        rows, axis = input.reshape(-1), 0
        kept_shape = (1,) * input.ndim
    else:
        axis = check_dim(op, as_int(op, "dim", dim), input.ndim)
        rows = input.movedim(axis, -1) if input.ndim else input.reshape(1)
        kept_shape = tuple(1 if i == axis else n for i, n in enumerate(input.shape))
    ordered = sort(rows, -1).values                                   # NaN last
    n = ordered.shape[-1]
    missing = ordered.detach().isnan().sum(-1, keepdim=True)          # (..., 1)
    counts = (n - missing).to(input.dtype)
    qs = q_values.reshape((-1,) + (1,) * ordered.ndim)                # (Q, 1, ..., 1)
    if ignore_nan:      # a row of NaN only: its last place, a NaN
        ranks = where(counts > 0, qs * (counts - 1), float(n - 1))
    else:               # a row holding NaN: its last place, a NaN
        ranks = where(missing > 0, float(n - 1), qs * (n - 1))
    expanded = ordered.unsqueeze(0).expand((qs.shape[0],) + tuple(ordered.shape))
    places = ranks.detach()
    below = places.to(dtypes.int64)
    if interpolation == "lower":
        out = expanded.gather(-1, below)
    elif interpolation == "higher":
        out = expanded.gather(-1, places.ceil().to(dtypes.int64))
    elif interpolation == "nearest":
        out = expanded.gather(-1, places.round().to(dtypes.int64))
    else:
        weight = ranks - below.to(input.dtype) if interpolation == "linear" else 0.5
        out = lerp(expanded.gather(-1, below), expanded.gather(-1, places.ceil().to(dtypes.int64)), weight)
    out = out.squeeze(-1)                                              # (Q, rows...)
    if keepdim:
        out = out.reshape((out.shape[0],) + kept_shape)
    elif dim is None:
        out = out.reshape(out.shape[0])
    return out.squeeze(0) if scalar_q else out


def _quantile_reference(ignore_nan):
    def reference(x, q, dim=None, keepdim=False, *, interpolation="linear"):
        method = {"midpoint": "midpoint", "nearest": "closest_observation"}.get(interpolation, interpolation)
        function = np.nanquantile if ignore_nan else np.quantile
        if method == "closest_observation":           # round half to even on the rank, as PyTorch
            return _nearest_reference(x, q, dim, keepdim, ignore_nan)
        axis = None if dim is None else dim
        return np.asarray(function(x, q, axis=axis, keepdims=keepdim, method=method), dtype=x.dtype)
    return reference


def _nearest_reference(x, q, dim, keepdim, ignore_nan):
    data = np.ravel(x) if dim is None else np.moveaxis(x, dim, -1)
    qs = np.atleast_1d(q)
    out = np.empty(qs.shape + data.shape[:-1], dtype=x.dtype)
    for i, level in enumerate(qs):
        for position in np.ndindex(data.shape[:-1]):
            row = data[position]
            row = np.sort(row[~np.isnan(row)] if ignore_nan else row)
            out[(i,) + position] = np.nan if (not len(row) or np.isnan(row).any()) else \
                row[int(np.round(level * (len(row) - 1)))]
    if keepdim:
        out = out.reshape(qs.shape + ((1,) * np.ndim(x) if dim is None else np.expand_dims(
            np.empty(data.shape[:-1]), dim).shape))
    return out if np.ndim(q) else out[0]


def _quantile_samples(rng):
    yield Sample((_distinct_values(rng, (3, 5)), 0.3), name="all q=0.3")
    yield Sample((_distinct_values(rng, (3, 5)), np.array([0.1, 0.45, 0.9])), {"dim": 1}, name="q tensor dim=1")
    yield Sample((_distinct_values(rng, (4, 3)), np.array(0.75)), {"dim": 0, "keepdim": True}, name="0-d q keepdim")
    yield Sample((_distinct_values(rng, (2, 3, 4)), np.array([0.2, 0.8])), {"dim": -1, "keepdim": True},
                 name="q tensor keepdim")
    for interpolation in _INTERPOLATIONS[1:]:
        yield Sample((_distinct_values(rng, (3, 6)), np.array([0.15, 0.55])),
                     {"dim": 1, "interpolation": interpolation}, name=interpolation)
    # (NaN: tests/test_reduce_random_more.py, against PyTorch); ranks q·(n-1) avoid integers, where
    # the linear interpolation has a kink in q


@register(_quantile_reference(False), _quantile_samples, smooth=False)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles of ``input`` (flattened) or along ``dim``: the value at rank
    q·(n-1) of the sorted values, interpolated between the two around it by ``interpolation``
    (``linear``, ``lower``, ``higher``, ``midpoint``, ``nearest``). ``q`` is a number or a
    tensor of at most one dim in [0, 1]; a 1-D ``q`` gives the quantiles along a new first
    dim. A row holding NaN gives NaN. The gradient goes to the elements interpolated.

    Example::

        vizgrad.quantile(vizgrad.tensor([0.0, 1.0, 2.0, 3.0]), 0.5)              # tensor(1.5000)
        vizgrad.tensor([[0.0, 4.0]]).quantile(vizgrad.tensor([0.25, 1.0]), dim=1)   # tensor([[1.], [4.]])
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@register(_quantile_reference(True), _quantile_samples, smooth=False)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN: the quantiles of the numbers of each row (NaN where
    there are none).

    Example::

        vizgrad.nanquantile(vizgrad.tensor([0.0, float("nan"), 2.0]), 0.5)    # tensor(1.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


# --- cov, corrcoef ---------------------------------------------------------------------

def _observations(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim > 2:
        raise ShapeError(f"{op}: expected input to have two or fewer dimensions but got an input with "
                         f"{input.ndim} dimensions (shape {format_shape(input.shape)})")
    if input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: input must be a number tensor, got dtype bool")
    if not input.is_floating_point():
        input = input.to(dtypes.default_float)
    return input.reshape(1, -1) if input.ndim < 2 else input


def _weights(op, name, weights, observations, integral):
    if weights is None:
        return None
    if not isinstance(weights, Tensor):
        raise not_a_tensor(op, name, weights)
    if weights.ndim > 1:
        raise ShapeError(f"{op}: expected {name} to have one or fewer dimensions, got shape "
                         f"{format_shape(weights.shape)}")
    if weights.numel() != observations:
        raise ShapeError(f"{op}: expected {name} to have the same numel as there are observations in the "
                         f"input ({observations}), but got {weights.numel()}")
    if integral and weights.is_floating_point():
        raise DTypeError(f"{op}: expected {name} to have integral dtype, got {weights.dtype.name}")
    if not integral and not weights.is_floating_point():
        raise DTypeError(f"{op}: expected {name} to have floating point dtype, got {weights.dtype.name}")
    if weights.numel() and bool((weights.detach() < 0).any()):
        raise ArgumentError(f"{op}: {name} cannot be negative")
    return weights


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns; one variable gives a 0-d tensor): Σ wₖ (xᵢₖ - x̄ᵢ)(xⱼₖ - x̄ⱼ) / d,
    with ``fweights`` (integer frequencies) and ``aweights`` (floating importances) w and the
    weighted means x̄; d is Σw - ``correction`` (with aweights, Σw - correction·Σw·a/Σw), never
    below zero.

    Example::

        vizgrad.cov(vizgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))    # tensor([[ 1., -1.], [-1.,  1.]])
    """
    x = _observations("cov", input)
    as_int("cov", "correction", correction)
    observations = x.shape[1]
    fweights = _weights("cov", "fweights", fweights, observations, integral=True)
    aweights = _weights("cov", "aweights", aweights, observations, integral=False)
    weights = fweights.to(x.dtype) if fweights is not None else None
    if aweights is not None:
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        total = observations
        mean = x.mean(1, keepdim=True)
        divisor = total - correction
    else:
        total = weights.sum()
        mean = (x * weights).sum(1, keepdim=True) / total
        if correction == 0:
            divisor = total
        elif aweights is None:
            divisor = total - correction
        else:
            divisor = total - correction * (weights * aweights).sum() / total
    if isinstance(divisor, Tensor):
        divisor = divisor.clamp(min=0)
    else:
        divisor = builtins.max(divisor, 0)
    centred = x - mean
    out = centred.matmul((centred if weights is None else centred * weights).t()) / divisor
    return out.squeeze()         # (one variable: a 0-d tensor, as PyTorch)


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of ``input``: the
    covariance matrix divided by the product of the standard deviations, clipped to [-1, 1].

    Example::

        vizgrad.corrcoef(vizgrad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))   # tensor([[ 1., -1.], [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    deviation = c.diagonal().sqrt()
    c = c / deviation.unsqueeze(1) / deviation.unsqueeze(0)
    return c.clamp(-1, 1)


def _cov_reference(x, *, correction=1, fweights=None, aweights=None):
    return np.asarray(np.cov(x, ddof=correction, fweights=fweights, aweights=aweights))


def _cov_samples(rng):
    yield Sample((values(rng, (3, 6)),), name="3 variables")
    yield Sample((values(rng, (7,)),), name="1-d")
    yield Sample((values(rng, (2, 5)),), {"correction": 0}, name="correction=0")
    yield Sample((values(rng, (2, 5)),), {"fweights": rng.integers(1, 4, size=5)}, name="fweights")
    yield Sample((values(rng, (2, 5)),), {"aweights": rng.uniform(0.5, 2, size=5)}, name="aweights")
    yield Sample((values(rng, (3, 5)),), {"correction": 2, "fweights": rng.integers(1, 4, size=5),
                                         "aweights": rng.uniform(0.5, 2, size=5)}, name="both weights")


register(_cov_reference, _cov_samples)(cov)
register(lambda x: np.asarray(np.clip(np.corrcoef(x), -1, 1)), lambda rng: iter([
    Sample((values(rng, (3, 6)),), name="3 variables"), Sample((values(rng, (2, 4)),), name="2 variables"),
    Sample((values(rng, (5,)),), name="1-d")]))(corrcoef)


# --- trapezoid, cumulative_trapezoid, gradient -------------------------------------------

def _spacing(op, y, x, dx, axis):
    """The widths of the intervals along ``axis``, broadcastable against the pairs of ``y``:
    a number (``dx``, 1 by default) or the differences of the sample points ``x``. As PyTorch's
    signatures, ``x`` is a Tensor (a number in its place, ``trapezoid(y, 2.0)``, is refused,
    not taken for dx) and x and dx are never both given; dx is a real number or a 0-d tensor,
    and ``trapz``'s (a float in PyTorch) takes a bool as 0.0 or 1.0."""
    if x is not None:
        if dx is not None:
            raise ArgumentTypeError(f"{op}: pass either x or dx, not both (got x and dx={dx!r})")
        if not isinstance(x, Tensor):
            if isinstance(x, numbers.Number) and not isinstance(x, bool):
                raise ArgumentTypeError(f"{op}: x must be a Tensor of sample points, got {_describe(x)}; pass an "
                                        f"even spacing by name, as dx={x!r}")
            raise not_a_tensor(op, "x", x)
        return _widths(op, y, x, axis)
    if dx is None:
        return 1
    if isinstance(dx, Tensor):
        if dx.ndim != 0 or dx.requires_grad:
            raise ArgumentTypeError(f"{op}: dx must be a number or a 0-d tensor that does not require grad, got a "
                                    f"tensor of shape {format_shape(dx.shape)}"
                                    f"{' that requires grad' if dx.requires_grad else ''}")
        dx = dx.item()
    if isinstance(dx, bool) and op == "trapz":
        return float(dx)
    complex_number = isinstance(dx, numbers.Complex) and not isinstance(dx, numbers.Real)
    if op != "trapz" and (isinstance(dx, bool) or complex_number):
        raise ArgumentError(f"{op}: dx must be a real number, got {dx!r}")       # (PyTorch: a RuntimeError)
    if not isinstance(dx, numbers.Real):
        raise ArgumentTypeError(f"{op}: dx must be a real number, got {_describe(dx)}")
    return dx


def _widths(op, y, x, axis):
    """The differences of the sample points ``x`` (1-D along ``axis``, or of y's number of dims)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[axis]:
            raise ShapeError(f"{op}: there must be one `x` value for each sample point: x has {x.shape[0]} "
                             f"values and y has {y.shape[axis]} along dim {axis}")
        widths = x[1:] - x[:-1]
        return widths.reshape(tuple(-1 if i == axis else 1 for i in range(y.ndim)))
    if x.ndim != y.ndim:
        raise ShapeError(f"{op}: x of shape {format_shape(x.shape)} must be 1-D or have y's number of dims "
                         f"(y of shape {format_shape(y.shape)})")
    length = x.shape[axis]
    return x.narrow(axis, 1, length - 1) - x.narrow(axis, 0, length - 1)


def _trapezoid_inputs(op, y, x, dx, dim):
    """The checked ``y`` (floating), its ``dim`` and the widths of its intervals."""
    if not isinstance(y, Tensor):
        raise not_a_tensor(op, "y", y)
    if y.ndim == 0:
        raise ShapeError(f"{op}: y must have at least one dim, got a 0-d tensor")
    axis = check_dim(op, as_int(op, "dim", dim), y.ndim)
    if y.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: received a bool input for `y`, but bool is not supported")
    if not y.is_floating_point():
        y = y.to(dtypes.default_float)
    return y, axis, _spacing(op, y, x, dx, axis)


def _trapezoid_pieces(op, y, x, dx, dim):
    y, axis, widths = _trapezoid_inputs(op, y, x, dx, dim)
    length = y.shape[axis]
    if length == 0:
        return None, axis, y
    pairs = y.narrow(axis, 1, length - 1) + y.narrow(axis, 0, length - 1)
    return pairs * widths / 2, axis, y


def _trapezoid(op, y, x, dx, dim):
    """PyTorch's sums (so that infinities and overflow come out as there): with even spacing
    dx · (Σ y - (y₀ + yₙ)/2), else Σ (yᵢ + yᵢ₊₁)(xᵢ₊₁ - xᵢ) / 2."""
    y, axis, widths = _trapezoid_inputs(op, y, x, dx, dim)
    length = y.shape[axis]
    if length == 0:
        return y.sum(axis)
    if not isinstance(widths, Tensor):
        ends = y.select(axis, 0) + y.select(axis, length - 1)
        return (y.sum(axis) - ends * 0.5) * widths
    pairs = y.narrow(axis, 1, length - 1) + y.narrow(axis, 0, length - 1)
    return (pairs * widths).sum(axis) / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """∫ y along ``dim`` by the trapezoid rule: Σᵢ (xᵢ₊₁ - xᵢ)(yᵢ + yᵢ₊₁)/2, with the sample
    points ``x`` (a 1-D tensor along ``dim`` or a tensor of y's shape) or evenly ``dx`` apart
    (1 by default).

    Example::

        vizgrad.trapezoid(vizgrad.tensor([1.0, 2.0, 3.0]))                       # tensor(4.)
        vizgrad.trapezoid(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([0.0, 2.0]))   # tensor(3.)
    """
    return _trapezoid("trapezoid", y, x, dx, dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """:func:`trapezoid` (PyTorch's older name).

    Example::

        vizgrad.trapz(vizgrad.tensor([1.0, 2.0, 3.0]), dx=0.5)    # tensor(2.)
    """
    return _trapezoid("trapz", y, x, dx, dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of y along ``dim`` (one fewer value than y), with
    :func:`trapezoid`'s ``x`` or ``dx``.

    Example::

        vizgrad.cumulative_trapezoid(vizgrad.tensor([1.0, 2.0, 3.0]))    # tensor([1.5000, 4.0000])
    """
    areas, axis, y = _trapezoid_pieces("cumulative_trapezoid", y, x, dx, dim)
    if areas is None:
        return y.narrow(axis, 0, 0)
    return areas.cumsum(axis)


def _trapezoid_reference(y, x=None, *, dx=None, dim=-1):
    return np.asarray(np.trapezoid(y, x=x, dx=1.0 if dx is None else dx, axis=dim))


def _cumulative_trapezoid_reference(y, x=None, *, dx=None, dim=-1):
    moved = np.moveaxis(y, dim, -1)
    if x is None:
        widths = 1.0 if dx is None else dx
    else:
        widths = np.diff(x) if np.ndim(x) == 1 else np.diff(np.moveaxis(x, dim, -1), axis=-1)
    areas = widths * (moved[..., 1:] + moved[..., :-1]) / 2
    return np.moveaxis(np.cumsum(areas, axis=-1), -1, dim)


def _trapezoid_samples(rng):
    yield Sample((values(rng, (5,)),), name="1-d")
    yield Sample((values(rng, (3, 4)),), {"dx": 0.5}, name="dx")
    yield Sample((values(rng, (3, 4)), np.sort(values(rng, (3,)))), {"dim": 0}, name="x 1-d dim=0")
    yield Sample((values(rng, (3, 4)), np.sort(values(rng, (3, 4)), axis=1)), name="x of y's shape")


register(_trapezoid_reference, _trapezoid_samples, method=False)(trapezoid)
register(_trapezoid_reference, _trapezoid_samples, method=False)(trapz)
register(_cumulative_trapezoid_reference, _trapezoid_samples, method=False)(cumulative_trapezoid)


def _coordinates(op, spacing, input, axes):
    """One entry per axis: a number (even spacing) or a 1-D tensor of coordinates."""
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(axes):
            raise ArgumentError(f"{op}: expected spacing to be unspecified, a scalar or a list of length "
                                f"{len(axes)} (one per dim), but got a list of length {len(spacing)}")
        entries = list(spacing)
    else:
        entries = [spacing] * len(axes)
    checked = []
    for entry, axis in zip(entries, axes):
        if isinstance(entry, Tensor):
            if entry.ndim == 0:
                entry = float(entry.item())
            elif entry.ndim != 1 or entry.shape[0] != input.shape[axis]:
                raise ShapeError(f"{op}: expected each coordinate tensor to be 1-D with as many values as "
                                 f"dim {axis} of input (size {input.shape[axis]}), got shape "
                                 f"{format_shape(entry.shape)}")
        elif isinstance(entry, bool) or not isinstance(entry, numbers.Real):
            raise ArgumentTypeError(f"{op}: spacing must be a number, a list of numbers or a list of 1-D "
                                    f"tensors, got {type(entry).__name__}")
        checked.append(entry)
    return checked


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of the partial derivatives of the samples ``input`` along each of ``dim``
    (every dim when None), one tensor per dim: second-order central differences inside,
    one-sided differences of order ``edge_order`` (1 or 2) at the edges. ``spacing`` is one
    number for every dim, one per dim, or one 1-D tensor of coordinates per dim.

    Example::

        vizgrad.gradient(vizgrad.tensor([1.0, 2.0, 4.0, 8.0]))     # (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    from .joins import cat
    if not isinstance(input, Tensor):
        raise not_a_tensor("gradient", "input", input)
    if input.dtype is dtypes.bool_:
        raise DTypeError("gradient: input must be a number tensor, got dtype bool (differences of bools are "
                         "not defined); convert it first, e.g. x.float()")
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise ArgumentError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if dim is None:
        axes = list(range(input.ndim))
    else:
        dims = [dim] if not isinstance(dim, (list, tuple)) else list(dim)
        axes = [check_dim("gradient", as_int("gradient", "dim", d), input.ndim) for d in dims]
        if len(set(axes)) != len(axes):
            raise ArgumentError(f"gradient: dim {dim} names a dim more than once")
    if input.ndim == 0:
        raise ShapeError("gradient: input must have at least one dim, got a 0-d tensor")
    coordinates = _coordinates("gradient", spacing, input, axes)
    if not input.is_floating_point():
        input = input.to(dtypes.default_float)
    results = []
    for axis, h in zip(axes, coordinates):
        n = input.shape[axis]
        if n < edge_order + 1:
            raise ShapeError(f"gradient: expected each dimension size to be at least edge_order+1 "
                             f"({edge_order + 1}), but dim {axis} of input has size {n}")
        f = lambda start, length: input.narrow(axis, start, length)     # noqa: E731
        shape = tuple(-1 if i == axis else 1 for i in range(input.ndim))
        if isinstance(h, Tensor):
            h = h.to(input.dtype)
            steps = (h[1:] - h[:-1]).reshape(shape)
            left, right = steps.narrow(axis, 0, n - 2), steps.narrow(axis, 1, n - 2)
            inside = (-right / (left * (left + right)) * f(0, n - 2)
                      + (right - left) / (left * right) * f(1, n - 2)
                      + left / (right * (left + right)) * f(2, n - 2))
            h0, h1 = steps.narrow(axis, 0, 1), steps.narrow(axis, 1, 1) if n > 2 else None
            hl, hm = steps.narrow(axis, n - 2, 1), steps.narrow(axis, n - 3, 1) if n > 2 else None
        else:
            inside = (f(2, n - 2) - f(0, n - 2)) / (2 * h)
            h0 = h1 = hl = hm = h
        if edge_order == 1:
            first = (f(1, 1) - f(0, 1)) / h0
            last = (f(n - 1, 1) - f(n - 2, 1)) / hl
        else:       # the parabola through the first (last) three samples
            first = (-(2 * h0 + h1) / (h0 * (h0 + h1)) * f(0, 1) + (h0 + h1) / (h0 * h1) * f(1, 1)
                     - h0 / (h1 * (h0 + h1)) * f(2, 1))
            last = (hl / (hm * (hm + hl)) * f(n - 3, 1) - (hm + hl) / (hm * hl) * f(n - 2, 1)
                    + (2 * hl + hm) / (hl * (hm + hl)) * f(n - 1, 1))
        results.append(cat([first, inside, last], axis) if n > 2 else cat([first, last], axis))
    return tuple(results)


def _gradient_reference(x, *, spacing=1, dim=None, edge_order=1):
    axes = list(range(np.ndim(x))) if dim is None else ([dim] if not isinstance(dim, (list, tuple)) else list(dim))
    entries = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(axes)
    out = np.gradient(x, *entries, axis=tuple(axes), edge_order=edge_order)
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def _gradient_samples(rng):
    yield Sample((values(rng, (6,)),), name="1-d")
    yield Sample((values(rng, (4, 5)),), {"spacing": 0.5}, name="2-d spacing")
    yield Sample((values(rng, (4, 5)),), {"spacing": [2.0], "dim": 1, "edge_order": 2}, name="edge_order=2")
    yield Sample((values(rng, (4, 5)),), {"spacing": [np.cumsum(rng.uniform(0.5, 1.5, size=4))], "dim": 0},
                 name="coordinates")
    yield Sample((values(rng, (4, 5)),), {"spacing": [np.cumsum(rng.uniform(0.5, 1.5, size=5))], "dim": -1,
                                          "edge_order": 2}, name="coordinates edge_order=2")


register(_gradient_reference, _gradient_samples, method=False)(gradient)
