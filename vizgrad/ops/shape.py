"""Shape ops: reshape, transpose, expand, cat, split, pad and their kin.

Every op here is linear: it only moves, copies, drops or sums entries. So each
backward moves the gradient back the other way (reshape it back, permute it back,
slice it out, pad it with zeros, sum the copies) and never needs a saved value: the
op keeps the shapes and dims it needs on ``ctx``.

The ops that PyTorch calls views (reshape, view, flatten, unflatten, squeeze,
unsqueeze, transpose, permute, movedim, expand, broadcast_to, narrow, split, chunk,
unbind) mark their result as a view of the input: they share its version counter
(``Tensor._base``), so an in-place change to either is caught by backward through
the other. reshape and flatten copy, as PyTorch does, when the input's memory allows
no view (that copy is no view); otherwise vizgrad cannot portably tell whether the
backend copied, so it always shares the counter, which only makes the in-place
checks stricter. split, chunk and unbind return all their pieces from one node
(backward joins the pieces' gradients in one op), and, as in PyTorch, those pieces
refuse in-place writes while gradients are recorded. The other ops (repeat, flip,
cat, stack, tril, triu, pad) return new memory.

User mistakes raise :class:`~vizgrad.errors.ShapeError` naming the op and the shapes;
dims out of range raise ``IndexError``, as in PyTorch.
"""

import math
import operator
import warnings

import numpy as np

from .. import dtypes
from ..autograd.engine import sum_to_shape
from ..autograd.function import Op
from ..errors import (ArgumentError, DeviceError, DTypeError, ShapeError, format_shape, ArgumentTypeError,
                      IndexingError, not_a_tensor, as_int, check_dim)
from ..tensor import Tensor
from .registry import Sample, register
from .samples import non_contiguous, values


# --- argument handling ------------------------------------------------------------------

def _ints(op, what, values_):
    try:
        return tuple(operator.index(value) for value in values_)
    except TypeError:
        if not hasattr(values_, "__iter__"):
            raise ArgumentTypeError(f"{op}: {what} must be a sequence of integers, got {values_!r:.40}") from None
        raise ArgumentTypeError(f"{op}: {what} must be integers, got {tuple(values_)!r}") from None


def _int_args(op, what, first, rest):
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` alike: the integers as a tuple."""
    if not rest:
        try:
            return (operator.index(first),)
        except TypeError:
            if not hasattr(first, "__iter__"):
                raise ArgumentTypeError(f"{op}: {what} must be integers or a sequence of integers, "
                                        f"got {type(first).__name__}") from None
            return _ints(op, what, first)
    return _ints(op, what, (first,) + tuple(rest))


def _dim(op, dim, ndim):
    """``dim`` as a non-negative index, or an IndexError naming the valid range."""
    return check_dim(op, dim, ndim)


def _dims(op, dims, ndim):
    """Several dims, each normalized; a dim given twice is an error."""
    result = tuple(_dim(op, dim, ndim) for dim in dims)
    if len(set(result)) != len(result):
        raise ShapeError(f"{op}: dims {tuple(dims)} name the same dim more than once")
    return result


def _view_of(input, out):
    """Mark ``out`` as a view of ``input``: both share the version counter of the root tensor."""
    out._as_view_of(input)
    return out


def _slice_key(ndim, dim, start, stop):
    """A full basic index selecting ``start:stop`` along ``dim`` (portable: one entry per dim)."""
    return (slice(None),) * dim + (slice(start, stop),) + (slice(None),) * (ndim - dim - 1)


def _tensors(op, tensors):
    if isinstance(tensors, Tensor):
        raise ArgumentTypeError(f"{op}: expected a sequence of tensors, got a single Tensor; "
                                f"write {op}([a, b], dim) rather than {op}(a, b)")
    try:
        tensors = list(tensors)
    except TypeError:
        raise ArgumentTypeError(f"{op}: tensors must be a sequence of Tensors, got {type(tensors).__name__}") from None
    if not tensors:
        raise ShapeError(f"{op}: expected a non-empty sequence of tensors")
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"{op}: expected tensors, got a {type(tensor).__name__} at position {position}")
    return tensors


# --- reshape, view, flatten, unflatten ---------------------------------------------------

class Reshape(Op):
    """``layout`` is how PyTorch would have reshaped (it names the node, see
    :mod:`vizgrad.autograd.names`): "view" (a contiguous input), "alias" (a view of a
    non-contiguous input) or "copy" (a contiguous copy of the input, reshaped)."""

    @staticmethod
    def forward(ctx, a, shape, layout="view"):
        ctx.input_shape = tuple(a.shape)
        ctx.layout = layout
        return ctx.xp.reshape(a, shape)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.reshape(grad, ctx.input_shape)


class View(Reshape):
    """Reshape without a copy, under PyTorch's other name (the graph shows ``ViewBackward``)."""

    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = tuple(a.shape)
        try:
            return ctx.xp.reshape(a, shape, copy=False)
        except AttributeError:      # array_api_strict's way of saying a copy would be needed
            raise ValueError("a view would need a copy") from None   # backend seam: Op.apply rewords it

    @staticmethod
    def explain(name, a, shape):
        """Only on the failure path: the strides of ``a`` cannot be seen in ``shape`` without a copy."""
        return ShapeError(f"{name}: view size is not compatible with input tensor's size and stride: a tensor of "
                          f"shape {format_shape(a.shape)} whose elements are not laid out in row-major order "
                          f"(e.g. after transpose, permute or expand) cannot be viewed as {format_shape(shape)} "
                          "without a copy. Use .reshape(...) instead (it copies when it must), or "
                          ".contiguous().view(...).")


def _inferred_shape(op, shape, sizes, verb="reshape", preposition="into"):
    """``sizes`` with its one ``-1`` filled in, checked to hold as many elements as ``shape``."""
    numel = math.prod(shape)
    holes = [i for i, size in enumerate(sizes) if size == -1]
    bad = [size for size in sizes if size < -1]
    what = f"a tensor of shape {format_shape(shape)} ({numel} element{'s' if numel != 1 else ''})"
    if bad:
        raise ShapeError(f"{op}: invalid size {bad[0]} in {format_shape(sizes)}; sizes are "
                         "non-negative, or -1 for the one size to infer")
    if len(holes) > 1:
        raise ShapeError(f"{op}: only one size can be -1 (inferred), got {format_shape(sizes)}")
    known = math.prod(size for size in sizes if size != -1)
    if holes:
        if known == 0:
            raise ShapeError(f"{op}: cannot {verb} {what} {preposition} {format_shape(sizes)}: the other "
                             "sizes multiply to 0, so the -1 could be anything")
        if numel % known:
            raise ShapeError(f"{op}: cannot {verb} {what} {preposition} {format_shape(sizes)}: {numel} is "
                             f"not a multiple of {known}")
        return tuple(numel // known if size == -1 else size for size in sizes)
    if known != numel:
        raise ShapeError(f"{op}: cannot {verb} {what} {preposition} {format_shape(sizes)} "
                         f"({known} element{'s' if known != 1 else ''})")
    return sizes


def _reshape_reference(a, shape, *more):
    return np.reshape(a, (shape,) + more if more or isinstance(shape, int) else tuple(shape))


def _reshape_samples(rng):
    yield Sample((values(rng, (3, 4)), (2, 6)))
    yield Sample((values(rng, (2, 3, 4)), 4, -1), name="varargs with -1")
    yield Sample((values(rng, (3, 4)), -1), name="flatten with -1")
    yield Sample((values(rng, ()), (1, 1)), name="0-d to (1, 1)")
    yield Sample((values(rng, (1, 1)), ()), name="(1, 1) to 0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), (4, 3)), name="non-contiguous")


def _view_samples(rng):
    """Views PyTorch allows: contiguous inputs, and strided ones whose strides fit the shape."""
    for sample in _reshape_samples(rng):
        if sample.name != "non-contiguous":
            yield sample
    yield Sample((non_contiguous(values(rng, (3, 4))), (3, 2, 2)), name="non-contiguous, strides fit")

@register(_reshape_reference, _reshape_samples)
def reshape(input, shape, *more):
    """The same elements, in row-major order, in a new ``shape``; one size may be -1
    (inferred). ``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` are the same. A view when the
    memory allows one (always for a contiguous input), else a copy, as in PyTorch.

    Maths: each output entry is an input entry, so the gradient is the incoming
    gradient reshaped back to the input's shape.

    Example::

        x = vizgrad.arange(6.0)
        x.reshape(2, -1)        # shape (2, 3): [[0, 1, 2], [3, 4, 5]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("reshape", "input", input)
    sizes = _inferred_shape("reshape", input.shape, _int_args("reshape", "shape", shape, more))
    return _reshaped(input, sizes)


def _reshaped(input, sizes):
    """``input`` in the shape ``sizes`` as PyTorch's ``reshape`` makes it: a view when its memory
    allows one, or else a contiguous copy reshaped (two nodes, as PyTorch records them: a copy,
    ``CloneBackward0``, then ``UnsafeViewBackward0``), which is no view of ``input``."""
    array = input._array
    backend = input._backend()
    if backend.is_contiguous(array):
        return _view_of(input, Reshape.apply(input, shape=sizes))
    try:
        backend.xp.reshape(array, sizes, copy=False)
    except (ValueError, AttributeError):   # the Array API's refusal to copy (AttributeError: array_api_compat)
        from .conversion import Contiguous
        return Reshape.apply(Contiguous.apply(input), shape=sizes, layout="copy")
    return _view_of(input, Reshape.apply(input, shape=sizes, layout="alias"))


