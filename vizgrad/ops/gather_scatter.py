"""Gather and scatter along one dim: gather, take_along_dim, masked_select, scatter_add,
scatter, scatter_reduce and index_reduce. Reading at indices (gather) and adding at indices
(scatter_add) are each other's adjoints, so each one's backward is the other: repeated
indices accumulate."""

import math

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, not_a_tensor,
                      as_number, DeviceError, check_dim)
from ..tensor import Tensor
from .reduce import amax, amin, prod
from .index import _as_index_array, _check_range, _dim, _needs_dims, _tracked, _zeros, index_put
from .index_composites import _same_device, _slices_check, _tensor_arg
from .registry import Sample, register
from .samples import booleans, non_contiguous, values


def _within(index_shape, shape, dim):
    """Basic slices keeping the leading ``index_shape`` part of every dim but ``dim``
    (gather and scatter indices may be smaller than the tensor), or None if all fit."""
    if all(n == m for d, (n, m) in enumerate(zip(index_shape, shape)) if d != dim):
        return None
    return tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_shape))


def _check_along(op, input, dim, index, others=()):
    """gather/scatter rules: index has input's number of dims, index.size(d) <=
    input.size(d) for d != dim (and <= other.size(d) for every d of each other), and
    its values lie in [0, input.size(dim))."""
    shape, index_shape = input.shape, tuple(index.shape)
    if len(index_shape) != len(shape):
        raise ShapeError(f"{op}: index of shape {format_shape(index_shape)} must have as many dimensions as "
                         f"input of shape {format_shape(shape)}")
    for d, (n, m) in enumerate(zip(index_shape, shape)):
        if d != dim and n > m:
            raise ShapeError(f"{op}: index of shape {format_shape(index_shape)} is larger than input of shape "
                             f"{format_shape(shape)} at dim {d}")
    for name, other in others:
        if len(other.shape) != len(index_shape) or any(n > m for n, m in zip(index_shape, other.shape)):
            raise ShapeError(f"{op}: index of shape {format_shape(index_shape)} must not be larger than "
                             f"{name} of shape {format_shape(other.shape)} in any dim")
    return _check_range(input._backend().xp, index, shape[dim], dim, op)


