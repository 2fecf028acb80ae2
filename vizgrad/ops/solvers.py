"""``torch.linalg``'s linear systems: triangular solves (``solve_triangular``,
``triangular_solve``), ``inv_ex`` and ``solve_ex`` with LAPACK's info, least squares
(``lstsq``, every driver) and tensors as linear maps (``tensorinv``, ``tensorsolve``).

Every op is registered under its dotted name (``linalg.lstsq``) and reached as
``vizgrad.linalg.lstsq``. The kernels come from the backends' EXTRAS (``solve_triangular``,
``inv_ex``, ``solve_ex``); each backward is written with ``xp``, so that under
``create_graph=True`` it records its own graph. The argument checks are
:mod:`vizgrad.ops.decompositions`'.
"""

import math
import numbers

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError, check_dim, format_shape, not_a_tensor
from ..tensor import Tensor
from .decompositions import _check_info, _flag, _int, _matrix, _pinv, _same_dtype, _singular, matrix_rank, svdvals
from .linalg import _matrices, batch_shape, solve_system, system
from .registry import Sample, register
from .samples import values


# --- linear systems ------------------------------------------------------------------------

class SolveTriangular(Op):
    """X with T X = B, T the upper (lower) triangle of A, unit diagonal if asked.

    dX = T⁻¹(dB - dT X): B̄ = T⁻ᵀ X̄ (a triangular solve with Tᵀ), Ā = -B̄ Xᵀ on T's triangle
    (its diagonal excluded when unit).
    """

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        xp = ctx.xp
        out = xp.solve_triangular(a, b, upper, unitriangular)
        ctx.upper, ctx.unitriangular = upper, unitriangular
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        upper, unit = ctx.upper, ctx.unitriangular
        grad_b = xp.solve_triangular(xp.matrix_transpose(a), grad, not upper, unit)
        grad_a = None
        if ctx.needs_input_grad[0]:
            full = -(grad_b @ xp.matrix_transpose(out))
            grad_a = xp.triu(full, k=1 if unit else 0) if upper else xp.tril(full, k=-1 if unit else 0)
        return grad_a, grad_b


def triangular_solve(a, b, upper, unitriangular=False):
    """X with T X = B (T a's upper or lower triangle): what ``xp.solve_triangular`` is over
    Tensors (:mod:`vizgrad.ops.tensor_namespace`), batch dims broadcast."""
    batch = batch_shape("linalg.solve_triangular", a, b)
    return SolveTriangular.apply(a.expand(batch + tuple(a.shape[-2:])), b.expand(batch + tuple(b.shape[-2:])),
                                 upper=upper, unitriangular=unitriangular)


def _triangular_samples(rng):
    yield Sample((_matrices(rng, (3, 3)), values(rng, (3, 2))), {"upper": True}, name="upper")
    yield Sample((_matrices(rng, (3, 3)), values(rng, (3, 2))), {"upper": False}, name="lower")
    yield Sample((_matrices(rng, (2, 3, 3)), values(rng, (4, 1, 3, 2))), {"upper": False}, name="broadcast batch")
    yield Sample((_matrices(rng, (3, 3)), values(rng, (2, 3))), {"upper": True, "left": False}, name="right")
    yield Sample((_matrices(rng, (3, 3)), values(rng, (3, 2))), {"upper": True, "unitriangular": True},
                 name="unit upper")
    yield Sample((_matrices(rng, (3, 3)), values(rng, (2, 3))), {"upper": False, "left": False, "unitriangular": True},
                 name="unit lower right")


def _triangular_reference(A, B, *, upper, left=True, unitriangular=False):
    t = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        index = np.arange(t.shape[-1])
        t[..., index, index] = 1.0
    if left:
        return np.linalg.solve(*_broadcast_pair(t, B))
    return np.swapaxes(np.linalg.solve(*_broadcast_pair(np.swapaxes(t, -1, -2), np.swapaxes(B, -1, -2))), -1, -2)


