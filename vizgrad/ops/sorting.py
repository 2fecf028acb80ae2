"""Sorting along a dim: ``sort``, ``argsort``, ``topk``.

``sort`` and ``topk`` return ``(values, indices)`` named tuples, as PyTorch's
``torch.return_types``; the gradient of the values goes back to the positions they came
from (a scatter along the dim), and the indices have none. Sorting is stable: equal
values keep their order, ascending or descending.
"""

import numpy as np

from .. import return_types
from ..autograd.function import Op
from ..errors import DTypeError, ShapeError, as_int, check_dim, format_shape, not_a_tensor
from ..tensor import Tensor
from .index import _zeros
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


class Sort(Op):
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
        ctx.save_for_backward(indices)
        ctx.mark_non_differentiable(indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        xp = ctx.xp
        if len(ctx.shape) == 0:
            return grad
        return xp.scatter_add(_zeros(xp, ctx.shape, grad), ctx.axis, indices, grad)


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
    indices, as a named tuple ``(values, indices)``, in sorted order.

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
