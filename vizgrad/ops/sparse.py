"""Sparse COO tensors, as PyTorch's ``layout=torch.sparse_coo``.

A sparse tensor is a :class:`~vizgrad.Tensor` whose ``_array`` is a
:class:`~vizgrad.backends.sparse_kernels.CooArray` (indices, values, size) instead of a dense
array; its ``layout`` is :data:`sparse_coo`. The ops here take CooArrays (``sparse = True``);
:data:`~vizgrad.autograd.function.SPARSE_RULES` sends the dense ops that have a sparse
counterpart to it (``mm``, ``matmul`` and ``@``, ``+``, ``*`` by a number, ``t()``, ``sum()``),
and ``Op.apply`` refuses every other op on a sparse tensor with an
:class:`~vizgrad.errors.UnsupportedError`.

Gradients follow PyTorch: :func:`vizgrad.sparse.mm` gives the sparse operand a sparse
gradient with its own sparsity pattern (``mm``/``@`` a dense one), ``to_dense()`` passes
back the gradient masked to the input's pattern, ``to_sparse()`` a dense one, and
``sparse_coo_tensor`` gives its values the gradient at their indices.

Example::

    i = vizgrad.tensor([[0, 1, 1], [2, 0, 2]])
    s = vizgrad.sparse_coo_tensor(i, vizgrad.tensor([3.0, 4.0, 5.0]), (2, 3))
    s.to_dense()          # tensor([[0., 0., 3.], [4., 0., 5.]])
"""

import functools
import numbers

from .. import dtypes
from ..autograd.function import SPARSE_RULES, Op
from ..backends import sparse_kernels as kernels
from ..backends.sparse_kernels import CooArray
from ..errors import (ArgumentTypeError, DTypeError, IndexingError, ShapeError, UnsupportedError, format_shape,
                      public, public_caller)
from ..printing import _with_suffixes, format_values
from ..tensor import Tensor
from .binary import Add, Mul
from .linalg import MatMul
from .reduce import Sum
from .shape import MatrixTranspose


class layout:
    """How a tensor's elements are stored: :data:`strided` (dense) or :data:`sparse_coo`."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"vizgrad.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


# --- the ops -----------------------------------------------------------------
class SparseOp(Op):
    """An op over sparse COO arrays. Its backward is first order: under ``create_graph=True``
    (gradients as Tensors) it says so, rather than failing inside a kernel."""

    sparse = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        backward = cls.__dict__.get("backward")
        if backward is not None:
            cls.backward = staticmethod(_first_order(cls.__name__, backward.__func__))


def _first_order(name, backward):
    @functools.wraps(backward)
    def checked(ctx, *grads):
        if any(isinstance(grad, Tensor) for grad in grads):
            raise UnsupportedError(f"backward of {name}: higher-order gradients (create_graph=True) through "
                                   "sparse COO ops are not implemented")
        return backward(ctx, *grads)
    return checked


class SparseCooTensor(SparseOp):
    """Values and indices into a sparse tensor; the values' gradient is read at their indices."""

    @staticmethod
    def forward(ctx, values, indices, shape, coalesced):
        ctx.indices = indices
        return CooArray(indices, values, shape, coalesced, ctx.backend)

    @staticmethod
    def backward(ctx, grad):
        return kernels.values_at(ctx.xp, grad, ctx.indices)


class ToDense(SparseOp):
    @staticmethod
    def forward(ctx, a):
        ctx.pattern = a
        return kernels.to_dense(ctx.xp, a)

    @staticmethod
    def backward(ctx, grad):   # the gradient masked to the input's positions (PyTorch's default)
        return kernels.masked(ctx.xp, grad, ctx.pattern)


class ToSparse(SparseOp):
    @staticmethod
    def forward(ctx, x):
        return kernels.from_dense(ctx.xp, x, ctx.backend)

    @staticmethod
    def backward(ctx, grad):
        return kernels.to_dense(ctx.xp, grad) if type(grad) is CooArray else grad


class Coalesce(SparseOp):
    @staticmethod
    def forward(ctx, a):
        return kernels.coalesce(ctx.xp, a)

    @staticmethod
    def backward(ctx, grad):   # the same function of the entries: the gradient passes through
        return grad


class Values(SparseOp):
    @staticmethod
    def forward(ctx, a):
        ctx.pattern = a
        return a.values

    @staticmethod
    def backward(ctx, grad):
        return kernels.with_values(ctx.pattern, grad)