def _broadcast_pair(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])


@register(_triangular_reference, _triangular_samples, name="linalg.solve_triangular", method=False,
          atol=1e-10, rtol=1e-10)
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (``left``) or X A = B for a triangular A (or a batch: batch dims
    broadcast): only A's upper (``upper=True``) or lower triangle is read, its diagonal taken
    as ones with ``unitriangular``. A zero on the diagonal gives inf/NaN, as in PyTorch.

    Gradients: B̄ = A⁻ᵀ X̄ and Ā = -B̄ Xᵀ on A's triangle (for ``left``).

    Example::

        vizgrad.linalg.solve_triangular(vizgrad.tensor([[2.0, 1.0], [0.0, 4.0]]), vizgrad.tensor([[3.0], [4.0]]),
                                        upper=True)   # tensor([[1.], [1.]])
    """
    op = "linalg.solve_triangular"
    _matrix(op, A, square=True)
    _matrix(op, B, "B")
    _same_dtype(op, ("A", "B"), A, B)
    upper, left = _flag(op, "upper", upper), _flag(op, "left", left)
    unitriangular = _flag(op, "unitriangular", unitriangular)
    size, inner = A.shape[-1], (B.shape[-2] if left else B.shape[-1])
    if size != inner:
        equation = "AX = B" if left else "XA = B"
        raise ShapeError(f"{op}: A of shape {format_shape(A.shape)} and B of shape {format_shape(B.shape)} do not fit "
                         f"the equation {equation} (B needs {size} {'rows' if left else 'columns'}, has {inner})")
    batch_shape(op, A, B)
    if left:
        return triangular_solve(A, B, upper, unitriangular)
    return triangular_solve(A.mT, B.mT, not upper, unitriangular).mT    # X A = B  ⇔  Aᵀ Xᵀ = Bᵀ


class InverseEx(Op):
    """(A⁻¹, info); Ā = -A⁻ᵀ Ḡ A⁻ᵀ (as :func:`vizgrad.linalg.inv`)."""

    @staticmethod
    def forward(ctx, a, op, check):
        xp = ctx.xp
        out, info = xp.inv_ex(a)
        if check:
            _check_info(xp, info, _singular, op, a.shape)
        ctx.save_for_backward(out)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        out, = ctx.saved_tensors
        transposed = ctx.xp.matrix_transpose(out)
        return -(transposed @ grad @ transposed)


def _square_samples(rng):
    yield Sample((_matrices(rng, (3, 3)),), name="matrix")
    yield Sample((_matrices(rng, (2, 4, 4)),), name="batch")


@register(lambda A: (np.linalg.inv(A), np.zeros(A.shape[:-2], dtype=np.int32)), _square_samples,
          name="linalg.inv_ex", method=False, atol=1e-10, rtol=1e-10)
def inv_ex(A, *, check_errors=False):
    """The inverse of a square matrix (or of each in a batch) without the error, as a named
    tuple ``(inverse, info)``: info (int32) 0, or for a singular matrix the 1-based index of the
    first zero pivot of its LU factorization (its 'inverse' then holds inf/NaN).
    ``check_errors=True`` raises :class:`vizgrad.linalg.LinAlgError` instead.

    Example::

        vizgrad.linalg.inv_ex(vizgrad.ones(2, 2)).info   # tensor(2, dtype=vizgrad.int32)
    """
    op = "linalg.inv_ex"
    _matrix(op, A, square=True)
    check = _flag(op, "check_errors", check_errors)
    return return_types.linalg_inv_ex(*InverseEx.apply(A, op=op, check=check))


class SolveEx(Op):
    """(X, info) with A X = B; B̄ = A⁻ᵀ X̄, Ā = -B̄ Xᵀ (as :func:`vizgrad.linalg.solve`)."""

    broadcasts = True

    @staticmethod
    def forward(ctx, a, b, op, check):
        xp = ctx.xp
        out, info = xp.solve_ex(a, b)
        if check:
            _check_info(xp, info, _singular, op, a.shape)
        ctx.save_for_backward(a, out)
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        grad_b = xp.linalg.solve(xp.matrix_transpose(a), grad)
        return -(grad_b @ xp.matrix_transpose(out)), grad_b


def _solve_ex_samples(rng):
    yield Sample((_matrices(rng, (3, 3)), values(rng, (3, 2))), name="matrix")
    yield Sample((_matrices(rng, (2, 3, 3)), values(rng, (2, 3))), name="batch of vectors")
    yield Sample((_matrices(rng, (3, 3)), values(rng, (2, 3))), {"left": False}, name="right")


def _solve_ex_reference(A, B, *, left=True):
    if not left:
        x = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)
    elif B.ndim == A.ndim - 1:
        x = np.linalg.solve(A, B[..., None])[..., 0]
    else:
        x = np.linalg.solve(A, B)
    return x, np.zeros(A.shape[:-2], dtype=np.int32)


@register(_solve_ex_reference, _solve_ex_samples, name="linalg.solve_ex", method=False, atol=1e-10, rtol=1e-10)
def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`vizgrad.linalg.solve` without the error, as a named tuple ``(result, info)``:
    info (int32, one per matrix) 0, or for a singular A the 1-based index of the first zero
    pivot of its LU factorization (the result then holds inf/NaN). ``check_errors=True``
    raises :class:`vizgrad.linalg.LinAlgError` instead.

    Example::

        vizgrad.linalg.solve_ex(2 * vizgrad.eye(2), vizgrad.ones(2)).result   # tensor([0.5000, 0.5000])
    """
    op = "linalg.solve_ex"
    check = _flag(op, "check_errors", check_errors)
    left = _flag(op, "left", left)
    _matrix(op, A, square=True)
    if not isinstance(B, Tensor):
        raise not_a_tensor(op, "B", B)
    _same_dtype(op, ("A", "B"), A, B)
    if not left:
        if B.ndim < 2:
            raise ShapeError(f"{op}: with left=False B must have at least 2 dimensions, got shape "
                             f"{format_shape(B.shape)}")
        result, info = solve_ex(A.mT, B.mT, check_errors=check)
        return return_types.linalg_solve_ex(result.mT, info)
    a, column, vector = system(op, A, B)
    result, info = SolveEx.apply(a, column, op=op, check=check)
    return return_types.linalg_solve_ex(result.squeeze(-1) if vector else result, info)


