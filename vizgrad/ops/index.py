"""Indexing: ``x[key]``, ``x[key] = v``, index_select and index_add, masked_fill, the diagonals
(diagonal, diag_embed, diag, diagflat) and index_fill.

Every backward here is the adjoint of a forward: reading at indices (getitem, gather,
index_select) and adding at indices (put_add, scatter_add, index_add) are each other's
transposes. Repeated indices therefore accumulate: ``x[[0, 0]].sum()`` gives
``x.grad[0] == 2``.

Indices are constants: the public functions validate them and turn them into
backend arrays once, and the ops save them as they are.

Keys of ``x[key]`` follow PyTorch: integers and slices are applied first, then
integer arrays and bool masks index together (their shapes broadcast); the
dimensions they produce stand where the arrays stood when the arrays are adjacent
in the key, and in front otherwise. (NumPy differs when an integer sits apart from
the arrays: ``x[:, [0, 1], :, 0]``.)

The other families: :mod:`.gather_scatter` (gather, take_along_dim, masked_select,
scatter_add, scatter, scatter_reduce, index_reduce) and :mod:`.index_composites` (take, put,
the ``*_scatter`` family, index_copy, masked_scatter).
"""

import math
import operator

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..backends import backend_of
from ..backends.base import is_array
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, IndexingError,
                      not_a_tensor, as_int, as_integer_scalar, as_number, DeviceError, check_dim)
from ..tensor import Tensor
from .registry import Sample, register
from .samples import non_contiguous, values

# --- keys ------------------------------------------------------------------
class _Key(tuple):
    """A key already normalised by :func:`_normalize_key`, valid on every backend.

    Either basic (an int, slice or None per dim, then Ellipsis: the result is a
    view; only basic keys hold an Ellipsis), or advanced (an int or int array per
    dim; the arrays broadcast together to the shape of the result, so NumPy's and
    PyTorch's rules agree on it).
    """


_SAVED = object()  # marks where a saved index array goes back into a key


def _save_key(ctx, key, *values):
    """Save ``values`` and the arrays of ``key`` (constants); the rest of the key goes on ctx."""
    template, arrays = [], list(values)
    for entry in key:
        if not (entry is None or entry is Ellipsis or isinstance(entry, (int, slice))):  # an array
            arrays.append(entry)
            entry = _SAVED
        template.append(entry)
    ctx.key = tuple(template)
    ctx.save_for_backward(*arrays)


def _saved_key(ctx, count=0):
    """The ``count`` values saved with :func:`_save_key`, and the key."""
    saved = ctx.saved_tensors
    arrays = iter(saved[count:])
    return saved[:count], _Key(next(arrays) if entry is _SAVED else entry for entry in ctx.key)


def _as_index_array(input, index, op, allow_bool=False, same_device=False):
    """``index`` (a Tensor, a backend array, a NumPy array or nested lists) as an array of
    ``input``'s backend, checked to hold integers (or bools, for masks). With ``same_device``
    an index Tensor on another device is an error, as in PyTorch's gather and scatter."""
    backend = input._backend()
    array = index._array if isinstance(index, Tensor) else index
    if type(array) is not backend.array_type:
        if same_device and isinstance(index, Tensor):
            raise DeviceError(f"{op}: index is on {index.device} but input is on {input.device}; move one "
                              f"with .to('{input.device}')")
        device_index = backend.device_index(input._array)
        try:
            array = backend.asarray(backend_of(array).to_numpy(array), None, device_index)
        except TypeError:
            host = np.asarray(array)
            if host.size == 0 and host.dtype.kind == "f":
                host = host.astype(np.int64)  # [] means no indices, not a float array
            array = backend.asarray(host, None, device_index)
    xp = backend.xp
    dtype = array.dtype       # compared with the backend's own dtypes: names are slow to make
    if not (dtype == xp.int64 or dtype == xp.int32 or (allow_bool and dtype == xp.bool)):
        allowed = "int64 or int32" + (" (or a bool mask)" if allow_bool else "")
        raise DTypeError(f"{op}: indices must be {allowed}, got dtype {backend.dtype_name(array)}")
    return array


def _tracked(index, array):
    """``array``, checked from the user's ``index`` Tensor, as a Tensor that counts in-place
    changes together with ``index``: an op that saves it for backward then refuses a backward
    after ``index`` was modified, as PyTorch does (its saved index is the user's tensor)."""
    tracked = Tensor._make(array)
    tracked._share_version_counter(index)
    return tracked


