"""Linear algebra on matrices holding inf, -inf or NaN gives PyTorch's answers: LU pivots chosen
as LAPACK chooses them, triangular solves by substitution, Cholesky as LAPACK's potrf leaves it,
inv_ex / solve_ex through that LU, matrix_power's grouping and its bool powers. The expected
values are PyTorch 2.13 CPU's, written out so that these tests run without torch."""

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.backends import linalg_kernels
from vizgrad.errors import DTypeError

inf, nan = np.inf, np.nan


def _same(ours, expected, dtype):
    """``ours`` (a vizgrad tensor) holds exactly ``expected``, NaN where it has NaN, in ``dtype``."""
    ours = ours.numpy()
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, np.array(expected, dtype=dtype))


def _close(ours, expected, dtype):
    ours = ours.numpy()
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, np.array(expected, dtype=dtype), rtol=1e-6, atol=1e-12, equal_nan=True)


# --- lu_factor ----------------------------------------------------------------------------------
# (A, PyTorch 2.13 CPU's LU, its pivots)
LU_CASES = {
    "inf_not_pivot": ([[1., inf], [2., 3.]], [[2., 3.], [0.5, inf]], [2, 2]),
    "nan_heads_column": ([[nan, 1.], [5., 2.]], [[nan, 1.], [nan, nan]], [1, 2]),
    "first_of_equal_infs": ([[-inf, 1., 0.], [inf, 2., 1.], [1., 1., 1.]],
                            [[-inf, 1., 0.], [nan, nan, nan], [-0., nan, nan]], [1, 2, 3]),
}
# NaN below the head of a column: LAPACK's idamax passes over it.
LU_NAN_BELOW = {
    "nan_below_head": ([[1., 2., 3.], [nan, 4., 5.], [3., 6., 1.]],
                       [[3., 6., 1.], [nan, nan, nan], [1 / 3, nan, nan]], [3, 2, 3]),
    "4x4_inf_then_nan": ([[2., 1., 0., 1.], [4., 3., 1., 0.], [1., inf, 2., 1.], [0., 1., nan, 3.]],
                         [[4., 3., 1., 0.], [0.25, inf, 1.75, 1.], [0.5, -0., -0.5, 1.], [0., 0., nan, nan]],
                         [2, 3, 3, 4]),
}


@pytest.mark.parametrize("case", LU_CASES)
def test_lu_factor_of_non_finite_matrices_is_pytorchs(case):
    A, LU, pivots = LU_CASES[case]
    ours, our_pivots = vg.linalg.lu_factor(vg.tensor(A, dtype=vg.float64))
    _same(ours, LU, np.float64)
    _same(our_pivots, pivots, np.int32)


@pytest.mark.parametrize("case", LU_NAN_BELOW)
def test_lu_factor_passes_over_nan_below_the_head_of_a_column(case):
    A, LU, pivots = LU_NAN_BELOW[case]
    ours, our_pivots = vg.linalg.lu_factor(vg.tensor(A, dtype=vg.float64))
    _same(our_pivots, pivots, np.int32)
    _same(ours, LU, np.float64)


@pytest.mark.parametrize("case", {**LU_CASES, **LU_NAN_BELOW})
def test_lu_kernel_of_non_finite_matrices_is_pytorchs(case):
    """The backend's LU (behind inv_ex and solve_ex): ``perm`` is the row order the pivots make."""
    A, LU, pivots = {**LU_CASES, **LU_NAN_BELOW}[case]
    lu, perm, info = linalg_kernels.lu_factor(np, np.array([A]))
    order = list(range(len(A)))
    for k, p in enumerate(pivots):
        order[k], order[p - 1] = order[p - 1], order[k]
    np.testing.assert_array_equal(lu[0], LU)
    np.testing.assert_array_equal(perm[0], order)
    np.testing.assert_array_equal(info, [0])


def test_lu_factor_of_a_finite_matrix_is_the_ordinary_one():
    ours, pivots = vg.linalg.lu_factor(vg.tensor([[1., 2., 0.], [3., 1., 2.], [0., 4., 1.]], dtype=vg.float64))
    _close(ours, [[3., 1., 2.], [0., 4., 1.], [1 / 3, 5 / 12, -13 / 12]], np.float64)
    _same(pivots, [2, 3, 3], np.int32)


