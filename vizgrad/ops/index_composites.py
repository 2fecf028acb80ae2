"""take, put, the ``*_scatter`` family (select_scatter, slice_scatter, diagonal_scatter),
index_copy and masked_scatter.

They are built from the ops of :mod:`.index` (getitem, index_put, put_add): each inherits
their gradients, of every order, and checks its arguments first, in its own words.
"""

import numpy as np

from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, IndexingError, not_a_tensor, as_int,
                      DeviceError, check_dim)
from ..tensor import Tensor
from .index import _dim, _needs_dims, diagonal, getitem, index_put
from .registry import Sample, register
from .samples import booleans, non_contiguous, values


def _tensor_arg(op, name, value):
    if not isinstance(value, Tensor):
        raise not_a_tensor(op, name, value)
    return value


def _same_device(op, input, **others):
    """A DeviceError naming the first of ``others`` (tensors) that is not on ``input``'s device."""
    for name, other in others.items():
        if isinstance(other, Tensor) and other.device != input.device:
            raise DeviceError(f"{op}: expected all tensors to be on the same device: {name} is on {other.device} "
                              f"but input is on {input.device}; move one with .to('{input.device}')")


def _long_index(op, index, name="index"):
    _tensor_arg(op, name, index)
    if index.dtype.name != "int64":
        raise DTypeError(f"{op}: {name} must be an int64 (long) tensor, got {index.dtype.name}")
    return index


def _flat_in_range(op, index, size, name="index"):
    """Raise an IndexingError when an entry of ``index`` lies outside ``[-size, size)``."""
    if index.numel() and not bool(((index >= -size) & (index < size)).all()):
        bad = index[(index < -size) | (index >= size)].reshape(-1)[0].item()
        raise IndexingError(f"{op}: {name} {bad} is out of bounds for a tensor of {size} element"
                            f"{'s' if size != 1 else ''}")


def _take_reference(a, index):
    return np.take(a.reshape(-1), index)


def _take_samples(rng):
    yield Sample((values(rng, (3, 4)), np.array([[0, 11], [-1, 5]])), name="2-d index, negative")
    yield Sample((values(rng, ()), np.array(0)), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), np.array([1, 1, 4])), name="non-contiguous, repeats")


@register(_take_reference, _take_samples)
def take(input, index):
    """The elements of ``input``, read as if it were 1-D (row-major), at ``index`` (int64, any
    shape; negative entries count from the end). The result has ``index``'s shape.

    Maths: out[i] = input.flatten()[index[i]]; the gradient adds grad back at those places.

    Example::

        vizgrad.take(vizgrad.tensor([[1., 2.], [3., 4.]]), vizgrad.tensor([0, 3]))   # tensor([1., 4.])
    """
    _tensor_arg("take", "input", input)
    _long_index("take", index)
    _same_device("take", input, index=index)
    _flat_in_range("take", index, input.numel())
    return getitem(input.reshape(-1), index)


def _put_reference(a, index, source, accumulate=False):
    out = np.array(a, copy=True).reshape(-1)
    if accumulate:
        np.add.at(out, index.reshape(-1), source.reshape(-1))
    else:
        out[index.reshape(-1)] = source.reshape(-1)
    return out.reshape(a.shape)


def _put_samples(rng):
    yield Sample((values(rng, (3, 4)), np.array([[0, 10], [-1, 5]]), values(rng, (2, 2))), name="2-d index")
    yield Sample((values(rng, (3, 4)), np.array([1, 1, 4]), values(rng, (3,)), True), name="accumulate")
    yield Sample((values(rng, ()), np.array([0]), values(rng, (1,))), name="0-d")


