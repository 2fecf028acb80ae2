"""Distances and similarities between vectors: ``pairwise_distance``, ``cosine_similarity``
and ``pdist``, compositions of differentiable ops (norms, sums), as PyTorch computes them."""

import math

import numpy as np

from ..errors import DTypeError, ShapeError, format_shape, ArgumentError, as_number, not_a_tensor
from ..tensor import Tensor
from .. import creation
from . import reduce as reductions
from .loss import _check_tensors
from .registry import Sample, register
from .samples import values


def _cosine_similarity_reference(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1, x2)
    n1 = np.maximum(np.sqrt((x1 * x1).sum(axis=dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((x2 * x2).sum(axis=dim, keepdims=True)), eps)
    return ((x1 / n1) * (x2 / n2)).sum(axis=dim)


def _pairwise_distance_reference(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    difference = np.abs(x1 - x2 + eps)
    return (difference ** p).sum(axis=-1, keepdims=keepdim) ** (1 / p)


def _pairwise_distance_samples(rng):
    yield Sample((values(rng, (4, 3)), values(rng, (4, 3))), name="rows")
    yield Sample((values(rng, (4, 3)), values(rng, (3,))), {"p": 1.0, "keepdim": True}, name="broadcast, p=1")
    yield Sample((values(rng, (5,)), values(rng, (5,))), {"p": 3.0}, name="vectors")


@register(_pairwise_distance_reference, _pairwise_distance_samples, method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``‖x1 - x2 + eps‖ₚ`` along the last dim, broadcasting (the ``eps`` keeps the
    gradient finite where the vectors coincide), as PyTorch.

    Example::

        F.pairwise_distance(vizgrad.tensor([[0.0, 0.0]]), vizgrad.tensor([[3.0, 4.0]]))   # tensor([5.0000])
    """
    from ..linalg import vector_norm
    _check_tensors("pairwise_distance", x1=x1, x2=x2)
    return vector_norm(x1 - x2 + eps, ord=p, dim=-1, keepdim=keepdim)


def _cosine_similarity_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4))), name="rows")
    yield Sample((values(rng, (3, 4)), values(rng, (1, 4))), name="broadcast")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (2, 3, 4))), {"dim": -1}, name="last dim")
    yield Sample((values(rng, (5,)), values(rng, (5,))), {"dim": 0}, name="vectors")


@register(_cosine_similarity_reference, _cosine_similarity_samples, method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``:
    ``Σ (x1/‖x1‖)(x2/‖x2‖)`` with each norm at least ``eps``.

    Example::

        F.cosine_similarity(vizgrad.tensor([[1.0, 0.0]]), vizgrad.tensor([[1.0, 1.0]]))   # tensor([0.7071])
    """
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    try:                                 # the norms along dim of the broadcast inputs, as PyTorch's
        common = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise ShapeError(f"cosine_similarity: shapes {format_shape(x1.shape)} (x1) and {format_shape(x2.shape)} (x2) "
                         "cannot be broadcast together") from None
    x1, x2 = x1.expand(common), x2.expand(common)
    norm1 = reductions.norm(x1, dim=dim, keepdim=True).clamp(min=eps)
    norm2 = reductions.norm(x2, dim=dim, keepdim=True).clamp(min=eps)
    return reductions.sum((x1 / norm1) * (x2 / norm2), dim=dim)


def _pdist_reference(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    difference = np.abs(x[i] - x[j])
    if p == 0:
        return (difference != 0).sum(axis=-1).astype(x.dtype)
    if p == math.inf:
        return difference.max(axis=-1, initial=0.0)
    return (difference ** p).sum(axis=-1) ** (1 / p)


def _pdist_samples(rng):
    yield Sample((values(rng, (5, 3)),), name="p 2")
    yield Sample((values(rng, (4, 2)),), {"p": 1.0}, name="p 1")
    yield Sample((values(rng, (4, 3)),), {"p": 3.0}, name="p 3")
    yield Sample((values(rng, (3, 4)),), {"p": math.inf}, name="p inf")


@register(_pdist_reference, _pdist_samples, method=False)
def pdist(input, p=2):
    """The p-norm distances between the rows of an (N, M) input, every pair once: the upper
    triangle of ``cdist(input, input)`` row by row, N·(N-1)/2 values,

    out = [‖x_i - x_j‖ₚ for i < j].

    Gradients are those of the norm (zero where two rows coincide, as in PyTorch).

    Example::

        F.pdist(vizgrad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))    # tensor([5.0000, 1.0000, 4.2426])
    """
    from ..linalg import vector_norm
    op = "pdist"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim != 2:
        raise ShapeError(f"{op}: only supports 2D tensors, got: {input.ndim}D (shape {format_shape(input.shape)})")
    if not input.is_floating_point():
        raise DTypeError(f"{op}: only supports floating-point dtypes, got {input.dtype.name}")
    p = as_number(op, "p", p)
    if p < 0:
        raise ArgumentError(f"{op}: only supports non-negative p values, got p={p}")
    rows = input.shape[0]
    first, second = np.triu_indices(rows, 1)
    first = creation.tensor(first.astype(np.int64), device=input.device)
    second = creation.tensor(second.astype(np.int64), device=input.device)
    return vector_norm(input[first] - input[second], ord=p, dim=1)