# --- solve_triangular ---------------------------------------------------------------------------
# (upper A, B, PyTorch 2.13 CPU's X for A X = B); the lower cases are their transposes with B's
# rows reversed.
TRIANGULAR_UPPER = {
    "inf_above_diagonal": ([[2., inf], [0., 4.]], [[1.], [2.]], [[-inf], [0.5]]),
    "inf_on_diagonal": ([[inf, 1.], [0., 2.]], [[1.], [2.]], [[0.], [1.]]),
    "nan_in_the_unread_triangle": ([[2., 1.], [nan, 4.]], [[2.], [4.]], [[0.5], [1.]]),
    "nan_in_B": ([[2., 1., 3.], [0., 4., 1.], [0., 0., 5.]], [[1., 2.], [nan, 1.], [3., 4.]],
                 [[nan, -0.2250000000000002], [nan, 0.04999999999999999], [0.6000000000000001, 0.8]]),
    "minus_inf_in_B": ([[1., 2., 0.], [0., 1., 3.], [0., 0., 2.]], [[-inf], [1.], [2.]], [[-inf], [-2.], [1.]]),
}
TRIANGULAR_LOWER = {
    "inf_below_diagonal": ([[2., 0.], [inf, 4.]], [[2.], [1.]], [[1.], [-inf]]),
    "inf_on_diagonal": ([[inf, 0.], [1., 2.]], [[1.], [1.]], [[0.], [0.5]]),
    "nan_in_the_unread_triangle": ([[2., nan], [1., 4.]], [[4.], [2.]], [[2.], [0.]]),
    "nan_in_B": ([[2., 0., 0.], [1., 4., 0.], [3., 1., 5.]], [[3., 4.], [nan, 1.], [1., 2.]],
                 [[1.5, 2.], [nan, -0.25], [nan, -0.75]]),
    "minus_inf_in_B": ([[2., 0., 0.], [3., 1., 0.], [0., 2., 1.]], [[4.], [3.], [-inf]], [[2.], [-3.], [-inf]]),
}


@pytest.mark.parametrize("upper, case", [(True, c) for c in TRIANGULAR_UPPER] + [(False, c) for c in TRIANGULAR_LOWER])
def test_solve_triangular_of_non_finite_input_is_pytorchs(upper, case):
    A, B, X = (TRIANGULAR_UPPER if upper else TRIANGULAR_LOWER)[case]
    ours = vg.linalg.solve_triangular(vg.tensor(A, dtype=vg.float64), vg.tensor(B, dtype=vg.float64), upper=upper)
    # (substitution's finite columns may differ from LAPACK's trsm in the last bit)
    np.testing.assert_allclose(ours.numpy(), X, rtol=1e-14, atol=0, equal_nan=True)


@pytest.mark.parametrize("upper", [True, False])
def test_solve_triangular_of_finite_input_is_the_ordinary_one(upper):
    A = np.array([[2., 1., 3.], [0., 4., 1.], [0., 0., 5.]])
    A = A if upper else A.T
    B = [[1.], [2.], [3.]] if upper else [[3.], [2.], [1.]]
    X = vg.linalg.solve_triangular(vg.tensor(A.tolist()), vg.tensor(B), upper=upper)
    _close(X, [[-0.575], [0.35], [0.6]] if upper else [[1.5], [0.125], [-0.725]], np.float32)


# --- cholesky_ex --------------------------------------------------------------------------------
# (A, PyTorch 2.13 CPU's L, its info)
CHOLESKY_CASES = {
    "not_positive_definite": ([[1., 2.], [2., 1.]], [[1., 0.], [2., -3.]], 2),
    "not_positive_definite_3x3": ([[4., 2., 1.], [2., 1., 3.], [1., 3., 6.]],
                                  [[2., 0., 0.], [1., 0., 0.], [0.5, 3., 6.]], 2),
    "nan_first_pivot": ([[nan, 1.], [1., 2.]], [[nan, 0.], [1., 2.]], 1),
    "minus_inf_below_diagonal": ([[4., 2., 0.], [-inf, 5., 1.], [0., 1., 3.]],
                                 [[2., 0., 0.], [-inf, -inf, 0.], [0., 1., 3.]], 2),
    "nan_below_diagonal": ([[4., 2., 0.], [2., 5., 1.], [nan, 1., 3.]],
                           [[2., 0., 0.], [1., 2., 0.], [nan, nan, nan]], 3),
    "nan_in_the_unread_upper_triangle": ([[4., nan], [2., 5.]], [[2., 0.], [1., 2.]], 0),
}
# inf on the diagonal before the last column, in float32 (these are) up to order 16: PyTorch's L continues
# with NaN and reports the next minor (float64, and larger orders, leave zeros below the inf).
CHOLESKY_INF_DIAGONAL = {
    "inf_on_diagonal": ([[4., 2., 0.], [2., inf, 1.], [0., 1., 3.]],
                        [[2., 0., 0.], [1., inf, 0.], [0., nan, nan]], 3),
    "4x4_inf_on_diagonal": ([[4., 1., 0., 0.], [1., 3., 0., 0.], [0., 0., inf, 1.], [0., 0., 1., 2.]],
                            [[2., 0., 0., 0.], [0.5, 1.6583124, 0., 0.], [0., 0., inf, 0.], [0., 0., nan, nan]], 4),
}