def _check_range(xp, array, size, dim, op, negative_ok=False):
    """Raise IndexError unless every index fits a dim of ``size`` (from ``-size`` when
    ``negative_ok``); return the indices with negative ones wrapped."""
    if math.prod(array.shape) == 0:
        return array
    low, high = int(xp.min(array)), int(xp.max(array))
    lowest = -size if negative_ok else 0
    if low < lowest or high >= size:
        bad = low if low < lowest else high
        raise IndexingError(f"{op}: index {bad} is out of range for dim {dim} of size {size}")
    return xp.where(array < 0, array + size, array) if low < 0 else array


def _key_entry(input, item, op):
    """One element of a user's key as ``(kind, value)``: "none", "ellipsis", "int",
    "slice", "array" (integers) or "mask" (bools)."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        raise IndexingError(f"{op}: a bool scalar is not a supported index; use a bool tensor as a mask")
    if isinstance(item, (Tensor, list, tuple, range, np.ndarray)) or is_array(item):
        array = _as_index_array(input, item, op, allow_bool=True)
        if array.dtype == input._backend().xp.bool:
            if array.ndim == 0:
                raise IndexingError(f"{op}: a 0-d bool index is not supported; use a bool mask with dimensions")
            return "mask", array
        if array.ndim == 0:
            return "int", int(array)
        return "array", array
    if hasattr(item, "__index__"):
        return "int", operator.index(item)
    raise ArgumentTypeError(f"{op}: cannot index with a {type(item).__name__}; use ints, slices, None, ..., "
                            "integer tensors or bool masks")


def _broadcast_shapes(shapes, op):
    if all(shape == shapes[0] for shape in shapes):
        return shapes[0]
    ndim = max(len(s) for s in shapes)
    result = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise IndexingError(f"{op}: the index arrays could not be broadcast together, shapes "
                                + ", ".join(format_shape(s) for s in shapes))
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def _normalize_key(input, key, op):
    """The canonical :class:`_Key` for ``input[key]`` and the shape of the result.

    Raises IndexError for indices out of range (naming the index, dim and size), too
    many indices or masks of the wrong shape; DTypeError for non-integer indices;
    ValueError for negative slice steps (PyTorch has none: use ``flip``).
    """
    if isinstance(key, _Key):  # from a backward: already checked; saved arrays may come back as Tensors
        return _Key(entry._array if isinstance(entry, Tensor) else entry for entry in key), None
    items = key if type(key) is tuple else (key,)
    normalized, result = _resolve_key(input, items, op)
    # the index tensors the key's arrays come from: an op that saves those arrays tracks their versions
    normalized.sources = tuple(item for item in items if isinstance(item, Tensor))
    return normalized, result


def _resolve_key(input, items, op):
    """:func:`_normalize_key` for a user's key (a tuple of its entries)."""
    shape = input.shape
    entries = [_key_entry(input, item, op) for item in items]
    used, ellipsis = 0, None   # the dims the key indexes, and where its ellipsis stands
    for position, (kind, value) in enumerate(entries):
        if kind == "ellipsis":
            if ellipsis is not None:
                raise IndexingError(f"{op}: an index can only have a single ellipsis (...)")
            ellipsis = position
        elif kind != "none":
            used += value.ndim if kind == "mask" else 1
    if used > len(shape):
        raise IndexingError(f"{op}: too many indices for a tensor of shape {format_shape(shape)}: "
                            f"{used} dimensions indexed")
    fill = [("slice", slice(None))] * (len(shape) - used)
    if ellipsis is not None:
        entries[ellipsis:ellipsis + 1] = fill
    else:
        entries += fill

    backend = input._backend()
    xp = backend.xp
    resolved = []  # (kind, value) with one int, slice or int array per dim, plus None
    dim, advanced = 0, False
    for kind, value in entries:
        if kind == "none":
            resolved.append((kind, None))
            continue
        if kind == "mask":
            mask_shape, covered = tuple(value.shape), shape[dim:dim + value.ndim]
            if mask_shape != covered:
                raise IndexingError(f"{op}: the mask of shape {format_shape(mask_shape)} does not match the "
                                    f"indexed shape {format_shape(covered)} at dim {dim} of a tensor of shape "
                                    f"{format_shape(shape)}")
            resolved += [("array", array) for array in xp.nonzero(value)]
            dim += value.ndim
            advanced = True
            continue
        size = shape[dim]
        if kind == "int":
            if not -size <= value < size:
                raise IndexingError(f"{op}: index {value} is out of range for dim {dim} of size {size}")
            resolved.append(("int", value % size))
        elif kind == "slice":
            if value.step is not None and operator.index(value.step) <= 0:
                raise ArgumentError(f"{op}: slice step must be positive, got {value.step} (PyTorch has no "
                                    "negative steps: use flip)")
            start, stop, step = value.indices(size)
            resolved.append(("slice", slice(start, max(start, stop), step)))
        else:   # where the backend checks bounds, Op.apply rewords its error
            checked = backend.checks_index_bounds
            resolved.append(("array", value if checked else _check_range(xp, value, size, dim, op, True)))
            advanced = True
        dim += 1

    if not advanced:
        result = tuple(1 if kind == "none" else len(range(value.start, value.stop, value.step))
                       for kind, value in resolved if kind != "int")
        return _Key([value for _, value in resolved] + [Ellipsis]), result
    return _advanced_key(input, resolved, op)