@register(_reshape_reference, _view_samples)
def view(input, shape, *more):
    """``input`` seen with a new ``shape`` (one size may be -1), sharing its memory; the
    element count must stay the same and, as in PyTorch, the shape must be compatible with
    the input's strides (a transposed tensor cannot be flattened without a copy: that
    raises a ShapeError suggesting :func:`reshape`). Recorded as ``ViewBackward``.

    Maths: the gradient is the incoming gradient viewed back in the input's shape.

    Example::

        vizgrad.zeros(4, 3).view(2, 6).shape     # (2, 6)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("view", "input", input)
    sizes = _inferred_shape("view", input.shape, _int_args("view", "shape", shape, more),
                            verb="view", preposition="as")
    return _view_of(input, View.apply(input, shape=sizes))


def _flatten_reference(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    start, end = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:start] + (-1,) + a.shape[end + 1:])


def _flatten_samples(rng):
    yield Sample((values(rng, (2, 3, 4)),), name="all dims")
    yield Sample((values(rng, (2, 3, 4)),), {"start_dim": 1})
    yield Sample((values(rng, (2, 3, 4, 2)),), {"start_dim": -3, "end_dim": -2}, name="negative dims")
    yield Sample((values(rng, ()),), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))),), name="non-contiguous")


@register(_flatten_reference, _flatten_samples)
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim`` to ``end_dim`` (inclusive) into one; a 0-d tensor becomes
    shape (1,). When ``start_dim == end_dim`` the input is returned as it is. A view when
    the memory allows one, else a copy (as :func:`reshape`).

    Maths: a reshape; the gradient is reshaped back.

    Example::

        vizgrad.zeros(2, 3, 4).flatten(1).shape  # (2, 12)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("flatten", "input", input)
    shape = input.shape
    if not shape:
        for dim in (start_dim, end_dim):
            _dim("flatten", dim, 0)   # only 0 and -1 are valid
        return _view_of(input, Reshape.apply(input, shape=(1,)))
    start, end = _dim("flatten", start_dim, len(shape)), _dim("flatten", end_dim, len(shape))
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"(tensor of shape {format_shape(shape)})")
    if start == end:
        return input
    return _reshaped(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


def _unflatten_reference(a, dim, sizes):
    dim = dim % a.ndim
    sizes = tuple(sizes)
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        sizes = tuple(a.shape[dim] // known if s == -1 else s for s in sizes)
    return a.reshape(a.shape[:dim] + sizes + a.shape[dim + 1:])


def _unflatten_samples(rng):
    yield Sample((values(rng, (3, 12)), 1, (3, 4)))
    yield Sample((values(rng, (3, 12)), -1, (2, -1, 3)), name="negative dim, -1 size")
    yield Sample((values(rng, (6,)), 0, (6, 1)))
    yield Sample((non_contiguous(values(rng, (4, 3))), 0, (2, 2)), name="non-contiguous")


@register(_unflatten_reference, _unflatten_samples)
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into several dims of the given ``sizes`` (one may be -1);
    the inverse of :func:`flatten`.

    Maths: a reshape; the gradient is reshaped back.

    Example::

        vizgrad.zeros(2, 12).unflatten(1, (3, 4)).shape   # (2, 3, 4)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("unflatten", "input", input)
    shape = input.shape
    if not shape:
        raise ShapeError("unflatten: a 0-d tensor has no dim to unflatten")
    dim_ = _dim("unflatten", dim, len(shape))
    sizes = _int_args("unflatten", "sizes", sizes, ())
    if not sizes:
        raise ShapeError("unflatten: sizes must not be empty")
    try:
        sizes = _inferred_shape("unflatten", (shape[dim_],), sizes)
    except ShapeError:
        raise ShapeError(f"unflatten: sizes {format_shape(sizes)} do not fit dim {dim} of size "
                         f"{shape[dim_]} (tensor of shape {format_shape(shape)}); their product must be "
                         f"{shape[dim_]}, with at most one -1") from None
    return _view_of(input, Reshape.apply(input, shape=shape[:dim_] + sizes + shape[dim_ + 1:]))


# --- squeeze, unsqueeze ------------------------------------------------------------------

class Squeeze(Op):
    """``overload`` is PyTorch's: 0 for ``squeeze()``, 1 for ``squeeze(dim)``, 2 for a tuple of dims."""

    @staticmethod
    def forward(ctx, a, dims, overload):
        ctx.input_shape = tuple(a.shape)
        ctx.overload = overload
        return ctx.xp.squeeze(a, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.reshape(grad, ctx.input_shape)


def _squeeze_reference(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return np.squeeze(a, axis=tuple(d for d in dims if a.ndim and a.shape[d] == 1))


def _squeeze_samples(rng):
    yield Sample((values(rng, (1, 3, 1)),), name="all size-1 dims")
    yield Sample((values(rng, (1, 3, 1)),), {"dim": 0})
    yield Sample((values(rng, (1, 3, 1)),), {"dim": -1}, name="negative dim")
    yield Sample((values(rng, (1, 3, 1)),), {"dim": (0, 2)}, name="tuple of dims")
    yield Sample((values(rng, (1, 3, 1)),), {"dim": 1}, name="a size-3 dim: no-op")
    yield Sample((values(rng, ()),), name="0-d")
    yield Sample((values(rng, ()),), {"dim": 0}, name="0-d dim 0")
    yield Sample((non_contiguous(values(rng, (4, 1))),), name="non-contiguous")


@register(_squeeze_reference, _squeeze_samples)
def squeeze(input, dim=None):
    """Remove size-1 dims: all of them, or those among ``dim`` (an int or a tuple).
    Naming a dim whose size is not 1 is allowed and leaves it, as in PyTorch.

    Maths: a reshape; the gradient is reshaped back (the dims reappear).

    Example::

        vizgrad.zeros(1, 3, 1).squeeze().shape       # (3,)
        vizgrad.zeros(1, 3, 1).squeeze(0).shape      # (3, 1)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("squeeze", "input", input)
    shape = input.shape
    if dim is None:
        dims = tuple(i for i, size in enumerate(shape) if size == 1)
        overload = 0
    else:
        dims = _dims("squeeze", _int_args("squeeze", "dim", dim, ()), len(shape))
        dims = tuple(d for d in dims if shape and shape[d] == 1)
        overload = 2 if isinstance(dim, (tuple, list)) else 1
    return _view_of(input, Squeeze.apply(input, dims=dims, overload=overload))


class Unsqueeze(Op):
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return ctx.xp.expand_dims(a, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.squeeze(grad, axis=ctx.dim)


def _unsqueeze_samples(rng):
    yield Sample((values(rng, (3, 4)), 0))
    yield Sample((values(rng, (3, 4)), 2), name="after the last dim")
    yield Sample((values(rng, (3, 4)), -1), name="negative dim")
    yield Sample((values(rng, ()), 0), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), 1), name="non-contiguous")


@register(np.expand_dims, _unsqueeze_samples)
def unsqueeze(input, dim):
    """Insert a size-1 dim at position ``dim`` (from ``-ndim-1`` to ``ndim``).

    Maths: a reshape; the gradient has that dim squeezed away.

    Example::

        vizgrad.zeros(3).unsqueeze(0).shape      # (1, 3)
        vizgrad.zeros(3).unsqueeze(-1).shape     # (3, 1)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("unsqueeze", "input", input)
    dim = _dim("unsqueeze", dim, input.ndim + 1)
    return _view_of(input, Unsqueeze.apply(input, dim=dim))


# --- transpose, permute, movedim ---------------------------------------------------------

class Transpose(Op):
    @staticmethod
    def forward(ctx, a, dim0, dim1):
        order = list(range(a.ndim))
        if order:
            order[dim0], order[dim1] = order[dim1], order[dim0]
        ctx.order = tuple(order)
        return ctx.xp.permute_dims(a, ctx.order)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.permute_dims(grad, ctx.order)   # a swap is its own inverse


class MatrixTranspose(Transpose):
    """:meth:`Tensor.t`: a transpose recorded under PyTorch's name for it, ``TBackward0``."""


def _transpose_reference(a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1) if a.ndim else a


def _transpose_samples(rng):
    yield Sample((values(rng, (3, 4)), 0, 1))
    yield Sample((values(rng, (2, 3, 4)), -1, 0), name="negative dim")
    yield Sample((values(rng, (2, 3, 4)), 1, 1), name="same dim")
    yield Sample((values(rng, ()), 0, -1), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), 1, 0), name="non-contiguous")


@register(_transpose_reference, _transpose_samples, aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    """Swap dims ``dim0`` and ``dim1`` (a view). Also ``swapaxes`` and ``swapdims``.

    Maths: out[..i..j..] = input[..j..i..]; the gradient is transposed back.

    Example::

        vizgrad.zeros(2, 3, 4).transpose(0, 2).shape    # (4, 3, 2)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("transpose", "input", input)
    ndim = input.ndim
    dim0, dim1 = _dim("transpose", dim0, ndim), _dim("transpose", dim1, ndim)
    return _view_of(input, Transpose.apply(input, dim0=dim0, dim1=dim1))


class Permute(Op):
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return ctx.xp.permute_dims(a, dims)

    @staticmethod
    def backward(ctx, grad):
        inverse = tuple(sorted(range(len(ctx.dims)), key=ctx.dims.__getitem__))
        return ctx.xp.permute_dims(grad, inverse)


def _permute_reference(a, dims, *more):
    return np.transpose(a, (dims,) + more if more or isinstance(dims, int) else tuple(dims))


def _permute_samples(rng):
    yield Sample((values(rng, (2, 3, 4)), (2, 0, 1)))
    yield Sample((values(rng, (2, 3, 4)), -1, 0, 1), name="varargs, negative dim")
    yield Sample((values(rng, ()), ()), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), (1, 0)), name="non-contiguous")


@register(_permute_reference, _permute_samples)
def permute(input, dims, *more):
    """Reorder the dims: output dim ``i`` is input dim ``dims[i]`` (a view).
    ``x.permute(2, 0, 1)`` and ``x.permute((2, 0, 1))`` are the same.

    Maths: the gradient is permuted by the inverse permutation.

    Example::

        vizgrad.zeros(2, 3, 4).permute(2, 0, 1).shape   # (4, 2, 3)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("permute", "input", input)
    shape = input.shape
    dims = _int_args("permute", "dims", dims, more)
    if len(dims) != len(shape):
        raise ShapeError(f"permute: dims {dims} must name each of the {len(shape)} dims of a tensor of "
                         f"shape {format_shape(shape)} once")
    return _view_of(input, Permute.apply(input, dims=_dims("permute", dims, len(shape))))


def _movedim_samples(rng):
    yield Sample((values(rng, (2, 3, 4)), 0, -1))
    yield Sample((values(rng, (2, 3, 4)), (0, 1), (2, 0)), name="tuples")
    yield Sample((non_contiguous(values(rng, (3, 4))), 1, 0), name="non-contiguous")


@register(np.moveaxis, _movedim_samples, aliases=("moveaxis",))
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or equal-length tuples);
    the other dims keep their order. Also ``moveaxis``.

    Maths: a permutation; the gradient is permuted back.

    Example::

        vizgrad.zeros(2, 3, 4).movedim(0, -1).shape     # (3, 4, 2)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("movedim", "input", input)
    ndim = input.ndim
    source = _dims("movedim", _int_args("movedim", "source", source, ()), ndim)
    destination = _dims("movedim", _int_args("movedim", "destination", destination, ()), ndim)
    if len(source) != len(destination):
        raise ShapeError(f"movedim: source {source} and destination {destination} must have the same length")
    order = [d for d in range(ndim) if d not in source]
    for target, dim in sorted(zip(destination, source)):
        order.insert(target, dim)
    return _view_of(input, Permute.apply(input, dims=tuple(order)))


# --- expand, broadcast_to, repeat --------------------------------------------------------

class Expand(Op):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = tuple(a.shape)
        return ctx.xp.broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, grad):
        return sum_to_shape(grad, ctx.input_shape, ctx.xp)


def _expanded_shape(op, shape, sizes):
    """The shape ``sizes`` asks for, with -1 keeping a dim, checked against ``shape``."""
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ShapeError(f"{op}: the target shape {format_shape(sizes)} has fewer dims than the tensor "
                         f"of shape {format_shape(shape)}")
    result = []
    for position, size in enumerate(sizes):
        if position < lead:
            if size < 0:
                raise ShapeError(f"{op}: the size {size} of the new leading dim {position} must be "
                                 "non-negative (-1 only keeps an existing dim)")
            result.append(size)
            continue
        existing = shape[position - lead]
        if size == -1 or size == existing:
            result.append(existing)
        elif size < 0:
            raise ShapeError(f"{op}: invalid size {size} in {format_shape(sizes)}; sizes are non-negative, "
                             "or -1 to keep a dim")
        elif existing == 1:
            result.append(size)
        else:
            raise ShapeError(f"{op}: the expanded size {size} must match the existing size {existing} at "
                             f"dim {position - lead} (tensor of shape {format_shape(shape)}) unless that "
                             "size is 1")
    return tuple(result)


def _expand_reference(a, *sizes):
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    lead = len(sizes) - a.ndim
    return np.broadcast_to(a, tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)))


def _expand_samples(rng):
    yield Sample((values(rng, (3, 1)), 3, 4))
    yield Sample((values(rng, (3, 1)), 2, -1, 5), name="new leading dim, -1 keeps")
    yield Sample((values(rng, (1,)), (4,)), name="tuple")
    yield Sample((values(rng, ()), 3, 2), name="0-d")
    yield Sample((values(rng, (2, 3)), 2, 3), name="same shape")
    yield Sample((non_contiguous(values(rng, (1, 4))), 3, 4), name="non-contiguous")


@register(_expand_reference, _expand_samples)
def expand(input, *sizes):
    """``input`` broadcast to ``sizes`` without copying (a view): size-1 dims grow,
    -1 keeps a dim, new dims may be added in front.

    Maths: each input entry is read by every output entry it was broadcast to, so
    its gradient is the sum of theirs (summed over the broadcast dims).

    Example::

        vizgrad.tensor([[1.0], [2.0]]).expand(2, 3)    # [[1, 1, 1], [2, 2, 2]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("expand", "input", input)
    if not sizes:
        raise ArgumentTypeError("expand: missing the target sizes")
    sizes = _expanded_shape("expand", input.shape, _int_args("expand", "sizes", sizes[0], sizes[1:]))
    return _view_of(input, Expand.apply(input, shape=sizes))


def _expand_as_samples(rng):
    yield Sample((values(rng, (3, 1)), values(rng, (2, 3, 4))))
    yield Sample((values(rng, ()), values(rng, (2,))), name="0-d")


@register(lambda a, other: np.broadcast_to(a, other.shape), _expand_as_samples)
def expand_as(input, other):
    """``input`` expanded to ``other``'s shape (see :func:`expand`); ``other`` gets no gradient.

    Example::

        vizgrad.zeros(3, 1).expand_as(vizgrad.zeros(2, 3, 4)).shape     # (2, 3, 4)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("expand_as", "input", input)
    if not isinstance(other, Tensor):
        raise not_a_tensor("expand_as", "other", other)
    sizes = _expanded_shape("expand_as", input.shape, tuple(other.shape))
    return _view_of(input, Expand.apply(input, shape=sizes))