class SparseMm(SparseOp):
    """``sparse @ dense`` of :func:`vizgrad.sparse.mm`: the sparse operand's gradient keeps its
    pattern, ``(G Bᵀ)`` read at its entries; the dense one's is ``Aᵀ G``."""

    @staticmethod
    def forward(ctx, a, b):
        if type(a) is not CooArray or type(b) is CooArray:
            raise UnsupportedError(f"{public_caller('mm')}: only a sparse COO matrix times a dense one is "
                                   "implemented (for dense @ sparse, compute (sparse.t() @ dense.t()).t())")
        if b.ndim != 2:
            raise UnsupportedError(f"{public_caller('mm')}: the dense operand of a sparse COO product must be a "
                                   f"matrix, got shape {format_shape(b.shape)}")
        if a.dtype != b.dtype:
            raise DTypeError(f"{public_caller('mm')}: the sparse matrix holds {_dtype(ctx.backend, a).name} and the "
                             f"dense one {_dtype(ctx.backend, b).name}: convert one of them (PyTorch does not promote "
                             "here)")
        ctx.save_for_backward(a, b)
        return kernels.matmul(ctx.xp, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs_a:
            grad_a = SparseMm.sparse_grad(xp, a, b, grad)
        if needs_b:
            grad_b = kernels.matmul(xp, kernels.transpose(xp, a), grad)
        return grad_a, grad_b

    @staticmethod
    def sparse_grad(xp, a, b, grad):
        a = kernels.unique_positions(xp, a)
        rows, cols = a.indices[0, :], a.indices[1, :]
        products = xp.take(grad, rows, axis=0) * xp.take(b, cols, axis=0)
        return kernels.with_values(a, xp.sum(products, axis=1))


class SparseMatMul(SparseMm):
    """``mm``, ``matmul`` and ``@`` of a sparse matrix and a dense one: as PyTorch's ``mm``,
    the sparse operand's gradient is dense, ``G Bᵀ``."""

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = xp.matmul(grad, xp.matrix_transpose(b)) if needs_a else None
        grad_b = kernels.matmul(xp, kernels.transpose(xp, a), grad) if needs_b else None
        return grad_a, grad_b


class SparseAdd(SparseOp):
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if type(a) is not CooArray or type(b) is not CooArray:
            raise UnsupportedError("add: a sparse COO tensor can only be added to another sparse COO tensor "
                                   "(convert with .to_dense() for sparse + dense)")
        if a.shape != b.shape:
            raise ShapeError(f"add: the sparse tensors' sizes differ: {format_shape(a.shape)} and "
                             f"{format_shape(b.shape)}")
        if a.dtype != b.dtype:
            raise DTypeError(f"add: the sparse tensors hold {_dtype(ctx.backend, a).name} and "
                             f"{_dtype(ctx.backend, b).name}: convert one of them")
        ctx.alpha = alpha
        return kernels.add(ctx.xp, a, b if alpha == 1 else b * alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad if ctx.alpha == 1 else grad * ctx.alpha


class SparseMul(SparseOp):
    @staticmethod
    def forward(ctx, a, b):
        sparse, number = (a, b) if type(a) is CooArray else (b, a)
        if not isinstance(number, numbers.Number) or isinstance(number, bool) or type(number) is CooArray:
            raise UnsupportedError("mul: a sparse COO tensor can only be multiplied by a Python number")
        values = sparse.values
        if isinstance(number, float) and not _dtype(ctx.backend, values).is_floating_point:
            values = ctx.xp.astype(values, ctx.backend.native_dtype(dtypes.default_float))
        ctx.number = number
        return kernels.with_values(sparse, values * number)

    @staticmethod
    def backward(ctx, grad):
        scaled = grad * ctx.number
        return (scaled, None) if ctx.needs_input_grad[0] else (None, scaled)


class SparseTranspose(SparseOp):
    @staticmethod
    def forward(ctx, a, dim0, dim1):
        if a.ndim > 2:
            raise UnsupportedError(f"t: transposing a {a.ndim}-D sparse COO tensor is not implemented "
                                   "(2-D only)")
        ctx.swaps = a.ndim == 2 and dim0 != dim1
        return kernels.transpose(ctx.xp, a) if ctx.swaps else a

    @staticmethod
    def backward(ctx, grad):
        if not ctx.swaps:
            return grad
        if type(grad) is CooArray:
            return kernels.transpose(ctx.xp, grad)
        return ctx.xp.matrix_transpose(grad)


class SparseSumAll(SparseOp):
    """The sum of every entry (``Tensor.sum()``; :func:`vizgrad.sparse.sum` with ``masked``:
    the gradient keeps the input's pattern, where ``sum()``'s is dense, as in PyTorch)."""

    @staticmethod
    def forward(ctx, a, axes, keepdim, masked=False):
        if keepdim or tuple(axes) != tuple(range(a.ndim)):
            raise UnsupportedError("sum: summing a sparse COO tensor over some of its dims is vizgrad.sparse.sum's "
                                   "(Tensor.sum sums every entry)")
        ctx.pattern, ctx.masked = a, masked
        return ctx.xp.sum(a.values)

    @staticmethod
    def backward(ctx, grad):
        xp, pattern = ctx.xp, ctx.pattern
        if ctx.masked:   # (PyTorch marks this one coalesced)
            positions = kernels.coalesce(xp, kernels.unique_positions(xp, pattern))
            return kernels.with_values(positions, xp.broadcast_to(grad, positions.values.shape))
        return xp.broadcast_to(grad, pattern.shape)


class SparseSum(SparseOp):
    """:func:`vizgrad.sparse.sum` over some dims: a sparse tensor of the others (dense when none is left)."""

    @staticmethod
    def forward(ctx, a, dims):
        ctx.pattern, ctx.dims = a, dims
        if len(dims) == a.ndim:
            return ctx.xp.sum(a.values)
        return kernels.sum_dims(ctx.xp, a, dims)

    @staticmethod
    def backward(ctx, grad):
        xp, pattern = ctx.xp, kernels.unique_positions(ctx.xp, ctx.pattern)
        kept = [dim for dim in range(pattern.ndim) if dim not in ctx.dims]
        indices = xp.take(pattern.indices, xp.asarray(kept, dtype=xp.int64), axis=0)
        return kernels.with_values(pattern, kernels.values_at(xp, grad, indices))


SPARSE_RULES.update({MatMul: SparseMatMul, Add: SparseAdd, Mul: SparseMul, MatrixTranspose: SparseTranspose,
                     Sum: SparseSumAll})


def _dtype(backend, array):
    """The vizgrad dtype of a dense array or of a CooArray's values."""
    return dtypes.as_dtype(backend.dtype_name(array.values if type(array) is CooArray else array))


# --- public functions and Tensor methods ---------------------------------------
@public("sparse_coo_tensor")
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor: ``values[k]`` at position ``indices[:, k]`` of a tensor of ``size``
    (the largest index + 1 along each dim when None); duplicate positions add up. The indices
    are always checked against ``size`` (PyTorch's ``check_invariants=True``); ``is_coalesced=True``
    declares them sorted and unique.

    Example::

        i = vizgrad.tensor([[0, 1], [2, 0]])
        vizgrad.sparse_coo_tensor(i, [3.0, 4.0], (2, 3)).to_dense()   # tensor([[0., 0., 3.], [4., 0., 0.]])
    """
    from ..creation import as_tensor
    indices = as_tensor(indices, device=device)
    values = as_tensor(values, dtype=dtype, device=device)
    if indices.dtype is not dtypes.int64:
        indices = indices.to(dtypes.int64)
    if indices.ndim != 2:
        raise ShapeError(f"sparse_coo_tensor: indices must be sparse_dim x nnz, but got shape "
                         f"{format_shape(indices.shape)}")
    if values.ndim != 1:
        raise UnsupportedError(f"sparse_coo_tensor: values must be 1-D (one per entry), got shape "
                               f"{format_shape(values.shape)}: hybrid sparse tensors (dense dims in the values) "
                               "are not implemented")
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise ShapeError(f"sparse_coo_tensor: indices and values must have same nnz, but got nnz from indices: "
                         f"{nnz}, nnz from values: {values.shape[0]}")
    xp = indices._backend().xp     # (the checks are no ops of the graph)
    found = [int(n) + 1 for n in xp.max(indices._array, axis=1)] if nnz else [0] * sparse_dim
    size = tuple(found) if size is None else tuple(int(n) for n in size)
    if len(size) != sparse_dim:
        raise ShapeError(f"sparse_coo_tensor: size {size} has {len(size)} dims, but indices give positions in "
                         f"{sparse_dim} (values must be 1-D: dense dims are not implemented)")
    if nnz:
        low = [int(n) for n in xp.min(indices._array, axis=1)]
        for dim, (least, most, n) in enumerate(zip(low, found, size)):
            if least < 0 or most > n:
                raise IndexingError(f"sparse_coo_tensor: indices in dim {dim} range from {least} to {most - 1}, "
                                    f"outside a size of {n}")
    if requires_grad:
        values = values.detach()
    out = SparseCooTensor.apply(values, indices=indices._array, shape=size, coalesced=bool(is_coalesced))
    return out.requires_grad_(True) if requires_grad else out


def _sparse_only(method):
    def check(self, *args, **kwargs):
        if type(self._array) is not CooArray:
            raise ArgumentTypeError(f"{method.__name__}: expects a sparse COO tensor (layout=vizgrad.sparse_coo), "
                                    "got a strided (dense) one")
        return method(self, *args, **kwargs)
    check.__name__, check.__doc__ = method.__name__, method.__doc__
    return check


def to_sparse(self, sparse_dim=None):
    """This tensor's non-zero elements as a sparse COO tensor (coalesced); the gradient is dense."""
    if type(self._array) is CooArray:
        return self
    if sparse_dim is not None and sparse_dim != self.ndim:
        raise UnsupportedError(f"to_sparse: sparse_dim={sparse_dim} leaves dense dims, which are not implemented "
                               f"(use sparse_dim={self.ndim})")
    return ToSparse.apply(self)


def to_dense(self, dtype=None, *, masked_grad=True):
    """A dense tensor of this sparse one (a dense tensor is returned as it is); the gradient
    passed back is masked to the entries, as PyTorch's default."""
    if type(self._array) is not CooArray:
        return self
    if dtype is not None or not masked_grad:
        raise UnsupportedError("to_dense: dtype= and masked_grad=False are not implemented for sparse COO tensors")
    return ToDense.apply(self)


@_sparse_only
def coalesce(self):
    """The same tensor with sorted, unique indices (duplicates summed)."""
    return self if self._array.coalesced else Coalesce.apply(self)


@_sparse_only
def is_coalesced(self):
    """Whether the indices are known to be sorted and unique (``coalesce()``, ``to_sparse()``)."""
    return self._array.coalesced


@_sparse_only
def _nnz(self):
    """The number of stored entries (duplicates counted)."""
    return self._array.values.shape[0]


@_sparse_only
def _indices(self):
    """The (sparse_dim, nnz) indices as stored, with no gradient."""
    return Tensor._make(self._array.indices)


@_sparse_only
def _values(self):
    """The values as stored, with no gradient (``values()`` has one)."""
    return Tensor._make(self._array.values)


@_sparse_only
def indices(self):
    """The indices of a coalesced tensor."""
    if not self._array.coalesced:
        raise ArgumentTypeError("indices: cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return Tensor._make(self._array.indices)


@_sparse_only
def values(self):
    """The values of a coalesced tensor; the gradient goes back to those entries."""
    if not self._array.coalesced:
        raise ArgumentTypeError("values: cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return Values.apply(self)


def sparse_dim(self):
    """The number of sparse dims (all of a sparse COO tensor's; 0 for a dense one)."""
    return self.ndim if type(self._array) is CooArray else 0


def dense_dim(self):
    """The number of dense dims (0 for a sparse COO tensor: hybrid ones are not implemented)."""
    return 0 if type(self._array) is CooArray else self.ndim


def sparse_repr(tensor):
    """PyTorch's print of a sparse COO tensor: indices, values, size, nnz, layout and autograd."""
    from ..device import get_default_device
    indent = len("tensor(")
    coo = tensor._array
    parts = []
    for name, array, floating in (("indices", coo.indices, False), ("values", coo.values,
                                                                     tensor.dtype.is_floating_point)):
        host = coo.backend.to_numpy(array)
        prefix = f"{name}=tensor("
        body = format_values(host, floating, indent + len(prefix))
        parts.append(prefix + body + (f", size={tuple(host.shape)})" if host.size == 0 else ")"))
    text = "tensor(" + (",\n" + " " * indent).join(parts) + ",\n" + " " * indent
    text += f"size={tuple(coo.shape)}, nnz={coo.values.shape[0]}"
    suffixes = []
    if tensor.device.type != get_default_device().type:
        suffixes.append(f"device='{tensor.device}'")
    if tensor.dtype not in (dtypes.default_float, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={tensor.dtype!r}")
    suffixes.append(f"layout={sparse_coo!r}")
    if tensor.grad_fn is not None:
        suffixes.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(text, suffixes, indent)


def _dense_only(name):
    """Guard a Tensor method that reads a dense array directly (not through an op)."""
    method = getattr(Tensor, name)

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if type(self._array) is CooArray:
            raise UnsupportedError(f"{name}: not implemented for sparse COO tensors (layout=vizgrad.sparse_coo); "
                                   "call .to_dense() first")
        return method(self, *args, **kwargs)
    setattr(Tensor, name, guarded)


for _name in ("numpy", "item", "tolist", "__array__"):
    _dense_only(_name)
for _method in (to_sparse, to_dense, coalesce, is_coalesced, _nnz, _indices, _values, indices, values, sparse_dim,
                dense_dim):
    setattr(Tensor, _method.__name__, _method)
Tensor.to_sparse_coo = to_sparse
Tensor.is_sparse = property(lambda self: type(self._array) is CooArray,
                            doc="Whether this tensor is a sparse COO tensor.")
Tensor.layout = property(lambda self: sparse_coo if type(self._array) is CooArray else strided,
                         doc=":data:`vizgrad.strided` (dense) or :data:`vizgrad.sparse_coo`.")
