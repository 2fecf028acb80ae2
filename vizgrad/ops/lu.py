"""The LU factorization with partial pivoting, as PyTorch's: ``linalg.lu_factor`` (and
``lu_factor_ex``), ``linalg.lu``, ``lu_unpack`` and ``Tensor.lu`` / ``vizgrad.lu``.

A = P L U for a (batch of) m × n matrices, k = min(m, n): P a permutation, L (m × k) unit
lower triangular, U (k × n) upper triangular. ``LU`` holds L below its diagonal and U on and
above it; ``pivots`` (int32, 1-based as LAPACK's) says that step i swapped row i with row
``pivots[i] - 1``.

The factorization is Gaussian elimination written with vizgrad ops, one step per column:
pick the row with the largest |entry| in the column (the first one on ties, and a NaN where
PyTorch's LAPACK picks it: see ``_pivot_row``),
swap it up (a ``gather``), divide the column below the pivot by it and subtract the outer
product from the trailing block. The pivot choice is piecewise constant, so the gradient
of every output is that of the elimination for the chosen rows: PyTorch's LU gradient, to
any order, and the drawing shows the elimination step by step.

Example::

    LU, pivots = vizgrad.linalg.lu_factor(A)
    P, L, U = vizgrad.lu_unpack(LU, pivots)          # A == P @ L @ U
"""

import numpy as np

from .. import creation, dtypes
from ..errors import ArgumentError, DTypeError, LinAlgError, ShapeError, format_shape, not_a_tensor
from ..return_types import _return_type
from ..tensor import Tensor
from .binary import where
from .registry import Sample, register
from .samples import values
from .joins import cat, stack

# the named tuples, as torch.return_types'
_LU_FACTOR = _return_type("linalg_lu_factor", ("LU", "pivots"))
_LU_FACTOR_EX = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LINALG_LU = _return_type("linalg_lu", ("P", "L", "U"))
_LU_UNPACK = _return_type("lu_unpack", ("P", "L", "U"))


def _check_matrix(op, A, name="A", floating=True):
    if not isinstance(A, Tensor):
        raise not_a_tensor(op, name, A)
    if A.ndim < 2:
        raise ShapeError(f"{op}: {name} must be a matrix or a batch of matrices, got shape {format_shape(A.shape)}")
    if floating and not A.is_floating_point():
        raise DTypeError(f"{op}: {name} must be a floating point matrix, got {A.dtype.name}")


def _check_pivot(op, pivot):
    if not pivot:
        raise ArgumentError(f"{op}: LU without pivoting is not implemented on the CPU (as in PyTorch)")


def _swap_index(positions, j, p):
    """``positions`` (0..m-1) with entries j and p (a batch of rows) exchanged."""
    p = p.unsqueeze(-1)
    return where(positions == j, p, where(positions == p, j, positions))


# PyTorch's CPU LAPACK (OpenBLAS) picks its pivots in two ways: for matrices of at most this
# many rows and columns, as the reference idamax, a NaN never larger than anything; for larger
# ones the first NaN in the column, if any (both measured with PyTorch 2.13).
_SMALL_LU = 16


def _pivot_row(column, small):
    """The row of the pivot in each ``column`` (the last dim): the first entry of largest
    magnitude. A NaN there is chosen as PyTorch's LAPACK chooses it: for a ``small`` matrix only
    when it leads the column (the search starts there and nothing compares larger), else the
    first NaN in the column."""
    magnitude = column.abs()
    if not small:
        return magnitude.argmax(-1)                 # (argmax takes the first NaN, as that LAPACK)
    chosen = where(magnitude.isnan(), -1.0, magnitude).argmax(-1)
    return where(magnitude[..., 0].isnan(), 0, chosen)