def _broadcast_to_samples(rng):
    yield Sample((values(rng, (3, 1)), (2, 3, 4)))
    yield Sample((values(rng, (4,)), (3, -1)), name="-1 keeps a dim")
    yield Sample((values(rng, ()), (3,)), name="0-d")
    yield Sample((non_contiguous(values(rng, (1, 3))), (2, 3)), name="non-contiguous")


@register(_expand_reference, _broadcast_to_samples)
def broadcast_to(input, shape):
    """``input`` broadcast to ``shape`` (a view); the same as ``input.expand(shape)``.

    Maths: the gradient is summed over the broadcast dims.

    Example::

        vizgrad.broadcast_to(vizgrad.arange(3.0), (2, 3))   # [[0, 1, 2], [0, 1, 2]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("broadcast_to", "input", input)
    sizes = _expanded_shape("broadcast_to", input.shape, _int_args("broadcast_to", "shape", shape, ()))
    return _view_of(input, Expand.apply(input, shape=sizes))


class Repeat(Op):
    @staticmethod
    def forward(ctx, a, repeats):
        ctx.input_shape = tuple(a.shape)
        ctx.padded = (1,) * (len(repeats) - a.ndim) + ctx.input_shape
        ctx.repeats = repeats
        return ctx.xp.tile(ctx.xp.reshape(a, ctx.padded), repeats)

    @staticmethod
    def backward(ctx, grad):
        # output dim i is repeats[i] copies of input dim i laid end to end: split it into
        # (copy, position) and add up the copies
        pairs = tuple(n for pair in zip(ctx.repeats, ctx.padded) for n in pair)
        grad = ctx.xp.reshape(grad, pairs)
        if pairs:
            grad = ctx.xp.sum(grad, axis=tuple(range(0, len(pairs), 2)))
        return ctx.xp.reshape(grad, ctx.input_shape)


def _repeat_reference(a, *repeats):
    repeats = tuple(repeats[0]) if len(repeats) == 1 and not isinstance(repeats[0], int) else repeats
    return np.tile(a, repeats)


def _repeat_samples(rng):
    yield Sample((values(rng, (2, 3)), 2, 2))
    yield Sample((values(rng, (2, 3)), (1, 3, 2)), name="new leading dim")
    yield Sample((values(rng, (3,)), 2, 1), name="1-d to 2-d")
    yield Sample((values(rng, ()), 3), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 2))), 2, 1), name="non-contiguous")


@register(_repeat_reference, _repeat_samples)
def repeat(input, *repeats):
    """Tile ``input``: dim ``i`` is repeated ``repeats[i]`` times end to end (PyTorch's
    ``repeat``, NumPy's ``tile``). Extra leading repeats add new dims. A copy.

    Maths: out has ``repeats[i]`` copies of each entry along dim ``i``; the gradient of an
    entry is the sum of the gradients of its copies.

    Example::

        vizgrad.tensor([1.0, 2.0]).repeat(2)       # [1, 2, 1, 2]
        vizgrad.tensor([1.0, 2.0]).repeat(2, 1)    # [[1, 2], [1, 2]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("repeat", "input", input)
    if not repeats:
        raise ArgumentTypeError("repeat: missing the number of repeats")
    repeats = _int_args("repeat", "repeats", repeats[0], repeats[1:])
    if len(repeats) < input.ndim:
        raise ShapeError(f"repeat: repeats {repeats} for a tensor of shape {format_shape(input.shape)}; "
                         f"give at least one per dim ({input.ndim})")
    if any(r < 0 for r in repeats):
        raise ShapeError(f"repeat: repeats must be non-negative, got {repeats}")
    return Repeat.apply(input, repeats=repeats)


# --- flip, tril, triu --------------------------------------------------------------------

class Flip(Op):
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        flipped = ctx.xp.flip(a, axis=dims) if dims else a
        return ctx.xp.asarray(flipped, copy=True)   # NumPy flips as a view; PyTorch copies

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.flip(grad, axis=ctx.dims) if ctx.dims else grad


def _flip_reference(a, dims, *more):
    dims = (dims,) + more if more or isinstance(dims, int) else tuple(dims)
    return np.flip(a, axis=dims) if dims else a


def _flip_samples(rng):
    yield Sample((values(rng, (3, 4)), (0,)))
    yield Sample((values(rng, (2, 3, 4)), (0, 2)), name="two dims")
    yield Sample((values(rng, (3, 4)), -1), name="int, negative dim")
    yield Sample((values(rng, ()), ()), name="0-d")
    yield Sample((non_contiguous(values(rng, (3, 4))), (0, 1)), name="non-contiguous")


@register(_flip_reference, _flip_samples)
def flip(input, dims, *more):
    """Reverse the order of entries along ``dims`` (an int or a tuple; ``x.flip(0, 1)``
    works too). A copy, as in PyTorch.

    Maths: a permutation of entries; the gradient is flipped back.

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0]).flip(0)    # [3, 2, 1]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("flip", "input", input)
    dims = _dims("flip", _int_args("flip", "dims", dims, more), input.ndim)
    return Flip.apply(input, dims=dims)


class Tril(Op):
    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return ctx.xp.tril(a, k=diagonal)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.tril(grad, k=ctx.diagonal)


class Triu(Op):
    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        return ctx.xp.triu(a, k=diagonal)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.triu(grad, k=ctx.diagonal)


def _triangle_samples(rng):
    yield Sample((values(rng, (4, 4)),))
    yield Sample((values(rng, (3, 5)),), {"diagonal": 1})
    yield Sample((values(rng, (2, 3, 4)),), {"diagonal": -1}, name="batched, diagonal -1")
    yield Sample((non_contiguous(values(rng, (4, 3))),), name="non-contiguous")


def _triangle_check(op, input):
    if input.ndim < 2:
        raise ShapeError(f"{op}: needs a tensor of at least 2 dims (a matrix or a batch of them), "
                         f"got shape {format_shape(input.shape)}")


@register(lambda a, diagonal=0: np.tril(a, diagonal), _triangle_samples)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims: entries with ``j - i <= diagonal`` kept,
    the others zero.

    Maths: a mask; the gradient is masked the same way (``tril`` of the gradient).

    Example::

        vizgrad.tril(vizgrad.ones(3, 3))   # [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("tril", "input", input)
    _triangle_check("tril", input)
    return Tril.apply(input, diagonal=as_int("tril", "diagonal", diagonal))


@register(lambda a, diagonal=0: np.triu(a, diagonal), _triangle_samples)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims: entries with ``j - i >= diagonal`` kept,
    the others zero.

    Maths: a mask; the gradient is ``triu`` of the gradient.

    Example::

        vizgrad.triu(vizgrad.ones(3, 3), diagonal=1)   # [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("triu", "input", input)
    _triangle_check("triu", input)
    return Triu.apply(input, diagonal=as_int("triu", "diagonal", diagonal))


# --- cat, stack --------------------------------------------------------------------------

class Cat(Op):
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        ctx.sizes = tuple(a.shape[dim] for a in arrays)
        return ctx.xp.concat(list(arrays), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        grads, start = [], 0
        for size, needed in zip(ctx.sizes, ctx.needs_input_grad):
            grads.append(grad[_slice_key(grad.ndim, ctx.dim, start, start + size)] if needed else None)
            start += size
        return tuple(grads)


def _cat_samples(rng):
    yield Sample(([values(rng, (2, 3)), values(rng, (4, 3))],))
    yield Sample(([values(rng, (2, 3)), values(rng, (2, 1)), values(rng, (2, 2))],), {"dim": -1},
                 name="three, negative dim")
    yield Sample(([values(rng, (3,)), values(rng, (2,))],), name="1-d")
    yield Sample(([values(rng, (2, 3, 2))],), {"dim": 1}, name="one tensor")
    yield Sample(([non_contiguous(values(rng, (3, 4))), values(rng, (3, 2))],), {"dim": 1},
                 name="non-contiguous")


def _cat(op, tensors, dim):
    tensors = _tensors(op, tensors)
    first = tensors[0].shape
    for position, tensor in enumerate(tensors):
        if not tensor.shape:
            raise ShapeError(f"{op}: a 0-d tensor (position {position}) cannot be concatenated; "
                             "use stack, or unsqueeze it first")
    dim_ = _dim(op, dim, len(first))
    for tensor in tensors[1:]:
        shape = tensor.shape
        if len(shape) != len(first) or any(a != b for i, (a, b) in enumerate(zip(first, shape)) if i != dim_):
            raise ShapeError(f"{op}: tensors must match in every dim except dim {dim}; got "
                             f"{format_shape(first)} and {format_shape(shape)}")
    return Cat.apply(*_in_common_dtype(tensors), dim=dim_)


def _in_common_dtype(tensors):
    """``tensors`` cast to the dtype PyTorch's cat and stack promote them to (int64 with
    float32 is float32), when their dtypes differ."""
    first = tensors[0].dtype
    if all(tensor.dtype is first for tensor in tensors):
        return tensors
    target = dtypes.result_type_of([(tensor.dtype, False) for tensor in tensors])
    return [tensor if tensor.dtype is target else tensor.to(target) for tensor in tensors]


@register(lambda tensors, dim=0: np.concatenate(tensors, axis=dim), _cat_samples, method=False,
          aliases=("concat", "concatenate"))
def cat(tensors, dim=0):
    """Join tensors end to end along an existing dim ``dim``; the others must match.
    Also ``concat`` and ``concatenate``.

    Maths: the gradient is sliced back into one piece per input.

    Example::

        a, b = vizgrad.zeros(2, 3), vizgrad.ones(1, 3)
        vizgrad.cat([a, b]).shape          # (3, 3)
    """
    return _cat("cat", tensors, dim)


class Stack(Op):
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        return ctx.xp.stack(list(arrays), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        dim = ctx.dim
        return tuple(ctx.xp.squeeze(grad[_slice_key(grad.ndim, dim, i, i + 1)], axis=dim) if needed else None
                     for i, needed in enumerate(ctx.needs_input_grad))


def _stack_samples(rng):
    yield Sample(([values(rng, (2, 3)) for _ in range(3)],))
    yield Sample(([values(rng, (2, 3)), values(rng, (2, 3))],), {"dim": -1}, name="negative dim")
    yield Sample(([values(rng, (2, 3)), values(rng, (2, 3))],), {"dim": 1})
    yield Sample(([values(rng, ()), values(rng, ())],), name="0-d")
    yield Sample(([non_contiguous(values(rng, (3, 4))), values(rng, (3, 4))],), {"dim": 2},
                 name="non-contiguous")


@register(lambda tensors, dim=0: np.stack(tensors, axis=dim), _stack_samples, method=False)
def stack(tensors, dim=0):
    """Join same-shape tensors along a new dim ``dim`` (from ``-ndim-1`` to ``ndim``).

    Maths: the gradient is split along that dim back into one piece per input.

    Example::

        vizgrad.stack([vizgrad.zeros(3), vizgrad.ones(3)]).shape           # (2, 3)
        vizgrad.stack([vizgrad.zeros(3), vizgrad.ones(3)], dim=1).shape    # (3, 2)
    """
    tensors = _tensors("stack", tensors)
    first = tensors[0].shape
    for position, tensor in enumerate(tensors[1:], 1):
        if tensor.shape != first:
            raise ShapeError(f"stack: tensors must all have the same shape; got {format_shape(first)} at "
                             f"position 0 and {format_shape(tensor.shape)} at position {position}")
    return Stack.apply(*_in_common_dtype(tensors), dim=_dim("stack", dim, len(first) + 1))


def _at_least_2d(op, input):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must have at least 2 dims, got shape {format_shape(input.shape)}")


def _matrix_samples(rng):
    yield Sample((values(rng, (2, 3)),), name="2-d")
    yield Sample((values(rng, (2, 3, 4)),), name="3-d")


@register(np.fliplr, _matrix_samples)
def fliplr(input):
    """``input`` with dim 1 reversed (left to right); at least 2-d. A copy, as in PyTorch.

    Example::

        vizgrad.tensor([[1, 2, 3]]).fliplr()     # tensor([[3, 2, 1]])
    """
    _at_least_2d("fliplr", input)
    return flip(input, (1,))


@register(np.flipud, lambda rng: iter([Sample((values(rng, (3,)),), name="1-d"),
                                       Sample((values(rng, (3, 2)),), name="2-d")]))
def flipud(input):
    """``input`` with dim 0 reversed (upside down); at least 1-d. A copy, as in PyTorch.

    Example::

        vizgrad.tensor([[1], [2]]).flipud()      # tensor([[2], [1]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("flipud", "input", input)
    if input.ndim < 1:
        raise ShapeError("flipud: input must have at least 1 dim, got a 0-d tensor")
    return flip(input, (0,))