def _advanced_key(input, resolved, op):
    """An all-advanced key (an int or int array per dim) equivalent to ``resolved`` under
    PyTorch's rules: integers first, then the arrays jointly."""
    first = resolved[0][1]
    arrays = [value for kind, value in resolved if kind == "array"]
    if len(arrays) == len(resolved) and all([array.shape == first.shape for array in arrays]):
        return _Key(arrays), tuple(first.shape)  # x[rows, cols]: the key as it is
    xp = input._backend().xp
    device = input._array.device
    kept = [(kind, value) for kind, value in resolved if kind != "int"]  # dims left once ints are applied
    arrays = [i for i, (kind, _) in enumerate(kept) if kind == "array"]
    index_shape = _broadcast_shapes([tuple(kept[i][1].shape) for i in arrays], op)
    adjacent = arrays == list(range(arrays[0], arrays[0] + len(arrays)))
    result, axis_of, block = [], {}, 0
    if not adjacent:
        result += index_shape
    for position, (kind, value) in enumerate(kept):
        if kind == "slice":
            axis_of[position] = len(result)
            result.append(len(range(value.start, value.stop, value.step)))
        elif kind == "none":
            result.append(1)
        elif adjacent and position == arrays[0]:
            block = len(result)
            result += index_shape
    ndim = len(result)

    def placed(array, axis, length):
        shape = (1,) * axis + tuple(array.shape) + (1,) * (ndim - axis - length)
        return array if shape == tuple(array.shape) else xp.reshape(array, shape)

    key, position = [], 0
    for kind, value in resolved:
        if kind == "int":
            key.append(value)
            continue
        if kind == "slice":
            positions = xp.arange(value.start, value.stop, value.step, dtype=xp.int64, device=device)
            key.append(placed(positions, axis_of[position], 1))
        elif kind == "array":
            shape = (1,) * (len(index_shape) - value.ndim) + tuple(value.shape)
            padded = value if shape == tuple(value.shape) else xp.reshape(value, shape)
            key.append(placed(padded, block, len(index_shape)))
        position += 1
    return _Key(key), tuple(result)


def _check_values(values, shape, op):
    """``values`` must broadcast to ``shape``, the shape of ``input[key]``."""
    if not isinstance(values, Tensor):
        return
    source = values.shape
    fits = len(source) <= len(shape) and all(
        n in (1, m) for n, m in zip(source, shape[len(shape) - len(source):]))
    if not fits:
        raise ShapeError(f"{op}: values of shape {format_shape(source)} cannot be broadcast to the indexed "
                         f"shape {format_shape(shape)}")


def _like(xp, value, a):
    """``value`` (a number or an array) as an array of ``a``'s dtype."""
    if not hasattr(value, "dtype"):
        return xp.asarray(value, dtype=a.dtype)
    return value if value.dtype == a.dtype else xp.astype(value, a.dtype)


def _zeros(xp, shape, like):
    return xp.zeros(shape, dtype=like.dtype, device=like.device)