@register(_put_reference, _put_samples)
def put(input, index, source, accumulate=False):
    """A copy of ``input``, read as if it were 1-D, with ``source``'s elements written at
    ``index`` (same number of elements); ``accumulate=True`` adds them instead.

    Example::

        vizgrad.zeros(2, 2).put(vizgrad.tensor([3, 0]), vizgrad.tensor([5., 6.]))   # [[6., 0.], [0., 5.]]
    """
    _tensor_arg("put", "input", input)
    _long_index("put", index)
    _tensor_arg("put", "source", source)
    _same_device("put", input, index=index, source=source)
    if index.numel() != source.numel():
        raise ShapeError(f"put: index (shape {format_shape(index.shape)}, {index.numel()} elements) and source "
                         f"(shape {format_shape(source.shape)}, {source.numel()} elements) must have the same "
                         "number of elements")
    if source.dtype is not input.dtype:
        raise DTypeError(f"put: source has dtype {source.dtype.name} but input has {input.dtype.name}; they "
                         "must match")
    _flat_in_range("put", index, input.numel())
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


def _basic_key(ndim, dim, entry):
    return (slice(None),) * dim + (entry,)


def _scatter_source(op, input, src, expected):
    _tensor_arg(op, "src", src)
    _same_device(op, input, src=src)
    if tuple(src.shape) != tuple(expected):
        raise ShapeError(f"{op}: expected src to have a size equal to the slice of self: src has shape "
                         f"{format_shape(src.shape)}, the slice {format_shape(expected)} (self of shape "
                         f"{format_shape(input.shape)})")
    if src.dtype is not input.dtype:
        raise DTypeError(f"{op}: src has dtype {src.dtype.name} but input has {input.dtype.name}; they must match")


def _select_scatter_reference(a, src, dim, index):
    out = np.array(a, copy=True)
    out[_basic_key(a.ndim, dim % a.ndim, index)] = src
    return out


def _select_scatter_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (4,)), 0, 1), name="row")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (2, 3)), -1, -2), name="negative dim and index")
    yield Sample((values(rng, (3,)), values(rng, ()), 0, 2), name="1-d")


@register(_select_scatter_reference, _select_scatter_samples)
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``.

    Example::

        vizgrad.select_scatter(vizgrad.zeros(2, 2), vizgrad.ones(2), 0, 0)   # [[1., 1.], [0., 0.]]
    """
    _tensor_arg("select_scatter", "input", input)
    _needs_dims("select_scatter", input)
    axis = _dim("select_scatter", input, dim)
    position = as_int("select_scatter", "index", index)
    size = input.shape[axis]
    if not -size <= position < size:
        raise IndexingError(f"select_scatter: index {position} is out of range for dim {dim} of size {size}")
    _scatter_source("select_scatter", input, src, input.shape[:axis] + input.shape[axis + 1:])
    return index_put(input, _basic_key(input.ndim, axis, position % size), src)


def _slice_scatter_reference(a, src, dim=0, start=None, end=None, step=1):
    out = np.array(a, copy=True)
    out[_basic_key(a.ndim, dim % a.ndim, slice(start, end, step))] = src
    return out


def _slice_scatter_samples(rng):
    yield Sample((values(rng, (5, 3)), values(rng, (2, 3))), {"start": 1, "end": 3}, name="rows")
    yield Sample((values(rng, (3, 6)), values(rng, (3, 3))), {"dim": -1, "step": 2}, name="step")
    yield Sample((values(rng, (4,)), values(rng, (4,))), name="whole")


@register(_slice_scatter_reference, _slice_scatter_samples)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written at ``input[..., start:end:step, ...]`` (along
    ``dim``).

    Example::

        vizgrad.slice_scatter(vizgrad.zeros(4), vizgrad.ones(2), start=2)   # [0., 0., 1., 1.]
    """
    _tensor_arg("slice_scatter", "input", input)
    _needs_dims("slice_scatter", input)
    axis = _dim("slice_scatter", input, dim)
    start = None if start is None else as_int("slice_scatter", "start", start)
    end = None if end is None else as_int("slice_scatter", "end", end)
    step = as_int("slice_scatter", "step", step)
    if step <= 0:
        raise ArgumentError(f"slice_scatter: step must be positive, got {step}")
    picked = range(input.shape[axis])[slice(start, end, step)]
    _scatter_source("slice_scatter", input, src, input.shape[:axis] + (len(picked),) + input.shape[axis + 1:])
    return index_put(input, _basic_key(input.ndim, axis, slice(picked.start, picked.stop, step)), src)


