"""LAPACK kept off matrices that hold inf or NaN.

LAPACK's singular value iteration never ends on some of them (``numpy.linalg.svd`` of a matrix
with one inf hangs); PyTorch answers at once, with NaN singular values. These wrappers factor
zeros in place of such matrices and give NaN singular values for them, with the zero matrix's
(orthogonal) singular vectors, as PyTorch does: ``pinv`` is zero there, ``matrix_norm(ord=2)`` and
``cond`` NaN.

LAPACK's LU of a matrix holding inf or NaN pivots differently on A and on Aᵀ (NaN or inf where
the other gives a number): PyTorch factors Aᵀ (its row-major A read column-major), NumPy A.
``det``, ``slogdet`` and ``inverse`` take the backend's ``lu_det`` and ``inv_ex`` (PyTorch's
pivots) for such matrices.
"""

import math


def _finite_matrices(xp, a):
    """Where each matrix of the batch ``a`` holds only finite numbers (the batch's shape)."""
    return xp.all(xp.isfinite(a), axis=(-2, -1))


def _zeros_where_not(xp, finite, a):
    """``a`` with its matrices that are not ``finite`` replaced by zeros."""
    return xp.where(xp.expand_dims(xp.expand_dims(finite, axis=-1), axis=-1), a, xp.zeros_like(a))


def _nan_where_not(xp, finite, values):
    """The batch of vectors ``values`` with NaN where the matrices are not ``finite``."""
    return xp.where(xp.expand_dims(finite, axis=-1), values, xp.full_like(values, math.nan))


def svd(xp, a, full_matrices):
    """``xp.linalg.svd(a, full_matrices=...)``, NaN singular values for the matrices holding
    inf or NaN."""
    finite = _finite_matrices(xp, a)
    if bool(xp.all(finite)):
        return xp.linalg.svd(a, full_matrices=full_matrices)
    u, s, vh = xp.linalg.svd(_zeros_where_not(xp, finite, a), full_matrices=full_matrices)
    return u, _nan_where_not(xp, finite, s), vh


def svdvals(xp, a):
    """``xp.linalg.svdvals(a)``, NaN for the matrices holding inf or NaN."""
    finite = _finite_matrices(xp, a)
    if bool(xp.all(finite)):
        return xp.linalg.svdvals(a)
    return _nan_where_not(xp, finite, xp.linalg.svdvals(_zeros_where_not(xp, finite, a)))


def all_finite(xp, a):
    """Whether ``a`` holds only finite numbers: the one check on the finite path."""
    return bool(xp.all(xp.isfinite(a)))


def lapack_dtype(xp, a):
    """Refuse, as ``xp.linalg`` does on the finite path (a TypeError, which ops reword), a
    dtype that LAPACK has no kernel for: all but float32 and float64."""
    if a.dtype not in (xp.float32, xp.float64):
        raise TypeError(f"LAPACK has no kernel for {a.dtype}")   # backend seam: Op.apply rewords it


def det(xp, a):
    """``xp.linalg.det(a)``, PyTorch's where a matrix holds inf or NaN."""
    if all_finite(xp, a):
        return xp.linalg.det(a)
    lapack_dtype(xp, a)
    return xp.lu_det(a)[0]


def slogdet(xp, a):
    """``xp.linalg.slogdet(a)``, PyTorch's where a matrix holds inf or NaN."""
    if all_finite(xp, a):
        return tuple(xp.linalg.slogdet(a))
    lapack_dtype(xp, a)
    return xp.lu_det(a)[1:]
