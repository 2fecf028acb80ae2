"""Sorting along a dim: ``sort``, ``argsort``, ``topk``; searching sorted rows: ``searchsorted``, ``bucketize``.

``sort`` and ``topk`` return ``(values, indices)`` named tuples, as PyTorch's
``torch.return_types``; the gradient of the values goes back to the positions they came
from (a scatter along the dim), and the indices have none. Sorting is stable: equal
values keep their order, ascending or descending.
"""

import builtins
import math

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import ArgumentError, DTypeError, ShapeError, as_int, check_dim, format_shape, not_a_tensor
from ..tensor import Tensor
from .index import TakenAlong
from .registry import Sample, register
from .samples import values

SortResult, TopkResult = return_types.sort, return_types.topk


def _order(xp, a, axis, descending):
    """The stable sorting order of ``a`` along ``axis``; descending keeps equal values in their
    order too (the ascending order of the reversed values, reversed and mapped back)."""
    if not descending:
        return xp.argsort(a, axis=axis, stable=True)
    last = a.shape[axis] - 1
    return last - xp.flip(xp.argsort(xp.flip(a, axis=axis), axis=axis, stable=True), axis=axis)


class Sort(TakenAlong):
    """The values along ``axis`` in order, and where each came from (the first ``k`` when
    ``k`` is given). d values / d a: the gradient returns to the positions ``indices`` names."""

    @staticmethod
    def forward(ctx, a, axis, descending, k):
        xp = ctx.xp
        ctx.shape, ctx.axis = a.shape, axis
        if a.ndim == 0:
            indices = xp.zeros((), dtype=xp.int64)
            out = xp.asarray(a, copy=True)
        else:
            indices = xp.astype(_order(xp, a, axis, descending), xp.int64)
            if k is not None:
                indices = indices[(slice(None),) * axis + (slice(0, k), Ellipsis)]
            out = xp.take_along_axis(a, indices, axis=axis)
        return TakenAlong.taken(ctx, out, indices)


class Topk(Sort):
    """:class:`Sort` cut to the first ``k`` (its own class, so the node is ``TopkBackward0``)."""


def _sort_samples(rng):
    yield Sample((values(rng, (3, 5)),), name="last dim")
    yield Sample((values(rng, (3, 5)), 0), {"descending": True}, name="dim 0 descending")
    yield Sample((values(rng, ()),), name="0-d")


def _argsort_samples(rng):
    yield from _sort_samples(rng)
    for descending in (False, True):     # ties keep their order (no gradient check: sort has kinks there)
        yield Sample((np.array([2.0, 1.0, 2.0, 0.5, 1.0]),), {"descending": descending, "stable": True},
                     name=f"ties descending={descending}")


def _sort_reference(x, dim=-1, descending=False, stable=False):
    order = _argsort_reference(x, dim, descending)
    return (np.take_along_axis(x, order, axis=dim) if x.ndim else x), order


def _axis(op, input, dim):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    return check_dim(op, dim, input.ndim) if input.ndim else 0


@register(_sort_reference, _sort_samples, smooth=False)
def sort(input, dim=-1, descending=False, stable=False):
    """The values along ``dim`` in ascending (or ``descending``) order and their original
    indices, as a named tuple ``(values, indices)``. Equal values keep their order (vizgrad
    always sorts stably; ``stable`` is accepted for PyTorch's signature).

    Example::

        values, indices = vizgrad.tensor([3.0, 1.0, 2.0]).sort()
        values      # tensor([1., 2., 3.])
        indices     # tensor([1, 2, 0])
    """
    return SortResult(*Sort.apply(input, axis=_axis("sort", input, dim), descending=bool(descending), k=None))


