"""``torch.linalg``'s factorizations and what is built on them: Cholesky, QR, the symmetric
eigendecomposition, the SVD, the pseudo-inverse and least squares, triangular systems, the
matrix exponential and powers, condition numbers and ranks, and the small helpers
(``multi_dot``, ``vecdot``, ``vander``, ``tensorinv``, ``tensorsolve``...).

Every op is registered under its dotted name (``linalg.svd``) and reached as
``vizgrad.linalg.svd``. The kernels come from ``xp.linalg`` (the Array API extension) and
from the backends' EXTRAS (``solve_triangular``, ``cholesky_ex``, ``inv_ex``, ``solve_ex``,
``matrix_exp``). Each backward is written with ``xp`` over the saved outputs, so that under
``create_graph=True`` it records its own graph and second derivatives come out of the same
formulas (the values of the eigen- and singular-value-only ops are recomputed from the input
there, through the full decompositions).

The gradients of a decomposition are those of PyTorch (its documented choices):

* the input of ``cholesky`` and ``eigh`` is taken as symmetric: only one triangle is read,
  and the gradient is the symmetric matrix that differentiates the function of a symmetric
  argument;
* eigenvectors and singular vectors are defined up to sign, and their gradients only where
  the eigenvalues (singular values) are distinct: a repeated one gives inf/NaN, unless only
  the values are used (``eigvalsh``, ``svdvals``, or an unused vector output, whose zero
  gradient stays zero);
* with ``full_matrices=True`` the columns of U (rows of Vh) beyond min(m, n) are any basis of
  their space: their gradients are ignored;
* ``qr`` is differentiable for ``mode='reduced'``, and for ``'complete'`` where rows ≤ columns.
"""

import math
import numbers

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import (ArgumentError, ArgumentTypeError, BackwardError, DTypeError, LinAlgError, ShapeError, as_int,
                      check_dim, format_shape, not_a_tensor)
from ..tensor import Tensor
from . import nonfinite
from .linalg import MatMul, _matmul_shape, _matrices, _matrix_name, _tensors, batch_shape, solve_system, system
from .registry import Sample, register
from .samples import values


# --- argument checks ------------------------------------------------------------------------

def _matrix(op, a, name="A", *, square=False, floating=True):
    """``a`` must be a Tensor with at least 2 dims (square ones if ``square``), float32 or
    float64 when ``floating`` (the kernels have no float16 or integer versions)."""
    if not isinstance(a, Tensor):
        raise not_a_tensor(op, name, a)
    if a.ndim < 2:
        raise ShapeError(f"{op}: {name} must have at least 2 dimensions (a matrix or a batch of them), got shape "
                         f"{format_shape(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: {name} must be a square matrix or a batch of them, got shape "
                         f"{format_shape(a.shape)} ({a.shape[-2]} by {a.shape[-1]} matrices)")
    if floating:
        _floating(op, name, a)


def _floating(op, name, a):
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"{op}: {name} must be a float32 or float64 tensor, got {a.dtype.name}")


def _flag(op, name, value):
    """A bool argument (``upper``, ``hermitian``...), or an ArgumentTypeError."""
    if type(value).__name__ not in ("bool", "bool_"):
        raise ArgumentTypeError(f"{op}: {name} must be a bool, got {type(value).__name__} ({value!r})")
    return bool(value)


def _same_dtype(op, names, *tensors):
    first = tensors[0]
    for name, tensor in zip(names[1:], tensors[1:]):
        if tensor.dtype is not first.dtype:
            raise DTypeError(f"{op}: {names[0]} and {name} must have one dtype, got {first.dtype.name} and "
                             f"{tensor.dtype.name}")


def _check_info(xp, info, error, op, shape):
    """Raise ``error(op, shape, index, value)`` for the first nonzero entry of ``info`` (its
    flat batch index and value), if there is one."""
    if bool(xp.any(info != 0)):
        flat = xp.reshape(info, (-1,))
        index = int(xp.nonzero(flat)[0][0])
        raise error(op, shape, index, int(flat[index]))


def _batch_element(shape, index):
    return f"(Batch element {index}): " if len(shape) > 2 else ""


def _not_positive_definite(op, shape, index, order):
    return LinAlgError(f"{op}: {_batch_element(shape, index)}The factorization could not be completed because the "
                       f"input is not positive-definite (the leading minor of order {order} is not "
                       f"positive-definite); A has shape {format_shape(shape)}")


def _singular(op, shape, index, pivot):
    return LinAlgError(f"{op}: {_batch_element(shape, index)}A is singular: the diagonal element {pivot} of its LU "
                       f"factorization is zero, so it has no inverse and systems with it no unique solution "
                       f"(A has shape {format_shape(shape)})")


def _eye(xp, n, like):
    return xp.eye(n, dtype=like.dtype, device=like.device)


def _divide_off_diagonal(xp, x, gaps, eye):
    """x / gaps off the diagonal, 0 on it (x's diagonal is 0 and gaps' too: the identity is
    added to divide by something there), and 0 wherever x is exactly 0, so that the zero
    gradient of an unused output stays 0 across repeated eigen- or singular values (where
    a used one gives inf/NaN, as PyTorch documents)."""
    zero = x == 0
    return xp.where(zero, xp.zeros_like(x), x / xp.where(zero, xp.ones_like(gaps), gaps + eye))


def _hermitian_input(function, A, *args, **kwargs):
    """For the op tests: ``function`` of the symmetric part of A, so that finite differences
    move both triangles together (the ops read only one)."""
    return function((A + A.mT) * 0.5, *args, **kwargs)


