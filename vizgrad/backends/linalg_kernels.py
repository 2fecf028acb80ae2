"""Linear-algebra kernels that the Array API's ``linalg`` extension lacks, written once against
a NumPy-like module ``lib`` (NumPy or CuPy) and batched over leading dims: the backends wrap
them as the EXTRAS ``solve_triangular``, ``cholesky_ex``, ``inv_ex``, ``solve_ex`` and
``matrix_exp`` (see :data:`vizgrad.backends.base.EXTRAS`), and as ``lu_det``.

Each loop below runs over the rows or columns of one matrix (n Python steps), each step
vectorized over the batch; the backends call LAPACK (through ``lib.linalg``) first and come
here only for what LAPACK's batched wrappers do not report: which batch element failed, and
at which pivot, and the inf/NaN results PyTorch gives for singular systems instead of an error.
"""

import contextlib
import math

import numpy as np


# --- Cholesky, column by column ------------------------------------------------------------

_SMALL_FLOAT32_CHOLESKY = 16     # the largest order PyTorch's float32 LAPACK factors unblocked


def cholesky_columns(lib, a):
    """``(L, info)`` for a batch of matrices, reading only their lower triangles: L's column j
    is (a[j:, j] - L[j:, :j] L[j, :j]ᵀ) / √pivot with pivot = that vector's first entry (√pivot
    on the diagonal). Where a
    pivot is not positive (or NaN) the leading minor of order j + 1 is not positive-definite:
    ``info`` is that order (0 where the factorization completed), and, as LAPACK's unblocked
    factorization leaves it, that pivot is stored on the diagonal and the columns from there on
    keep A's lower triangle. An infinite √pivot leaves zeros below it, except in float32 up to
    order 16, where PyTorch's LAPACK (OpenBLAS's unblocked spotf2, measured with PyTorch 2.13)
    scales the column by a reciprocal of ∞ that comes out NaN: the column below is NaN and the
    next pivot fails."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    nan_below_inf = a.dtype == np.float32 and n <= _SMALL_FLOAT32_CHOLESKY
    out = lib.tril(a).copy()
    info = lib.zeros(batch, dtype=lib.int32)
    active = lib.ones(batch, dtype=bool)
    for j in range(n):
        column = a[..., j:, j] - lib.matmul(out[..., j:, :j], out[..., j, :j, None])[..., 0]
        pivot = column[..., 0]
        ok = pivot > 0                      # False for NaN as well
        failed = active & ~ok
        info = lib.where(failed, lib.int32(j + 1), info)
        out[..., j, j] = lib.where(failed, pivot, out[..., j, j])
        active = active & ok
        root = lib.sqrt(lib.where(active, pivot, 1))
        below = column[..., 1:] / root[..., None]
        if nan_below_inf:
            below = lib.where(lib.isinf(root)[..., None], lib.asarray(math.nan, dtype=a.dtype), below)
        updated = lib.concatenate([root[..., None], below], axis=-1)
        out[..., j:, j] = lib.where(active[..., None], updated, out[..., j:, j])
    return out, info


# --- LU with partial pivoting --------------------------------------------------------------

def lu_factor(lib, a):
    """``(lu, perm, info)`` of a batch of square matrices by Gaussian elimination with partial
    pivoting: (P A)[i] = A[perm[i]] = (L U)[i], L unit lower triangular below lu's diagonal, U
    on and above it. ``info`` is 0, or (as LAPACK's getrf) the 1-based index of the first pivot
    that is exactly zero: the matrix is singular. The pivot is LAPACK's (``idamax``): the first
    entry of largest magnitude, NaN never chosen unless it leads the column (then it is)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    count = math.prod(batch)
    lu = a.reshape((count, n, n)).copy()
    perm = lib.broadcast_to(lib.arange(n), (count, n)).copy()
    info = lib.zeros((count,), dtype=lib.int32)
    rows = lib.arange(count)
    for k in range(n):
        column = lu[:, k:, k]
        p = k + lib.where(lib.isnan(column[:, 0]), 0, lib.argmax(lib.where(lib.isnan(column), -1, lib.abs(column)), axis=1))
        # (indexing with the array `rows` reads copies: the right-hand sides are taken before either write)
        lu[rows, k, :], lu[rows, p, :] = lu[rows, p, :], lu[rows, k, :]
        perm[rows, k], perm[rows, p] = perm[rows, p], perm[rows, k]
        pivot = lu[:, k, k]
        zero = pivot == 0
        info = lib.where((info == 0) & zero, lib.int32(k + 1), info)
        # a zero pivot is the largest of its column: everything below it is zero already
        multipliers = lu[:, k + 1:, k] / lib.where(zero, 1, pivot)[:, None]
        lu[:, k + 1:, k] = multipliers
        lu[:, k + 1:, k + 1:] -= multipliers[:, :, None] * lu[:, None, k, k + 1:]
    return lu.reshape(a.shape), perm.reshape(batch + (n,)), info.reshape(batch)


def lu_determinant(lib, a):
    """``(det, sign, logabsdet)`` of a batch of square matrices from :func:`lu_factor` of their
    transposes: PyTorch hands LAPACK its row-major A, which LAPACK reads (column-major) as Aᵀ;
    the determinant is the same, the pivots differ where A holds inf or NaN. det is the product
    of U's diagonal times the permutation's sign; sign the product of the diagonal's signs (NaN's
    taken as 0) times the permutation's; logabsdet Σ log|diagonal|."""
    lu, perm, _ = lu_factor(lib, lib.swapaxes(a, -1, -2))
    diagonal = lib.diagonal(lu, axis1=-2, axis2=-1)
    n = a.shape[-1]
    before = lib.arange(n)[:, None] < lib.arange(n)[None, :]
    inversions = lib.sum((perm[..., :, None] > perm[..., None, :]) & before, axis=(-2, -1))
    parity = lib.where(inversions % 2 == 1, -1, 1).astype(a.dtype)
    det = lib.prod(diagonal, axis=-1) * parity
    sign = lib.prod(lib.where(lib.isnan(diagonal), 0, lib.sign(diagonal)), axis=-1) * parity
    return det, sign, lib.sum(lib.log(lib.abs(diagonal)), axis=-1)


def lu_solve(lib, lu, perm, b):
    """X with A X = B from :func:`lu_factor`'s factors (B a batch of matrices): rows of B
    permuted, then L's unit lower and U's upper triangle solved by substitution (a zero pivot
    gives inf/NaN, as PyTorch's solvers do)."""
    permuted = lib.take_along_axis(b, lib.broadcast_to(perm[..., None], b.shape), axis=-2)
    lower = substitution(lib, lu, permuted, upper=False, unitriangular=True)
    return substitution(lib, lu, lower, upper=True, unitriangular=False)


# --- triangular systems --------------------------------------------------------------------

def substitution(lib, a, b, upper, unitriangular):
    """X with T X = B, T the upper (``upper``) or lower triangle of ``a`` (unit diagonal when
    ``unitriangular``), by back or forward substitution one row at a time; a zero on T's
    diagonal gives inf/NaN (no error)."""
    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])     # (shapes only: any library's arrays)
    a = lib.broadcast_to(a, batch + a.shape[-2:])
    x = lib.zeros(batch + b.shape[-2:], dtype=lib.result_type(a, b))
    x[...] = b
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        done = slice(i + 1, n) if upper else slice(0, i)
        row = x[..., i, :] - lib.matmul(a[..., i, None, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = row if unitriangular else row / a[..., i, i, None]
    return x


def triangle(lib, a, upper, unitriangular):
    """The upper or lower triangle of ``a``, with ones on the diagonal when ``unitriangular``."""
    t = lib.triu(a) if upper else lib.tril(a)
    if unitriangular:
        eye = lib.eye(a.shape[-1], dtype=bool)
        t = lib.where(eye, lib.ones((), dtype=a.dtype), t)
    return t


# --- the matrix exponential ----------------------------------------------------------------

def _pade_coefficients(m):
    """The coefficients c_k = (2m - k)! m! / ((2m)! k! (m - k)!) of the diagonal [m/m] Padé
    approximant of e^x: p(x) = Σ c_k x^k, and e^x ≈ p(x) / p(-x)."""
    return [math.factorial(2 * m - k) * math.factorial(m) / (math.factorial(2 * m) * math.factorial(k)
                                                             * math.factorial(m - k)) for k in range(m + 1)]


_PADE_13 = _pade_coefficients(13)
# The largest 1-norm for which the [13/13] approximant is accurate to double precision
# (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
_THETA_13 = 5.371920351148152


def matrix_exp(lib, a, solve):
    """e^A for a batch of square matrices by scaling and squaring: each matrix is divided by
    2^s (s the least with ‖A/2^s‖₁ ≤ θ₁₃), its [13/13] Padé approximant q(A)⁻¹ p(A) taken
    (``solve``: the library's batched linear solver), and squared back s times."""
    n = a.shape[-1]
    norm = lib.max(lib.sum(lib.abs(a), axis=-2), axis=-1) if n else lib.zeros(a.shape[:-2], dtype=a.dtype)
    with_nan = ~lib.isfinite(norm)
    ratio = lib.where(with_nan, 1, norm / _THETA_13)
    steps = lib.maximum(lib.ceil(lib.log2(lib.maximum(ratio, 1e-300))), 0).astype(lib.int64)
    x = a / (2.0 ** steps.astype(a.dtype))[..., None, None]
    c = _PADE_13
    eye = lib.broadcast_to(lib.eye(n, dtype=a.dtype), a.shape)
    x2 = lib.matmul(x, x)
    x4 = lib.matmul(x2, x2)
    x6 = lib.matmul(x4, x2)
    odd = lib.matmul(x, lib.matmul(x6, c[13] * x6 + c[11] * x4 + c[9] * x2)
                     + c[7] * x6 + c[5] * x4 + c[3] * x2 + c[1] * eye)
    even = lib.matmul(x6, c[12] * x6 + c[10] * x4 + c[8] * x2) + c[6] * x6 + c[4] * x4 + c[2] * x2 + c[0] * eye
    result = solve(even - odd, even + odd)
    for step in range(int(lib.max(steps)) if steps.size else 0):
        result = lib.where((step < steps)[..., None, None], lib.matmul(result, result), result)
    return lib.where(with_nan[..., None, None], lib.nan, result)


# --- the EXTRAS, for one library -----------------------------------------------------------

def _quiet(lib):
    """No warnings for the inf/NaN of singular systems (PyTorch gives them silently)."""
    errstate = getattr(lib, "errstate", None)
    return errstate(divide="ignore", invalid="ignore", over="ignore") if errstate else contextlib.nullcontext()


def extras(lib, raising=contextlib.nullcontext):
    """The EXTRAS ``solve_triangular``, ``cholesky_ex``, ``inv_ex``, ``solve_ex`` and
    ``matrix_exp``, and ``lu_det``, over ``lib``'s arrays. ``raising()`` is the context in which ``lib.linalg``
    raises ``numpy.linalg.LinAlgError`` for a singular or indefinite matrix (NumPy always does;
    CuPy inside ``cupyx.errstate(linalg="raise")``): LAPACK runs first, and the loops above only
    where it refuses, to say which batch element failed and where."""

    def _finite(*arrays):
        """Whether the arrays hold only finite numbers (the one check on the finite path)."""
        return all(bool(lib.isfinite(x).all()) for x in arrays)

    def _finite_matrices(a):
        return lib.isfinite(a).all(axis=(-2, -1))

    def broadcast(a, b):
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return lib.broadcast_to(a, batch + a.shape[-2:]), lib.broadcast_to(b, batch + b.shape[-2:])

    def solve_triangular(a, b, upper, unitriangular=False):
        """X with T X = B, T the upper (``upper``) or lower triangle of ``a``, with ones on its
        diagonal when ``unitriangular``; batch dims broadcast. LAPACK's general solver runs on T
        made upper triangular (a lower one has its rows and columns reversed): elimination then
        exchanges no rows and is back substitution. A zero on T's diagonal makes it refuse, and
        substitution gives PyTorch's inf/NaN instead."""
        t, b = broadcast(triangle(lib, a, upper, unitriangular), b)
        if not _finite(t, b):          # LAPACK's substitution, not the general solver's pivoting
            with _quiet(lib):
                return substitution(lib, t, b, upper=upper, unitriangular=False)
        if not upper:
            t, b = t[..., ::-1, ::-1], b[..., ::-1, :]
        try:
            with raising():
                x = lib.linalg.solve(t, b)
        except np.linalg.LinAlgError:
            with _quiet(lib):
                x = substitution(lib, t, b, upper=True, unitriangular=False)
        return x if upper else lib.ascontiguousarray(x[..., ::-1, :])

    def cholesky_ex(a):
        """``(L, info)``: the lower Cholesky factor of each matrix (its lower triangle read) and 0,
        or, where a leading minor is not positive-definite, the order of the first such minor."""
        finite = _finite(a)
        try:
            if not finite:
                raise np.linalg.LinAlgError
            with raising():
                return lib.linalg.cholesky(a), lib.zeros(a.shape[:-2], dtype=lib.int32)
        except np.linalg.LinAlgError:
            with _quiet(lib):
                out, info = cholesky_columns(lib, a)
            ok = (info == 0) & _finite_matrices(a)
            if bool(ok.any()):
                out[ok] = lib.linalg.cholesky(a[ok])      # LAPACK's values where the factorization completes
            return out, info

    def inv_ex(a):
        """``(inverse, info)``: info 0, or the 1-based index of the first zero pivot of the LU
        factorization of a singular matrix, whose 'inverse' then holds inf/NaN."""
        try:
            if not _finite(a):
                raise np.linalg.LinAlgError
            with raising():
                return lib.linalg.inv(a), lib.zeros(a.shape[:-2], dtype=lib.int32)
        except np.linalg.LinAlgError:
            eye = lib.broadcast_to(lib.eye(a.shape[-1], dtype=a.dtype), a.shape)
            return _solve_by_lu(a, eye, lambda a, _: lib.linalg.inv(a))

    def solve_ex(a, b):
        """``(X, info)`` with A X = B (B a batch of matrices; batch dims broadcast); info as
        :func:`inv_ex`'s, X inf/NaN where A is singular."""
        a, b = broadcast(a, b)
        try:
            if not _finite(a, b):
                raise np.linalg.LinAlgError
            with raising():
                return lib.linalg.solve(a, b), lib.zeros(a.shape[:-2], dtype=lib.int32)
        except np.linalg.LinAlgError:
            return _solve_by_lu(a, b, lib.linalg.solve)

    def _solve_by_lu(a, b, exact):
        """LU with partial pivoting for the info and the inf/NaN of the singular matrices and of
        those holding inf or NaN; ``exact(a, b)`` (LAPACK) for the others."""
        with _quiet(lib):
            lu, perm, info = lu_factor(lib, a)
            x = lu_solve(lib, lu, perm, b)
        ok = (info == 0) & _finite_matrices(a) & _finite_matrices(b)
        if bool(ok.any()):
            x[ok] = exact(a[ok], b[ok])                  # LAPACK's values where A is invertible
        return x, info

    def lu_det(a):
        """``(det, sign, logabsdet)`` of each matrix, pivoting on those holding inf or NaN as
        LAPACK does in PyTorch (:func:`lu_determinant`); ``lib.linalg``'s for the finite ones."""
        with _quiet(lib):
            det, sign, logabsdet = lu_determinant(lib, a)
        ok = _finite_matrices(a)
        finite = lib.where(ok[..., None, None], a, lib.zeros((), dtype=a.dtype))
        exact_sign, exact_logabsdet = lib.linalg.slogdet(finite)
        return (lib.where(ok, lib.linalg.det(finite), det), lib.where(ok, exact_sign, sign),
                lib.where(ok, exact_logabsdet, logabsdet))

    def exp(a):
        """e^A of each square matrix (float16 computed in float32)."""
        if a.dtype == lib.float16:
            return exp(a.astype(lib.float32)).astype(lib.float16)
        with _quiet(lib):
            return matrix_exp(lib, a, lib.linalg.solve)

    return {"solve_triangular": solve_triangular, "cholesky_ex": cholesky_ex, "inv_ex": inv_ex,
            "solve_ex": solve_ex, "matrix_exp": exp, "lu_det": lu_det}