def _argsort_reference(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return np.zeros((), dtype=np.int64)
    if descending:
        last = x.shape[dim] - 1
        return last - np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    return np.argsort(x, axis=dim, kind="stable")


@register(_argsort_reference, _argsort_samples, differentiable=False)
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``: ``sort(input, dim, descending).indices``.

    Example::

        vizgrad.tensor([3.0, 1.0, 2.0]).argsort()   # tensor([1, 2, 0])
    """
    return sort(input, dim, descending).indices


def _topk_samples(rng):
    yield Sample((values(rng, (3, 5)), 2), name="k=2")
    yield Sample((values(rng, (4, 3)), 3, 0), {"largest": False}, name="smallest along dim 0")


def _topk_reference(x, k, dim=-1, largest=True, sorted=True):
    return tuple(part.take(range(k), axis=dim) for part in _sort_reference(x, dim, descending=largest))


@register(_topk_reference, _topk_samples, smooth=False)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or, with ``largest=False``, smallest) values along ``dim`` and their
    indices, as a named tuple ``(values, indices)``, in sorted order (``sorted=False`` too);
    NaN ranks above everything. Tied elements keep their index order; PyTorch's CPU topk
    orders ties as its unstable selection (std::nth_element) leaves them.

    Example::

        vizgrad.tensor([1.0, 5.0, 3.0]).topk(2)    # values tensor([5., 3.]), indices tensor([1, 2])
    """
    axis = _axis("topk", input, dim)
    k = as_int("topk", "k", k)
    if input.dtype.name == "bool":
        raise DTypeError("topk: input must be a number tensor, got dtype bool (as in PyTorch); convert it "
                         "first, e.g. x.int().topk(k)")
    size = input.shape[axis] if input.ndim else 1
    if not 0 <= k <= size:
        raise ShapeError(f"topk: k ({k}) is out of range for dim {dim} of size {size} "
                         f"(input of shape {format_shape(input.shape)})")
    return TopkResult(*Topk.apply(input, axis=axis, descending=bool(largest), k=int(k)))


# --- searchsorted, bucketize -------------------------------------------------------------

def _bisect(xp, rows, wanted, side):
    """PyTorch's binary search of each row of ``rows`` (R, N) for the values ``wanted`` (R, M),
    step by step: it moves right unless the middle entry is ≥ the value (> with ``side="right"``),
    so a comparison with NaN moves right, wherever the NaN is."""
    size = rows.shape[-1]
    start = xp.zeros(wanted.shape, dtype=xp.int64)
    end = xp.full(wanted.shape, size, dtype=xp.int64)
    for _ in range(size.bit_length()):
        middle = start + (end - start) // 2
        probe = xp.take_along_axis(rows, xp.minimum(middle, size - 1), axis=-1)
        go_right = xp.logical_not(probe > wanted if side == "right" else probe >= wanted)
        searching = start < end
        start = xp.where(xp.logical_and(searching, go_right), middle + 1, start)
        end = xp.where(xp.logical_and(searching, xp.logical_not(go_right)), middle, end)
    return start


class SearchSorted(Op):
    """Where each value would go in the rows of ``sequence`` (sorted along its last dim) to
    keep them sorted: before equal entries (``side="left"``) or after them. NaN values go last
    (NumPy's answer too); NaN entries of ``sequence`` send PyTorch's binary search right,
    which :func:`_bisect` follows. No gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, sequence, found, side, dtype, floating):
        xp = ctx.xp
        if floating and bool(xp.any(xp.isnan(sequence))):
            rows = xp.reshape(sequence, (-1, sequence.shape[-1]))
            flat = _bisect(xp, rows, xp.reshape(found, (rows.shape[0], -1)), side)
        elif sequence.ndim == 1:
            flat = xp.searchsorted(sequence, xp.reshape(found, (-1,)), side=side)
        else:       # one search per row: leading dims shared with the values
            rows = xp.reshape(sequence, (-1, sequence.shape[-1]))
            wanted = xp.reshape(found, (rows.shape[0], -1))
            flat = xp.stack([xp.searchsorted(rows[i, :], wanted[i, :], side=side) for i in range(rows.shape[0])])
        return xp.astype(xp.reshape(flat, found.shape), getattr(xp, dtype))


def _searchsorted_samples(rng):
    boundaries = np.array([-1.0, 0.0, 0.0, 0.5, 2.0])
    yield Sample((boundaries, np.array([[-2.0, 0.0, 0.3], [0.5, 2.0, 9.0]])), name="1-d sequence")
    yield Sample((boundaries, np.array([[-2.0, 0.0, 0.3], [0.5, 2.0, 9.0]])), {"right": True}, name="right")
    yield Sample((np.sort(values(rng, (2, 4)), axis=-1), values(rng, (2, 3))), {"side": "right"}, name="rows")
    yield Sample((np.array([1, 3, 5, 7]), np.array(4)), name="0-d value")


def _searchsorted_reference(sequence, found, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sequence.ndim == 1:
        return np.searchsorted(sequence, found, side=side)
    rows = sequence.reshape(-1, sequence.shape[-1])
    wanted = found.reshape(rows.shape[0], -1)
    return np.stack([np.searchsorted(row, part, side=side) for row, part in zip(rows, wanted)]).reshape(found.shape)


@register(_searchsorted_reference, _searchsorted_samples, differentiable=False, method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """The index at which each of ``input`` would be inserted into ``sorted_sequence`` (sorted
    along its last dim) to keep it sorted: the first such place, or with ``right=True`` (or
    ``side="right"``) the last. A 1-D sequence serves every value; an N-D one is searched row
    by row, its leading dims those of ``input``. ``sorter`` gives the order that sorts an
    unsorted sequence; int64 indices (int32 with ``out_int32``). No gradient.

    Example::

        vizgrad.searchsorted(vizgrad.tensor([1, 3, 5, 7]), vizgrad.tensor([3, 6]))              # tensor([1, 3])
        vizgrad.searchsorted(vizgrad.tensor([1, 3, 5, 7]), vizgrad.tensor([3, 6]), right=True)  # tensor([2, 3])
    """
    if not isinstance(sorted_sequence, Tensor):
        raise not_a_tensor("searchsorted", "sorted_sequence", sorted_sequence)
    if not isinstance(input, Tensor):
        if isinstance(input, bool) or not isinstance(input, (int, float)):
            raise not_a_tensor("searchsorted", "input", input)
        if sorted_sequence.ndim != 1:
            raise ShapeError(f"searchsorted: a number as input needs a 1-D sorted_sequence, got shape "
                             f"{format_shape(sorted_sequence.shape)}")
        input = sorted_sequence.new_tensor(input)
    if side not in (None, "left", "right"):
        raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if side == "left" and right:
        raise ArgumentError("searchsorted: side='left' and right=True disagree; pass one of them")
    if sorted_sequence.ndim == 0:
        raise ShapeError("searchsorted: sorted_sequence must have at least one dim, got a 0-d tensor")
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(input.shape[:-1]):
        raise ShapeError(f"searchsorted: the leading dims of sorted_sequence {format_shape(sorted_sequence.shape)} "
                         f"must be those of input {format_shape(input.shape)} (all but the last), or "
                         f"sorted_sequence must be 1-D")
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.dtype.is_floating_point or sorter.shape != sorted_sequence.shape:
            raise ShapeError(f"searchsorted: sorter must be an integer tensor of sorted_sequence's shape "
                             f"{format_shape(sorted_sequence.shape)}")
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    common = dtypes.result_type(sorted_sequence, input)     # compared in one dtype, as PyTorch
    return SearchSorted.apply(sorted_sequence.detach().to(common), input.detach().to(common),
                              side=side or ("right" if right else "left"), dtype="int32" if out_int32 else "int64",
                              floating=common.is_floating_point)


def _bucketize_samples(rng):
    boundaries = np.array([-1.0, 0.0, 0.5, 2.0])
    yield Sample((np.array([[-2.0, 0.0, 0.3], [0.5, 2.0, 9.0]]), boundaries), name="left")
    yield Sample((np.array([-2.0, 0.0, 0.5, 2.0, 9.0]), boundaries), {"right": True}, name="right")


def _bucketize_reference(input, boundaries, *, out_int32=False, right=False):
    return np.searchsorted(boundaries, input, side="right" if right else "left")


@register(_bucketize_reference, _bucketize_samples, differentiable=False, method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each of ``input`` among 1-D sorted ``boundaries``: i with
    boundaries[i-1] < x ≤ boundaries[i] (with ``right=True``: boundaries[i-1] ≤ x <
    boundaries[i]), 0 below the first and len(boundaries) above the last;
    :func:`searchsorted` with the arguments swapped. No gradient.

    Example::

        vizgrad.bucketize(vizgrad.tensor([0.2, 1.0, 5.0]), vizgrad.tensor([1.0, 2.0]))   # tensor([0, 0, 2])
    """
    if not isinstance(boundaries, Tensor):
        raise not_a_tensor("bucketize", "boundaries", boundaries)
    if boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be 1-D, got shape {format_shape(boundaries.shape)}")
    if not isinstance(input, Tensor) and (isinstance(input, bool) or not isinstance(input, (int, float))):
        raise not_a_tensor("bucketize", "input", input)
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# --- unique, unique_consecutive --------------------------------------------------------------

class Unique(Op):
    """The distinct elements (or slices along ``axis``) in order, where each input one went
    (``inverse``) and how many each stands for (``counts``); with ``consecutive``, runs of
    equal neighbours only. Slices are ordered lexicographically: one stable argsort per
    column, the last column first. NaNs are all distinct, as in PyTorch. No gradient."""

    differentiable = False

    @staticmethod
    def forward(ctx, a, axis, consecutive):
        xp = ctx.xp
        moved = xp.reshape(a, (-1,)) if axis is None else xp.moveaxis(a, axis, 0)
        rows = xp.reshape(moved, (moved.shape[0], math.prod(moved.shape[1:])))
        count = rows.shape[0]
        order = xp.arange(count, dtype=xp.int64)
        if not consecutive:
            for column in reversed(range(rows.shape[1])):
                keys = xp.take(rows[:, column], order)
                order = xp.take(order, xp.argsort(keys, stable=True))
        ranked = xp.take(rows, order, axis=0)
        starts = xp.concat([xp.ones((min(count, 1),), dtype=xp.bool),
                            xp.any(ranked[1:, :] != ranked[:-1, :], axis=1)])
        first, = xp.nonzero(starts)
        group = xp.cumulative_sum(xp.astype(starts, xp.int64)) - 1           # each ranked row's group
        inverse = xp.take(group, xp.argsort(order, stable=True))            # back in the input's order
        counts = xp.concat([first[1:], xp.full((min(count, 1),), count, dtype=first.dtype)]) - first
        values = xp.take(moved, xp.take(order, first), axis=0)
        if axis is not None:
            values = xp.moveaxis(values, 0, axis)
        else:
            inverse = xp.reshape(inverse, a.shape)
        return values, xp.astype(inverse, xp.int64), xp.astype(counts, xp.int64)


def _unique_reference(consecutive):
    def reference(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
        moved = x.reshape(-1) if dim is None else np.moveaxis(x, dim, 0)
        rows = moved.reshape(moved.shape[0], -1)
        keys = [tuple(row) for row in rows]
        if consecutive:
            starts = [i for i in range(len(keys)) if i == 0 or keys[i] != keys[i - 1]]
            groups = np.cumsum([i in starts for i in range(len(keys))]) - 1
            chosen = starts
        else:
            distinct = builtins.sorted(set(keys))         # (``sorted`` is PyTorch's argument here)
            groups = np.array([distinct.index(key) for key in keys], dtype=np.int64)
            chosen = [keys.index(key) for key in distinct]
        values = np.take(moved, chosen, axis=0)
        values = values if dim is None else np.moveaxis(values, 0, dim)
        inverse = np.asarray(groups, dtype=np.int64).reshape(x.shape if dim is None else (-1,))
        counts = np.bincount(np.asarray(groups, dtype=np.int64), minlength=len(chosen)).astype(np.int64)
        return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return reference


def _unique_samples(rng):
    yield Sample((rng.integers(0, 5, size=(3, 4)),), {"return_inverse": True, "return_counts": True}, name="integers")
    yield Sample((np.array([2.5, -1.0, 2.5, 0.0, -1.0]),), {"return_counts": True}, name="floats")
    yield Sample((rng.integers(0, 2, size=(5, 3)),), {"dim": 0, "return_inverse": True, "return_counts": True},
                 name="rows")
    yield Sample((rng.integers(0, 2, size=(2, 6)),), {"dim": 1, "return_inverse": True}, name="columns")


def _unique_consecutive_samples(rng):
    yield Sample((np.array([1, 1, 2, 2, 3, 1, 1, 2]),), {"return_inverse": True, "return_counts": True}, name="runs")
    yield Sample((np.array([[1, 1], [1, 1], [0, 2], [1, 1]]),), {"dim": 0, "return_counts": True}, name="rows")


def _distinct(op, input, return_inverse, return_counts, dim, consecutive):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    axis = None
    if dim is not None:
        axis = check_dim(op, as_int(op, "dim", dim), input.ndim)
        if input.ndim == 0:
            raise ShapeError(f"{op}: dim={dim} of a 0-d tensor: a 0-d tensor has no dims")
    values_, inverse, counts = Unique.apply(input.detach(), axis=axis, consecutive=consecutive)
    extra = ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return (values_, *extra) if extra else values_


@register(_unique_reference(False), _unique_samples, differentiable=False)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` in ascending order (flattened), or its distinct
    slices along ``dim`` in lexicographic order; with ``return_inverse`` also where each
    element (slice) went, with ``return_counts`` how often each occurs, as a tuple in that
    order (PyTorch's). NaNs are all distinct. No gradient.

    Example::

        vizgrad.unique(vizgrad.tensor([3, 1, 3, 2]), return_counts=True)   # (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    return _distinct("unique", input, return_inverse, return_counts, dim, consecutive=False)


@register(_unique_reference(True), _unique_consecutive_samples, differentiable=False)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """:func:`unique` of runs: each group of equal consecutive elements (or slices along
    ``dim``) becomes one, in the order they come (as ``itertools.groupby``). No gradient.

    Example::

        vizgrad.unique_consecutive(vizgrad.tensor([1, 1, 2, 2, 1]))   # tensor([1, 2, 1])
    """
    return _distinct("unique_consecutive", input, return_inverse, return_counts, dim, consecutive=True)
