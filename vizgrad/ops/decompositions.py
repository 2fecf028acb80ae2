"""``torch.linalg``'s factorizations and what is built on them: Cholesky, QR, the symmetric
eigendecomposition, the SVD, the pseudo-inverse and ranks, with the argument checks the
linear-algebra ops share. Linear systems and least squares are in
:mod:`vizgrad.ops.solvers`, the matrix exponential, powers, the condition number and the
products in :mod:`vizgrad.ops.matrix_functions`.

Every op is registered under its dotted name (``linalg.svd``) and reached as
``vizgrad.linalg.svd``. The kernels come from ``xp.linalg`` (the Array API extension) and
from the backends' EXTRAS (``cholesky_ex``). Each backward is written with ``xp`` over the
saved outputs, so that under ``create_graph=True`` it records its own graph and second
derivatives come out of the same formulas (the values of the eigen- and singular-value-only
ops are recomputed from the input there, through the full decompositions).

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

import numbers

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import (ArgumentError, ArgumentTypeError, BackwardError, DTypeError, LinAlgError, ShapeError, as_int,
                      format_shape, not_a_tensor)
from ..tensor import Tensor
from . import nonfinite
from .linalg import _matrices
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


def _int(op, name, value):
    """An int argument (bools refused), or an ArgumentTypeError."""
    if type(value) is int:
        return value
    if type(value).__name__ in ("bool", "bool_"):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got a bool ({value!r})")
    return as_int(op, name, value)


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