class TakenAlong(Op):
    """Base of the ops whose values are taken from ``indices`` along ``ctx.axis`` of their
    input (sort, topk, cummax, cummin): forward ends with :meth:`taken`, which keeps the
    indices (they have no gradient); the gradient of the values is added back where each
    came from, zeros elsewhere."""

    @staticmethod
    def taken(ctx, out, indices):
        ctx.save_for_backward(indices)
        ctx.mark_non_differentiable(indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices, = ctx.saved_tensors
        if len(ctx.shape) == 0:
            return grad
        return ctx.xp.scatter_add(_zeros(ctx.xp, ctx.shape, grad), ctx.axis, indices, grad)


# --- x[key] ----------------------------------------------------------------
class GetItem(Op):
    @staticmethod
    def forward(ctx, a, key):
        ctx.shape = a.shape
        _save_key(ctx, key)
        return a[key]

    @staticmethod
    def backward(ctx, grad):
        _, key = _saved_key(ctx)
        xp = ctx.xp
        return xp.put_add(_zeros(xp, ctx.shape, grad), key, grad)


def _getitem_reference(a, key):
    """NumPy indexing with PyTorch's rule for integers next to arrays (integers first)."""
    items = key if type(key) is tuple else (key,)
    arrays = [isinstance(k, (list, np.ndarray)) for k in items]
    integers = [isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in items]
    if not any(arrays) or not any(integers):
        return np.asarray(a[key])
    basic = tuple(slice(None) if is_array else k for k, is_array in zip(items, arrays))
    rest = tuple(k if is_array or k is Ellipsis else slice(None)
                 for k, is_array, is_int in zip(items, arrays, integers) if not is_int)
    return a[basic][rest]


def _getitem_samples(rng):
    matrix = values(rng, (4, 3))
    cube = values(rng, (3, 4, 5))
    yield Sample((matrix, 1), name="int")
    yield Sample((matrix, (slice(None), -1)), name="column, negative")
    yield Sample((values(rng, (7,)), slice(1, None, 2)), name="step")
    yield Sample((cube, (Ellipsis, None, slice(1, 3))), name="ellipsis, None")
    yield Sample((values(rng, ()), ()), name="0-d, empty key")
    yield Sample((values(rng, ()), None), name="0-d, None")
    yield Sample((non_contiguous(matrix), (slice(1, 3), 0)), name="non-contiguous")
    yield Sample((matrix, np.array([0, 0, 3, -1])), name="repeated int array")
    yield Sample((matrix, [2, 2]), name="list")
    yield Sample((matrix, (np.array([0, 0, 3]), np.array([1, 1, 2]))), name="two arrays")
    yield Sample((cube, (slice(None), np.array([[0, 1], [1, 3]]), slice(1, 4))), name="array in the middle")
    yield Sample((cube, (np.array([0, 2]), slice(None), np.array([1, 4]))), name="separated arrays")
    yield Sample((cube, (1, slice(None), np.array([0, 3, 3]))), name="int apart from an array")
    yield Sample((matrix, matrix > 0), name="bool mask")
    yield Sample((matrix, (np.array([True, False, True, True]),)), name="bool mask on dim 0")
    yield Sample((cube, (slice(None), np.array([True, False, True, False]), 2)), name="mask and int")


@register(_getitem_reference, _getitem_samples, method=False)
def getitem(input, key):
    """``input[key]``, as in PyTorch: ints, slices (positive steps), None, ``...``, integer
    tensors or arrays or lists, and bool masks.

    Basic keys (ints, slices, None) give a view; integer arrays and masks give a copy.
    The gradient is added back at the indexed places, so repeated indices accumulate:
    d(x[i])/dx[j] = #{k: i_k = j}.

    Example::

        x = vizgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x[[0, 0, 2]].sum().backward()     # x.grad == [2., 0., 1.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("getitem", "input", input)
    key, _ = _normalize_key(input, key, "getitem")
    out = GetItem.apply(input, key=key)
    if key[-1] is Ellipsis:  # basic, so a view: in-place changes to it show in input, and bump its version
        out._as_view_of(input)
    return out


# --- adding and writing at a key ---------------------------------------------
class PutAdd(Op):
    broadcasts = True

    @staticmethod
    def forward(ctx, a, values, key):
        _save_key(ctx, key)
        return ctx.xp.put_add(a, key, _like(ctx.xp, values, a))

    @staticmethod
    def backward(ctx, grad):
        _, key = _saved_key(ctx)
        needs_input, needs_values = ctx.needs_input_grad
        return grad if needs_input else None, grad[key] if needs_values else None


def _put_add_reference(a, key, values):
    out = np.array(a, copy=True)
    np.add.at(out, key, values)
    return out


def _put_add_samples(rng):
    yield Sample((values(rng, (5, 3)), np.array([0, 0, 4]), values(rng, (3, 3))), name="repeated indices")
    yield Sample((values(rng, (5, 3)), (slice(1, 3),), values(rng, (3,))), name="slice, broadcast values")
    yield Sample((values(rng, (5, 3)), (np.array([1, 1]), np.array([2, 2])), 1.5), name="number")
    yield Sample((values(rng, ()), (), values(rng, ())), name="0-d")


@register(_put_add_reference, _put_add_samples, method=False)
def put_add(input, key, values):
    """A copy of ``input`` with ``values`` (broadcast) added at ``input[key]``; repeated
    indices accumulate. The adjoint of :func:`getitem`, and its backward.

    out = input + P_keyᵀ values, so d out/d input = 1 and the gradient of values is grad[key].

    Example::

        vizgrad.put_add(vizgrad.zeros(3), [0, 0], vizgrad.tensor([1.0, 2.0]))   # [3., 0., 0.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("put_add", "input", input)
    key, shape = _normalize_key(input, key, "put_add")
    if shape is not None:
        _check_values(values, shape, "put_add")
    return PutAdd.apply(input, values, key=key)


class IndexPut(Op):
    broadcasts = True

    @staticmethod
    def forward(ctx, a, values, key, exact=False):
        xp = ctx.xp
        values = _like(xp, values, a)
        if exact:   # integers and bools: no gradient, exact values
            return _put_exact(xp, a, values, key)
        count = xp.put_add(xp.zeros_like(a), key, xp.ones_like(values))
        written = xp.asarray(count > 0)  # an array even when 0-d (NumPy returns a scalar)
        share = xp.where(written, count, 1.0)  # repeated indices: each writer gets an equal share
        _save_key(ctx, key, written, share)
        return xp.where(written, xp.put_add(xp.zeros_like(a), key, values) / share, a)

    @staticmethod
    def backward(ctx, grad):
        (written, share), key = _saved_key(ctx, 2)
        needs_input, needs_values = ctx.needs_input_grad
        grad_input = ctx.xp.where(written, 0.0, grad) if needs_input else None
        grad_values = (grad / share)[key] if needs_values else None
        return grad_input, grad_values


def _put_exact(xp, a, values, key):
    """``a[key] = values`` for integer and bool arrays, computed in int64 (where an index
    repeats, the floor of the mean of the values sent there)."""
    count = xp.put_add(xp.zeros(a.shape, dtype=xp.int64), key, xp.ones(values.shape, dtype=xp.int64))
    written = xp.asarray(count > 0)
    total = xp.put_add(xp.zeros(a.shape, dtype=xp.int64), key, xp.astype(values, xp.int64))
    return xp.where(written, xp.astype(total // xp.where(written, count, 1), a.dtype), a)


def _index_put_reference(a, key, values, accumulate=False):
    if accumulate:
        return _put_add_reference(a, key, values)
    out = np.array(a, copy=True)
    out[key] = values
    return out


def _index_put_samples(rng):
    yield Sample((values(rng, (4, 3)), (slice(None), 1), values(rng, (4,))), name="column")
    yield Sample((values(rng, (4, 3)), np.array([3, 0]), values(rng, (3,))), name="rows, broadcast values")
    yield Sample((values(rng, (4, 3)), (np.array([0, 2]), np.array([1, -1])), 0.5), name="number")
    yield Sample((values(rng, ()), (), values(rng, ())), name="0-d")
    yield Sample((values(rng, (4, 3)), (np.array([1, 2]),), values(rng, (3,)), True), name="accumulate")
    mask = rng.uniform(size=(4, 3)) > 0.5
    yield Sample((non_contiguous(values(rng, (4, 3))), mask, values(rng, (int(mask.sum()),))), name="mask")


@register(_index_put_reference, _index_put_samples)
def index_put(input, key, values, accumulate=False):
    """A copy of ``input`` with ``input[key] = values`` (broadcast): what ``x[key] = v`` computes.
    With ``accumulate=True`` the values are added instead (:func:`put_add`).

    The gradient of input is grad with zeros at key; that of values is grad[key].
    Where an index repeats, PyTorch leaves the winner undefined; vizgrad writes the
    mean of the values sent there.

    Example::

        x = vizgrad.zeros(3)
        x[1] = 5.0                        # index_put(x, 1, 5.0): [0., 5., 0.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("index_put", "input", input)
    if accumulate:
        return put_add(input, key, values)
    key, shape = _normalize_key(input, key, "index_put")
    if shape is not None:
        _check_values(values, shape, "index_put")
    return IndexPut.apply(input, values, key=key, exact=not input.is_floating_point())


# --- dims ------------------------------------------------------------------
def _dim(op, input, dim):
    return check_dim(op, dim, input.ndim)


def _needs_dims(op, input, name="input"):
    if input.ndim == 0:
        raise ShapeError(f"{op}: {name} must have at least one dimension, got a 0-d tensor")


# --- whole slices along one dim ----------------------------------------------
def _vector_index(op, input, dim, index):
    index = _as_index_array(input, index, op, same_device=True)
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 1-D, got shape {format_shape(tuple(index.shape))}")
    xp = input._backend().xp
    if index.ndim == 0:
        index = xp.reshape(index, (1,))
    return _check_range(xp, index, input.shape[dim], dim, op)


class IndexSelect(Op):
    @staticmethod
    def forward(ctx, a, index, dim):
        ctx.shape, ctx.dim = a.shape, dim
        ctx.save_for_backward(index)
        return ctx.xp.take(a, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        xp = ctx.xp
        return xp.index_add(_zeros(xp, ctx.shape, grad), ctx.dim, index, grad), None


def _index_select_samples(rng):
    yield Sample((values(rng, (4, 3)), 0, np.array([0, 0, 3, 1])), name="repeats")
    yield Sample((values(rng, (4, 3, 2)), -2, np.array([2, 0])), name="negative dim")
    yield Sample((values(rng, (4, 3)), 1, np.array(2)), name="0-d index")
    yield Sample((non_contiguous(values(rng, (4, 3))), 1, np.array([1, 1])), name="non-contiguous")


@register(lambda a, dim, index: np.take(a, np.reshape(index, (-1,)), axis=dim), _index_select_samples)
def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` at the 1-D ``index``:

    out[..., i, ...] = input[..., index[i], ...]

    The gradient is added back with :func:`index_add`, so repeated indices accumulate.

    Example::

        x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
        vizgrad.index_select(x, 0, vizgrad.tensor([1, 1]))     # [[3., 4.], [3., 4.]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("index_select", "input", input)
    if not isinstance(index, Tensor):
        raise not_a_tensor("index_select", "index", index)
    _needs_dims("index_select", input)
    dim = _dim("index_select", input, dim)
    return IndexSelect.apply(input, _tracked(index, _vector_index("index_select", input, dim, index)), dim=dim)


class IndexAdd(Op):
    @staticmethod
    def forward(ctx, a, index, source, dim, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        return ctx.xp.index_add(a, dim, index, source if alpha == 1 else source * alpha)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        needs_input, _, needs_source = ctx.needs_input_grad
        grad_source = None
        if needs_source:
            grad_source = ctx.xp.take(grad, index, axis=ctx.dim)
            if ctx.alpha != 1:
                grad_source = grad_source * ctx.alpha
        return grad if needs_input else None, None, grad_source


def _index_add_reference(a, dim, index, source, alpha=1):
    out = np.array(a, copy=True)
    np.add.at(out, (slice(None),) * (dim % a.ndim) + (index,), source * alpha)
    return out


def _index_add_samples(rng):
    yield Sample((values(rng, (4, 3)), 0, np.array([0, 0, 2]), values(rng, (3, 3))), name="repeats")
    yield Sample((values(rng, (4, 3)), -1, np.array([2, 0, 2, 2]), values(rng, (4, 4))), {"alpha": 2.5},
                 name="negative dim, alpha")
    yield Sample((non_contiguous(values(rng, (4, 3))), 1, np.array([1]), values(rng, (4, 1))),
                 name="non-contiguous")


@register(_index_add_reference, _index_add_samples)
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added along ``dim`` at the 1-D ``index``;
    repeats accumulate:

    out[..., index[i], ...] += alpha * source[..., i, ...]

    The gradient of source is :func:`index_select` of the gradient (times alpha).

    Example::

        vizgrad.index_add(vizgrad.zeros(3, 2), 0, vizgrad.tensor([0, 0]), vizgrad.ones(2, 2))
        # [[2., 2.], [0., 0.], [0., 0.]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("index_add", "input", input)
    if not isinstance(index, Tensor):
        raise not_a_tensor("index_add", "index", index)
    if not isinstance(source, Tensor):
        raise not_a_tensor("index_add", "source", source)
    _needs_dims("index_add", input)
    dim = _dim("index_add", input, dim)
    index = _tracked(index, _vector_index("index_add", input, dim, index))
    expected = input.shape[:dim] + (index.shape[0],) + input.shape[dim + 1:]
    if tuple(source.shape) != expected:
        raise ShapeError(f"index_add: source of shape {format_shape(source.shape)} must have shape "
                         f"{format_shape(expected)} (input's shape {format_shape(input.shape)} with dim {dim} "
                         f"the length of index)")
    if source._array.dtype != input._array.dtype and source.dtype is not input.dtype:
        raise DTypeError(f"index_add: self ({input.dtype.torch_name}) and source ({source.dtype.torch_name}) must "
                         f"have the same dtype: convert source with .to({input.dtype!r})")
    if not input.is_floating_point() and input.dtype.name != "bool":     # PyTorch converts alpha to an integer
        alpha = as_integer_scalar("index_add", "alpha", alpha)
    return IndexAdd.apply(input, index, source, dim=dim, alpha=alpha)


# --- masks -------------------------------------------------------------------
class MaskedFill(Op):
    broadcasts = True

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)
        return ctx.xp.where(mask, _like(ctx.xp, value, a), a)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        xp = ctx.xp
        needs_input, _, needs_value = ctx.needs_input_grad
        return (xp.where(mask, 0.0, grad) if needs_input else None, None,
                xp.where(mask, grad, 0.0) if needs_value else None)


def _masked_fill_samples(rng):
    yield Sample((values(rng, (3, 4)), rng.uniform(size=(3, 4)) > 0.5, 0.5), name="number")
    yield Sample((values(rng, (3, 4)), rng.uniform(size=(4,)) > 0.5, values(rng, ())),
                 name="broadcast mask, tensor value")
    yield Sample((values(rng, ()), np.array(True), values(rng, ())), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), rng.uniform(size=(3, 1)) > 0.5, -1.0), name="non-contiguous")


def _largest(dtype):
    """The largest finite value of ``dtype``."""
    return float(np.finfo(dtype.numpy).max) if dtype.is_floating_point else int(np.iinfo(dtype.numpy).max)


@register(lambda a, mask, value: np.where(mask, value, a).astype(a.dtype), _masked_fill_samples)
def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or a 0-d tensor) where the bool ``mask`` (broadcast
    to input's shape) is true.

    The gradient of input is grad where the mask is false; that of value is the sum of
    grad where it is true.

    Example::

        x = vizgrad.tensor([1.0, -2.0, 3.0])
        x.masked_fill(x < 0, 0.0)      # [1., 0., 3.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("masked_fill", "input", input)
    if not isinstance(mask, Tensor):
        raise not_a_tensor("masked_fill", "mask", mask)
    if not isinstance(mask, Tensor) or mask.dtype.name != "bool":
        got = f"dtype {mask.dtype.name}" if isinstance(mask, Tensor) else f"a {type(mask).__name__}"
        raise DTypeError(f"masked_fill: mask must be a bool tensor, got {got}")
    shape = input.shape
    if mask.ndim > len(shape) or any(n not in (1, m) for n, m in zip(mask.shape, shape[len(shape) - mask.ndim:])):
        raise ShapeError(f"masked_fill: mask of shape {format_shape(mask.shape)} cannot be broadcast to input "
                         f"of shape {format_shape(shape)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill: value must be a number or a 0-d tensor, got shape "
                             f"{format_shape(value.shape)}")
    elif not isinstance(value, bool):
        number = as_number("masked_fill", "value", value)
        too_long = isinstance(number, int) and not -2 ** 63 <= number < 2 ** 63   # PyTorch's Scalar is int64
        # (65504, float16's largest, first: most values are smaller, and then no dtype needs looking up)
        if too_long or (abs(number) > 65504 and input.dtype.name != "bool" and math.isfinite(number)
                        and abs(number) > _largest(input.dtype)):
            raise ArgumentError(f"masked_fill: value {value!r} cannot be converted to {input.dtype.name} "
                                "without overflow")
    return MaskedFill.apply(input, mask, value)


# --- diagonals: diagonal, diag_embed, diag, diagflat; index_fill --------------------------------

def _diagonal_reference(x, offset=0, dim1=0, dim2=1):
    return np.diagonal(x, offset, dim1, dim2).copy()


def _diagonal_samples(rng):
    yield Sample((values(rng, (4, 5)),), name="matrix")
    yield Sample((values(rng, (4, 5)), 2), name="above")
    yield Sample((values(rng, (4, 5)), -3), name="below")
    yield Sample((values(rng, (2, 3, 4)), 1, 2, 0), name="batch, dims 2 and 0")
    yield Sample((values(rng, (3, 3)), 4), name="empty")


@register(_diagonal_reference, _diagonal_samples)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the matrices in dims ``dim1`` and ``dim2``, ``offset`` above the main
    one (below when negative), as a new last dim: out[..., k] = x[..., k, k + offset] (a copy,
    where PyTorch gives a view). Its gradient is placed back on that diagonal.

    Example::

        vizgrad.arange(9.0).reshape(3, 3).diagonal()   # tensor([0., 4., 8.])
    """
    from .shape import movedim
    from ..creation import arange
    if not isinstance(input, Tensor):
        raise not_a_tensor("diagonal", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal: input must have at least 2 dims, got shape {format_shape(input.shape)}")
    first, second = check_dim("diagonal", dim1, input.ndim), check_dim("diagonal", dim2, input.ndim)
    if first == second:
        raise ArgumentError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
    offset = as_int("diagonal", "offset", offset)
    matrices = movedim(input, (first, second), (-2, -1))
    rows, cols = matrices.shape[-2:]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    steps = arange(length, device=input.device)
    return matrices[..., steps + max(-offset, 0), steps + max(offset, 0)]


def _diag_embed_reference(x, offset=0, dim1=-2, dim2=-1):
    size = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (size, size), dtype=x.dtype)
    steps = np.arange(x.shape[-1])
    out[..., steps + max(-offset, 0), steps + max(offset, 0)] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _diag_embed_samples(rng):
    yield Sample((values(rng, (2, 3)),), name="batch")
    yield Sample((values(rng, (4,)), -1), name="below")
    yield Sample((values(rng, (2, 3)), 2, 0, 2), name="above, dims 0 and 2")


@register(_diag_embed_reference, _diag_embed_samples)
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices with the last dim of ``input`` on their ``offset`` diagonal and zeros elsewhere,
    in dims ``dim1`` and ``dim2`` of the output (one more dim than the input): the inverse of
    :func:`diagonal`, whose gradient it is.

    Example::

        vizgrad.diag_embed(vizgrad.tensor([1.0, 2.0]))   # tensor([[1., 0.], [0., 2.]])
    """
    from .padding import pad
    from .shape import movedim
    from ..creation import eye
    if not isinstance(input, Tensor):
        raise not_a_tensor("diag_embed", "input", input)
    if input.ndim < 1:
        raise ShapeError("diag_embed: input must have at least 1 dim (the diagonals), got a 0-d tensor")
    first, second = check_dim("diag_embed", dim1, input.ndim + 1), check_dim("diag_embed", dim2, input.ndim + 1)
    if first == second:
        raise ArgumentError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    offset = as_int("diag_embed", "offset", offset)
    size = input.shape[-1]
    from .binary import where
    diagonal_mask = eye(size, dtype=dtypes.bool_, device=input.device)
    # (..., n, n), selected rather than multiplied by the identity: an inf stays one inf
    square = where(diagonal_mask, input.unsqueeze(-1), input.new_zeros(()))
    above, below = max(offset, 0), max(-offset, 0)
    square = pad(square, (above, below, below, above))      # the columns shift right, the rows down
    return movedim(square, (-2, -1), (first, second))


def _diag_reference(x, diagonal=0):
    return np.diag(x, diagonal).copy()


def _diag_samples(rng):
    yield Sample((values(rng, (3,)),), name="vector to matrix")
    yield Sample((values(rng, (3,)), -2), name="vector below")
    yield Sample((values(rng, (3, 4)), 1), name="matrix to vector")


@register(_diag_reference, _diag_samples)
def diag(input, diagonal=0):
    """A 1-D input as the ``diagonal`` of a square matrix (:func:`diag_embed`), a 2-D input's
    ``diagonal`` as a vector (:func:`diagonal`).

    Example::

        vizgrad.diag(vizgrad.tensor([1.0, 2.0]))   # tensor([[1., 0.], [0., 2.]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("diag", "input", input)
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal)
    raise ShapeError(f"diag: input must be 1-D or 2-D, got shape {format_shape(input.shape)}")


@register(lambda x, offset=0: np.diagflat(x, offset), lambda rng: iter([Sample((values(rng, (2, 2)), 1))]))
def diagflat(input, offset=0):
    """The flattened input on the ``offset`` diagonal of a square matrix.

    Example::

        vizgrad.diagflat(vizgrad.tensor([[1.0, 2.0]]))   # tensor([[1., 0.], [0., 2.]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("diagflat", "input", input)
    return diag_embed(input.reshape(-1), offset)


def _index_fill_reference(x, dim, index, value):
    out = x.copy()
    key = [slice(None)] * x.ndim
    key[dim] = index
    out[tuple(key)] = value
    return out


def _index_fill_samples(rng):
    yield Sample((values(rng, (3, 4)), 1, np.array([0, 2]), -1.5), name="columns")
    yield Sample((values(rng, (3, 4)), 0, np.array([1, 1]), 2.0), name="a repeated row")


@register(_index_fill_reference, _index_fill_samples)
def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` (1-D int64) along ``dim`` set to ``value`` (a
    number or a 0-d tensor, which then gets their gradient, converted to input's dtype); the
    filled places pass no gradient to ``input``.

    Example::

        vizgrad.zeros(2, 3).index_fill(1, vizgrad.tensor([0, 2]), 7.0)   # tensor([[7., 0., 7.], [7., 0., 7.]])
    """
    from ..creation import arange
    if not isinstance(input, Tensor):
        raise not_a_tensor("index_fill", "input", input)
    axis = check_dim("index_fill", dim, max(input.ndim, 1))
    if not isinstance(index, Tensor) or index.dtype.name != "int64" or index.ndim > 1:
        raise ArgumentTypeError(f"index_fill: index must be a 1-D int64 tensor, got "
                                f"{index.dtype.name + ' tensor of shape ' + format_shape(index.shape) if isinstance(index, Tensor) else repr(index)}")
    if isinstance(value, Tensor) and value.ndim:
        raise ShapeError(f"index_fill: value must be a number or a 0-d tensor, got shape {format_shape(value.shape)}")
    size = input.shape[axis] if input.ndim else 1
    if index.numel() and not bool(((index >= -size) & (index < size)).all()):
        raise IndexingError(f"index_fill: index {index.tolist()} is out of range for dim {dim} of size {size}")
    chosen = (arange(size, device=input.device).unsqueeze(1) == (index.reshape(1, -1) % max(size, 1))).any(1)
    mask = chosen.reshape((size,) + (1,) * (input.ndim - axis - 1)) if input.ndim else chosen.reshape(())
    return masked_fill(input, mask, value)
