"""Shape ops that move no entry: reshape, view, flatten, squeeze, transpose, permute, expand,
narrow, select, unfold, and their kin; and the argument helpers that the other shape families
(:mod:`.joins`, :mod:`.padding`) share.

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
checks stricter. (split, chunk and unbind live in :mod:`.joins`; repeat, flip, tril,
triu and pad, which return new memory, in :mod:`.padding`.)

User mistakes raise :class:`~vizgrad.errors.ShapeError` naming the op and the shapes;
dims out of range raise ``IndexError``, as in PyTorch.
"""

import math
import operator

import numpy as np

from ..autograd.engine import sum_to_shape
from ..autograd.function import Op
from ..errors import (ArgumentError, DTypeError, ShapeError, format_shape, ArgumentTypeError,
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


# --- expand, expand_as, broadcast_to -----------------------------------------------------

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


# --- narrow ------------------------------------------------------------------------------

class Narrow(Op):
    @staticmethod
    def forward(ctx, a, dim, start, length):
        ctx.widths = tuple((start, n - start - length) if d == dim else (0, 0) for d, n in enumerate(a.shape))
        return a[_slice_key(a.ndim, dim, start, start + length)]

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.pad(grad, ctx.widths, 0.0)   # zeros where the entries were left out


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


# --- composites: ravel, select, unravel_index, sum_to_size, narrow_copy ------------------
# Built from the ops above (reshape, getitem, narrow, sum): their gradients, of every order,
# are those ops' gradients.

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


# --- unfold ------------------------------------------------------------------------------

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