def _eliminate(A):
    """``(LU, pivots, info)`` of ``A`` by Gaussian elimination with partial pivoting."""
    m, n = A.shape[-2], A.shape[-1]
    small = max(m, n) <= _SMALL_LU
    positions = creation.arange(m, device=A.device).expand(*A.shape[:-2], m)
    lu, chosen = A, []
    info = creation.zeros(*A.shape[:-2], dtype=dtypes.int32, device=A.device)
    for j in range(min(m, n)):
        p = _pivot_row(lu[..., j:, j].detach(), small) + j
        swap = _swap_index(positions, j, p)
        lu = lu.gather(-2, swap.unsqueeze(-1).expand(*lu.shape))
        chosen.append(p)
        pivot = lu[..., j, j]
        zero = pivot == 0
        info = where(zero & (info == 0), j + 1, info)
        multipliers = lu[..., j + 1:, j] / where(zero, 1.0, pivot).unsqueeze(-1)
        trailing = lu[..., j + 1:, j + 1:] - multipliers.unsqueeze(-1) * lu[..., j, j + 1:].unsqueeze(-2)
        below = cat([lu[..., j + 1:, :j], multipliers.unsqueeze(-1), trailing], -1)
        lu = cat([lu[..., :j + 1, :], below], -2)
    pivots = (stack(chosen, -1) + 1).to(dtypes.int32)
    return lu, pivots, info