class Gather(Op):
    @staticmethod
    def forward(ctx, a, index, dim):
        ctx.shape, ctx.dim = a.shape, dim
        ctx.save_for_backward(index)
        within = _within(index.shape, a.shape, dim)
        return ctx.xp.take_along_axis(a if within is None else a[within], index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        xp = ctx.xp
        return xp.scatter_add(_zeros(xp, ctx.shape, grad), ctx.dim, index, grad), None


def _gather_reference(a, dim, index):
    dim %= a.ndim
    within = _within(index.shape, a.shape, dim)
    return np.take_along_axis(a if within is None else a[within], index, axis=dim)


def _gather_samples(rng):
    yield Sample((values(rng, (3, 4)), 0, rng.integers(0, 3, size=(5, 4))), name="dim 0, repeats")
    yield Sample((values(rng, (3, 4)), -1, rng.integers(0, 4, size=(3, 2))), name="dim -1")
    yield Sample((values(rng, (3, 4, 2)), 1, rng.integers(0, 4, size=(2, 3, 2))), name="smaller index")
    yield Sample((non_contiguous(values(rng, (3, 4))), 1, rng.integers(0, 4, size=(3, 4))),
                 name="non-contiguous")


@register(_gather_reference, _gather_samples)
def gather(input, dim, index):
    """Values of ``input`` along ``dim`` at ``index`` (same number of dims as input):

    out[i][j][k] = input[index[i][j][k]][j][k]   (dim=0)

    The gradient is scattered back with :func:`scatter_add`, so repeated indices accumulate.

    Example::

        x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
        vizgrad.gather(x, 1, vizgrad.tensor([[0, 0], [1, 0]]))    # [[1., 1.], [4., 3.]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("gather", "input", input)
    if not isinstance(index, Tensor):
        raise not_a_tensor("gather", "index", index)
    _needs_dims("gather", input)
    dim = _dim("gather", input, dim)
    checked = _check_along("gather", input, dim, _as_index_array(input, index, "gather", same_device=True))
    return Gather.apply(input, _tracked(index, checked), dim=dim)


def _broadcast_shape(op, first, second):
    """The shape two shapes broadcast to, or a ShapeError naming both."""
    try:
        return tuple(np.broadcast_shapes(tuple(first), tuple(second)))
    except ValueError:
        raise ShapeError(f"{op}: shapes {format_shape(first)} and {format_shape(second)} do not broadcast") from None


def _take_along_dim_reference(a, indices, dim=None):
    if dim is None:
        return np.take_along_axis(a.reshape(-1), indices.reshape(-1), axis=0)
    dim %= a.ndim
    shape = list(np.broadcast_shapes(a.shape[:dim] + (1,) + a.shape[dim + 1:],
                                     indices.shape[:dim] + (1,) + indices.shape[dim + 1:]))
    a = np.broadcast_to(a, shape[:dim] + [a.shape[dim]] + shape[dim + 1:])
    indices = np.broadcast_to(indices, shape[:dim] + [indices.shape[dim]] + shape[dim + 1:])
    return np.take_along_axis(a, indices, axis=dim)


def _take_along_dim_samples(rng):
    yield Sample((values(rng, (3, 4)), rng.integers(0, 4, size=(3, 2))), {"dim": 1}, name="same dims")
    yield Sample((values(rng, (3, 4)), rng.integers(0, 3, size=(2, 1))), {"dim": 0}, name="broadcast index")
    yield Sample((values(rng, (3, 4)), rng.integers(0, 12, size=(5,))), name="flattened")


@register(_take_along_dim_reference, _take_along_dim_samples)
def take_along_dim(input, indices, dim=None):
    """:func:`gather` with NumPy's ``take_along_axis`` rules: ``input`` and ``indices``
    broadcast against each other on every dim but ``dim``; with no ``dim`` both are
    flattened first. The gradient is scattered back, repeated indices accumulating.

    Example::

        x = vizgrad.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
        vizgrad.take_along_dim(x, x.argmax(dim=1, keepdim=True), dim=1)   # tensor([[30.], [60.]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("take_along_dim", "input", input)
    if not isinstance(indices, Tensor):
        raise not_a_tensor("take_along_dim", "indices", indices)
    if indices.dtype.name != "int64":
        raise DTypeError(f"take_along_dim: indices must be an int64 tensor, got {indices.dtype.name}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise ShapeError(f"take_along_dim: input and indices must have the same number of dims, got shapes "
                         f"{format_shape(input.shape)} and {format_shape(indices.shape)}")
    dim = check_dim("take_along_dim", dim, input.ndim)
    ones = list(input.shape)
    ones[dim] = 1
    others = list(indices.shape)
    others[dim] = 1
    shape = list(_broadcast_shape("take_along_dim", ones, others))
    input = input.expand(*shape[:dim], input.shape[dim], *shape[dim + 1:])
    indices = indices.expand(*shape[:dim], indices.shape[dim], *shape[dim + 1:])
    return gather(input, dim, indices)


def _masked_select_reference(a, mask):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _masked_select_samples(rng):
    yield Sample((values(rng, (3, 4)), booleans(rng, (3, 4))), name="same shape")
    yield Sample((values(rng, (3, 4)), booleans(rng, (4,))), name="broadcast mask")


@register(_masked_select_reference, _masked_select_samples)
def masked_select(input, mask):
    """The entries of ``input`` where the bool ``mask`` (broadcast against it) is True, as
    a 1-D tensor: ``input[mask]``. The gradient goes back to the selected entries.

    Example::

        x = vizgrad.tensor([[1.0, -2.0], [3.0, -4.0]])
        vizgrad.masked_select(x, x > 0)         # tensor([1., 3.])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("masked_select", "input", input)
    if not isinstance(mask, Tensor):
        raise not_a_tensor("masked_select", "mask", mask)
    if mask.dtype.name != "bool":
        raise DTypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype.name}")
    if mask.device != input.device:
        raise DeviceError(f"masked_select: mask is on {mask.device} but input is on {input.device}; move one "
                          f"with .to('{input.device}')")
    shape = _broadcast_shape("masked_select", input.shape, mask.shape)
    return input.expand(*shape)[mask.expand(*shape)]


def _grad_along(xp, grad, index, dim, source_shape):
    """``grad`` gathered at ``index`` along ``dim``, zero-padded to ``source_shape``: the
    gradient of the source of a scatter (whose elements beyond the index are unused)."""
    within = _within(index.shape, grad.shape, dim)
    picked = xp.take_along_axis(grad if within is None else grad[within], index, axis=dim)
    if tuple(index.shape) == tuple(source_shape):
        return picked
    return xp.pad(picked, tuple((0, m - n) for n, m in zip(index.shape, source_shape)), 0.0)


class ScatterAdd(Op):
    @staticmethod
    def forward(ctx, a, index, src, dim):
        ctx.dim, ctx.source_shape = dim, src.shape
        ctx.save_for_backward(index)
        return ctx.xp.scatter_add(a, dim, index, src)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        needs_input, _, needs_src = ctx.needs_input_grad
        grad_src = _grad_along(ctx.xp, grad, index, ctx.dim, ctx.source_shape) if needs_src else None
        return grad if needs_input else None, None, grad_src


def _scatter_key(index, dim):
    key = list(np.indices(index.shape, sparse=True))
    key[dim] = index
    return tuple(key)


def _scatter_add_reference(a, dim, index, src):
    out = np.array(a, copy=True)
    dim %= a.ndim
    np.add.at(out, _scatter_key(index, dim), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _scatter_add_samples(rng):
    yield Sample((values(rng, (3, 4)), 0, rng.integers(0, 3, size=(5, 4)), values(rng, (5, 4))),
                 name="dim 0, repeats")
    yield Sample((values(rng, (3, 4)), -1, rng.integers(0, 4, size=(3, 6)), values(rng, (3, 6))), name="dim -1")
    yield Sample((values(rng, (3, 4, 2)), 1, rng.integers(0, 4, size=(2, 3, 2)), values(rng, (3, 4, 2))),
                 name="src larger than index")
    yield Sample((non_contiguous(values(rng, (3, 4))), 1, rng.integers(0, 4, size=(3, 4)),
                  non_contiguous(values(rng, (3, 4)))), name="non-contiguous")


def _check_scatter(op, input, dim, index, src):
    _needs_dims(op, input)
    dim = _dim(op, input, dim)
    index = _as_index_array(input, index, op, same_device=True)
    others = ()
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise DTypeError(f"{op}: src has dtype {src.dtype.name} but input has {input.dtype.name}; "
                             "they must match")
        others = (("src", src),)
    return dim, _check_along(op, input, dim, index, others)


@register(_scatter_add_reference, _scatter_add_samples)
def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added along ``dim`` at ``index``; repeats accumulate:

    out[index[i][j]][j] += src[i][j]   (dim=0)

    The gradient of src is gathered back with :func:`gather` (the adjoint).

    Example::

        vizgrad.scatter_add(vizgrad.zeros(3), 0, vizgrad.tensor([0, 0, 2]), vizgrad.ones(3))   # [2., 0., 1.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("scatter_add", "input", input)
    if not isinstance(index, Tensor):
        raise not_a_tensor("scatter_add", "index", index)
    if not isinstance(src, Tensor):
        raise not_a_tensor("scatter_add", "src", src)
    dim, checked = _check_scatter("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, _tracked(index, checked), src, dim=dim)


class Scatter(Op):
    @staticmethod
    def forward(ctx, a, index, src, dim):
        xp = ctx.xp
        if not hasattr(src, "dtype"):
            src = xp.full(index.shape, src, dtype=a.dtype, device=a.device)
        ctx.dim, ctx.source_shape = dim, src.shape
        count = xp.scatter_add(xp.zeros_like(a), dim, index, xp.ones_like(src))
        written = count > 0
        share = xp.where(written, count, xp.ones_like(count))  # repeated indices: each writer gets an equal share
        ctx.save_for_backward(index, written, share)
        total = xp.scatter_add(xp.zeros_like(a), dim, index, src)
        # (integers keep their dtype: a repeated index gets the floor of the mean)
        return xp.where(written, total / share if ctx.backend.is_floating(a) else total // share, a)

    @staticmethod
    def backward(ctx, grad):
        index, written, share = ctx.saved_tensors
        xp = ctx.xp
        needs_input, _, needs_src = ctx.needs_input_grad
        grad_input = xp.where(written, 0.0, grad) if needs_input else None
        grad_src = _grad_along(xp, grad / share, index, ctx.dim, ctx.source_shape) if needs_src else None
        return grad_input, None, grad_src


def _scatter_reference(a, dim, index, src):
    out = np.array(a, copy=True)
    dim %= a.ndim
    out[_scatter_key(index, dim)] = src[tuple(slice(0, n) for n in index.shape)] if np.ndim(src) else src
    return out


def _distinct_rows(rng, rows, count, columns):
    """An index for dim 0 whose columns never repeat a row (scatter writes each place once)."""
    return np.stack([rng.permutation(rows)[:count] for _ in range(columns)], axis=1).astype(np.int64)


def _scatter_samples(rng):
    yield Sample((values(rng, (4, 3)), 0, _distinct_rows(rng, 4, 2, 3), values(rng, (2, 3))), name="dim 0")
    yield Sample((values(rng, (4, 3)), -2, _distinct_rows(rng, 4, 3, 2), values(rng, (3, 3))),
                 name="negative dim, src larger")
    yield Sample((values(rng, (4, 3)), 0, _distinct_rows(rng, 4, 2, 3), 0.5), name="number")


@register(_scatter_reference, _scatter_samples)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with values of ``src`` (a tensor or a number; or the number
    ``value``) written along ``dim`` at ``index``:

    out[index[i][j]][j] = src[i][j]   (dim=0)

    ``reduce="add"`` or ``"multiply"`` combines them with what is there instead (as
    :func:`scatter_add`, and :func:`scatter_reduce` with "prod").

    The gradient of input is grad with zeros where written; that of src is grad
    gathered at index. Where an index repeats, PyTorch leaves the winner undefined;
    vizgrad writes the mean of the values sent there.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("scatter", "input", input)
    if not isinstance(index, Tensor):
        raise not_a_tensor("scatter", "index", index)
    if (src is None) == (value is None):
        raise ArgumentTypeError("scatter: give exactly one of src (a tensor or a number) and value (a number)")
    src = value if src is None else src
    if reduce is not None:
        _reduce_slot("scatter", "reduce", reduce, ("add", "multiply"))
        dim, checked = _check_scatter("scatter", input, dim, index, src)
        if not isinstance(src, Tensor):
            from ..creation import full
            src = full(tuple(index.shape), as_number("scatter", "value", src), dtype=input.dtype,
                       device=input.device)
        if reduce == "add":
            return ScatterAdd.apply(input, _tracked(index, checked), src, dim=dim)
        return scatter_reduce(input, dim, index, src, "prod") if index.numel() else input.clone()
    dim, checked = _check_scatter("scatter", input, dim, index, src)
    if input.dtype.name == "bool":        # written as 0 and 1 (Scatter's mean of repeats needs numbers)
        src = src.to(dtypes.int64) if isinstance(src, Tensor) else int(bool(src))
        return Scatter.apply(input.to(dtypes.int64), _tracked(index, checked), src, dim=dim).to(dtypes.bool_)
    return Scatter.apply(input, _tracked(index, checked), src, dim=dim)


# --- scatter_reduce, index_reduce --------------------------------------------------------
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_reference(a, dim, index, src, reduce, include_self=True):
    dim %= a.ndim
    out = np.array(a, copy=True)
    key = _scatter_key(index, dim)
    src = src[tuple(slice(0, n) for n in index.shape)]
    targets = np.stack(np.broadcast_arrays(*key), -1).reshape(-1, a.ndim)
    groups = {}
    for target, value in zip(map(tuple, targets), src.reshape(-1)):
        groups.setdefault(target, [a[target]] if include_self else []).append(value)
    combine = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for target, group in groups.items():
        out[target] = combine(group)
    return out


def _scatter_reduce_samples(rng):
    for reduce in _REDUCTIONS:
        yield Sample((values(rng, (3, 4)), 0, rng.integers(0, 3, size=(5, 4)), values(rng, (5, 4)), reduce),
                     name=f"{reduce}, repeats")
        yield Sample((values(rng, (3, 4)), -1, rng.integers(0, 4, size=(2, 3)), values(rng, (3, 5)), reduce),
                     {"include_self": False}, name=f"{reduce}, without self, smaller index")


def _reduce_slot(op, name, reduce, choices):
    if reduce not in choices:
        raise ArgumentError(f"{op}: {name} argument must be one of {', '.join(choices)}, got {reduce!r}")


def _reduced_at(input, dim, index, src, reduce, include_self):
    """The scatter reduction, written with differentiable ops: a one-hot mask (index's shape
    plus one axis over the output positions along ``dim``) picks each position's values, which
    one reduction over ``dim`` combines. Gradients are those of that reduction (prod's for
    prod, ties shared evenly for amax and amin, self included), as in PyTorch. Bools stay
    bools (a nonzero reduction is True), as in PyTorch."""
    if input.dtype.name == "bool":
        return _reduced_at(input.to(dtypes.int64), dim, index, src.to(dtypes.int64), reduce,
                           include_self).to(dtypes.bool_)
    from ..creation import arange
    from .binary import where
    from .joins import cat
    size = input.shape[dim]
    region_key = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))
    region = input[region_key]
    values_ = src[tuple(slice(0, n) for n in index.shape)]
    hot = index.unsqueeze(-1) == arange(size, device=input.device)          # index.shape + (size,)
    count = hot.sum(dim).movedim(-1, dim)                                  # region's shape
    touched = count > 0
    floating = input.is_floating_point()
    if reduce in ("sum", "mean"):
        total = where(hot, values_.unsqueeze(-1), 0).sum(dim).movedim(-1, dim).to(input.dtype)
        if include_self:
            total, count = total + region, count + 1
        if reduce == "mean":
            divisor = where(touched, count, 1).to(input.dtype)
            total = total / divisor if floating else total.div(divisor, rounding_mode="floor")
        result = where(touched, total, region) if not include_self or reduce == "mean" else total
    elif reduce == "prod":
        product = prod(where(hot, values_.unsqueeze(-1), 1), dim).movedim(-1, dim)
        result = where(touched, product * region if include_self else product, region)
    else:
        if floating:
            fill = -math.inf if reduce == "amax" else math.inf
        else:
            limit = np.iinfo(np.dtype(input.dtype.name)) if input.dtype.name != "bool" else None
            fill = (limit.min if reduce == "amax" else limit.max) if limit is not None else reduce == "amin"
        candidates = where(hot, values_.unsqueeze(-1), fill)
        combine = amax if reduce == "amax" else amin
        if include_self:
            candidates = cat([candidates, region.movedim(dim, -1).unsqueeze(dim)], dim)
        else:   # PyTorch still counts an excluded self equal to the result among the ties it shares
            #     the gradient with (self itself gets none): a constant candidate of that value does
            best, own = combine(candidates, dim).detach(), region.detach().movedim(dim, -1)
            candidates = cat([candidates, where(own == best, own, fill).unsqueeze(dim)], dim)
        result = where(touched, combine(candidates, dim).movedim(-1, dim), region)
    if result.shape == input.shape:
        return result
    return index_put(input, region_key, result)


@register(_scatter_reduce_reference, _scatter_reduce_samples)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` where each place that ``index`` names along ``dim`` holds the
    ``reduce`` ("sum", "prod", "mean", "amax" or "amin") of the ``src`` values sent there
    (and of its own value when ``include_self``):

    out[index[i][j]][j] = reduce(out[index[i][j]][j], src[i][j], ...)   (dim=0)

    Gradients as PyTorch defines them: sum and mean share grad out (divided by the count for
    mean); prod gives each factor grad × the product of the others; amax and amin give it to
    the values equal to the result, shared evenly between ties (with ``include_self=False``
    PyTorch counts the place's own value among the ties when it equals the result, yet gives it
    no gradient: vizgrad does the same).

    Example::

        x = vizgrad.zeros(3)
        x.scatter_reduce(0, vizgrad.tensor([0, 0, 2]), vizgrad.tensor([1., 2., 3.]), "amax")   # [2., 0., 3.]
    """
    _tensor_arg("scatter_reduce", "input", input)
    _tensor_arg("scatter_reduce", "index", index)
    _tensor_arg("scatter_reduce", "src", src)
    _reduce_slot("scatter_reduce", "reduce", reduce, _REDUCTIONS)
    _same_device("scatter_reduce", input, index=index, src=src)
    dim, _ = _check_scatter("scatter_reduce", input, dim, index, src)
    if index.numel() == 0:
        return input.clone()
    return _reduced_at(input, dim, index, src, reduce, bool(include_self))


def _index_reduce_reference(a, dim, index, source, reduce, include_self=True):
    dim %= a.ndim
    shape = [1] * a.ndim
    shape[dim] = -1
    spread = np.broadcast_to(index.reshape(shape), source.shape)
    return _scatter_reduce_reference(a, dim, spread, source, reduce, include_self)


def _index_reduce_samples(rng):
    for reduce in ("prod", "mean", "amax", "amin"):
        yield Sample((values(rng, (4, 3)), 0, np.array([0, 3, 0, 1, 0]), values(rng, (5, 3)), reduce),
                     name=f"{reduce}, repeats")
        yield Sample((values(rng, (2, 3, 4)), -1, np.array([2, 2, 1]), values(rng, (2, 3, 3)), reduce),
                     {"include_self": False}, name=f"{reduce}, without self")


@register(_index_reduce_reference, _index_reduce_samples)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of ``input`` whose slices along ``dim`` at ``index`` (1-D int64) are combined by
    ``reduce`` ("prod", "mean", "amax" or "amin") with the slices of ``source``:
    out[..., index[j], ...] = reduce(..., source[..., j, ...]). Gradients as in
    :func:`scatter_reduce`.

    Example::

        x = vizgrad.ones(3, 2)
        x.index_reduce(0, vizgrad.tensor([0, 0]), vizgrad.tensor([[2., 3.], [4., 5.]]), "prod")
        # tensor([[ 8., 15.], [ 1.,  1.], [ 1.,  1.]])
    """
    axis = _slices_check("index_reduce", input, dim, index, source)
    _reduce_slot("index_reduce", "reduce", reduce, ("prod", "mean", "amax", "amin"))
    if index.numel() == 0:
        return input.clone()
    if input.ndim == 0:
        return _reduced_at(input.reshape(1), 0, index.reshape(-1), source.reshape(-1), reduce,
                           bool(include_self)).reshape(())
    shape = [1] * input.ndim
    shape[axis] = -1
    spread = index.reshape(shape).expand(tuple(source.shape)).contiguous()
    return _reduced_at(input, axis, spread, source, reduce, bool(include_self))
