"""``vizgrad.linalg``: PyTorch's ``torch.linalg``: norms built from vizgrad's reductions
(so their gradients are those of :func:`vizgrad.norm`, :func:`vizgrad.amax` and the rest;
the spectral and nuclear norms from :func:`svdvals`), the cross product, inverses,
determinants and linear systems of square matrices, and the decompositions with what is
built on them (:mod:`vizgrad.ops.decompositions`, :mod:`~vizgrad.ops.solvers`,
:mod:`~vizgrad.ops.matrix_functions`): ``cholesky``, ``qr``, ``eigh``, ``svd``,
``pinv``, ``lstsq``, ``solve_triangular``, ``matrix_exp``, ``matrix_power``, ``cond``,
``matrix_rank`` and the rest, each differentiable to any order.

Example::

    vizgrad.linalg.vector_norm(vizgrad.tensor([3.0, 4.0]))            # tensor(5.)
    vizgrad.linalg.matrix_norm(vizgrad.ones(2, 3), ord=float("inf"))  # tensor(3.)
"""

import math
import numbers

from .errors import ArgumentError, LinAlgError, ShapeError, format_shape, not_a_tensor, public
from .ops.conversion import to_dtype
from .ops.reduce import amax, amin, norm as _norm, sum as _sum
from .ops.decompositions import cholesky, cholesky_ex, eigh, eigvalsh, matrix_rank, pinv, qr, svd, svdvals
from .ops.matrix_functions import cond, diagonal, matmul, matrix_power, multi_dot, vander, vecdot
from .ops.matrix_functions import linalg_matrix_exp as matrix_exp
from .ops.solvers import inv_ex, lstsq, solve_ex, solve_triangular, tensorinv, tensorsolve
from .ops.lu import linalg_lu as lu, lu_factor, lu_factor_ex
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm"]


@public("vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm over ``dim`` (every element when None): (Σ|xᵢ|^ord)^(1/ord),
    ``inf``/``-inf`` the largest/smallest |xᵢ|, 0 the count of non-zeros.

    Example::

        vizgrad.linalg.vector_norm(vizgrad.tensor([3.0, -4.0]), ord=1)   # tensor(7.)
    """
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise ArgumentError(f"vector_norm: ord must be a number (inf included), got {ord!r}")
    return _norm(x, p=ord, dim=dim, keepdim=keepdim, dtype=dtype)


@public("matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of ``A`` over the two dims ``dim``: ``'fro'`` (the square root of
    the sum of squares), 1 / -1 (the largest / smallest column sum of |A|), ``inf`` /
    ``-inf`` (the largest / smallest row sum), and those made of the singular values:
    ``'nuc'`` (their sum), 2 / -2 (the largest / smallest).

    Example::

        vizgrad.linalg.matrix_norm(vizgrad.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)   # tensor(6.)
    """
    if not isinstance(A, Tensor):
        raise not_a_tensor("matrix_norm", "A", A)
    if A.ndim < 2:
        raise ShapeError(f"matrix_norm: A must have at least 2 dims, got shape {format_shape(A.shape)}")
    if isinstance(dim, int) or len(dim) != 2:
        raise ArgumentError(f"matrix_norm: dim must be a pair of dims, got {dim!r}")
    if dtype is not None:
        A = to_dtype(A, dtype)
    if ord == "fro":
        return _norm(A, p=2, dim=tuple(dim), keepdim=keepdim)
    if isinstance(ord, bool) or ord not in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise ArgumentError(f"matrix_norm: ord must be 'fro', 'nuc', 2, -2, 1, -1, inf or -inf, got {ord!r}")
    rows, columns = (d % A.ndim for d in dim)
    if rows == columns:
        raise ArgumentError(f"matrix_norm: dim must name two different dims, got {dim!r}")
    if ord in ("nuc", 2, -2):
        values = svdvals(A.movedim((rows, columns), (-2, -1)))
        result = _sum(values, -1) if ord == "nuc" else (amax if ord == 2 else amin)(values, -1)
        return result.unsqueeze(min(rows, columns)).unsqueeze(max(rows, columns)) if keepdim else result
    summed, across = (rows, columns) if abs(ord) == 1 else (columns, rows)   # column sums, or row sums
    sums = _sum(A.abs(), summed, keepdim=True)
    extreme = (amax if ord > 0 else amin)(sums, across, keepdim=True)
    return extreme if keepdim else extreme.squeeze((rows, columns))


@public("linalg.norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or a matrix norm, as ``torch.linalg.norm``: with neither ``ord`` nor
    ``dim``, the 2-norm of all elements; else a vector norm over one dim (or of a 1-D
    tensor) and a matrix norm over two dims (or of a 2-D tensor).

    Example::

        vizgrad.linalg.norm(vizgrad.ones(2, 2))          # tensor(2.)
    """
    if not isinstance(A, Tensor):
        raise not_a_tensor("linalg.norm", "A", A)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise ShapeError(f"linalg.norm: with ord and no dim, A must be 1-D or 2-D, got shape "
                             f"{format_shape(A.shape)}")
        dim = (0,) if A.ndim == 1 else (0, 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 1:
        return vector_norm(A, 2 if ord is None else ord, dims[0], keepdim, dtype=dtype)
    return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)


@public("cross")
def cross(input, other, *, dim=-1):
    """The cross product of the 3-vectors along ``dim`` (the last by default), broadcasting:
    :func:`vizgrad.cross` with PyTorch's ``torch.linalg.cross`` default.

    Example::

        vizgrad.linalg.cross(vizgrad.eye(3), vizgrad.ones(1, 3))   # row i: e_i × (1, 1, 1)
    """
    from .ops.linalg import cross_product
    return cross_product("linalg.cross", input, other, dim)


@public("inv")
def inv(A):
    """The inverse of a square matrix (or of each in a batch): :func:`vizgrad.inverse`.

    Example::

        vizgrad.linalg.inv(vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]]))   # diag(0.5, 0.25)
    """
    from .ops.linalg import _inverse
    return _inverse("linalg.inv", A)


@public("det")
def det(A):
    """The determinant of a square matrix (or of each in a batch): :func:`vizgrad.det`.

    Example::

        vizgrad.linalg.det(vizgrad.eye(3) * 2)   # tensor(8.)
    """
    from .ops.linalg import determinant
    return determinant("linalg.det", A)


@public("slogdet")
def slogdet(A):
    """``(sign, logabsdet)`` of the determinant: :func:`vizgrad.slogdet`.

    Example::

        vizgrad.linalg.slogdet(vizgrad.eye(2) * -3)   # sign tensor(1.), logabsdet tensor(2.1972)
    """
    from .ops.linalg import log_determinant
    return log_determinant("linalg.slogdet", A)


@public("solve")
def solve(A, B, *, left=True):
    """X with A X = B for a square (batch of) A; B a matrix or, as PyTorch, a vector (or a
    batch of vectors). ``left=False`` solves X A = B. Gradients: G_B = A⁻ᵀ G, G_A = -G_B Xᵀ.

    Example::

        vizgrad.linalg.solve(vizgrad.tensor([[2.0, 0.0], [0.0, 4.0]]), vizgrad.tensor([2.0, 2.0]))   # tensor([1.0, 0.5])
    """
    from .ops.linalg import solve_system
    return solve_system("linalg.solve", A, B, left=left)