def _singular(op, info):
    """A LinAlgError for the first batch element whose U has a zero on its diagonal."""
    flat = info.reshape(-1).tolist()
    index = next(i for i, value in enumerate(flat) if value)
    where = f"(Batch element {index}): " if info.ndim else ""
    return LinAlgError(f"{op}: {where}U[{flat[index]},{flat[index]}] is zero and using it on lu_solve would result "
                       "in a division by zero. If you still want to perform the factorization, consider calling "
                       "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _lu_reference(A):
    """scipy's getrf, one matrix at a time (the tests' reference)."""
    import scipy.linalg
    factors, pivots = [], []
    for matrix in A.reshape((-1,) + A.shape[-2:]):
        lu, piv = scipy.linalg.lu_factor(matrix)
        factors.append(lu)
        pivots.append(piv + 1)
    shape = A.shape[:-2]
    return (np.reshape(factors, A.shape),
            np.reshape(pivots, shape + (min(A.shape[-2:]),)).astype(np.int32))


def _lu_samples(rng):
    yield Sample((values(rng, (3, 3)),), name="matrix")
    yield Sample((values(rng, (2, 4, 4)),), name="batch")
    yield Sample((values(rng, (4, 2)),), name="tall")
    yield Sample((values(rng, (2, 3)),), name="wide")


@register(_lu_reference, _lu_samples, name="linalg.lu_factor", method=False, atol=1e-10, rtol=1e-10)
def lu_factor(A, *, pivot=True):
    """The LU factorization of ``A`` (m × n, or a batch) with partial pivoting, as a named tuple
    ``(LU, pivots)``: L (unit lower triangular) below LU's diagonal, U on and above it, and the
    row swapped with row i at step i in ``pivots[i] - 1`` (int32). Raises
    :class:`vizgrad.linalg.LinAlgError` when a square A is singular (a zero on U's diagonal).

    Example::

        LU, pivots = vizgrad.linalg.lu_factor(vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]]))
        # LU = [[3., 4.], [0.3333, 0.6667]], pivots = [2, 2]
    """
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    if A.shape[-2] == A.shape[-1] and info.any().item():
        raise _singular("linalg.lu_factor", info)
    return _LU_FACTOR(LU, pivots)


@register(lambda A: _lu_reference(A) + (np.zeros(A.shape[:-2], dtype=np.int32),), _lu_samples,
          name="linalg.lu_factor_ex", method=False, atol=1e-10, rtol=1e-10)
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """:func:`lu_factor` without the error: ``(LU, pivots, info)``, info (int32) 0, or the
    1-based index of the first zero on U's diagonal. ``check_errors=True`` raises instead.

    Example::

        LU, pivots, info = vizgrad.linalg.lu_factor_ex(vizgrad.zeros(2, 2))   # info = 1
    """
    _check_matrix("linalg.lu_factor_ex", A)
    _check_pivot("linalg.lu_factor_ex", pivot)
    LU, pivots, info = _eliminate(A)
    if check_errors and info.any().item():
        raise _singular("linalg.lu_factor_ex", info)
    return _LU_FACTOR_EX(LU, pivots, info)


def _permutation(pivots, m, dtype, device):
    """P with A = P L U from LAPACK's sequential row swaps ``pivots`` (1-based)."""
    positions = creation.arange(m, device=device).expand(*pivots.shape[:-1], m)
    order = positions
    for j in range(pivots.shape[-1]):
        p = pivots[..., j].to(dtypes.int64) - 1
        swap = _swap_index(positions, j, p)
        order = order.gather(-1, swap)                  # (Pᵀ A)[i] = A[order[i]]
    return (order.unsqueeze(-2) == positions.unsqueeze(-1)).to(dtype)    # P[order[i], i] = 1


def _unpack_reference(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    L = np.tril(LU_data, -1)[..., :, :k] + np.eye(m, k)
    U = np.triu(LU_data)[..., :k, :]
    P = np.empty(LU_data.shape[:-2] + (m, m))
    for index in np.ndindex(LU_data.shape[:-2]):
        order = list(range(m))
        for j, p in enumerate(LU_pivots[index]):
            order[j], order[p - 1] = order[p - 1], order[j]
        P[index] = np.eye(m)[:, order]
    return P, L, U


def _unpack_samples(rng):
    for sample in _lu_samples(rng):
        LU, pivots = _lu_reference(sample.args[0])
        yield Sample((LU, pivots), name=sample.name)


@register(_unpack_reference, _unpack_samples, name="lu_unpack", method=False, constant_outputs=(0,),
          atol=1e-12, rtol=1e-12)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from :func:`lu_factor`'s ``(LU, pivots)``: A = P L U. L is LU's strict
    lower part plus the identity (m × k), U its upper part (k × n); P the permutation the
    pivots' row swaps make, all three of LU's dtype. What ``unpack_data`` / ``unpack_pivots`` turn off
    is returned empty.

    Example::

        P, L, U = vizgrad.lu_unpack(*vizgrad.linalg.lu_factor(A))
    """
    _check_matrix("lu_unpack", LU_data, "LU_data", floating=False)     # (any dtype: it only copies, as PyTorch)
    if not isinstance(LU_pivots, Tensor):
        raise not_a_tensor("lu_unpack", "LU_pivots", LU_pivots)
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    if LU_pivots.dtype is not dtypes.int32:
        raise DTypeError(f"lu_unpack: LU_pivots is expected to be a tensor of int32 dtype (as lu_factor makes "
                         f"it), got {LU_pivots.dtype.name}")
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise ShapeError(f"lu_unpack: LU_pivots of shape {format_shape(LU_pivots.shape)} does not fit LU_data of "
                         f"shape {format_shape(LU_data.shape)}: expected {format_shape(LU_data.shape[:-2] + (k,))}")
    empty = creation.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        eye = creation.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = LU_data[..., :, :k].tril(-1) + eye
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    P = _permutation(LU_pivots, m, LU_data.dtype, LU_data.device) if unpack_pivots else empty
    return _LU_UNPACK(P, L, U)


def _linalg_lu_reference(A):
    return _unpack_reference(*_lu_reference(A))


@register(_linalg_lu_reference, _lu_samples, name="linalg.lu", method=False, constant_outputs=(0,),
          atol=1e-10, rtol=1e-10)
def linalg_lu(A, *, pivot=True):
    """``(P, L, U)`` with A = P L U, partial pivoting (:func:`lu_factor` then :func:`lu_unpack`).

    Example::

        P, L, U = vizgrad.linalg.lu(vizgrad.randn(3, 3))
    """
    _check_matrix("linalg.lu", A)
    _check_pivot("linalg.lu", pivot)
    LU, pivots, _ = _eliminate(A)
    return _LINALG_LU(*lu_unpack(LU, pivots))


@register(lambda A, pivot=True, get_infos=False: _lu_reference(A), _lu_samples, atol=1e-10, rtol=1e-10)
def lu(A, pivot=True, get_infos=False):
    """``(A_LU, pivots)``, or ``(A_LU, pivots, infos)`` with ``get_infos=True``: PyTorch's older
    name for :func:`linalg.lu_factor` (``Tensor.lu``). Without ``get_infos`` a singular square
    matrix raises :class:`vizgrad.linalg.LinAlgError`, as in PyTorch.

    Example::

        A_LU, pivots = vizgrad.randn(3, 3).lu()
    """
    _check_matrix("lu", A, "input")
    _check_pivot("lu", pivot)
    LU, pivots, info = _eliminate(A)
    if get_infos:
        return LU, pivots, info
    if A.shape[-2] == A.shape[-1] and info.any().item():
        raise _singular("lu", info)
    return LU, pivots