# --- least squares -------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_samples(rng):
    yield Sample((values(rng, (5, 3)), values(rng, (5, 2))), name="tall")
    yield Sample((values(rng, (2, 4, 3)), values(rng, (2, 4))), name="batch of vectors")
    yield Sample((values(rng, (3, 5)), values(rng, (3, 2))), name="wide")
    yield Sample((values(rng, (5, 3)), values(rng, (5, 2))), {"driver": "gelsd"}, name="gelsd")
    yield Sample((values(rng, (2, 4, 2)), values(rng, (2, 4, 1))), {"driver": "gels"}, name="gels")


def _lstsq_reference(A, B, rcond=None, *, driver=None):
    driver = driver or "gelsy"
    vector = B.ndim == A.ndim - 1
    B = B[..., None] if vector else B
    solution = np.linalg.pinv(A) @ B
    m, n = A.shape[-2:]
    ranks = np.linalg.matrix_rank(A) if driver != "gels" else np.zeros((0,), np.int64)
    full_rank = driver == "gels" or bool(np.all(ranks == n))
    residuals = (np.sum((A @ solution - B) ** 2, axis=-2) if driver != "gelsy" and m > n and full_rank
                 else np.zeros((0,)))
    singular = np.linalg.svd(A, compute_uv=False) if driver in ("gelsd", "gelss") else np.zeros((0,))
    return (solution[..., 0] if vector else solution), residuals, np.asarray(ranks, dtype=np.int64), singular