def _diagonal_positions(rows, columns, offset):
    """Row and column indices of diagonal ``offset`` of a (rows, columns) matrix."""
    first_row, first_column = max(-offset, 0), max(offset, 0)
    length = max(min(rows - first_row, columns - first_column), 0)
    return (np.arange(length, dtype=np.int64) + first_row, np.arange(length, dtype=np.int64) + first_column)


def _diagonal_scatter_reference(a, src, offset=0, dim1=0, dim2=1):
    moved = np.moveaxis(np.array(a, copy=True), (dim1, dim2), (-2, -1))
    rows, columns = _diagonal_positions(moved.shape[-2], moved.shape[-1], offset)
    moved[..., rows, columns] = src
    return np.moveaxis(moved, (-2, -1), (dim1, dim2))


def _diagonal_scatter_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3,))), name="main diagonal")
    yield Sample((values(rng, (3, 4)), values(rng, (2,)), -1), name="below")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (4, 2)), 0, 0, 1), name="batched, dims 0 and 1")
    yield Sample((values(rng, (2, 3, 4)), values(rng, (3, 1)), 1, -1, 0), name="dims -1 and 0, offset")


@register(_diagonal_scatter_reference, _diagonal_scatter_samples)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on ``input.diagonal(offset, dim1, dim2)`` (src
    has that diagonal's shape: the other dims, then the diagonal's length).

    Example::

        vizgrad.diagonal_scatter(vizgrad.zeros(2, 2), vizgrad.ones(2))   # [[1., 0.], [0., 1.]]
    """
    _tensor_arg("diagonal_scatter", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal_scatter: input must have at least 2 dimensions, got shape "
                         f"{format_shape(input.shape)}")
    offset = as_int("diagonal_scatter", "offset", offset)
    first, second = _dim("diagonal_scatter", input, dim1), _dim("diagonal_scatter", input, dim2)
    if first == second:
        raise ShapeError(f"diagonal_scatter: dim1 and dim2 cannot be the same dim ({dim1} and {dim2})")
    _scatter_source("diagonal_scatter", input, src, tuple(diagonal(input, offset, first, second).shape))
    moved = input.movedim((first, second), (-2, -1))
    rows, columns = _diagonal_positions(moved.shape[-2], moved.shape[-1], offset)
    as_index = [Tensor._make(input._backend().asarray(p, None, input.device.index or 0)) for p in (rows, columns)]
    return index_put(moved, (Ellipsis, *as_index), src).movedim((-2, -1), (first, second)).contiguous()


def _index_copy_reference(a, dim, index, source):
    out = np.array(a, copy=True)
    out[_basic_key(a.ndim, dim % a.ndim, index)] = source
    return out


def _index_copy_samples(rng):
    yield Sample((values(rng, (4, 3)), 0, np.array([3, 0]), values(rng, (2, 3))), name="rows")
    yield Sample((values(rng, (2, 3, 4)), -1, np.array([1, 2, 0]), values(rng, (2, 3, 3))), name="negative dim")


def _slices_check(op, input, dim, index, source, source_name="source"):
    """index_copy / index_reduce rules: a 1-D int64 index into dim, source of input's shape but
    len(index) along dim. Returns the dim, non-negative."""
    _tensor_arg(op, "input", input)
    _long_index(op, index)
    _tensor_arg(op, source_name, source)
    _same_device(op, input, index=index, **{source_name: source})
    axis = check_dim(op, dim, max(input.ndim, 1))
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 1-D (or 0-d), got shape {format_shape(index.shape)}")
    shape = input.shape or (1,)
    expected = shape[:axis] + (index.numel(),) + shape[axis + 1:]
    if tuple(source.shape or (1,)) != expected:
        raise ShapeError(f"{op}: {source_name} of shape {format_shape(source.shape)} must have the shape of "
                         f"self ({format_shape(input.shape)}) with {index.numel()} (index's length) along dim "
                         f"{dim}: {format_shape(expected)}")
    if source.dtype is not input.dtype:
        raise DTypeError(f"{op}: {source_name} has dtype {source.dtype.name} but self has {input.dtype.name}; "
                         "they must match")
    size = shape[axis]
    if index.numel() and not bool(((index >= 0) & (index < size)).all()):
        bad = index[(index < 0) | (index >= size)].reshape(-1)[0].item()
        raise IndexingError(f"{op}: index {bad} is out of bounds for dim {dim} with size {size}")
    return axis


@register(_index_copy_reference, _index_copy_samples)
def index_copy(input, dim, index, source):
    """A copy of ``input`` with the slices of ``source`` along ``dim`` written at the
    positions ``index`` names: out[..., index[j], ...] = source[..., j, ...].

    Example::

        vizgrad.zeros(3, 2).index_copy(0, vizgrad.tensor([2, 0]), vizgrad.ones(2, 2))   # rows 0 and 2 are ones
    """
    axis = _slices_check("index_copy", input, dim, index, source)
    if input.ndim == 0:
        return index_put(input.reshape(1), (index.reshape(-1),), source.reshape(-1)).reshape(())
    return index_put(input, _basic_key(input.ndim, axis, index.reshape(-1)), source)


def _masked_scatter_reference(a, mask, source):
    a, mask = np.broadcast_arrays(a, mask)
    out = np.array(a, copy=True)
    out[mask] = source.reshape(-1)[:int(mask.sum())]
    return out


def _masked_scatter_samples(rng):
    yield Sample((values(rng, (3, 4)), booleans(rng, (3, 4)), values(rng, (12,))), name="same shape")
    yield Sample((values(rng, (3, 4)), booleans(rng, (4,)), values(rng, (4, 5))), name="broadcast mask")
    yield Sample((non_contiguous(values(rng, (3, 4))), np.ones((3, 4), dtype=bool), values(rng, (3, 4))),
                 name="all, non-contiguous")


@register(_masked_scatter_reference, _masked_scatter_samples)
def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) whose places where ``mask`` is true take
    the leading elements of ``source`` in row-major order.

    Example::

        x = vizgrad.zeros(2, 2)
        x.masked_scatter(vizgrad.tensor([[True, False], [False, True]]), vizgrad.tensor([1., 2.]))
        # tensor([[1., 0.], [0., 2.]])
    """
    _tensor_arg("masked_scatter", "input", input)
    _tensor_arg("masked_scatter", "mask", mask)
    _tensor_arg("masked_scatter", "source", source)
    _same_device("masked_scatter", input, mask=mask, source=source)
    if mask.dtype.name != "bool":
        raise DTypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype.name}")
    if source.dtype is not input.dtype:
        raise DTypeError(f"masked_scatter: source has dtype {source.dtype.name} but self has {input.dtype.name}; "
                         "they must match")
    try:
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    except ValueError:
        raise ShapeError(f"masked_scatter: mask of shape {format_shape(mask.shape)} does not broadcast with "
                         f"self of shape {format_shape(input.shape)}") from None
    count = int(mask.expand(shape).sum().item())
    if count > source.numel():
        raise ShapeError(f"masked_scatter: expected source to have at least as many elements as ones in mask: "
                         f"mask has {count}, source (shape {format_shape(source.shape)}) {source.numel()}")
    expanded = input.expand(shape).contiguous() if tuple(input.shape) != shape else input
    if not shape:   # a 0-d mask: written as a one-element one
        return index_put(expanded.reshape(1), (mask.reshape(1),), source.reshape(-1)[:count]).reshape(())
    return index_put(expanded, (mask.expand(shape),), source.reshape(-1)[:count])