@pytest.mark.parametrize("case", CHOLESKY_CASES)
def test_cholesky_ex_of_non_finite_or_indefinite_matrices_is_pytorchs(case):
    A, L, info = CHOLESKY_CASES[case]
    ours, our_info = vg.linalg.cholesky_ex(vg.tensor(A))
    _close(ours, L, np.float32)
    _same(our_info, info, np.int32)


@pytest.mark.parametrize("case", CHOLESKY_INF_DIAGONAL)
def test_cholesky_ex_after_an_inf_pivot_is_pytorchs(case):
    A, L, info = CHOLESKY_INF_DIAGONAL[case]
    ours, our_info = vg.linalg.cholesky_ex(vg.tensor(A))
    _same(our_info, info, np.int32)
    _close(ours, L, np.float32)


def test_cholesky_ex_of_a_batch_treats_each_matrix_on_its_own():
    A = vg.tensor([[[4., 2.], [2., 5.]], [[1., 2.], [2., 1.]], [[nan, 1.], [1., 2.]]], dtype=vg.float64)
    L, info = vg.linalg.cholesky_ex(A)
    _same(L, [[[2., 0.], [1., 2.]], [[1., 0.], [2., -3.]], [[nan, 0.], [1., 2.]]], np.float64)
    _same(info, [0, 2, 1], np.int32)
    _same(vg.linalg.cholesky_ex(vg.tensor([[-4.]], dtype=vg.float64)).L, [[-4.]], np.float64)


def test_cholesky_ex_of_a_finite_positive_definite_matrix_is_the_ordinary_one():
    L, info = vg.linalg.cholesky_ex(vg.tensor([[4., 2., 0.], [2., 5., 1.], [0., 1., 3.]]))
    _close(L, [[2., 0., 0.], [1., 2., 0.], [0., 0.5, 11 ** 0.5 / 2]], np.float32)
    _same(info, 0, np.int32)


# --- inv_ex and solve_ex ------------------------------------------------------------------------
# (A, PyTorch 2.13 CPU's inverse); info is 0 in each.
INVERSE_CASES = {
    "inf_on_diagonal": ([[inf, 1.], [1., 1.]], [[0., -0.], [0., 1.]]),
    "nan_heads_column": ([[nan, 1.], [2., 3.]], [[nan, nan], [nan, nan]]),
    "minus_inf_3x3": ([[1., 2., 0.], [0., -inf, 1.], [3., 0., 1.]], [[1., 0., 0.], [-0., -0., 0.], [-3., -0., 1.]]),
    "nan_below_head": ([[1., 2., 3.], [nan, 4., 5.], [3., 6., 1.]], [[nan] * 3] * 3),
}


@pytest.mark.parametrize("case", INVERSE_CASES)
def test_inv_ex_of_non_finite_matrices_is_pytorchs(case):
    A, inverse = INVERSE_CASES[case]
    ours, info = vg.linalg.inv_ex(vg.tensor(A))
    _same(ours, inverse, np.float32)
    _same(info, 0, np.int32)


def test_inv_ex_of_a_batch_keeps_lapacks_inverse_for_its_finite_matrices():
    ours, info = vg.linalg.inv_ex(vg.tensor([[[2., 1.], [1., 3.]], [[inf, 1.], [1., 1.]]], dtype=vg.float64))
    _close(ours, [[[0.6, -0.2], [-0.2, 0.4]], [[0., -0.], [0., 1.]]], np.float64)
    assert np.isfinite(ours.numpy()).all()
    _same(info, [0, 0], np.int32)


def test_inv_ex_of_a_finite_matrix_is_the_ordinary_one():
    ours, info = vg.linalg.inv_ex(vg.tensor([[2., 1.], [1., 3.]]))
    _close(ours, [[0.6, -0.2], [-0.2, 0.4]], np.float32)
    _same(info, 0, np.int32)