def _rot90_samples(rng):
    yield Sample((values(rng, (2, 3)),), name="once")
    yield Sample((values(rng, (2, 3)), 2), name="twice")
    yield Sample((values(rng, (2, 3, 4)), -1, (1, 2)), name="backwards, other dims")
    yield Sample((values(rng, (2, 3)), 4), name="four times")


@register(lambda a, k=1, dims=(0, 1): np.rot90(a, k, dims), _rot90_samples)
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90° ``k`` times in the plane of ``dims``, from the first dim toward the second
    (negative ``k`` the other way).

    Example::

        vizgrad.arange(6).reshape(2, 3).rot90()    # tensor([[2, 5], [1, 4], [0, 3]])
    """
    _at_least_2d("rot90", input)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else dims
    if not isinstance(dims, tuple) or len(dims) != 2:
        raise ArgumentError(f"rot90: dims must be a pair of dims, got {dims!r}")
    first, second = (_dim("rot90", d, input.ndim) for d in dims)
    if first == second:
        raise ArgumentError(f"rot90: dims must differ, got {dims!r}")
    k = as_int("rot90", "k", k) % 4
    if k == 0:
        return input.clone()
    if k == 2:
        return flip(input, (first, second))
    if k == 1:
        return transpose(flip(input, (second,)), first, second)
    return flip(transpose(input, first, second), (second,))


# --- hstack, vstack, dstack, column_stack, atleast_Nd, block_diag --------------------------

def _at_least_shape(shape, ndim):
    """NumPy's and PyTorch's rule: 0-d gives (1,)*ndim; (n,) gives (1, n) or (1, n, 1); (m, n) gives (m, n, 1)."""
    if len(shape) >= ndim:
        return shape
    if not shape:
        return (1,) * ndim
    if ndim == 2:
        return (1, *shape)
    return (1, shape[0], 1) if len(shape) == 1 else (*shape, 1)


def _at_least(op, ndim, tensors):
    """atleast_1d/2d/3d: one tensor gives one, several (or a sequence) a tuple."""
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    tensors = _tensors(op, tensors[0] if len(tensors) == 1 and not single else tensors)
    shaped = tuple(t if t.ndim >= ndim else t.reshape(_at_least_shape(tuple(t.shape), ndim)) for t in tensors)
    return shaped[0] if single else shaped


def _at_least_samples(rng):
    yield Sample((values(rng, ()),), name="0-d")
    yield Sample((values(rng, (3,)),), name="1-d")
    yield Sample((values(rng, (2, 3)),), name="2-d")
    yield Sample((values(rng, (2, 3, 2)),), name="3-d")
    yield Sample((values(rng, ()), values(rng, (4,)), values(rng, (2, 2))), name="several")


def _np_at_least(function):
    return lambda *arrays: function(*arrays) if len(arrays) > 1 else function(arrays[0])


@register(_np_at_least(np.atleast_1d), _at_least_samples, method=False)
def atleast_1d(*tensors):
    """``tensors`` with at least one dim (a 0-d tensor becomes shape (1,)); a tuple for several.

    Example::

        vizgrad.atleast_1d(vizgrad.tensor(1.0)).shape     # (1,)
    """
    return _at_least("atleast_1d", 1, tensors)


@register(_np_at_least(np.atleast_2d), _at_least_samples, method=False)
def atleast_2d(*tensors):
    """``tensors`` with at least two dims: 0-d becomes (1, 1), (n,) becomes (1, n).

    Example::

        vizgrad.atleast_2d(vizgrad.ones(3)).shape     # (1, 3)
    """
    return _at_least("atleast_2d", 2, tensors)


@register(_np_at_least(np.atleast_3d), _at_least_samples, method=False)
def atleast_3d(*tensors):
    """``tensors`` with at least three dims: 0-d becomes (1, 1, 1), (n,) (1, n, 1), (m, n) (m, n, 1).

    Example::

        vizgrad.atleast_3d(vizgrad.ones(2, 3)).shape     # (2, 3, 1)
    """
    return _at_least("atleast_3d", 3, tensors)


def _stack_like_samples(rng):
    yield Sample(([values(rng, (3,)), values(rng, (2,))],), name="1-d")
    yield Sample(([values(rng, (2, 3)), values(rng, (2, 1))],), name="2-d")
    yield Sample(([values(rng, (2, 3, 2)), values(rng, (2, 1, 2))],), name="3-d")


def _depth_stack_samples(rng):
    yield Sample(([values(rng, (3,)), values(rng, (3,))],), name="1-d")
    yield Sample(([values(rng, (2, 3)), values(rng, (2, 3))],), name="2-d")
    yield Sample(([values(rng, (2, 3, 2)), values(rng, (2, 3, 1))],), name="3-d")


def _row_stack_samples(rng):
    yield Sample(([values(rng, (3,)), values(rng, (3,))],), name="1-d")
    yield Sample(([values(rng, (2, 3)), values(rng, (1, 3))],), name="2-d")


def _column_stack_samples(rng):
    yield Sample(([values(rng, (3,)), values(rng, (3,))],), name="1-d")
    yield Sample(([values(rng, (3,)), values(rng, (3, 2))],), name="1-d and 2-d")
    yield Sample(([values(rng, ()), values(rng, (1, 2))],), name="0-d")


@register(np.hstack, _stack_like_samples, method=False)
def hstack(tensors):
    """Join tensors horizontally: along dim 0 for 1-d tensors, dim 1 otherwise (0-d ones count as (1,)).

    Example::

        vizgrad.hstack([vizgrad.zeros(2, 1), vizgrad.ones(2, 2)]).shape     # (2, 3)
    """
    tensors = atleast_1d(*_tensors("hstack", tensors))
    tensors = tensors if isinstance(tensors, tuple) else (tensors,)
    return _cat("hstack", tensors, 0 if tensors[0].ndim == 1 else 1)


@register(np.vstack, _row_stack_samples, method=False, aliases=("row_stack",))
def vstack(tensors):
    """Join tensors vertically (along dim 0), 1-d ones as rows. Also ``row_stack``.

    Example::

        vizgrad.vstack([vizgrad.zeros(3), vizgrad.ones(3)]).shape     # (2, 3)
    """
    tensors = atleast_2d(*_tensors("vstack", tensors))
    return _cat("vstack", tensors if isinstance(tensors, tuple) else (tensors,), 0)


@register(np.dstack, _depth_stack_samples, method=False)
def dstack(tensors):
    """Join tensors in depth (along dim 2), each viewed as at least 3-d.

    Example::

        vizgrad.dstack([vizgrad.zeros(2, 3), vizgrad.ones(2, 3)]).shape     # (2, 3, 2)
    """
    tensors = atleast_3d(*_tensors("dstack", tensors))
    return _cat("dstack", tensors if isinstance(tensors, tuple) else (tensors,), 2)


@register(np.column_stack, _column_stack_samples, method=False)
def column_stack(tensors):
    """Join tensors as columns (along dim 1): 0-d and 1-d tensors become columns (n, 1).

    Example::

        vizgrad.column_stack([vizgrad.zeros(3), vizgrad.ones(3)]).shape     # (3, 2)
    """
    tensors = [t.reshape(t.numel(), 1) if t.ndim < 2 else t for t in _tensors("column_stack", tensors)]
    return _cat("column_stack", tensors, 1)


def _block_diag_reference(*arrays):
    blocks = [np.atleast_2d(a) for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    row = col = 0
    for block in blocks:
        out[row:row + block.shape[0], col:col + block.shape[1]] = block
        row, col = row + block.shape[0], col + block.shape[1]
    return out


def _block_diag_samples(rng):
    yield Sample((values(rng, (2, 2)), values(rng, (1, 3))), name="matrices")
    yield Sample((values(rng, ()), values(rng, (3,)), values(rng, (2, 1))), name="0-d, 1-d and 2-d")


@register(_block_diag_reference, _block_diag_samples, method=False)
def block_diag(*tensors):
    """The block-diagonal matrix of ``tensors`` (0-d ones are 1x1 blocks, 1-d ones rows), zeros elsewhere.

    Example::

        vizgrad.block_diag(vizgrad.ones(2, 2), vizgrad.tensor([[5.0]]))    # 3x3, 1s then 5 on the diagonal
    """
    blocks = []
    for position, tensor in enumerate(_tensors("block_diag", tensors)):
        if tensor.ndim > 2:
            raise ShapeError(f"block_diag: every tensor must have at most 2 dims; the one at position {position} "
                             f"has shape {format_shape(tensor.shape)}")
        blocks.append(tensor.reshape(1, -1) if tensor.ndim < 2 else tensor)     # 0-d: 1x1, 1-d: a row
    width = sum(block.shape[1] for block in blocks)
    rows, left = [], 0
    for block in blocks:
        rows.append(pad(block, (left, width - left - block.shape[1])))
        left += block.shape[1]
    return _cat("block_diag", rows, 0)


# --- broadcast_tensors, meshgrid, cartesian_prod -------------------------------------------

def _one_device(op, tensors):
    for position, tensor in enumerate(tensors):
        if tensor.device != tensors[0].device:
            raise DeviceError(f"{op}: expects tensors on one device; got {tensors[0].device} at position 0 and "
                              f"{tensor.device} at position {position}")


def _broadcast_tensors_samples(rng):
    yield Sample((values(rng, (3, 1)), values(rng, (1, 4))), name="two")
    yield Sample((values(rng, ()), values(rng, (2, 3)), values(rng, (3,))), name="three")


@register(lambda *arrays: tuple(np.broadcast_arrays(*arrays)), _broadcast_tensors_samples, method=False)
def broadcast_tensors(*tensors):
    """``tensors`` expanded to their common broadcast shape (views).

    Example::

        a, b = vizgrad.broadcast_tensors(vizgrad.ones(3, 1), vizgrad.ones(4))   # both (3, 4)
    """
    tensors = _tensors("broadcast_tensors", tensors)
    _one_device("broadcast_tensors", tensors)
    try:
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        raise ShapeError("broadcast_tensors: the shapes " + ", ".join(format_shape(t.shape) for t in tensors)
                         + " do not broadcast together") from None
    return tuple(t.expand(shape) for t in tensors)


def _meshgrid_samples(rng):
    yield Sample((values(rng, (3,)), values(rng, (2,))), {"indexing": "ij"}, name="ij")
    yield Sample((values(rng, (3,)), values(rng, (2,)), values(rng, (4,))), {"indexing": "xy"}, name="xy")
    yield Sample((values(rng, (3,)),), {"indexing": "ij"}, name="one")


@register(lambda *arrays, indexing="ij": tuple(np.meshgrid(*arrays, indexing=indexing)), _meshgrid_samples,
          method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-d (or 0-d) tensors: output k holds tensor k's values along dim k
    (``indexing="ij"``) or with the first two dims swapped (``"xy"``, as NumPy's default).
    Without ``indexing``, "ij" with PyTorch's warning.

    Example::

        xs, ys = vizgrad.meshgrid(vizgrad.arange(3), vizgrad.arange(2), indexing="xy")   # both (2, 3)
    """
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    tensors = _tensors("meshgrid", tensors)
    _one_device("meshgrid", tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ArgumentError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for position, tensor in enumerate(tensors):
        if tensor.ndim > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-d tensors; the one at position {position} has shape "
                             f"{format_shape(tensor.shape)}")
        if tensor.dtype is not tensors[0].dtype:
            raise DTypeError(f"meshgrid: expects tensors of one dtype; got {tensors[0].dtype.name} at position 0 "
                             f"and {tensor.dtype.name} at position {position}")
    sizes = [t.numel() for t in tensors]
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for size, axis in zip(sizes, axes):
        shape[axis] = size
    grids = []
    for tensor, axis in zip(tensors, axes):
        view = [1] * len(tensors)
        view[axis] = -1
        grids.append(tensor.reshape(view).expand(shape))
    return tuple(grids)


