"""Truth and nonzero queries, none with a gradient: all, any, count_nonzero, nonzero and argwhere."""

import numpy as np

from ..autograd.function import Op
from ..errors import not_a_tensor
from ..tensor import Tensor
from .reduce import IndexOrTruthReduction, _axes, _np_axis, numpy_names
from .registry import Sample, register
from .samples import values


class All(IndexOrTruthReduction):
    function = "all"


class Any(IndexOrTruthReduction):
    function = "any"


class CountNonzero(Op):
    differentiable = False

    @staticmethod
    def forward(ctx, a, axes):
        xp = ctx.xp
        nonzero = a if a.dtype == xp.bool else a != 0
        return xp.sum(xp.astype(nonzero, xp.int64), axis=axes)


class Nonzero(Op):
    """The indices of the non-zero elements, one row each in row-major order: (count, ndim) int64."""
    differentiable = False

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        found = xp.nonzero(a if a.ndim else xp.reshape(a, (1,)))      # (a 0-d array has no dims to index)
        rows = xp.stack([xp.astype(index, xp.int64) for index in found], axis=1)
        return rows if a.ndim else rows[:, :0]


def _nonzero_samples(rng):
    for shape in ((3, 4), (5,), (2, 3, 2), ()):
        array = values(rng, shape)
        yield Sample((np.where(array > 0.3, 0.0, array),), name=f"shape{shape}")
    yield Sample((rng.uniform(size=(3, 4)) > 0.5,), name="bool")
    yield Sample((np.zeros((2, 3)),), name="none")


def _nonzero_reference(x, *, as_tuple=False):
    return tuple(np.nonzero(np.atleast_1d(x))) if as_tuple else np.argwhere(x)


@register(_nonzero_reference, _nonzero_samples, differentiable=False)
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero (True) elements: an int64 tensor of one row per element, in
    row-major order, or with ``as_tuple`` one 1-d index tensor per dim (NumPy's nonzero).
    No gradient.

    Example::

        vizgrad.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero()   # tensor([[0, 1], [1, 0]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("nonzero", "input", input)
    rows = Nonzero.apply(input)
    if not as_tuple:
        return rows
    return tuple(rows[:, d] for d in range(rows.shape[1])) if input.ndim else (rows.new_zeros(rows.shape[0]),)


@register(np.argwhere, _nonzero_samples, differentiable=False)
def argwhere(input):
    """The indices of the non-zero elements, one row each: :func:`nonzero` with ``as_tuple=False``.

    Example::

        vizgrad.argwhere(vizgrad.tensor([0, 3, 0, 4]))   # tensor([[1], [3]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("argwhere", "input", input)
    return Nonzero.apply(input)


def _logical_samples(rng):
    for shape, dim in (((), None), ((), 0), ((3, 4), None), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), (0, 2))):
        for keep in (False, True):
            kwargs = {} if dim is None else {"dim": dim, "keepdim": keep}
            yield Sample((np.asarray(rng.uniform(size=shape) > 0.3),), kwargs, name=f"bool {shape} dim={dim}")
    yield Sample((np.array([[0.0, 1.5], [0.0, 0.0]]),), {"dim": 1}, name="float")


def _count_samples(rng):
    for shape, dim in (((), None), ((3, 4), None), ((3, 4), 1), ((2, 3, 4), (0, -1))):
        array = values(rng, shape)
        yield Sample((np.where(array > 0.5, 0.0, array),), {} if dim is None else {"dim": dim})
    yield Sample((rng.uniform(size=(3, 4)) > 0.5,), {"dim": 0}, name="bool")


@register(lambda x, dim=None, keepdim=False: np.all(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _logical_samples, differentiable=False)
@numpy_names
def all(input, dim=None, keepdim=False):
    """Whether every element over ``dim`` is non-zero (True), as a bool tensor.

    Example::

        vizgrad.tensor([[True, False], [True, True]]).all(dim=1)   # tensor([False,  True])
    """
    return All.apply(input, axis=_axes("all", input, dim), keepdim=keepdim)


@register(lambda x, dim=None, keepdim=False: np.any(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _logical_samples, differentiable=False)
@numpy_names
def any(input, dim=None, keepdim=False):
    """Whether some element over ``dim`` is non-zero (True), as a bool tensor.

    Example::

        vizgrad.tensor([0.0, 0.0, 2.0]).any()   # tensor(True)
    """
    return Any.apply(input, axis=_axes("any", input, dim), keepdim=keepdim)


@register(lambda x, dim=None: np.count_nonzero(x, axis=_np_axis(x, dim)), _count_samples, differentiable=False)
@numpy_names
def count_nonzero(input, dim=None):
    """The number of non-zero elements over ``dim`` (all dims when None), as int64.

    Example::

        vizgrad.tensor([[0.0, 1.0], [2.0, 0.0]]).count_nonzero(dim=0)   # tensor([1, 1])
    """
    return CountNonzero.apply(input, axes=_axes("count_nonzero", input, dim))