# (A, B, PyTorch 2.13 CPU's X); info is 0 in each.
SOLVE_CASES = {
    "inf_in_A": ([[1., inf], [2., 3.]], [[1.], [2.]], [[1.], [0.]]),
    "nan_in_B": ([[2., 1.], [1., 3.]], [[nan, 1.], [2., 3.]], [[nan, 0.], [nan, 1.]]),
    "inf_in_B": ([[2., 1., 0.], [1., 3., 1.], [0., 1., 4.]], [[inf], [1.], [0.]], [[nan], [nan], [nan]]),
    "nan_below_head_in_A": ([[1., 2., 3.], [nan, 4., 5.], [3., 6., 1.]], [[1.], [2.], [3.]], [[nan], [nan], [nan]]),
}


@pytest.mark.parametrize("case", SOLVE_CASES)
def test_solve_ex_of_non_finite_input_is_pytorchs(case):
    A, B, X = SOLVE_CASES[case]
    ours, info = vg.linalg.solve_ex(vg.tensor(A), vg.tensor(B))
    _same(ours, X, np.float32)
    _same(info, 0, np.int32)


def test_solve_ex_of_a_batch_keeps_lapacks_solution_for_its_finite_systems():
    A = vg.tensor([[[2., 1.], [1., 3.]], [[1., inf], [2., 3.]]], dtype=vg.float64)
    ours, info = vg.linalg.solve_ex(A, vg.tensor([[[1.], [2.]], [[1.], [2.]]], dtype=vg.float64))
    _close(ours, [[[0.2], [0.6]], [[1.], [0.]]], np.float64)
    _same(info, [0, 0], np.int32)


def test_solve_ex_of_finite_input_is_the_ordinary_one():
    ours, info = vg.linalg.solve_ex(vg.tensor([[2., 1.], [1., 3.]]), vg.tensor([[1.], [2.]]))
    # (PyTorch gives 0.19999999 and 0.6: float32 LAPACK's last bit is not compared)
    _close(ours, [[0.2], [0.6]], np.float32)
    _same(info, 0, np.int32)


# --- matrix_power -------------------------------------------------------------------------------
# (A, PyTorch 2.13 CPU's A³ = (A A) A; A (A A) has other NaN/inf entries for each)
CUBE_CASES = {
    "inf_heads": ([[inf, 0.], [2., 0.]], [[nan, nan], [inf, nan]]),
    "minus_inf_last": ([[1., 2.], [2., -inf]], [[-inf, inf], [nan, -inf]]),
    "minus_inf_zero_column": ([[0., 2.], [0., -inf]], [[nan, inf], [nan, nan]]),
}


@pytest.mark.parametrize("power", [vg.matrix_power, vg.linalg.matrix_power], ids=["matrix_power", "linalg"])
@pytest.mark.parametrize("case", CUBE_CASES)
def test_matrix_power_3_of_a_non_finite_matrix_groups_as_pytorch(power, case):
    A, cube = CUBE_CASES[case]
    _same(power(vg.tensor(A), 3), cube, np.float32)


@pytest.mark.parametrize("power", [vg.matrix_power, vg.linalg.matrix_power], ids=["matrix_power", "linalg"])
def test_matrix_power_of_a_finite_matrix_is_the_ordinary_one(power):
    _same(power(vg.tensor([[1., 2.], [3., 4.]]), 3), [[37., 54.], [81., 118.]], np.float32)
    _same(power(vg.tensor([[1, 2], [3, 4]]), 3), [[37, 54], [81, 118]], np.int64)


@pytest.mark.parametrize("power", [vg.matrix_power, vg.linalg.matrix_power], ids=["matrix_power", "linalg"])
def test_matrix_power_of_bool_for_n_0_and_1(power):
    A = vg.tensor([[True, False], [True, True]])
    _same(power(A, 0), [[True, False], [False, True]], np.bool_)
    one = power(A, 1)
    _same(one, [[True, False], [True, True]], np.bool_)
    one.copy_(vg.zeros(2, 2, dtype=vg.bool))                      # a copy: A keeps its values
    _same(A, [[True, False], [True, True]], np.bool_)
    batch = vg.tensor([[[True, True], [False, False]], [[False, True], [True, False]]])
    _same(power(batch, 0), [[[True, False], [False, True]]] * 2, np.bool_)


@pytest.mark.parametrize("power, name", [(vg.matrix_power, "matrix_power: input"),
                                         (vg.linalg.matrix_power, "linalg.matrix_power: A")],
                         ids=["matrix_power", "linalg"])
@pytest.mark.parametrize("n", [2, 3, -1, -2])
def test_matrix_power_of_bool_refuses_other_n(power, name, n):
    # (PyTorch: NotImplementedError "addmm_impl_cpu_" for n >= 2, RuntimeError from linalg.inv for n < 0)
    with pytest.raises(DTypeError, match=f"^{name} must be a number tensor for n = {n}, not bool"):
        power(vg.tensor([[True, False], [True, True]]), n)