def _cartesian_prod_reference(*arrays):
    if len(arrays) == 1:
        return arrays[0]
    return np.stack([g.reshape(-1) for g in np.meshgrid(*arrays, indexing="ij")], axis=1)


@register(_cartesian_prod_reference, lambda rng: iter([
    Sample((values(rng, (3,)), values(rng, (2,))), name="two"),
    Sample((values(rng, (2,)), values(rng, (2,)), values(rng, (3,))), name="three"),
    Sample((values(rng, (4,)),), name="one")]), method=False)
def cartesian_prod(*tensors):
    """Every combination of one entry of each 1-d tensor, as rows (itertools.product's order).

    Example::

        vizgrad.cartesian_prod(vizgrad.tensor([1, 2]), vizgrad.tensor([3, 4]))   # [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    tensors = _tensors("cartesian_prod", tensors)
    _one_device("cartesian_prod", tensors)
    for position, tensor in enumerate(tensors):
        if tensor.ndim != 1:
            raise ShapeError(f"cartesian_prod: expects 1-d tensors; the one at position {position} has shape "
                             f"{format_shape(tensor.shape)}")
        if tensor.dtype is not tensors[0].dtype:
            raise DTypeError(f"cartesian_prod: expects tensors of one dtype; got {tensors[0].dtype.name} at "
                             f"position 0 and {tensor.dtype.name} at position {position}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([grid.reshape(-1) for grid in meshgrid(*tensors, indexing="ij")], dim=1)


# --- narrow, split, chunk, unbind --------------------------------------------------------

class Narrow(Op):
    @staticmethod
    def forward(ctx, a, dim, start, length):
        ctx.widths = tuple((start, n - start - length) if d == dim else (0, 0) for d, n in enumerate(a.shape))
        return a[_slice_key(a.ndim, dim, start, start + length)]

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.pad(grad, ctx.widths, 0.0)   # zeros where the entries were left out


class Split(Op):
    """Consecutive pieces of ``sizes`` entries along ``dim``, each a view, all from one node
    (PyTorch's ``SplitBackward0``): :func:`split` by a size, and :func:`chunk`.

    Backward concatenates the pieces' gradients (zeros for the pieces nobody used, filled in
    by the engine) in one array op, so taking T pieces costs O(T) in backward, not T
    full-size padded gradients."""

    @staticmethod
    def forward(ctx, a, dim, sizes):
        ctx.dim = dim
        pieces, start = [], 0
        for size in sizes:
            pieces.append(a[_slice_key(a.ndim, dim, start, start + size)])
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return ctx.xp.concat(list(grads), axis=ctx.dim)


class SplitWithSizes(Split):
    """:class:`Split` given the sizes (``split([1, 4])``): PyTorch's ``SplitWithSizesBackward0``."""


class Unbind(Op):
    """Every entry along ``dim``, that dim removed, each a view, all from one node; backward
    stacks the slices' gradients (zeros for the unused ones) in one array op."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        before, after = (slice(None),) * dim, (slice(None),) * (a.ndim - dim - 1)
        return tuple(a[before + (index,) + after] for index in range(a.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return ctx.xp.stack(list(grads), axis=ctx.dim)


def _narrow_reference(a, dim, start, length):
    dim = dim % a.ndim
    start = start + a.shape[dim] if start < 0 else start
    return a[_slice_key(a.ndim, dim, start, start + length)]


def _narrow_samples(rng):
    yield Sample((values(rng, (5, 3)), 0, 1, 3))
    yield Sample((values(rng, (3, 5)), -1, -2, 2), name="negative dim and start")
    yield Sample((values(rng, (4,)), 0, 0, 4), name="everything")
    yield Sample((non_contiguous(values(rng, (4, 3))), 1, 1, 1), name="non-contiguous")


@register(_narrow_reference, _narrow_samples)
def narrow(input, dim, start, length):
    """Entries ``start`` to ``start + length`` along ``dim`` (a view); ``start`` may be
    negative (counted from the end).

    Maths: the gradient is the incoming one padded with zeros where entries were left out.

    Example::

        vizgrad.arange(5.0).narrow(0, 1, 3)     # [1, 2, 3]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("narrow", "input", input)
    shape = input.shape
    if not shape:
        raise ShapeError("narrow: a 0-d tensor has no dim to narrow")
    dim_ = _dim("narrow", dim, len(shape))
    size, start, length = shape[dim_], as_int("narrow", "start", start), as_int("narrow", "length", length)
    if not -size <= start <= size:
        raise IndexingError(f"narrow: start {start} is out of range for dim {dim} of size {size} "
                            f"(tensor of shape {format_shape(shape)})")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise ShapeError(f"narrow: start {start} and length {length} do not fit in dim {dim} of size {size} "
                         f"(tensor of shape {format_shape(shape)})")
    return _view_of(input, Narrow.apply(input, dim=dim_, start=start, length=length))


def _roll_reference(a, shifts, dims=None):
    return np.roll(a, shifts, dims)


def _roll_samples(rng):
    yield Sample((values(rng, (5,)), 2), name="1-d")
    yield Sample((values(rng, (3, 4)), 1), name="flattened")
    yield Sample((values(rng, (3, 4)), -1, 1), name="dim 1 back")
    yield Sample((non_contiguous(values(rng, (4, 3))), (1, 5), (0, 1)), name="two dims")


@register(_roll_reference, _roll_samples)
def roll(input, shifts, dims=None):
    """Shift entries along ``dims`` by ``shifts`` places (ints or tuples of the same
    length), those pushed past the end coming back at the start; with no ``dims`` the
    flattened tensor is rolled and the shape restored.

    Maths: a permutation of entries; the gradient is rolled back.

    Example::

        vizgrad.tensor([1, 2, 3, 4]).roll(1)     # tensor([4, 1, 2, 3])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("roll", "input", input)
    if dims is None:
        return roll(input.flatten(), shifts, 0).reshape(input.shape)
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll: shifts {shifts} and dims {dims} must have the same length")
    for shift, dim in zip(shifts, dims):
        dim = _dim("roll", dim, input.ndim)
        size = input.shape[dim]
        shift = as_int("roll", "shifts", shift) % size if size else 0
        if shift:
            input = cat([input.narrow(dim, size - shift, shift), input.narrow(dim, 0, size - shift)], dim)
    return input


def _diff_reference(a, n=1, dim=-1, prepend=None, append=None):
    return np.diff(a, n, dim, **({} if prepend is None else {"prepend": prepend}),
                   **({} if append is None else {"append": append}))


def _diff_samples(rng):
    yield Sample((values(rng, (5,)),), name="1-d")
    yield Sample((values(rng, (3, 4)),), {"n": 2, "dim": 1}, name="twice")
    yield Sample((values(rng, (3, 4)),), {"dim": 0, "prepend": values(rng, (1, 4)), "append": values(rng, (2, 4))},
                 name="prepend and append")


@register(_diff_reference, _diff_samples)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Differences of neighbours along ``dim``, ``n`` times: ``x[1:] - x[:-1]`` (of bools
    ``x[1:] ^ x[:-1]``, as PyTorch), with ``prepend`` and ``append`` joined to the input along
    ``dim`` first.

    Maths: out_i = x_{i+1} - x_i, so x_i's gradient is g_{i-1} - g_i.

    Example::

        vizgrad.tensor([1.0, 4.0, 9.0]).diff()      # tensor([3., 5.])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("diff", "input", input)
    dim = _dim("diff", dim, input.ndim)
    for name, piece in (("prepend", prepend), ("append", append)):
        if piece is not None and not isinstance(piece, Tensor):
            raise not_a_tensor("diff", name, piece)
    pieces = [piece for piece in (prepend, input, append) if piece is not None]
    if len(pieces) > 1:
        input = cat(pieces, dim)
    for _ in range(as_int("diff", "n", n)):
        size = input.shape[dim]
        if size == 0:
            break
        later, earlier = input.narrow(dim, 1, size - 1), input.narrow(dim, 0, size - 1)
        input = later ^ earlier if input.dtype.name == "bool" else later - earlier
    return input


def _multi_output_views(input, pieces, function):
    """Mark each of ``pieces`` (the outputs of one :class:`Split` or :class:`Unbind` node) as a
    view of ``input``. As in PyTorch, such views refuse in-place writes while gradients are
    recorded (:func:`vizgrad.ops.inplace.multi_output_view_error`)."""
    for index, piece in enumerate(pieces):
        piece._as_view_of(input)
        piece._multi_output_view = (function, index, False)
    return pieces


def _pieces(input, dim, sizes, function, node=Split):
    """The pieces of ``sizes`` entries along ``dim``, from one ``node``."""
    return _multi_output_views(input, node.apply(input, dim=dim, sizes=sizes), function)


def _split_reference(a, split_size_or_sections, dim=0):
    n = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        edges = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        edges = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(a, edges, axis=dim))


def _split_samples(rng):
    yield Sample((values(rng, (5, 3)), 2), name="size 2")
    yield Sample((values(rng, (5, 3)), [1, 4]), name="sections")
    yield Sample((values(rng, (3, 6)), 4), {"dim": -1}, name="negative dim")
    yield Sample((values(rng, (3, 6)), (2, 0, 4)), {"dim": 1}, name="empty section")
    yield Sample((non_contiguous(values(rng, (4, 3))), 2), {"dim": 1}, name="non-contiguous")


@register(_split_reference, _split_samples)
def split(tensor, split_size_or_sections, dim=0):
    """Split ``tensor`` along ``dim`` into pieces of ``split_size_or_sections`` entries
    (the last piece may be smaller) or, given a sequence, pieces of those sizes. A
    tuple of views from one node; as in PyTorch they cannot be modified in place while
    gradients are recorded (clone a piece first).

    Maths: the pieces tile the input, so its gradient is the pieces' gradients concatenated
    along ``dim`` (zeros for pieces that were not used).

    Example::

        a, b, c = vizgrad.arange(5.0).split(2)     # [0, 1], [2, 3], [4]
        a, b = vizgrad.arange(5.0).split([1, 4])   # [0], [1, 2, 3, 4]
    """
    if not isinstance(tensor, Tensor):
        raise not_a_tensor("split", "tensor", tensor)
    shape = tensor.shape
    if not shape:
        raise ShapeError("split: a 0-d tensor has no dim to split")
    dim_ = _dim("split", dim, len(shape))
    n = shape[dim_]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = _ints("split", "sections", split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(f"split: sections {sizes} must be non-negative and sum to {n}, the size of dim "
                             f"{dim} (tensor of shape {format_shape(shape)})")
        return _pieces(tensor, dim_, sizes, "split", SplitWithSizes)
    size = as_int("split", "split_size_or_sections", split_size_or_sections)
    if size < 0 or (size == 0 and n != 0):
        raise ShapeError(f"split: split_size must be positive, got {size} for dim {dim} of size {n}")
    count = max(-(-n // size), 1) if size else 1
    return _pieces(tensor, dim_, (size,) * (count - 1) + (n - size * (count - 1),), "split")


_MAX_PIECES = 2 ** 31 - 1      # a tuple of pieces longer than this could not be made


def _tensor_split_sizes(op, size, indices_or_sections):
    """The piece sizes of :func:`tensor_split` for a dim of ``size`` entries."""
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [min(max(index + size if index < 0 else index, 0), size)
                  for index in _ints(op, "indices", indices_or_sections)]
        edges = [0, *bounds, size]
        return tuple(max(end - start, 0) for start, end in zip(edges, edges[1:]))
    sections = as_int(op, "sections", indices_or_sections)
    if not 1 <= sections <= _MAX_PIECES:
        raise ArgumentError(f"{op}: sections must be between 1 and {_MAX_PIECES}, got {sections}")
    small, larger = divmod(size, sections)
    return (small + 1,) * larger + (small,) * (sections - larger)


def _tensor_split_starts(size, indices_or_sections):
    """Where each piece of :func:`tensor_split` starts: piece k is ``x[starts[k]:starts[k + 1]]``
    (empty where that is backwards), as PyTorch slices at decreasing indices."""
    if not isinstance(indices_or_sections, (list, tuple)):
        return (0,)
    return (0, *(min(max(index + size if index < 0 else index, 0), size) for index in indices_or_sections))


def _tensor_split_reference(a, indices_or_sections, dim=0):
    return tuple(np.array_split(a, indices_or_sections, axis=dim))


def _tensor_split_samples(rng):
    yield Sample((values(rng, (7,)), 3), name="uneven sections")
    yield Sample((values(rng, (3, 6)), [1, 4]), {"dim": 1}, name="indices")
    yield Sample((values(rng, (5, 2)), [2, 2, 9]), name="empty pieces")


@register(_tensor_split_reference, _tensor_split_samples)
def tensor_split(input, indices_or_sections, dim=0):
    """Split ``input`` along ``dim`` into ``sections`` pieces as equal as can be (the
    first ``size % sections`` one longer), or at the given ``indices`` (as ``x[:i]``,
    ``x[i:j]``, ..., ``x[k:]``; indices past the end give empty pieces). Views from one node.

    Example::

        vizgrad.arange(7).tensor_split(3)        # (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
        vizgrad.arange(7).tensor_split([1, 5])   # (tensor([0]), tensor([1, 2, 3, 4]), tensor([5, 6]))
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("tensor_split", "input", input)
    if not input.shape:
        raise ShapeError("tensor_split: a 0-d tensor has no dim to split")
    dim_ = _dim("tensor_split", dim, input.ndim)
    sizes = _tensor_split_sizes("tensor_split", input.shape[dim_], indices_or_sections)
    starts = _tensor_split_starts(input.shape[dim_], indices_or_sections)
    if any(end < start for start, end in zip(starts, starts[1:])):    # decreasing indices: overlapping slices
        return tuple(narrow(input, dim_, start, length) for start, length in zip(starts, sizes))
    return _pieces(input, dim_, sizes, "tensor_split", SplitWithSizes)


