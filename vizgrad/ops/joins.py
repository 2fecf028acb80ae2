"""Shape ops that join, split or broadcast tensors together: cat, stack, hstack, vstack, dstack,
column_stack, atleast_Nd, block_diag, broadcast_tensors, meshgrid, cartesian_prod, combinations;
split, tensor_split, chunk, unbind, hsplit, vsplit, dsplit, split_with_sizes; and roll and diff,
built from narrow and cat.

Linear as every shape op (:mod:`.shape`): backward slices a join's gradient back into its
inputs, and joins a split's. split, chunk and unbind return all their pieces, views of the
input, from one node (backward joins the pieces' gradients in one op), and, as in PyTorch,
those pieces refuse in-place writes while gradients are recorded. Joins return new memory.
"""

import warnings

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..errors import ArgumentError, DeviceError, DTypeError, ShapeError, format_shape, not_a_tensor, as_int
from ..tensor import Tensor
from .padding import pad
from .registry import Sample, register
from .samples import non_contiguous, values
from .shape import _dim, _ints, _slice_key, _tensors, narrow


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


# --- broadcast_tensors, meshgrid ---------------------------------------------------------

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


# --- cartesian_prod ----------------------------------------------------------------------

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


# --- split, tensor_split, chunk, unbind --------------------------------------------------

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


# --- composites: hsplit, vsplit, dsplit, split_with_sizes, combinations, roll, diff ------
# Built from the ops above and from getitem, narrow and cat: their gradients, of every order,
# are those ops' gradients.

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
