"""det, slogdet, logdet and inverse of matrices holding inf, -inf or NaN give PyTorch's answers:
the LU of Aᵀ (as PyTorch hands its row-major A to LAPACK), its pivots chosen as LAPACK chooses
them. The expected values are PyTorch 2.13 CPU's, written out so that these tests run without
torch; finite matrices keep LAPACK's (NumPy's) values."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import DTypeError, LinAlgError

inf, nan = np.inf, np.nan

# A -> PyTorch's (det, slogdet's sign, logabsdet, logdet)
DETERMINANTS = {
    "2x2_inf_column": ([[1., inf], [-1., inf]], (nan, -0., nan, nan)),
    "2x2_negative_inf": ([[-1., -1.], [-inf, inf]], (-inf, -1., inf, nan)),
    "3x3_nan_on_diagonal": ([[-1., -1., -0.], [2., -inf, 0.], [-2., -0., 1.]], (inf, 1., inf, inf)),
    "3x3_sign_of_nan_is_0": ([[1., 0., 1.], [-1., inf, -1.], [-inf, 0., 1.]], (nan, 0., nan, nan)),
    "3x3_negative_inf": ([[-2., 1., inf], [1., -2., 2.], [-2., 2., 1.]], (-inf, -1., inf, nan)),
    "3x3_nan_entry": ([[-2., 2., -inf], [0., 1., 1.], [-1., 1., nan]], (nan, 0., nan, nan)),
    "4x4_inf": ([[1.5, 0.25, -0.75, -1.], [0.25, 1., -0.25, -1.5], [-inf, 1., 0.25, -0.25],
                 [-0.125, 2., -2.75, -1.25]], (nan, 0., nan, nan)),
    "4x4_negative_inf": ([[2., inf, 2., 2.], [1., -2., -1., -2.], [2., -2., 2., 2.], [0., 0., -2., 2.]],
                         (-inf, -1., inf, nan)),
}


def _equal(ours, expected, dtype=np.float64):
    ours = ours.numpy()
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, np.array(expected, dtype=dtype))


@pytest.mark.parametrize("case", sorted(DETERMINANTS))
def test_determinants_of_a_non_finite_matrix_are_pytorchs(case):
    A, (det, sign, logabsdet, logdet) = DETERMINANTS[case]
    a = vg.tensor(A, dtype=vg.float64)
    _equal(vg.det(a), det)
    _equal(vg.linalg.det(a), det)
    for result in (vg.slogdet(a), vg.linalg.slogdet(a)):
        _equal(result.sign, sign)
        _equal(result.logabsdet, logabsdet)
    _equal(vg.logdet(a), logdet)


def test_determinants_of_a_batch_in_float32():
    """PyTorch's for the non-finite matrices, LAPACK's for the finite one between them."""
    a = vg.tensor([[[1., inf], [-1., inf]], [[3., 1.], [1., 2.]], [[-1., -1.], [-inf, inf]]], dtype=vg.float32)
    _equal(vg.det(a), [nan, 5., -inf], np.float32)
    sign, logabsdet = vg.linalg.slogdet(a)
    _equal(sign, [-0., 1., -1.], np.float32)
    np.testing.assert_array_equal(logabsdet.numpy()[[0, 2]], np.array([nan, inf], np.float32))
    assert logabsdet.numpy().dtype == np.float32
    assert logabsdet.numpy()[1] == np.linalg.slogdet(np.array([[3., 1.], [1., 2.]], np.float32))[1]
    logdet = vg.logdet(a).numpy()
    assert np.isnan(logdet[[0, 2]]).all() and logdet[1] == logabsdet.numpy()[1]


def test_a_batch_keeps_lapacks_determinants_for_its_finite_matrices():
    finite = np.array([[0.3, 1.7, -2.2], [1.1, 0.4, 0.9], [-0.6, 2.5, 1.3]])
    a = vg.tensor(np.stack([finite, np.full((3, 3), inf), finite.T]))
    det = vg.det(a).numpy()
    assert det[0] == np.linalg.det(finite) and det[2] == np.linalg.det(finite.T)
    assert np.isnan(det[1])
    sign, logabsdet = vg.slogdet(a)
    assert sign.numpy()[0] == np.linalg.slogdet(finite)[0]
    assert logabsdet.numpy()[0] == np.linalg.slogdet(finite)[1]


# A -> PyTorch's inverse
INVERSES = {
    "2x2_inf_column": ([[1., inf], [-1., inf]], [[nan, nan], [0., 0.]]),
    "2x2_nan": ([[-inf, 1.], [nan, 0.]], [[nan, nan], [nan, nan]]),
    "3x3_inf_pivot": ([[1., 0., 1.], [-1., inf, -1.], [-inf, 0., 1.]], [[0., 0., 0.], [0., 0., 0.], [1., 0., 0.]]),
    "3x3_zero_row": ([[-2., inf, -1.], [-1., 2., 2.], [0., 0., 0.]], [[nan] * 3] * 3),
}


@pytest.mark.parametrize("case", sorted(INVERSES))
def test_inverse_of_a_non_finite_matrix_is_pytorchs(case):
    A, expected = INVERSES[case]
    a = vg.tensor(A, dtype=vg.float64)
    _equal(vg.inverse(a), expected)
    _equal(vg.linalg.inv(a), expected)


def test_inverse_of_a_batch_with_a_non_finite_matrix():
    finite = np.array([[2., 1.], [1., 3.]])
    ours = vg.linalg.inv(vg.tensor(np.stack([finite, [[1., inf], [-1., inf]]]))).numpy()
    assert np.array_equal(ours[0], np.linalg.inv(finite))
    np.testing.assert_array_equal(ours[1], [[nan, nan], [0., 0.]])


@pytest.mark.parametrize("function, name", [(vg.inverse, "inverse"), (vg.linalg.inv, "linalg.inv")])
def test_inverse_of_a_non_finite_singular_matrix_raises(function, name):
    """A zero pivot in the LU of one with inf and NaN: PyTorch refuses it too."""
    a = vg.tensor([[-2., 0., -inf], [-inf, 1., nan], [nan, -2., 2.]])
    with pytest.raises(LinAlgError, match=rf"^{name}: .* is singular"):
        function(a)


def test_finite_matrices_are_unchanged():
    a = np.array([[[4., 1., 0.5], [1., 3., 0.], [0.5, 0., 2.]], [[0., 1., 0.], [1., 0., 0.], [0., 0., -2.]]])
    t = vg.tensor(a)
    np.testing.assert_array_equal(vg.det(t).numpy(), np.linalg.det(a))
    sign, logabsdet = vg.slogdet(t)
    np.testing.assert_array_equal(sign.numpy(), [1., 1.])
    np.testing.assert_array_equal(logabsdet.numpy(), np.linalg.slogdet(a)[1])
    np.testing.assert_array_equal(vg.logdet(t).numpy(), np.linalg.slogdet(a)[1])
    np.testing.assert_array_equal(vg.inverse(t).numpy(), np.linalg.inv(a))
    _equal(vg.logdet(vg.tensor([[1., 2.], [2., 4.]], dtype=vg.float64)), -inf)
    _equal(vg.logdet(vg.tensor([[0., 1.], [1., 0.]], dtype=vg.float64)), nan)
    with pytest.raises(LinAlgError, match="^inverse: input is singular"):
        vg.inverse(vg.tensor([[1., 2.], [2., 4.]]))


@pytest.mark.parametrize("dtype", [vg.float16, vg.bfloat16])
@pytest.mark.parametrize("function, name", [(vg.det, "det"), (vg.slogdet, "slogdet"), (vg.logdet, "logdet"),
                                            (vg.inverse, "inverse")])
def test_half_precision_is_refused_with_or_without_inf(function, name, dtype):
    """No LAPACK kernel for float16 or bfloat16 (PyTorch's CPU has none either), whatever A holds."""
    for A in ([[1., 2.], [3., 4.]], [[1., inf], [3., 4.]]):
        with pytest.raises(DTypeError, match=rf"^{name}: unsupported argument types: .*{dtype.name}"):
            function(vg.tensor(A, dtype=dtype))


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                                    [[0.0, 0.0], [0.0, 0.0]]], ids=["rank 1", "rank 2 of 3", "zero"])
def test_the_gradient_of_det_at_a_singular_matrix_is_its_cofactor_matrix(matrix):
    """d det A / dA = adj(A)ᵀ, which exists where A⁻¹ does not (det is a polynomial: the central
    difference is exact up to rounding). PyTorch 2.13 answers 0 there, and vizgrad used to raise
    NumPy's LinAlgError from inv inside backward."""
    a = vg.tensor(matrix, dtype=vg.float64, requires_grad=True)
    vg.det(a).backward()
    A, step = np.array(matrix), 1e-6
    numeric = np.zeros_like(A)
    for i, j in np.ndindex(A.shape):
        bump = np.zeros_like(A)
        bump[i, j] = step
        numeric[i, j] = (np.linalg.det(A + bump) - np.linalg.det(A - bump)) / (2 * step)
    np.testing.assert_allclose(a.grad.numpy(), numeric, atol=1e-7)
    b = vg.tensor(matrix, dtype=vg.float64, requires_grad=True)
    vg.logdet(b).backward()                        # A⁻ᵀ: infinite where the cofactor is not 0
    assert not np.isfinite(b.grad.numpy()).any()


def test_a_batch_with_one_singular_matrix_differentiates_each():
    a = vg.tensor([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], dtype=vg.float64, requires_grad=True)
    vg.det(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[[4.0, -2.0], [-2.0, 1.0]], [[3.0, -1.0], [-1.0, 2.0]]], atol=1e-12)