def _spd(rng, shape):
    """Symmetric positive-definite matrices: X Xᵀ + n I."""
    x = values(rng, shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _symmetric(rng, shape):
    x = values(rng, shape)
    return (x + np.swapaxes(x, -1, -2)) / 2


# --- Cholesky ------------------------------------------------------------------------------

class Cholesky(Op):
    """L with A = L Lᵀ (L lower triangular, A's lower triangle read) and LAPACK's info.

    A = L Lᵀ gives L⁻¹ dA L⁻ᵀ = L⁻¹dL + (L⁻¹dL)ᵀ with L⁻¹dL lower triangular, so
    dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ taking the lower triangle with its diagonal halved. Its adjoint,
    for a symmetric dA: Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), sym(X) = (X + Xᵀ)/2.
    """

    @staticmethod
    def forward(ctx, a, op, check):
        xp = ctx.xp
        out, info = xp.cholesky_ex(a)
        if check:
            _check_info(xp, info, _not_positive_definite, op, a.shape)
        ctx.save_for_backward(out, _eye(xp, a.shape[-1], a))
        ctx.mark_non_differentiable(info)
        return out, info

    @staticmethod
    def backward(ctx, grad, grad_info):
        out, eye = ctx.saved_tensors
        xp = ctx.xp
        upper = xp.matrix_transpose(out)
        product = upper @ grad
        phi = xp.tril(product) - product * eye * 0.5
        left = xp.solve_triangular(upper, phi, True)                                   # L⁻ᵀ Φ
        both = xp.matrix_transpose(xp.solve_triangular(upper, xp.matrix_transpose(left), True))   # L⁻ᵀ Φ L⁻¹
        return (both + xp.matrix_transpose(both)) * 0.5


def _cholesky(op, A, upper, check):
    _matrix(op, A, square=True)
    upper = _flag(op, "upper", upper)
    # the upper factor U = Lᵀ of A is the lower factor of Aᵀ, whose lower triangle is A's upper one
    factor, info = Cholesky.apply(A.mT if upper else A, op=op, check=check)
    return (factor.mT if upper else factor), info


def _cholesky_samples(rng):
    yield Sample((_spd(rng, (3, 3)),), name="matrix")
    yield Sample((_spd(rng, (2, 4, 4)),), name="batch")
    yield Sample((_spd(rng, (3, 3)),), {"upper": True}, name="upper")


def _cholesky_reference(A, upper=False):
    lower = np.linalg.cholesky(A)
    return np.swapaxes(lower, -1, -2) if upper else lower


@register(_cholesky_reference, _cholesky_samples, name="linalg.cholesky", method=False,
          gradcheck_wrapper=_hermitian_input, atol=1e-10, rtol=1e-10)
def cholesky(A, *, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix (or of each in a batch):
    the lower triangular L with A = L Lᵀ (read from A's lower triangle), or with ``upper`` the
    upper triangular U = Lᵀ, A = Uᵀ U (read from A's upper triangle). A matrix that is not
    positive-definite raises :class:`vizgrad.linalg.LinAlgError`, naming the batch element and
    the order of the first leading minor that is not.

    Gradient (A symmetric): sym(L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹), Φ the lower triangle with its diagonal halved.

    Example::

        vizgrad.linalg.cholesky(vizgrad.tensor([[4.0, 2.0], [2.0, 5.0]]))   # tensor([[2., 0.], [1., 2.]])
    """
    return _cholesky("linalg.cholesky", A, upper, check=True)[0]


def _cholesky_ex_reference(A, upper=False):
    return _cholesky_reference(A, upper), np.zeros(A.shape[:-2], dtype=np.int32)


@register(_cholesky_ex_reference, _cholesky_samples, name="linalg.cholesky_ex", method=False,
          gradcheck_wrapper=_hermitian_input, atol=1e-10, rtol=1e-10)
def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` without the error: a named tuple ``(L, info)``, info (int32, one per
    matrix) 0 where A is positive-definite, else the order of the first leading minor that is
    not (L is then only partly computed). ``check_errors=True`` raises as :func:`cholesky` does.

    Example::

        vizgrad.linalg.cholesky_ex(-vizgrad.eye(2)).info    # tensor(1, dtype=vizgrad.int32)
    """
    check = _flag("linalg.cholesky_ex", "check_errors", check_errors)
    return return_types.linalg_cholesky_ex(*_cholesky("linalg.cholesky_ex", A, upper, check=check))


# --- QR ------------------------------------------------------------------------------------

_QR_MODES = ("reduced", "complete", "r")


class Qr(Op):
    """A = Q R, Q with orthonormal columns, R upper triangular (LAPACK's Householder signs).

    For A with m ≥ n (reduced): with M = R R̄ᵀ - Q̄ᵀ Q and copyltu(M) the symmetric matrix
    with M's lower triangle, Ā = (Q̄ + Q copyltu(M)) R⁻ᵀ. For m < n, A = [X Y] and R = [U V]
    with X = Q U square: Ȳ = Q V̄, and X̄ is the square case's with Q̄ + Y V̄ᵀ for Q̄.
    """

    @staticmethod
    def forward(ctx, a, mode):
        xp = ctx.xp
        q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
        if mode == "r":
            q = xp.zeros((0,), dtype=a.dtype, device=a.device)
        ctx.mode = mode
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, grad_q, grad_r):
        if ctx.mode == "r":
            raise BackwardError("linalg.qr: the derivative of linalg.qr depends on Q, which is not computed when "
                                "mode='r'; use linalg.qr(A, mode='reduced') to differentiate through linalg.qr")
        q, r = ctx.saved_tensors
        m, n = q.shape[-2], r.shape[-1]                   # A is m×n
        if ctx.mode == "complete" and m > n:
            raise BackwardError(f"linalg.qr: the QR decomposition is not differentiable when mode='complete' and A has "
                                f"more rows than columns ({m} > {n}): the last {m - n} columns of Q are any basis "
                                "of their space; use mode='reduced'")
        xp = ctx.xp
        if m >= n:
            return _qr_backward(xp, q, r, grad_q, grad_r)
        square, rest = r[..., :m], r[..., m:]
        grad_square, grad_rest = grad_r[..., :m], grad_r[..., m:]
        grad_q = grad_q + (q @ rest) @ xp.matrix_transpose(grad_rest)     # Y = Q V
        return xp.concat([_qr_backward(xp, q, square, grad_q, grad_square), q @ grad_rest], axis=-1)


def _qr_backward(xp, q, r, grad_q, grad_r):
    """Ā for A = Q R with R square (A has at least as many rows as columns)."""
    m = r @ xp.matrix_transpose(grad_r) - xp.matrix_transpose(grad_q) @ q
    lower = xp.tril(m, k=-1)
    copied = xp.tril(m) + xp.matrix_transpose(lower)
    b = grad_q + q @ copied
    return xp.matrix_transpose(xp.solve_triangular(r, xp.matrix_transpose(b), True))   # b R⁻ᵀ


def _qr_samples(rng):
    yield Sample((values(rng, (4, 3)),), name="tall")
    yield Sample((values(rng, (3, 5)),), name="wide")
    yield Sample((_matrices(rng, (2, 3, 3)),), name="batch")
    yield Sample((values(rng, (2, 5, 2)),), {"mode": "reduced"}, name="tall batch")
    yield Sample((values(rng, (3, 4)),), {"mode": "complete"}, name="complete, wide")
    yield Sample((_matrices(rng, (3, 3)),), {"mode": "complete"}, name="complete, square")


def _qr_reference(A, mode="reduced"):
    return np.linalg.qr(A, mode=mode)


@register(_qr_reference, _qr_samples, name="linalg.qr", method=False, atol=1e-10, rtol=1e-10)
def qr(A, mode="reduced"):
    """The QR decomposition A = Q R of a matrix (or of each in a batch), as a named tuple
    ``(Q, R)``: ``mode='reduced'`` (Q m×k, R k×n, k = min(m, n)), ``'complete'`` (Q m×m,
    R m×n) or ``'r'`` (R only; Q is empty and the result cannot be differentiated).

    Example::

        Q, R = vizgrad.linalg.qr(vizgrad.tensor([[3.0, 1.0], [4.0, 2.0]]))   # Q @ R == A
    """
    _matrix("linalg.qr", A)
    if not isinstance(mode, str) or mode not in _QR_MODES:
        raise ArgumentError(f"linalg.qr: mode must be 'reduced' (the default), 'complete' or 'r', got {mode!r}")
    return return_types.linalg_qr(*Qr.apply(A, mode=mode))


# --- the symmetric eigendecomposition ---------------------------------------------------------

def _uplo(op, UPLO):
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise ArgumentError(f"{op}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO.upper() == "U"


class Eigh(Op):
    """A = V diag(w) Vᵀ for symmetric A (w ascending, V orthogonal; one triangle read).

    dw = diag(Vᵀ dA V) and Vᵀ dV = F ∘ (Vᵀ dA V), F_ij = 1/(w_j - w_i) off the diagonal. The
    adjoint, for a symmetric dA: Ā = V (diag(w̄) + F ∘ (X - Xᵀ)/2) Vᵀ with X = Vᵀ V̄.
    """

    @staticmethod
    def forward(ctx, a, upper):
        xp = ctx.xp
        w, v = xp.linalg.eigh(xp.matrix_transpose(a) if upper else a)
        ctx.upper = upper
        ctx.save_for_backward(w, v, _eye(xp, a.shape[-1], a))
        return w, v

    @staticmethod
    def backward(ctx, grad_w, grad_v):
        w, v, eye = ctx.saved_tensors
        xp = ctx.xp
        vt = xp.matrix_transpose(v)
        inner = vt @ grad_v
        skew = (inner - xp.matrix_transpose(inner)) * 0.5
        gaps = xp.expand_dims(w, axis=-2) - xp.expand_dims(w, axis=-1)            # w_j - w_i
        middle = _divide_off_diagonal(xp, skew, gaps, eye) + eye * xp.expand_dims(grad_w, axis=-2)
        grad = v @ middle @ vt
        return xp.matrix_transpose(grad) if ctx.upper else grad


class Eigvalsh(Op):
    """The eigenvalues of a symmetric matrix; Ā = V diag(w̄) Vᵀ, defined for repeated ones too."""

    @staticmethod
    def forward(ctx, a, upper):
        xp = ctx.xp
        ctx.upper = upper
        matrix = xp.matrix_transpose(a) if upper else a
        if not ctx.needs_input_grad:
            return xp.linalg.eigvalsh(matrix)
        w, v = xp.linalg.eigh(matrix)
        ctx.save_for_backward(a, v)
        return w

    @staticmethod
    def backward(ctx, grad):
        a, v = ctx.saved_tensors
        xp = ctx.xp
        if isinstance(a, Tensor):    # create_graph: the eigenvectors again, as a function of A
            v = xp.linalg.eigh(xp.matrix_transpose(a) if ctx.upper else a)[1]
        out = (v * xp.expand_dims(grad, axis=-2)) @ xp.matrix_transpose(v)
        return xp.matrix_transpose(out) if ctx.upper else out


def _eigh_samples(rng):
    yield Sample((_symmetric(rng, (3, 3)),), name="matrix")
    yield Sample((_symmetric(rng, (2, 4, 4)),), name="batch")
    yield Sample((_symmetric(rng, (3, 3)),), {"UPLO": "U"}, name="upper")


def _eigh_reference(A, UPLO="L"):
    return np.linalg.eigh(A, UPLO=UPLO)


def _eigh_wrapper(function, A, **kwargs):
    w, v = _hermitian_input(function, A, **kwargs)
    return w, v.abs()                          # each eigenvector's sign is the library's choice


@register(_eigh_reference, _eigh_samples, name="linalg.eigh", method=False, gradcheck_wrapper=_eigh_wrapper,
          gauge=lambda outputs: [outputs[0], np.abs(outputs[1])], atol=1e-10, rtol=1e-10)
def eigh(A, UPLO="L"):
    """The eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix (or of
    each in a batch), as a named tuple ``(eigenvalues, eigenvectors)``: A = V diag(w) Vᵀ. Only
    the lower (``UPLO='L'``) or upper (``'U'``) triangle of A is read.

    The eigenvectors' gradient is finite only where the eigenvalues are distinct (as in PyTorch).

    Example::

        vizgrad.linalg.eigh(vizgrad.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues   # tensor([1., 3.])
    """
    _matrix("linalg.eigh", A, square=True)
    return return_types.linalg_eigh(*Eigh.apply(A, upper=_uplo("linalg.eigh", UPLO)))


def _eigvalsh_reference(A, UPLO="L"):
    return np.linalg.eigvalsh(A, UPLO=UPLO)


@register(_eigvalsh_reference, _eigh_samples, name="linalg.eigvalsh", method=False,
          gradcheck_wrapper=_hermitian_input, atol=1e-10, rtol=1e-10)
def eigvalsh(A, UPLO="L"):
    """The eigenvalues of a symmetric matrix (or of each in a batch), ascending, from its
    lower (``UPLO='L'``) or upper triangle. Gradient: V diag(ḡ) Vᵀ (finite for repeated ones).

    Example::

        vizgrad.linalg.eigvalsh(vizgrad.tensor([[2.0, 1.0], [1.0, 2.0]]))   # tensor([1., 3.])
    """
    _matrix("linalg.eigvalsh", A, square=True)
    return Eigvalsh.apply(A, upper=_uplo("linalg.eigvalsh", UPLO))


# --- the singular value decomposition -------------------------------------------------------

class Svd(Op):
    """A = U diag(s) Vh, s descending; k = min(m, n) singular values.

    With F_ij = 1/(s_j² - s_i²) off the diagonal, J = Uᵀ Ū and K = Vᵀ V̄ (V = Vhᵀ):
    Ā = U [(F ∘ (J - Jᵀ)) S + diag(s̄) + S (F ∘ (K - Kᵀ))] Vh
        + (I - U Uᵀ) Ū S⁻¹ Vh + U S⁻¹ V̄ᵀ (I - V Vh),
    the last two terms only where A is not square. The gradients of the columns of U (rows
    of Vh) beyond k that ``full_matrices=True`` adds are ignored (they are any basis).
    """

    @staticmethod
    def forward(ctx, a, full_matrices):
        xp = ctx.xp
        u, s, vh = nonfinite.svd(xp, a, full_matrices)
        ctx.save_for_backward(u, s, vh, _eye(xp, s.shape[-1], a))
        return u, s, vh

    @staticmethod
    def backward(ctx, grad_u, grad_s, grad_vh):
        u, s, vh, eye = ctx.saved_tensors
        xp = ctx.xp
        k = s.shape[-1]
        m, n = u.shape[-2], vh.shape[-1]
        if u.shape[-1] > k:
            u, grad_u = u[..., :k], grad_u[..., :k]
        if vh.shape[-2] > k:
            vh, grad_vh = vh[..., :k, :], grad_vh[..., :k, :]
        v = xp.matrix_transpose(vh)
        j = xp.matrix_transpose(u) @ grad_u                    # Uᵀ Ū
        left = grad_vh @ v                                     # V̄ᵀ V = Kᵀ
        squares = s * s
        gaps = xp.expand_dims(squares, axis=-2) - xp.expand_dims(squares, axis=-1)     # s_j² - s_i²
        rows, columns = xp.expand_dims(s, axis=-1), xp.expand_dims(s, axis=-2)
        middle = (_divide_off_diagonal(xp, j - xp.matrix_transpose(j), gaps, eye) * columns
                  + rows * _divide_off_diagonal(xp, xp.matrix_transpose(left) - left, gaps, eye)
                  + eye * xp.expand_dims(grad_s, axis=-2))
        grad = u @ middle @ vh
        if m > k:
            grad = grad + ((grad_u - u @ j) / columns) @ vh
        if n > k:
            grad = grad + u @ ((grad_vh - left @ vh) / rows)
        return grad


class Svdvals(Op):
    """The singular values; Ā = U diag(s̄) Vh, defined for repeated ones too."""

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        if not ctx.needs_input_grad:
            return nonfinite.svdvals(xp, a)
        u, s, vh = nonfinite.svd(xp, a, False)
        ctx.save_for_backward(a, u, vh)
        return s

    @staticmethod
    def backward(ctx, grad):
        a, u, vh = ctx.saved_tensors
        xp = ctx.xp
        if isinstance(a, Tensor):    # create_graph: the singular vectors again, as functions of A
            u, _, vh = xp.linalg.svd(a, full_matrices=False)
        return (u * xp.expand_dims(grad, axis=-2)) @ vh


def _svd_samples(rng):
    yield Sample((values(rng, (4, 3)),), {"full_matrices": False}, name="tall")
    yield Sample((values(rng, (3, 5)),), {"full_matrices": False}, name="wide")
    yield Sample((values(rng, (2, 3, 3)),), name="batch")
    yield Sample((values(rng, (4, 2)),), name="full matrices, tall")
    yield Sample((values(rng, (2, 2, 3)),), name="full matrices, wide batch")


def _svd_reference(A, full_matrices=True):
    return np.linalg.svd(A, full_matrices=full_matrices)


def _svd_gauge(outputs):
    u, s, vh = outputs
    k = s.shape[-1]
    return [np.abs(u[..., :k]), s, np.abs(vh[..., :k, :]), np.array(u.shape), np.array(vh.shape)]


def _svd_wrapper(function, A, **kwargs):
    u, s, vh = function(A, **kwargs)
    k = s.shape[-1]
    return u[..., :k].abs(), s, vh[..., :k, :].abs()


@register(_svd_reference, _svd_samples, name="linalg.svd", method=False, gradcheck_wrapper=_svd_wrapper,
          gauge=_svd_gauge, atol=1e-10, rtol=1e-10)
def svd(A, full_matrices=True):
    """The singular value decomposition A = U diag(S) Vh of a matrix (or of each in a batch),
    as a named tuple ``(U, S, Vh)``, S descending. With ``full_matrices`` (the default) U is
    m×m and Vh n×n; without, m×k and k×n (k = min(m, n)).

    Gradients through U or Vh are finite only where the singular values are distinct and
    non-zero (as in PyTorch); those of the extra columns ``full_matrices`` adds are ignored.

    Example::

        vizgrad.linalg.svd(vizgrad.tensor([[3.0, 0.0], [0.0, -2.0]])).S   # tensor([3., 2.])
    """
    _matrix("linalg.svd", A)
    full = _flag("linalg.svd", "full_matrices", full_matrices)
    return return_types.linalg_svd(*Svd.apply(A, full_matrices=full))


def _svdvals_samples(rng):
    yield Sample((values(rng, (4, 3)),), name="tall")
    yield Sample((values(rng, (2, 3, 5)),), name="wide batch")


@register(lambda A: np.linalg.svd(A, compute_uv=False), _svdvals_samples, name="linalg.svdvals", method=False,
          atol=1e-10, rtol=1e-10)
def svdvals(A):
    """The singular values of a matrix (or of each in a batch), descending. Gradient:
    U diag(ḡ) Vh (finite for repeated ones too).

    Example::

        vizgrad.linalg.svdvals(vizgrad.tensor([[3.0, 0.0], [0.0, -2.0]]))   # tensor([3., 2.])
    """
    _matrix("linalg.svdvals", A)
    return Svdvals.apply(A)


# --- the pseudo-inverse, ranks, condition numbers ----------------------------------------------

def _tolerances(op, A, atol, rtol, rcond=None, tol=None):
    """``(atol, rtol)`` as tensors of A's dtype and device that broadcast over A's batch, with
    PyTorch's defaults: rtol = ε·max(m, n) when neither is given, and 0 when only a positive
    atol is (the legacy ``rcond`` is an rtol, ``tol`` an atol)."""
    from ..creation import full
    if rcond is not None:
        if rtol is not None:
            raise ArgumentError(f"{op}: give rcond or rtol, not both")
        rtol = rcond
    if tol is not None:
        if atol is not None:
            raise ArgumentError(f"{op}: give tol or atol, not both")
        atol, rtol = tol, 0.0 if rtol is None else rtol
    default = float(np.finfo(A.dtype.numpy).eps) * max(A.shape[-2], A.shape[-1])

    def as_tensor(name, value):
        if value is None:
            return None
        if isinstance(value, Tensor):
            if not value.is_floating_point():
                raise DTypeError(f"{op}: {name} must be a floating point tensor, got {value.dtype.name}")
            return value.detach().to(A.dtype)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ArgumentTypeError(f"{op}: {name} must be a number or a Tensor, got {type(value).__name__} "
                                    f"({value!r})")
        return full((), float(value), dtype=A.dtype, device=A.device)

    atol, rtol = as_tensor("atol", atol), as_tensor("rtol", rtol)
    if rtol is None:
        rtol = full((), default, dtype=A.dtype, device=A.device)
        if atol is not None:
            from .binary import where
            rtol = where(atol > 0, 0.0, rtol)
    if atol is None:
        atol = full((), 0.0, dtype=A.dtype, device=A.device)
    return atol, rtol


class Pinv(Op):
    """The Moore-Penrose pseudo-inverse P = V S⁺ Uᵀ (eigenvalues for a symmetric A), with the
    values at or below max(atol, rtol·σ₁) taken as zero.

    Its derivative (Golub and Pereyra, for a constant rank): dP = -P dA P + P Pᵀ dAᵀ (I - A P)
    + (I - P A) dAᵀ Pᵀ P, whose adjoint is Ā = -Pᵀ Ḡ Pᵀ + (I - A P) Ḡᵀ P Pᵀ + Pᵀ P Ḡᵀ (I - P A).
    """

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        xp = ctx.xp
        if hermitian:
            w, v = xp.linalg.eigh(a)
            spectrum, sizes = w, xp.abs(w)
        else:
            u, spectrum, vh = nonfinite.svd(xp, a, False)
            sizes = spectrum
        if sizes.shape[-1] == 0:
            out = xp.zeros(tuple(a.shape[:-2]) + (a.shape[-1], a.shape[-2]), dtype=a.dtype, device=a.device)
        else:
            threshold = xp.maximum(atol, rtol * xp.max(sizes, axis=-1))
            keep = sizes > xp.expand_dims(threshold, axis=-1)
            inverted = xp.where(keep, 1 / xp.where(keep, spectrum, xp.ones_like(spectrum)), xp.zeros_like(spectrum))
            if hermitian:
                out = (v * xp.expand_dims(inverted, axis=-2)) @ xp.matrix_transpose(v)
            else:
                out = (xp.matrix_transpose(vh) * xp.expand_dims(inverted, axis=-2)) @ xp.matrix_transpose(u)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, p = ctx.saved_tensors
        xp = ctx.xp
        pt, gt = xp.matrix_transpose(p), xp.matrix_transpose(grad)
        after = gt @ (p @ pt)                                   # Ḡᵀ P Pᵀ
        before = (pt @ p) @ gt                                  # Pᵀ P Ḡᵀ
        return (-(pt @ grad @ pt) + (after - a @ (p @ after)) + (before - (before @ p) @ a)), None, None


def _hermitian(op, A, hermitian):
    """The ``hermitian`` flag as a bool; with it A must be square."""
    hermitian = _flag(op, "hermitian", hermitian)
    if hermitian and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: with hermitian=True A must be a square matrix or a batch of them, got shape "
                         f"{format_shape(A.shape)}")
    return hermitian


def _pinv(op, A, atol, rtol, hermitian, rcond=None):
    _matrix(op, A)
    hermitian = _hermitian(op, A, hermitian)
    atol, rtol = _tolerances(op, A, atol, rtol, rcond=rcond)
    return Pinv.apply(A, atol, rtol, hermitian=hermitian)


def _pinv_samples(rng):
    yield Sample((values(rng, (4, 3)),), name="tall")
    yield Sample((values(rng, (2, 3, 5)),), name="wide batch")
    yield Sample((_matrices(rng, (3, 3)),), {"rtol": 0.01}, name="rtol")
    yield Sample((_spd(rng, (3, 3)),), {"hermitian": True}, name="hermitian")
    yield Sample((_symmetric(rng, (2, 3, 3)) + 4 * np.eye(3),), {"hermitian": True, "atol": 0.05}, name="hermitian atol")


def _pinv_reference(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    if rtol is None:
        rtol = np.finfo(A.dtype).eps * max(A.shape[-2:]) if atol is None or atol <= 0 else 0.0
    threshold = np.maximum(atol or 0.0, rtol * s[..., :1])
    inverted = np.where(s > threshold, 1 / s, 0.0)
    return np.swapaxes(vh, -1, -2) @ (inverted[..., :, None] * np.swapaxes(u, -1, -2))


def _pinv_wrapper(function, A, *args, **kwargs):
    if kwargs.get("hermitian"):
        return _hermitian_input(function, A, *args, **kwargs)
    return function(A, *args, **kwargs)


@register(_pinv_reference, _pinv_samples, name="linalg.pinv", method=False, gradcheck_wrapper=_pinv_wrapper,
          atol=1e-10, rtol=1e-9)
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The pseudo-inverse A⁺ of a matrix (or of each in a batch), n×m for an m×n A, from its
    SVD (its eigendecomposition, lower triangle read, with ``hermitian``): singular values at
    or below max(atol, rtol·σ₁) count as zero. ``atol``/``rtol`` are numbers or tensors of the
    batch shape; rtol defaults to ε·max(m, n) (to 0 when a positive atol is given); ``rcond``
    is PyTorch's older name for rtol.

    Gradient (for a constant rank): -A⁺ᵀ Ḡ A⁺ᵀ + (I - A A⁺) Ḡᵀ A⁺ A⁺ᵀ + A⁺ᵀ A⁺ Ḡᵀ (I - A⁺ A).

    Example::

        vizgrad.linalg.pinv(vizgrad.tensor([[1.0, 0.0], [0.0, 0.0]]))   # tensor([[1., 0.], [0., 0.]])
    """
    return _pinv("linalg.pinv", A, atol, rtol, hermitian, rcond=rcond)


def _singular_or_eigen_values(A, hermitian):
    """The singular values of A (the absolute eigenvalues when ``hermitian``), off the graph."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        if hermitian:
            return eigvalsh(A).abs()
        return svdvals(A)


def _rank_samples(rng):
    yield Sample((_matrices(rng, (3, 3)),), name="full rank")
    low = values(rng, (2, 4, 2)) @ values(rng, (2, 2, 5))
    yield Sample((low,), name="rank 2 batch")
    yield Sample((low[0] @ low[0].T,), {"hermitian": True}, name="hermitian rank 2")
    yield Sample((np.diag([4.0, 1.0, 0.01]),), {"atol": 0.5}, name="atol")
    yield Sample((np.diag([4.0, 1.0, 0.01]),), {"rtol": 0.1}, name="rtol")


def _rank_reference(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    s = np.abs(np.linalg.eigvalsh(A)) if hermitian else np.linalg.svd(A, compute_uv=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    if rtol is None:
        rtol = np.finfo(A.dtype).eps * max(A.shape[-2:]) if atol is None or atol <= 0 else 0.0
    threshold = np.maximum(atol or 0.0, rtol * np.max(s, axis=-1, keepdims=True))
    return np.sum(s > threshold, axis=-1).astype(np.int64)


@register(_rank_reference, _rank_samples, name="linalg.matrix_rank", method=False, differentiable=False)
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The numerical rank of a matrix (or of each in a batch), int64: the number of singular
    values (absolute eigenvalues with ``hermitian``) above max(atol, rtol·σ₁), with
    :func:`pinv`'s defaults; ``tol`` is PyTorch's older name for atol (with rtol 0).

    Example::

        vizgrad.linalg.matrix_rank(vizgrad.ones(3, 3))   # tensor(1)
    """
    op = "linalg.matrix_rank"
    _matrix(op, A)
    hermitian = _hermitian(op, A, hermitian)
    atol, rtol = _tolerances(op, A, atol, rtol, tol=tol)
    sizes = _singular_or_eigen_values(A, hermitian)
    if sizes.shape[-1] == 0:
        return (sizes > 0).sum(-1)
    from .binary import maximum
    threshold = maximum(atol, rtol * sizes.amax(-1))
    return (sizes > threshold.unsqueeze(-1)).sum(-1)


_COND_NORMS = (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1)


def _cond_samples(rng):
    for p in _COND_NORMS:
        yield Sample((_matrices(rng, (3, 3)),), {} if p is None else {"p": p}, name=f"p={p}")
    yield Sample((values(rng, (2, 4, 3)),), {"p": 2}, name="p=2, tall batch")
    yield Sample((_matrices(rng, (2, 3, 3)),), {"p": 1}, name="p=1, batch")


def _cond_reference(A, p=None):
    return np.linalg.cond(A, p)


@register(_cond_reference, _cond_samples, name="linalg.cond", method=False, atol=1e-9, rtol=1e-9)
def cond(A, p=None):
    """The condition number of a matrix (or of each in a batch) in the norm ``p``: for None,
    2 and -2 the ratio of the largest to the smallest singular value (its inverse for -2),
    any m×n; for 'fro', 'nuc', inf, -inf, 1 and -1, ‖A‖ ‖A⁻¹‖ of a square A (inf where A is
    singular).

    Example::

        vizgrad.linalg.cond(vizgrad.tensor([[2.0, 0.0], [0.0, 0.5]]))   # tensor(4.)
    """
    from ..linalg import matrix_norm  # lazy: vizgrad.linalg, the public namespace, is built on the ops
    op = "linalg.cond"
    _matrix(op, A)
    if p is not None and (isinstance(p, bool) or p not in _COND_NORMS):
        raise ArgumentError(f"{op}: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got {p!r}")
    if p in (None, 2, -2):
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return 1 / ratio if p == -2 else ratio
    _matrix(op, A, square=True)
    inverse, info = inv_ex(A)
    product = matrix_norm(A, p) * matrix_norm(inverse, p)
    from .binary import where
    return where(info > 0, math.inf, product)


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


# --- functions of one matrix -----------------------------------------------------------------

class MatrixExp(Op):
    """e^A. Its derivative in direction E is the upper right block of exp([[A, E], [0, A]]),
    and the adjoint of that map is the same map at Aᵀ: Ā = that block of exp([[Aᵀ, Ḡ], [0, Aᵀ]])."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.matrix_exp(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp = ctx.xp
        n = a.shape[-1]
        transposed = xp.matrix_transpose(a)
        block = xp.concat([xp.concat([transposed, grad], axis=-1),
                           xp.concat([xp.zeros_like(a), transposed], axis=-1)], axis=-2)
        return xp.matrix_exp(block)[..., :n, n:]


def exponential(op, A):
    """:func:`matrix_exp` for ``op`` (``matrix_exp`` or ``linalg.matrix_exp``), named in errors."""
    name = _matrix_name(op)
    _matrix(op, A, name, square=True, floating=False)
    if not A.is_floating_point():
        raise DTypeError(f"{op}: {name} must be a floating point tensor, got {A.dtype.name}")
    return MatrixExp.apply(A)


def _exp_samples(rng):
    yield Sample((values(rng, (3, 3)),), name="matrix")
    yield Sample((values(rng, (2, 4, 4)) * 2,), name="batch, scaled and squared")
    yield Sample((values(rng, (1, 1)),), name="1x1")


def _exp_reference(A):
    """e^A by its Taylor series (30 terms) after halving A below norm 1/2, then squaring."""
    norm = np.max(np.sum(np.abs(A), axis=-2), axis=-1).max()
    steps = max(0, int(np.ceil(np.log2(max(norm, 1e-300) / 0.5))))
    x = A / 2.0 ** steps
    term = np.broadcast_to(np.eye(A.shape[-1]), A.shape).copy()
    total = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        total = total + term
    for _ in range(steps):
        total = total @ total
    return total


@register(_exp_reference, _exp_samples, name="linalg.matrix_exp", method=False, atol=1e-10, rtol=1e-10)
def linalg_matrix_exp(A):
    """The matrix exponential e^A = Σ Aᵏ/k! of a square matrix (or of each in a batch), by
    scaling and squaring with a [13/13] Padé approximant. Gradient: the upper right block of
    exp([[Aᵀ, Ḡ], [0, Aᵀ]]).

    Example::

        vizgrad.linalg.matrix_exp(vizgrad.zeros(2, 2))   # the identity
    """
    return exponential("linalg.matrix_exp", A)


@register(_exp_reference, _exp_samples, atol=1e-10, rtol=1e-10)
def matrix_exp(input):
    """The matrix exponential of a square matrix (or of each in a batch):
    :func:`vizgrad.linalg.matrix_exp`.

    Example::

        vizgrad.zeros(2, 2).matrix_exp()   # the identity
    """
    return exponential("matrix_exp", input)


def power(op, A, n):
    """A raised to the integer ``n`` (A⁻¹ to -n for n < 0), by repeated squaring."""
    name = _matrix_name(op)
    _matrix(op, A, name, square=True, floating=False)
    n = _int(op, "n", n)
    if A.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: {name} must be a number tensor, not bool")
    if n == 0:
        from ..creation import eye
        return A.clone().copy_(eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)))
    if n < 0:
        if not A.is_floating_point():
            raise DTypeError(f"{op}: {name} must be a floating point tensor for a negative n ({n}), got "
                             f"{A.dtype.name}")
        from .linalg import _inverse
        A, n = _inverse(op, A), -n
    if n == 1:
        return A.clone()
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else MatMul.apply(result, base)
        n >>= 1
        if n:
            base = MatMul.apply(base, base)
    return result


def _power_samples(rng):
    yield Sample((_matrices(rng, (3, 3)) / 3, 3), name="cube")
    yield Sample((_matrices(rng, (2, 3, 3)) / 3, 6), name="batch, n=6")
    yield Sample((_matrices(rng, (3, 3)), -2), name="inverse squared")
    yield Sample((_matrices(rng, (3, 3)), 1), name="n=1")
    yield Sample((_matrices(rng, (3, 3)), 0), name="n=0")
    yield Sample((np.arange(4, dtype=np.int64).reshape(2, 2), 3), name="int64")


@register(np.linalg.matrix_power, _power_samples, name="linalg.matrix_power", method=False, atol=1e-10, rtol=1e-10)
def matrix_power(A, n):
    """A square matrix (or each in a batch) to the integer power ``n``: repeated products for
    n > 0, the identity for 0, the inverse's power for n < 0 (floating A). Integer A works for
    n ≥ 0, as in PyTorch.

    Example::

        vizgrad.linalg.matrix_power(vizgrad.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)   # tensor([[1., 3.], [0., 1.]])
    """
    return power("linalg.matrix_power", A, n)


@register(np.linalg.matrix_power, _power_samples, name="matrix_power")
def tensor_matrix_power(input, n):
    """:func:`vizgrad.linalg.matrix_power`, as ``torch.matrix_power`` and ``Tensor.matrix_power``.

    Example::

        vizgrad.eye(2).matrix_power(5)   # the identity
    """
    return power("matrix_power", input, n)


# --- products --------------------------------------------------------------------------------

def _chain_order(dims):
    """The cheapest parenthesization of a chain of matrices with shapes (dims[i], dims[i+1]):
    ``split[i][j]``, where the product of matrices i..j splits (dynamic programming over
    the number of scalar multiplications)."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multi_dot_samples(rng):
    yield Sample(([values(rng, (2, 3)), values(rng, (3, 4)), values(rng, (4, 2))],), name="three matrices")
    yield Sample(([values(rng, (3,)), values(rng, (3, 4)), values(rng, (4, 5)), values(rng, (5,))],),
                 name="vectors at the ends")
    yield Sample(([values(rng, (5, 1)), values(rng, (1, 5)), values(rng, (5, 2))],), name="reordered")
    yield Sample(([values(rng, (3,)), values(rng, (3, 2))],), name="two")


@register(np.linalg.multi_dot, _multi_dot_samples, name="linalg.multi_dot", method=False, atol=1e-10, rtol=1e-10)
def multi_dot(tensors):
    """The product of two or more matrices, multiplied in the order that costs the fewest
    scalar products; the first may be a 1-D row vector and the last a 1-D column vector (their
    dims are dropped from the result).

    Example::

        vizgrad.linalg.multi_dot([vizgrad.ones(3), vizgrad.ones(3, 2), vizgrad.ones(2)])   # tensor(6.)
    """
    op = "linalg.multi_dot"
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise ArgumentTypeError(f"{op}: tensors must be a list or tuple of Tensors, got {type(tensors).__name__}")
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ArgumentError(f"{op}: expected at least 2 tensors, got {len(tensors)}")
    _tensors(op, tuple(f"tensors[{i}]" for i in range(len(tensors))), *tensors)
    last = len(tensors) - 1
    matrices = []
    for i, tensor in enumerate(tensors):
        allowed = (1, 2) if i in (0, last) else (2,)
        if tensor.ndim not in allowed:
            where = "the first tensor" if i == 0 else "the last tensor" if i == last else f"tensors[{i}] (in the middle)"
            raise ShapeError(f"{op}: {where} must be {' or '.join(f'{d}-D' for d in allowed)}, got shape "
                             f"{format_shape(tensor.shape)}")
        if tensor.ndim == 1:
            tensor = tensor.unsqueeze(0) if i == 0 else tensor.unsqueeze(-1)
        matrices.append(tensor)
    for i in range(last):
        if matrices[i].shape[1] != matrices[i + 1].shape[0]:
            raise ShapeError(f"{op}: tensors[{i}] of shape {format_shape(tensors[i].shape)} and tensors[{i + 1}] of "
                             f"shape {format_shape(tensors[i + 1].shape)} cannot be multiplied")
    split = _chain_order([matrices[0].shape[0]] + [m.shape[1] for m in matrices])

    def product(i, j):
        if i == j:
            return matrices[i]
        k = split[i][j]
        return MatMul.apply(product(i, k), product(k + 1, j))

    out = product(0, last)
    if tensors[last].ndim == 1:
        out = out.squeeze(-1)
    if tensors[0].ndim == 1:
        out = out.squeeze(0)
    return out


def _vecdot_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4))), name="rows")
    yield Sample((values(rng, (2, 1, 4)), values(rng, (3, 4))), name="broadcast")
    yield Sample((values(rng, (3, 4)), values(rng, (3, 1))), {"dim": 0}, name="dim=0")


def _vecdot_reference(x, y, *, dim=-1):
    return np.sum(x * y, axis=dim)


@register(_vecdot_reference, _vecdot_samples, name="linalg.vecdot", method=False, atol=1e-10, rtol=1e-10)
def vecdot(x, y, *, dim=-1):
    """The dot products of the vectors along ``dim`` (the last by default), the other dims
    broadcast: Σᵢ xᵢ yᵢ.

    Example::

        vizgrad.linalg.vecdot(vizgrad.ones(2, 3), vizgrad.tensor([1.0, 2.0, 3.0]))   # tensor([6., 6.])
    """
    op = "linalg.vecdot"
    for name, operand in (("x", x), ("y", y)):
        if not isinstance(operand, Tensor):
            raise not_a_tensor(op, name, operand)
        if not operand.is_floating_point():
            raise DTypeError(f"{op}: {name} must be a floating point tensor, got {operand.dtype.name}")
    _same_dtype(op, ("x", "y"), x, y)
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ShapeError(f"{op}: x of shape {format_shape(x.shape)} and y of shape {format_shape(y.shape)} do not "
                         "broadcast") from None
    axis = check_dim(op, dim, len(shape))
    return (x * y).sum(axis - len(shape))


def _diagonal_samples(rng):
    yield Sample((values(rng, (3, 4)),), name="matrix")
    yield Sample((values(rng, (2, 3, 3)),), {"offset": 1}, name="batch, offset 1")
    yield Sample((values(rng, (3, 2, 4)),), {"offset": -1, "dim1": 0, "dim2": 2}, name="dims 0 and 2")


def _diagonal_reference(A, *, offset=0, dim1=-2, dim2=-1):
    return np.diagonal(A, offset, dim1, dim2)


@register(_diagonal_reference, _diagonal_samples, name="linalg.diagonal", method=False)
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices over ``dim1`` and ``dim2`` (the last two by default), as
    the last dim: :func:`vizgrad.diagonal` with PyTorch's ``linalg`` defaults.

    Example::

        vizgrad.linalg.diagonal(vizgrad.eye(3).expand(2, 3, 3))   # tensor([[1., 1., 1.], [1., 1., 1.]])
    """
    from .index import diagonal as take_diagonal
    if not isinstance(A, Tensor):
        raise not_a_tensor("linalg.diagonal", "A", A)
    if A.ndim < 2:
        raise ShapeError(f"linalg.diagonal: A must have at least 2 dimensions, got shape {format_shape(A.shape)}")
    return take_diagonal(A, offset, dim1, dim2)


@register(np.matmul, lambda rng: iter([Sample((values(rng, (2, 3, 4)), values(rng, (4, 2))), name="batch"),
                                       Sample((values(rng, (4,)), values(rng, (4, 3))), name="vector")]),
          name="linalg.matmul", method=False)
def matmul(input, other):
    """The matrix product: :func:`vizgrad.matmul`, as ``torch.linalg.matmul``.

    Example::

        vizgrad.linalg.matmul(vizgrad.ones(2, 3), vizgrad.ones(3))   # tensor([3., 3.])
    """
    _tensors("linalg.matmul", ("input", "other"), input, other)
    _matmul_shape("linalg.matmul", input.shape, other.shape)
    return MatMul.apply(input, other)


def _vander_samples(rng):
    yield Sample((values(rng, (4,)),), name="vector")
    yield Sample((values(rng, (2, 3)),), {"N": 5}, name="batch, N=5")
    yield Sample((np.array([0.0, 1.5, -2.0]),), {"N": 3}, name="with zero")
    yield Sample((np.array([2, -1, 3], dtype=np.int64),), name="int64")


def _vander_reference(x, N=None):
    N = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(N, dtype=np.int64)


@register(_vander_reference, _vander_samples, name="linalg.vander", method=False, atol=1e-10, rtol=1e-10)
def vander(x, *, N=None):
    """The Vandermonde matrix of the vectors along x's last dim: out[..., i, j] = x[..., i]ʲ for
    j < N (N, at least 2, defaults to x's last size), each power the previous one times x (so
    the gradients, of every order, are exact at 0); integer x gives integers.

    Example::

        vizgrad.linalg.vander(vizgrad.tensor([1.0, 2.0, 3.0]))   # rows (1, x, x²)
    """
    from ..creation import ones_like
    from .shape import stack
    op = "linalg.vander"
    if not isinstance(x, Tensor):
        raise not_a_tensor(op, "x", x)
    if x.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: x must be a floating point or integer tensor, got bool")
    if x.ndim == 0:
        raise ShapeError(f"{op}: x must have at least 1 dimension, got a 0-d tensor")
    N = x.shape[-1] if N is None else _int(op, "N", N)
    if N <= 1:
        raise ArgumentError(f"{op}: N must be greater than 1, got {N}")
    powers = [ones_like(x), x]
    while len(powers) < N:
        powers.append(powers[-1] * x)
    return stack(powers, -1)


def _int(op, name, value):
    """An int argument (bools refused), or an ArgumentTypeError."""
    if type(value) is int:
        return value
    if type(value).__name__ in ("bool", "bool_"):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got a bool ({value!r})")
    return as_int(op, name, value)


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