@register(_lstsq_reference, _lstsq_samples, name="linalg.lstsq", method=False, constant_outputs=(3,),
          atol=1e-9, rtol=1e-9)
def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of A X ≈ B (minimizing ‖A X - B‖, the smallest such X when
    A has deficient rank), as a named tuple ``(solution, residuals, rank, singular_values)``
    filled as PyTorch fills them on the CPU: ``rank`` for the drivers 'gelsy' (the default),
    'gelsd' and 'gelss'; ``singular_values`` for 'gelsd' and 'gelss'; ``residuals`` (the
    squared column norms of A X - B) for every driver but 'gelsy', where A has more rows than
    columns and full rank; each empty otherwise. B is a matrix, or a batch of vectors with one
    dim fewer than A. Singular values at or below ``rcond``·σ₁ (default ε·max(m, n)) count as
    zero. The solution is A⁺ B, whatever the driver, and its gradients are those of
    :func:`pinv`: PyTorch's 'gelsd'. (Where ``rcond`` drops a direction that is not exactly
    null, PyTorch's 'gelsy' truncates a pivoted QR factorization instead, which can give a
    different solution.)

    Example::

        vizgrad.linalg.lstsq(vizgrad.tensor([[1.0], [1.0]]), vizgrad.tensor([[1.0], [3.0]])).solution   # tensor([[2.]])
    """
    from ..autograd.grad_mode import no_grad
    from ..creation import zeros
    op = "linalg.lstsq"
    _matrix(op, A)
    if not isinstance(B, Tensor):
        raise not_a_tensor(op, "B", B)
    _same_dtype(op, ("A", "B"), A, B)
    if driver is None:
        driver = "gelsy"
    if not isinstance(driver, str) or driver not in _DRIVERS:
        raise ArgumentError(f"{op}: driver must be one of 'gels', 'gelsy' (the default), 'gelsd' or 'gelss', "
                            f"got {driver!r}")
    if B.ndim not in (A.ndim, A.ndim - 1):
        raise ShapeError(f"{op}: B must have as many dims as A ({A.ndim}), or one fewer (a batch of vectors), got "
                         f"shapes {format_shape(A.shape)} and {format_shape(B.shape)}")
    vector = B.ndim == A.ndim - 1
    column = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if column.shape[-2] != m:
        raise ShapeError(f"{op}: B must have {m} rows to match A of shape {format_shape(A.shape)}, got shape "
                         f"{format_shape(B.shape)}")
    batch = batch_shape(op, A, column)
    a, column = A.expand(batch + (m, n)), column.expand(batch + tuple(column.shape[-2:]))
    if rcond is None:
        rcond = float(np.finfo(A.dtype.numpy).eps) * max(m, n)
    elif isinstance(rcond, bool) or not isinstance(rcond, numbers.Real):
        raise ArgumentTypeError(f"{op}: rcond must be a number, got {type(rcond).__name__} ({rcond!r})")
    # 'gels' assumes full rank: no singular value is dropped
    solution = _pinv(op, a, None, 0.0 if driver == "gels" else rcond, False) @ column
    empty = zeros((0,), dtype=A.dtype, device=A.device)
    ranks = zeros((0,), dtype=dtypes.int64, device=A.device)
    if driver != "gels":
        ranks = matrix_rank(a.detach(), rtol=rcond)
    residuals = solution.reshape(-1)[:0]                     # empty, on the graph, as PyTorch's
    if driver != "gelsy" and m > n and (driver == "gels" or bool((ranks == n).all())):
        residuals = ((a @ solution - column) ** 2).sum(-2)
    singular_values = empty
    if driver in ("gelsd", "gelss"):
        with no_grad():
            singular_values = svdvals(a)
    return return_types.linalg_lstsq(solution.squeeze(-1) if vector else solution, residuals, ranks,
                                     singular_values)


# --- tensors as linear maps ---------------------------------------------------------------------

def _tensorinv_samples(rng):
    yield Sample((_matrices(rng, (4, 4)).reshape(4, 2, 2),), {"ind": 1}, name="ind=1")
    yield Sample((_matrices(rng, (6, 6)).reshape(2, 3, 6),), name="ind=2")


@register(lambda A, ind=2: np.linalg.tensorinv(A, ind), _tensorinv_samples, name="linalg.tensorinv", method=False,
          atol=1e-10, rtol=1e-10)
def tensorinv(A, ind=2):
    """The inverse of A seen as a linear map from its last dims to its first ``ind`` ones: the
    X of shape A.shape[ind:] + A.shape[:ind] with tensordot(A, X, ind) the identity (the two
    products of sizes must be equal). Computed as the inverse of A reshaped to a square matrix.

    Example::

        vizgrad.linalg.tensorinv(2 * vizgrad.eye(4).reshape(4, 2, 2), ind=1).shape   # (2, 2, 4)
    """
    from .linalg import _inverse
    op = "linalg.tensorinv"
    if not isinstance(A, Tensor):
        raise not_a_tensor(op, "A", A)
    ind = _int(op, "ind", ind)
    if not 0 < ind < max(A.ndim, 1):
        raise ArgumentError(f"{op}: ind must be a positive int below A's number of dims ({A.ndim}), got {ind}")
    rows, columns = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != columns:
        raise ShapeError(f"{op}: the product of the first ind={ind} dims of A ({rows}) must equal that of the others "
                         f"({columns}), got shape {format_shape(A.shape)}")
    return _inverse(op, A.reshape(rows, columns)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def _tensorsolve_samples(rng):
    yield Sample((_matrices(rng, (6, 6)).reshape(2, 3, 6), values(rng, (2, 3))), name="matrix right side")
    yield Sample((_matrices(rng, (6, 6)).reshape(6, 2, 3), values(rng, (6,))), name="vector right side")
    yield Sample((np.moveaxis(_matrices(rng, (6, 6)).reshape(6, 2, 3), 0, 1), values(rng, (6,))), {"dims": (0,)},
                 name="dims moved")


def _tensorsolve_reference(A, B, dims=None):
    return np.linalg.tensorsolve(A, B, axes=dims)


@register(_tensorsolve_reference, _tensorsolve_samples, name="linalg.tensorsolve", method=False,
          atol=1e-10, rtol=1e-10)
def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's leading dims match B's shape and its other dims
    are X's (after the dims listed in ``dims`` are moved to the end). Computed by
    :func:`vizgrad.linalg.solve` on A reshaped to a square matrix.

    Example::

        vizgrad.linalg.tensorsolve(vizgrad.eye(6).reshape(6, 2, 3), vizgrad.ones(6)).shape   # (2, 3)
    """
    from .shape import movedim
    op = "linalg.tensorsolve"
    for name, operand in (("A", A), ("B", B)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor(op, name, operand)
    if dims is not None:
        dims = [check_dim(op, d, A.ndim, "dims") for d in ((dims,) if isinstance(dims, int) else dims)]
        A = movedim(A, tuple(dims), tuple(range(A.ndim - len(dims), A.ndim)))
    rows, columns = math.prod(A.shape[:B.ndim]), math.prod(A.shape[B.ndim:])
    if B.ndim > A.ndim or rows != columns or tuple(A.shape[:B.ndim]) != tuple(B.shape):
        raise ShapeError(f"{op}: A (shape {format_shape(A.shape)}{' after moving dims' if dims else ''}) must start "
                         f"with B's shape {format_shape(B.shape)} and the product of its other dims must equal "
                         f"B's number of elements ({rows})")
    return solve_system(op, A.reshape(rows, columns), B.reshape(rows)).reshape(tuple(A.shape[B.ndim:]))