def _chunk_reference(a, chunks, dim=0):
    n = a.shape[dim]
    size = -(-n // chunks)
    return _split_reference(a, size, dim)


def _chunk_samples(rng):
    yield Sample((values(rng, (5, 3)), 2))
    yield Sample((values(rng, (6,)), 3), name="even")
    yield Sample((values(rng, (3, 7)), 3), {"dim": -1}, name="negative dim")
    yield Sample((values(rng, (4, 2)), 5), name="more chunks than entries")
    yield Sample((non_contiguous(values(rng, (4, 3))), 2), {"dim": 1}, name="non-contiguous")


@register(_chunk_reference, _chunk_samples)
def chunk(input, chunks, dim=0):
    """Split ``input`` along ``dim`` into ``chunks`` pieces of ``ceil(size / chunks)``
    entries (the last may be smaller; there may be fewer than ``chunks`` pieces, as in
    PyTorch). A tuple of views, as from :func:`split`.

    Maths: as :func:`split`: the pieces' gradients are concatenated.

    Example::

        vizgrad.arange(5.0).chunk(2)     # ([0, 1, 2], [3, 4])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("chunk", "input", input)
    shape = input.shape
    if not shape:
        raise ShapeError("chunk: a 0-d tensor has no dim to chunk")
    chunks = as_int("chunk", "chunks", chunks)
    if chunks <= 0:
        raise ShapeError(f"chunk: chunks must be positive, got {chunks}")
    dim_ = _dim("chunk", dim, len(shape))
    n = shape[dim_]
    if n == 0:
        return _pieces(input, dim_, (0,) * chunks, "chunk")
    size = -(-n // chunks)
    count = -(-n // size)
    return _pieces(input, dim_, (size,) * (count - 1) + (n - size * (count - 1),), "chunk")


def _unbind_samples(rng):
    yield Sample((values(rng, (3, 4)),))
    yield Sample((values(rng, (3, 4)),), {"dim": -1}, name="negative dim")
    yield Sample((values(rng, (2, 3, 4)),), {"dim": 1})
    yield Sample((values(rng, (3,)),), name="1-d to 0-d pieces")
    yield Sample((non_contiguous(values(rng, (4, 3))),), {"dim": 1}, name="non-contiguous")


@register(lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)), _unbind_samples)
def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, that dim removed: a tuple of views from one
    node (``for x_t in x.unbind(0)`` over a sequence costs one stack in backward). As in
    PyTorch they cannot be modified in place while gradients are recorded.

    Maths: the input's gradient is the slices' gradients stacked along ``dim`` (zeros for
    slices that were not used).

    Example::

        rows = vizgrad.zeros(3, 4).unbind()     # three tensors of shape (4,)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("unbind", "input", input)
    shape = input.shape
    if not shape:
        raise ShapeError("unbind: a 0-d tensor has no dim to unbind")
    dim_ = _dim("unbind", dim, len(shape))
    if not shape[dim_]:
        return ()
    return _multi_output_views(input, Unbind.apply(input, dim=dim_), "unbind")


# --- pad ---------------------------------------------------------------------------------

class Pad(Op):
    @staticmethod
    def forward(ctx, a, widths, value):
        # widths: (before, after) per dim; negative amounts crop, positive ones pad
        ctx.widths = widths
        crop = tuple(slice(max(-before, 0), n - max(-after, 0))
                     for (before, after), n in zip(widths, a.shape))
        grow = tuple((max(before, 0), max(after, 0)) for before, after in widths)
        if any(before or after for before, after in grow):
            return ctx.xp.pad(a[crop], grow, value)
        return ctx.xp.asarray(a[crop], copy=True)   # a copy, as in PyTorch

    @staticmethod
    def backward(ctx, grad):
        widths = ctx.widths
        if any(before > 0 or after > 0 for before, after in widths):
            grad = grad[tuple(slice(max(before, 0), n - max(after, 0))
                              for (before, after), n in zip(widths, grad.shape))]
        if any(before < 0 or after < 0 for before, after in widths):
            grad = ctx.xp.pad(grad, tuple((max(-before, 0), max(-after, 0)) for before, after in widths), 0.0)
        return grad


class _GatherPad(Op):
    """Pad by copying the input's own entries: along each padded dim, output position o holds
    input position ``source[o]``, one gather per dim. Backward adds each output's gradient into
    its source position (``index_add``), so entries copied several times collect every copy's
    gradient; its own backward is the gather again."""

    @staticmethod
    def forward(ctx, a, sources, padded_dims):
        xp = ctx.xp
        ctx.padded_dims = padded_dims              # the name: ReflectionPad2DBackward0, ...
        ctx.axes = tuple(axis for axis, _ in sources)
        ctx.sizes = tuple(a.shape[axis] for axis, _ in sources)
        indices = []
        for axis, source in sources:
            indices.append(xp.asarray(source, dtype=xp.int64, device=a.device))
            a = xp.take(a, indices[-1], axis=axis)
        ctx.save_for_backward(*indices)            # constants: the source positions
        return a if sources else xp.asarray(a, copy=True)

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        shape = list(grad.shape)
        for axis, size, index in reversed(tuple(zip(ctx.axes, ctx.sizes, ctx.saved_tensors))):
            shape[axis] = size
            grad = xp.index_add(xp.zeros(tuple(shape), dtype=grad.dtype, device=grad.device), axis, index, grad)
        return grad


class ReflectionPad(_GatherPad):
    """``mode="reflect"``: the input mirrored about its first and last entries."""


class ReplicationPad(_GatherPad):
    """``mode="replicate"``: the input's edge entries repeated."""


class CircularPad(_GatherPad):
    """``mode="circular"``: the input wrapped around (after any cropping)."""


_GATHER_PADS = {"reflect": ReflectionPad, "replicate": ReplicationPad, "circular": CircularPad}


def _pad_widths(ndim, pad):
    """PyTorch's flat ``pad`` (last dim first) as (before, after) per dim, first dim first."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
    return ((0, 0),) * (ndim - len(pairs)) + tuple(reversed(pairs))


def _pad_sources(mode, size, before, after):
    """The input position each output position copies along one dim of ``size``. Reflect and
    replicate index the whole input (then crop, for negative amounts); circular wraps around
    what remains after cropping, as PyTorch."""
    if mode == "circular":
        kept = list(range(max(-before, 0), size - max(-after, 0)))
        grow = max(before, 0)
        return [kept[(o - grow) % len(kept)] for o in range(len(kept) + grow + max(after, 0))]
    positions = range(-before, size + after)
    if mode == "replicate":
        return [min(max(i, 0), size - 1) for i in positions]
    return [-i if i < 0 else 2 * (size - 1) - i if i >= size else i for i in positions]


def _check_gather_pad(mode, input, pad, widths):
    """PyTorch's rules for the non-constant modes: 1, 2 or 3 trailing dims of an input with one
    or two more dims (a batch dim, maybe empty, and a channel dim), no value, sizes that fit."""
    shape, dims = tuple(input.shape), len(pad) // 2
    if dims not in (1, 2, 3) or input.ndim not in (dims + 1, dims + 2):
        raise ShapeError(f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of an input with one or two more dims "
                         f"(channels, and an optional batch): padding of size 2 for a 2D or 3D input, 4 for 3D or "
                         f"4D, 6 for 4D or 5D; got padding of size {len(pad)} for an input of shape "
                         f"{format_shape(shape)}")
    if input.dtype.name == "bool":
        raise DTypeError(f"pad: mode {mode!r} does not support bool tensors; convert the input with .float() or "
                         ".int()")
    batched = input.ndim == dims + 2
    if mode != "circular" and any(n == 0 for n in shape[1 if batched else 0:]):
        raise ShapeError(f"pad: mode {mode!r} needs a {dims + 1}D or {dims + 2}D (batch mode) input whose dims are "
                         f"not empty (only the batch dim may be 0), got shape {format_shape(shape)}")
    padded = range(input.ndim - dims, input.ndim)
    if mode != "circular" and all(shape[dim] + sum(widths[dim]) < 1 for dim in padded):
        raise ShapeError(f"pad: padding {pad} leaves no entries in any padded dim of the input of shape "
                         f"{format_shape(shape)}: mode {mode!r} needs an output size of at least 1 in one of them")
    for dim in padded:
        (before, after), n = widths[dim], shape[dim]
        if mode == "reflect" and (before >= n or after >= n):
            raise ShapeError(f"pad: mode 'reflect' needs padding smaller than the size it reflects, but got padding "
                             f"({before}, {after}) at dim {dim} of size {n} (input of shape {format_shape(shape)})")
        kept = n - max(-before, 0) - max(-after, 0)
        if mode == "circular" and (before > kept or after > kept):
            raise ShapeError(f"pad: padding ({before}, {after}) of dim {dim} would wrap around more than once: "
                             f"circular padding must be at most the size it wraps, {kept} (input of shape "
                             f"{format_shape(shape)})")


def _pad_reference(a, pad, mode="constant", value=None):
    widths = _pad_widths(a.ndim, pad)
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, a.shape))
    grow = tuple((max(b, 0), max(e, 0)) for b, e in widths)
    if mode == "circular":                      # crop, then wrap what is left
        return np.pad(a[crop], grow, mode="wrap")
    if mode in ("reflect", "replicate"):        # pad the whole input, then crop
        padded = np.pad(a, grow, mode="reflect" if mode == "reflect" else "edge")
        return padded[tuple(slice(max(-b, 0), n - max(-e, 0)) for (b, e), n in zip(widths, padded.shape))]
    if not any(b or e for b, e in grow):
        return a[crop].copy()
    return np.pad(a[crop], grow, constant_values=0.0 if value is None else value)


def _pad_samples(rng):
    yield Sample((values(rng, (3, 4)), (1, 2)), name="last dim")
    yield Sample((values(rng, (3, 4)), (1, 0, 2, 1)), {"value": 0.5}, name="two dims, value")
    yield Sample((values(rng, (2, 3, 4)), (0, 0, 1, 1, 2, 0)), name="three dims")
    yield Sample((values(rng, (3, 5)), (-1, 2)), name="negative: crop")
    yield Sample((values(rng, (4, 5)), (-1, -2, 1, -1)), name="crop and pad")
    yield Sample((values(rng, ()), ()), name="0-d, nothing")
    yield Sample((non_contiguous(values(rng, (3, 4))), (2, 1, 0, 1)), name="non-contiguous")
    yield Sample((values(rng, (2, 3, 5)), (3, 2), "reflect"), name="reflect 1d")
    yield Sample((values(rng, (2, 4, 3)), (2, 1, 0, 3), "reflect"), name="reflect 2d unbatched")
    yield Sample((values(rng, (1, 2, 3, 4, 3)), (1, 2, 2, 0, 1, 1), "reflect"), name="reflect 3d")
    yield Sample((values(rng, (2, 6)), (-2, 3), "reflect"), name="reflect crop")
    yield Sample((values(rng, (2, 2, 3)), (4, 1), "replicate"), name="replicate 1d, wider than the input")
    yield Sample((values(rng, (2, 1, 3, 4)), (1, 2, 3, -1), "replicate"), name="replicate 2d crop")
    yield Sample((values(rng, (2, 2, 2, 3)), (1, 0, 2, 2, 1, 1), "replicate"), name="replicate 3d unbatched")
    yield Sample((values(rng, (2, 2, 4)), (4, 2), "circular"), name="circular 1d")
    yield Sample((values(rng, (1, 2, 3, 4)), (1, 3, 2, 0), "circular"), name="circular 2d")
    yield Sample((values(rng, (2, 5)), (3, -2), "circular"), name="circular crop")
    yield Sample((values(rng, (1, 1, 2, 3, 2)), (1, 1, 0, 2, 2, 1), "circular"), name="circular 3d")


@register(_pad_reference, _pad_samples, method=False)
def pad(input, pad, mode="constant", value=None):
    """Pad as ``torch.nn.functional.pad``: ``pad`` is a flat tuple of (before, after)
    amounts, last dim first: ``(left, right, top, bottom, ...)``; negative amounts crop.

    Modes: ``"constant"`` fills with ``value`` (default 0), any dims; ``"reflect"`` mirrors the
    input about its edge entries (``[1, 2, 3]`` padded by 2 → ``[3, 2, 1, 2, 3, 2, 1]``),
    ``"replicate"`` repeats the edge entries (``[1, 1, 1, 2, 3, 3, 3]``) and ``"circular"``
    wraps around (``[2, 3, 1, 2, 3, 1, 2]``): these pad the last 1, 2 or 3 dims of an input
    with one or two more dims (channels, and an optional batch), as PyTorch.

    Maths: every output entry is a constant or a copy of an input entry, so the gradient of an
    input entry is the sum of the incoming gradients of its copies.

    Example::

        vizgrad.pad(vizgrad.ones(2, 2), (1, 1))   # shape (2, 4): [[0, 1, 1, 0], [0, 1, 1, 0]]
        F.pad(vizgrad.arange(3.0).view(1, 3), (2, 2), mode="reflect")   # tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ArgumentError(f"pad: unrecognised padding mode {mode!r}; use 'constant', 'reflect', 'replicate' or "
                            "'circular'")
    if not isinstance(input, Tensor):
        raise not_a_tensor("pad", "input", input)
    pad = _ints("pad", "pad", pad)
    shape = input.shape
    if len(pad) % 2:
        raise ShapeError(f"pad: pad must hold (before, after) pairs, so an even number of sizes; got {pad}")
    if len(pad) // 2 > len(shape):
        raise ShapeError(f"pad: pad {pad} gives {len(pad) // 2} (before, after) pairs for a tensor of shape "
                         f"{format_shape(shape)}, which has only {len(shape)} dims")
    widths = _pad_widths(len(shape), pad)
    for dim, ((before, after), n) in enumerate(zip(widths, shape)):
        if n + before + after < 0:
            raise ShapeError(f"pad: padding ({before}, {after}) of dim {dim} (size {n}) leaves a negative "
                             f"size {n + before + after} (tensor of shape {format_shape(shape)})")
    if mode == "constant":
        return Pad.apply(input, widths=widths, value=0.0 if value is None else value)
    if value is not None and value != 0:
        raise ArgumentError(f"pad: padding mode {mode!r} doesn't take a value argument (got value={value!r}); "
                            "only mode='constant' fills with a value")
    _check_gather_pad(mode, input, pad, widths)
    sources = tuple((dim, _pad_sources(mode, shape[dim], before, after))
                    for dim, (before, after) in enumerate(widths) if before or after)
    return _GATHER_PADS[mode].apply(input, sources=sources, padded_dims=len(pad) // 2)


def _channel_shuffle_reference(x, groups):
    batch, channels = x.shape[:2]
    grouped = x.reshape((batch, groups, channels // groups) + x.shape[2:])
    return np.swapaxes(grouped, 1, 2).reshape(x.shape)


def _channel_shuffle_samples(rng):
    yield Sample((values(rng, (2, 6, 3)), 2), name="(N, C, L)")
    yield Sample((values(rng, (1, 6, 2, 2)), 3), name="(N, C, H, W)")
    yield Sample((values(rng, (2, 4, 1, 2, 1)), 4), name="groups = channels")


@register(_channel_shuffle_reference, _channel_shuffle_samples, method=False)
def channel_shuffle(input, groups):
    """Interleave the channels of (N, C, *) inputs across ``groups`` (ShuffleNet): the channels
    read as (groups, C/groups) are transposed, so channel ``g·(C/groups) + k`` moves to
    ``k·groups + g``. The gradient is shuffled back.

    Example::

        F.channel_shuffle(vizgrad.arange(6.0).view(1, 6, 1), 2).flatten()   # tensor([0., 3., 1., 4., 2., 5.])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("channel_shuffle", "input", input)
    groups = as_int("channel_shuffle", "groups", groups)
    if groups <= 0:
        raise ArgumentError(f"channel_shuffle: the number of groups to divide channels in must be positive, got "
                            f"groups={groups}")
    if input.ndim <= 2:
        raise ShapeError(f"channel_shuffle: expects an input with more than 2 dims (N, C, *), got shape "
                         f"{format_shape(input.shape)}")
    batch, channels = input.shape[:2]
    if channels % groups:
        raise ShapeError(f"channel_shuffle: the number of channels must be divisible by groups: got {channels} "
                         f"channels and {groups} groups (input of shape {format_shape(input.shape)})")
    grouped = reshape(input, (batch, groups, channels // groups) + tuple(input.shape[2:]))
    return reshape(transpose(grouped, 1, 2), tuple(input.shape))


# --- composites: tile, ravel, select, the directional splits, repeat_interleave, ... ------
# Built from the ops above (repeat, reshape, getitem, split, index_select, sum): their
# gradients, of every order, are those ops' gradients.

def _tile_reference(a, dims):
    return np.tile(a, dims)


def _tile_samples(rng):
    yield Sample((values(rng, (2, 3)), (2,)), name="fewer dims than the tensor")
    yield Sample((values(rng, (3,)), (2, 2)), name="more dims than the tensor")
    yield Sample((values(rng, ()), (3,)), name="0-d")
    yield Sample((values(rng, (2, 3)), ()), name="no dims")


@register(_tile_reference, _tile_samples)
def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; when ``dims`` has fewer entries
    than ``input`` has dims, ones are put in front (``x.tile((2,))`` repeats the last dim),
    when more, the tensor gains leading dims (as :meth:`repeat`).

    Example::

        vizgrad.tensor([1, 2]).tile((2,))      # tensor([1, 2, 1, 2])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("tile", "input", input)
    dims = _ints("tile", "dims", dims)
    if any(d < 0 for d in dims):
        raise ShapeError(f"tile: dims must be non-negative, got {dims}")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims) if dims else input.clone()


@register(np.ravel, lambda rng: iter([Sample((values(rng, (2, 3)),)), Sample((values(rng, ()),), name="0-d"),
                                      Sample((non_contiguous(values(rng, (3, 4))),), name="non-contiguous")]))
def ravel(input):
    """The elements of ``input`` as a 1-D tensor, in row-major order (a view when the memory
    allows one, as :func:`reshape`).

    Example::

        vizgrad.tensor([[1, 2], [3, 4]]).ravel()   # tensor([1, 2, 3, 4])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("ravel", "input", input)
    return reshape(input, (-1,))


def _select_reference(a, dim, index):
    return np.take(a, index, axis=dim)


def _select_samples(rng):
    yield Sample((values(rng, (3, 4)), 0, 1), name="row")
    yield Sample((values(rng, (2, 3, 4)), -1, -2), name="negative dim and index")
    yield Sample((values(rng, (3,)), 0, 2), name="1-d to 0-d")


@register(_select_reference, _select_samples)
def select(input, dim, index):
    """The slice of ``input`` at ``index`` along ``dim``, that dim removed: a view
    (``x.select(0, i)`` is ``x[i]``).

    Example::

        vizgrad.arange(6).reshape(2, 3).select(1, -1)   # tensor([2, 5])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("select", "input", input)
    if not input.ndim:
        raise IndexingError("select: select() cannot be applied to a 0-dim tensor")
    axis = _dim("select", dim, input.ndim)
    position = as_int("select", "index", index)
    size = input.shape[axis]
    if not -size <= position < size:
        raise IndexingError(f"select: index {position} out of range for tensor of size "
                            f"{format_shape(input.shape)} at dimension {dim}")
    return input[_slice_key(input.ndim, axis, None, None)[:axis] + (position,)]


def _directional_split(op, input, indices_or_sections, dim, least):
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim < least:
        raise ShapeError(f"{op}: {op} requires a tensor with at least {least} dimension"
                         f"{'s' if least > 1 else ''}, but got a tensor with {input.ndim} dimensions "
                         f"(shape {format_shape(input.shape)})")
    if not isinstance(indices_or_sections, (list, tuple)):
        sections = as_int(op, "sections", indices_or_sections)
        size = input.shape[dim]
        if sections <= 0 or size % sections:
            raise ShapeError(f"{op}: {op} attempted to split along dimension {dim}, but the size of the "
                             f"dimension {size} is not divisible by the split_size {sections}!")
    return tensor_split(input, indices_or_sections, dim)


def _directional_samples(ndim, sections):
    def samples(rng):
        yield Sample((values(rng, (2, 4, 6)[:ndim] if ndim > 1 else (6,)), sections), name="sections")
        yield Sample((values(rng, (4, 4, 4)[:max(ndim, 1)]), [1, 3]), name="indices")
    return samples


@register(lambda a, s: tuple(np.hsplit(a, s)), _directional_samples(1, 2))
def hsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 1 (dim 0 for a 1-D tensor); a number of sections must
    divide that dim. Example: ``vizgrad.arange(6).hsplit(3)``: three pieces of two."""
    return _directional_split("hsplit", input, indices_or_sections, 1 if getattr(input, "ndim", 0) > 1 else 0, 1)


@register(lambda a, s: tuple(np.vsplit(a, s)), _directional_samples(2, 2))
def vsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 0 of a tensor of at least 2 dims; a number of sections must
    divide that dim. Example: ``vizgrad.zeros(4, 2).vsplit(2)``: two (2, 2) pieces."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


@register(lambda a, s: tuple(np.dsplit(a, s)), _directional_samples(3, 3))
def dsplit(input, indices_or_sections):
    """:func:`tensor_split` along dim 2 of a tensor of at least 3 dims; a number of sections must
    divide that dim. Example: ``vizgrad.zeros(1, 1, 4).dsplit(2)``: two (1, 1, 2) pieces."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


def _split_with_sizes_samples(rng):
    yield Sample((values(rng, (5, 3)), [2, 3]), name="rows")
    yield Sample((values(rng, (3, 6)), (1, 0, 5)), {"dim": -1}, name="empty piece, negative dim")


@register(_split_reference, _split_with_sizes_samples)
def split_with_sizes(input, split_sizes, dim=0):
    """Split ``input`` along ``dim`` into pieces of ``split_sizes`` entries (which must sum to
    that dim's size): views from one node, as :func:`split` with a list.

    Example::

        vizgrad.arange(5).split_with_sizes([2, 3])   # (tensor([0, 1]), tensor([2, 3, 4]))
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("split_with_sizes", "input", input)
    if not input.ndim:
        raise ShapeError("split_with_sizes: a 0-d tensor has no dim to split")
    axis = _dim("split_with_sizes", dim, input.ndim)
    sizes = _ints("split_with_sizes", "split_sizes", split_sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != input.shape[axis]:
        raise ShapeError(f"split_with_sizes: split_sizes {list(sizes)} must be non-negative and sum exactly to "
                         f"the size of dim {dim}, {input.shape[axis]} (input of shape {format_shape(input.shape)})")
    return _pieces(input, axis, sizes, "split_with_sizes", SplitWithSizes)


def _repeat_interleave_reference(a, repeats=None, dim=None, output_size=None):
    if repeats is None:
        return np.repeat(np.arange(len(a)), a)
    return np.repeat(a.reshape(-1) if dim is None else a, repeats, axis=0 if dim is None else dim)


def _repeat_interleave_samples(rng):
    yield Sample((values(rng, (2, 3)), 2), name="flattened")
    yield Sample((values(rng, (2, 3)), np.array([1, 0, 2])), {"dim": -1}, name="tensor repeats")
    yield Sample((values(rng, (2, 3)), np.array([3])), {"dim": 0, "output_size": 6}, name="one repeat, output_size")
    yield Sample((np.array([2, 0, 1]),), name="repeats only")


@register(_repeat_interleave_reference, _repeat_interleave_samples)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) of ``input`` repeated ``repeats`` times in place
    (an int, or a 1-D int64 tensor with one count per slice); without ``dim`` the input is
    flattened first. ``vizgrad.repeat_interleave(counts)`` alone gives
    ``arange(len(counts))`` repeated by ``counts``. The gradient sums the copies.

    Example::

        vizgrad.tensor([1, 2]).repeat_interleave(2)                  # tensor([1, 1, 2, 2])
        vizgrad.repeat_interleave(vizgrad.tensor([2, 0, 1]))         # tensor([0, 0, 2])
    """
    from ..creation import arange, tensor as make_tensor
    from .index import index_select  # lazy: ops.index sits above this module (it uses movedim, cat, pad)
    op = "repeat_interleave"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if repeats is None:
        if input.ndim != 1 or input.dtype.name != "int64":
            raise ShapeError(f"{op}: repeats must be a 1-D int64 tensor, got {input.dtype.name} of shape "
                             f"{format_shape(input.shape)}")
        return repeat_interleave(arange(input.shape[0], device=input.device), input, 0, output_size=output_size)
    source = reshape(input, (-1,)) if dim is None else input
    if not source.ndim:
        source = reshape(source, (1,))
    axis = 0 if dim is None else _dim(op, dim, source.ndim)
    size = source.shape[axis]
    if isinstance(repeats, Tensor):
        if repeats.dtype.name not in ("int64", "int32") or repeats.ndim > 1:
            raise ShapeError(f"{op}: repeats must be 0-d or 1-D int64 tensor, got {repeats.dtype.name} of shape "
                             f"{format_shape(repeats.shape)}")
        counts = [int(c) for c in np.asarray(repeats.detach().cpu().numpy()).reshape(-1)]
        if len(counts) == 1:
            counts = counts * size
    else:
        counts = [as_int(op, "repeats", repeats)] * size
    if len(counts) != size:
        raise ShapeError(f"{op}: repeats must have the same size as input along dim {dim if dim is not None else 0}: "
                         f"repeats has {len(counts)} entries, the dim {size}")
    if any(c < 0 for c in counts):
        raise ArgumentError(f"{op}: repeats can not be negative, got {min(counts)}")
    total = sum(counts)
    if output_size is not None and as_int(op, "output_size", output_size) != total:
        raise ShapeError(f"{op}: output_size {output_size} does not match the total of repeats, {total}")
    positions = make_tensor(np.repeat(np.arange(size, dtype=np.int64), counts), device=input.device)
    return index_select(source, axis, positions)


def _unravel_index_reference(indices, shape):
    return tuple(np.unravel_index(indices % max(math.prod(shape), 1), shape))


@register(_unravel_index_reference, lambda rng: iter([
        Sample((np.array([0, 5, 11, -1]), (3, 4)), name="1-d"),
        Sample((np.array([[1, 23]]), (2, 3, 4)), name="2-d"),
        Sample((np.array(7), (4, 2)), name="0-d")]), method=False, differentiable=False)
def unravel_index(indices, shape):
    """The coordinates, in a tensor of ``shape``, of the flat (row-major) ``indices``: a tuple of
    int64 tensors of ``indices``' shape, one per dim. Negative indices count from the end.

    Example::

        vizgrad.unravel_index(vizgrad.tensor(5), (2, 3))   # (tensor(1), tensor(2))
    """
    op = "unravel_index"
    if not isinstance(indices, Tensor):
        raise not_a_tensor(op, "indices", indices)
    if indices.is_floating_point() or indices.dtype.name == "bool":
        raise DTypeError(f"{op}: expected 'indices' to be integer dtype, but got {indices.dtype.name}")
    shape = _int_args(op, "shape", shape, ())
    if any(s < 0 for s in shape):
        raise ShapeError(f"{op}: 'shape' cannot have negative values, but got {shape}")
    count = math.prod(shape)
    if indices.numel() and not bool(((indices >= -count) & (indices < count)).all()):
        raise IndexingError(f"{op}: index out of bounds for a tensor of shape {format_shape(shape)} "
                            f"({count} elements)")
    flat = indices.long() % max(count, 1)
    coordinates = []
    for size in reversed(shape):
        coordinates.append(flat % size if size else flat)
        flat = flat // size if size else flat
    return tuple(reversed(coordinates))


def _combinations_reference(a, r=2, with_replacement=False):
    import itertools
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = [list(c) for c in pick(a.tolist(), r)]
    return np.array(rows, dtype=a.dtype).reshape(-1, r) if r else np.zeros((0,), a.dtype)


@register(_combinations_reference, lambda rng: iter([
        Sample((values(rng, (4,)),), name="pairs"),
        Sample((values(rng, (4,)), 3), name="triples"),
        Sample((values(rng, (3,)), 2, True), name="with replacement"),
        Sample((values(rng, (2,)), 3), name="r larger than the input")]), method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``input`` (as
    ``itertools.combinations``, or ``combinations_with_replacement``), one per row.

    Example::

        vizgrad.combinations(vizgrad.tensor([1, 2, 3]))   # tensor([[1, 2], [1, 3], [2, 3]])
    """
    import itertools
    from ..creation import tensor as make_tensor
    op = "combinations"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    if input.ndim != 1:
        raise ShapeError(f"{op}: Expect a 1D vector, but got shape {format_shape(input.shape)}")
    r = as_int(op, "r", r)
    if r < 0:
        raise ArgumentError(f"{op}: Expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if r == 0:    # no combination: an empty tensor with no history, as PyTorch returns
        return input.new_zeros((0,))
    positions = make_tensor(np.array(rows, dtype=np.int64).reshape(-1, r), device=input.device)
    return input[positions]


def _sum_to_size_reference(a, *size):
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    leading = a.ndim - len(size)
    out = a.sum(axis=tuple(range(leading))) if leading else a
    return out.sum(axis=tuple(d for d, n in enumerate(size) if n == 1 and out.shape[d] != 1), keepdims=True)


@register(_sum_to_size_reference, lambda rng: iter([
        Sample((values(rng, (2, 3, 4)), (3, 1)), name="leading and size-1 dims"),
        Sample((values(rng, (2, 3)), 1, 3), name="varargs"),
        Sample((values(rng, (2, 3)), ()), name="to 0-d")]))
def sum_to_size(input, *size):
    """``input`` summed down to ``size``, a shape it can be expanded from (the adjoint of
    :meth:`expand`): leading dims and the dims where ``size`` is 1 are summed.

    Example::

        vizgrad.ones(2, 3).sum_to_size(1, 3)   # tensor([[2., 2., 2.]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("sum_to_size", "input", input)
    if len(size) == 1 and not isinstance(size[0], (int, np.integer)):
        size = size[0]
    size = _ints("sum_to_size", "size", size)
    leading = input.ndim - len(size)
    if leading < 0 or any(n != m and n != 1 for n, m in zip(size, input.shape[leading:])):
        raise ShapeError(f"sum_to_size: size {list(size)} is not expandable to size {list(input.shape)}")
    dims = tuple(range(leading)) + tuple(leading + d for d, n in enumerate(size)
                                          if n == 1 and input.shape[leading + d] != 1)
    if not dims:
        return input
    summed = input.sum(dims, keepdim=True)
    return reshape(summed, size)


@register(lambda a, dim, start, length: np.array(_narrow_reference(a, dim, start, length)), _narrow_samples)
def narrow_copy(input, dim, start, length):
    """:func:`narrow` as a new tensor (a copy, no view of ``input``)."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("narrow_copy", "input", input)
    if not input.ndim:
        raise ShapeError("narrow_copy: a 0-d tensor cannot be narrowed")
    return narrow(input, dim, start, length).clone()


def _sliding_reference(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)
    dimension %= a.ndim
    count = (a.shape[dimension] - size) // step + 1
    windows = [np.take(a, np.arange(i * step, i * step + size), axis=dimension) for i in range(count)]
    return np.moveaxis(np.stack(windows, axis=dimension), dimension + 1, -1)


class Unfold(Op):
    """Windows of ``size`` entries along ``axis``, ``step`` apart: the backend's sliding-window
    view, every ``step``-th window kept (a view of the input's memory, as in PyTorch). The
    gradient adds each window's gradient back where the window was read."""

    @staticmethod
    def forward(ctx, a, axis, size, step):
        xp = ctx.xp
        ctx.input_shape, ctx.axis, ctx.size = tuple(a.shape), axis, size
        windows = xp.sliding_windows(a, (size,), (axis,))
        count = (a.shape[axis] - size) // step + 1
        starts = xp.arange(0, count * step, step, dtype=xp.int64, device=a.device)
        offsets = xp.arange(size, dtype=xp.int64, device=a.device)
        positions = xp.reshape(xp.reshape(starts, (-1, 1)) + xp.reshape(offsets, (1, -1)), (-1,))
        ctx.save_for_backward(positions)
        return windows[(slice(None),) * axis + (slice(None, None, step), Ellipsis)]

    @staticmethod
    def backward(ctx, grad):
        positions, = ctx.saved_tensors
        xp, axis = ctx.xp, ctx.axis
        ndim = len(ctx.input_shape)
        order = tuple(range(axis + 1)) + (ndim,) + tuple(range(axis + 1, ndim))   # the window dim after axis
        moved = xp.permute_dims(grad, order)
        shape = ctx.input_shape[:axis] + (-1,) + ctx.input_shape[axis + 1:]
        zeros = xp.zeros(ctx.input_shape, dtype=grad.dtype, device=grad.device)
        return xp.index_add(zeros, axis, positions, xp.reshape(moved, shape))


def unfold_windows(input, dimension, size, step):
    """``Tensor.unfold(dimension, size, step)``: every window of ``size`` consecutive entries of
    ``input`` along ``dimension``, starting ``step`` apart. ``dimension`` becomes the count of
    windows and a last dim of ``size`` is added. A view of ``input`` (it shows later writes into
    ``input``); as with NumPy's sliding windows, it cannot be written into itself. The gradient
    adds each window's gradient back where the window was read (overlapping windows accumulate).

    Example::

        vizgrad.arange(5).unfold(0, 2, 2)   # tensor([[0, 1], [2, 3]])
    """
    op = "unfold"
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    axis = _dim(op, dimension, max(input.ndim, 1))
    size, step = as_int(op, "size", size), as_int(op, "step", step)
    length = input.shape[axis] if input.ndim else 1
    if size < 0 or size > length:
        raise ShapeError(f"{op}: maximum size for tensor at dimension {axis} is {length} but size is {size}")
    if step <= 0:
        raise ArgumentError(f"{op}: step is {step} but must be > 0")
    if not input.ndim:
        return reshape(input, (1,))
    return _view_of(input, Unfold.apply(input, axis=axis, size=size, step=step))
