"""``vizgrad.sparse``: PyTorch's ``torch.sparse`` for sparse COO tensors (:mod:`vizgrad.ops.sparse`).

Example::

    s = vizgrad.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    vizgrad.sparse.mm(s, vizgrad.ones(2, 1))     # tensor([[2.], [3.]])
    vizgrad.sparse.sum(s, 0)                     # a sparse tensor of size (2,)
"""

from .errors import ShapeError, UnsupportedError, check_dim, format_shape, not_a_tensor, public
from .ops.sparse import SparseMm, SparseSum, SparseSumAll
from .tensor import Tensor

__all__ = ["mm", "sum"]


@public("sparse.mm")
def mm(mat1, mat2):
    """``mat1 @ mat2`` for a sparse COO matrix ``mat1`` and a dense ``mat2``, by scatter-adding
    ``values[k] * mat2[col[k]]`` into row ``row[k]``. The gradient to ``mat1`` is sparse with
    ``mat1``'s pattern, ``(G mat2ᵀ)`` at its entries (:func:`vizgrad.mm` gives a dense one);
    the gradient to ``mat2`` is ``mat1ᵀ G``.

    Example::

        s = vizgrad.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2), requires_grad=True)
        vizgrad.sparse.mm(s, vizgrad.ones(2, 2)).sum().backward()   # s.grad: sparse, nnz=2
    """
    for name, value in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(value, Tensor):
            raise not_a_tensor("sparse.mm", name, value)
    if mat1.ndim != 2 or mat2.ndim != 2 or mat1.shape[1] != mat2.shape[0]:
        raise ShapeError(f"sparse.mm: expects matrices (n, m) and (m, p), got {format_shape(mat1.shape)} and "
                         f"{format_shape(mat2.shape)}")
    return SparseMm.apply(mat1, mat2)


@public("sparse.sum")
def sum(input, dim=None, dtype=None):  # noqa: A001  (torch.sparse.sum)
    """The sum of a sparse COO tensor's entries over ``dim`` (every dim when None): a dense 0-d
    tensor when no dim is left, else a sparse tensor of the remaining dims. The gradient is
    sparse, with ``input``'s pattern.

    Example::

        s = vizgrad.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
        vizgrad.sparse.sum(s)             # tensor(12.)
        vizgrad.sparse.sum(s, 1)          # sparse, size=(2,): values [3., 9.]
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("sparse.sum", "input", input)
    if not input.is_sparse:
        raise UnsupportedError("sparse.sum: expects a sparse COO tensor; sum a dense one with vizgrad.sum")
    if dtype is not None:
        raise UnsupportedError("sparse.sum: dtype= is not implemented; convert the values first")
    if dim is None:
        return SparseSumAll.apply(input, axes=tuple(range(input.ndim)), keepdim=False, masked=True)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(sorted({check_dim("sparse.sum", d, input.ndim) for d in dims}))
    return SparseSum.apply(input, dims=dims)

