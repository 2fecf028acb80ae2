"""vizgrad.linalg's decompositions and what is built on them, against torch.linalg: values,
first and second derivatives on batched inputs, the factorizations' defining properties,
the named tuples PyTorch returns, and the errors (which PyTorch, the oracle, raises too).

The op registry (tests/test_ops.py) checks each function against NumPy and finite differences
on every backend; here PyTorch is the reference for the same maths and for its conventions.
"""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import (ArgumentError, ArgumentTypeError, BackwardError, DTypeError, LinAlgError, ShapeError,
                            VizgradError)

torch = pytest.importorskip("torch")
L, T = vg.linalg, torch.linalg
RNG = np.random.default_rng(2024)


def spd(*shape):
    """Symmetric positive-definite matrices: X Xᵀ + n I."""
    x = RNG.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def symmetric(*shape):
    x = RNG.standard_normal(shape)
    return (x + np.swapaxes(x, -1, -2)) / 2


def well(*shape):
    """Well-conditioned square matrices: random plus 3 I."""
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])


def normal(*shape):
    return RNG.standard_normal(shape)


def eigen_gauge(result):
    """(w, |V|): each eigenvector's sign is the library's choice."""
    return result[0], result[1].abs()


def svd_gauge(result):
    """(|U|, S, |Vh|) over the first min(m, n) singular vectors (the rest, with full_matrices,
    are any basis of their space)."""
    k = result[1].shape[-1]
    return result[0][..., :k].abs(), result[1], result[2][..., :k, :].abs()


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _weights(shape):
    """Fixed, distinct weights for a scalar loss over an output (so every element counts)."""
    return np.cos(np.arange(math.prod(shape), dtype=np.float64).reshape(shape) + 0.5)


def _loss(lib, outputs):
    return sum((o * lib.tensor(_weights(tuple(o.shape)))).sum() for o in outputs if o.requires_grad)


def assert_same(ours, theirs, atol, what):
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy()
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, PyTorch {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, atol=atol, rtol=atol, err_msg=what)


def compare(ours_function, theirs_function, arrays, *, second=True, atol=1e-9):
    """Values, gradients and (with ``second``) the gradients of the gradients' squared norm, of
    vizgrad's function and PyTorch's on the same float64 inputs."""
    ours_in = [vg.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours, theirs = _outputs(ours_function(*ours_in)), _outputs(theirs_function(*theirs_in))
    assert len(ours) == len(theirs)
    for position, (mine, reference) in enumerate(zip(ours, theirs)):
        assert_same(mine, reference, atol, f"output {position}")
        assert mine.requires_grad == reference.requires_grad, f"output {position} requires_grad"
    ours_grads = vg.autograd.grad(_loss(vg, ours), ours_in, create_graph=second)
    theirs_grads = torch.autograd.grad(_loss(torch, theirs), theirs_in, create_graph=second)
    for position, (mine, reference) in enumerate(zip(ours_grads, theirs_grads)):
        assert_same(mine, reference, atol, f"gradient of input {position}")
    if second:
        ours_second = vg.autograd.grad(sum((g * g).sum() for g in ours_grads), ours_in)
        theirs_second = torch.autograd.grad(sum((g * g).sum() for g in theirs_grads), theirs_in)
        for position, (mine, reference) in enumerate(zip(ours_second, theirs_second)):
            assert_same(mine, reference, 100 * atol, f"second derivative, input {position}")


inf = math.inf
# (id, vizgrad's function, PyTorch's, the inputs, whether second derivatives exist)
CASES = [
    ("cholesky", L.cholesky, T.cholesky, lambda: [spd(2, 4, 4)], True),
    ("cholesky upper", lambda a: L.cholesky(a, upper=True), lambda a: T.cholesky(a, upper=True),
     lambda: [spd(3, 3)], True),
    ("cholesky_ex", lambda a: tuple(L.cholesky_ex(a)), lambda a: tuple(T.cholesky_ex(a)), lambda: [spd(2, 3, 3)], True),
    ("qr tall", L.qr, T.qr, lambda: [normal(2, 5, 3)], True),
    ("qr wide", L.qr, T.qr, lambda: [normal(2, 3, 5)], True),
    ("qr square", L.qr, T.qr, lambda: [well(4, 4)], True),
    ("qr complete wide", lambda a: L.qr(a, "complete"), lambda a: T.qr(a, "complete"), lambda: [normal(2, 3, 4)],
     True),
    ("eigh", lambda a: eigen_gauge(L.eigh(a)), lambda a: eigen_gauge(T.eigh(a)), lambda: [symmetric(2, 4, 4)], True),
    ("eigh upper", lambda a: eigen_gauge(L.eigh(a, UPLO="U")), lambda a: eigen_gauge(T.eigh(a, UPLO="U")),
     lambda: [symmetric(3, 3)], True),
    ("eigh reads one triangle", lambda a: eigen_gauge(L.eigh(a)), lambda a: eigen_gauge(T.eigh(a)),
     lambda: [normal(2, 3, 3)], True),
    ("eigvalsh", L.eigvalsh, T.eigvalsh, lambda: [symmetric(2, 4, 4)], True),
    ("eigvalsh upper", lambda a: L.eigvalsh(a, "U"), lambda a: T.eigvalsh(a, "U"), lambda: [normal(3, 3)], True),
    ("svd tall", lambda a: svd_gauge(L.svd(a, full_matrices=False)),
     lambda a: svd_gauge(T.svd(a, full_matrices=False)), lambda: [normal(2, 5, 3)], True),
    ("svd wide", lambda a: svd_gauge(L.svd(a, full_matrices=False)),
     lambda a: svd_gauge(T.svd(a, full_matrices=False)), lambda: [normal(2, 3, 5)], True),
    ("svd full tall", lambda a: svd_gauge(L.svd(a)), lambda a: svd_gauge(T.svd(a)), lambda: [normal(5, 3)], True),
    ("svd full wide", lambda a: svd_gauge(L.svd(a)), lambda a: svd_gauge(T.svd(a)), lambda: [normal(2, 2, 4)], True),
    ("svd reconstructs", lambda a: (lambda r: r.U * r.S.unsqueeze(-2) @ r.Vh)(L.svd(a, full_matrices=False)),
     lambda a: (lambda r: r.U * r.S.unsqueeze(-2) @ r.Vh)(T.svd(a, full_matrices=False)), lambda: [normal(2, 4, 3)],
     True),
    ("svdvals", L.svdvals, T.svdvals, lambda: [normal(2, 3, 5)], True),
    ("pinv tall", L.pinv, T.pinv, lambda: [normal(2, 5, 3)], True),
    ("pinv wide", L.pinv, T.pinv, lambda: [normal(3, 4)], True),
    ("pinv hermitian", lambda a: L.pinv(a, hermitian=True), lambda a: T.pinv(a, hermitian=True),
     lambda: [spd(2, 3, 3)], True),
    ("pinv rtol", lambda a: L.pinv(a, rtol=0.2), lambda a: T.pinv(a, rtol=0.2), lambda: [np.diag([5.0, 2.0, 0.5])],
     True),
    ("lstsq", lambda a, b: tuple(L.lstsq(a, b))[:2], lambda a, b: tuple(T.lstsq(a, b))[:2],
     lambda: [normal(2, 5, 3), normal(2, 5, 2)], True),
    ("lstsq gelsd", lambda a, b: tuple(L.lstsq(a, b, driver="gelsd")),
     lambda a, b: tuple(T.lstsq(a, b, driver="gelsd")), lambda: [normal(2, 5, 3), normal(2, 5, 2)], True),
    ("lstsq gels vectors", lambda a, b: tuple(L.lstsq(a, b, driver="gels")),
     lambda a, b: tuple(T.lstsq(a, b, driver="gels")), lambda: [normal(2, 5, 3), normal(2, 5)], True),
    ("lstsq wide", lambda a, b: L.lstsq(a, b).solution, lambda a, b: T.lstsq(a, b).solution,
     lambda: [normal(2, 3, 5), normal(2, 3, 2)], True),
    ("solve_triangular broadcast", lambda a, b: L.solve_triangular(a, b, upper=False),
     lambda a, b: T.solve_triangular(a, b, upper=False), lambda: [well(2, 1, 3, 3), normal(4, 3, 2)], True),
    ("matrix_exp", L.matrix_exp, T.matrix_exp, lambda: [2 * normal(2, 4, 4)], True),
    ("matrix_exp top level", vg.matrix_exp, torch.matrix_exp, lambda: [normal(3, 3)], True),
    ("matrix_power 3", lambda a: L.matrix_power(a, 3), lambda a: T.matrix_power(a, 3), lambda: [well(2, 3, 3) / 3],
     True),
    ("matrix_power -3", lambda a: L.matrix_power(a, -3), lambda a: T.matrix_power(a, -3), lambda: [well(2, 3, 3) / 3],
     True),
    ("matrix_power 0", lambda a: L.matrix_power(a, 0), lambda a: T.matrix_power(a, 0), lambda: [well(2, 3, 3)], False),
    ("Tensor.matrix_power", lambda a: a.matrix_power(5), lambda a: a.matrix_power(5), lambda: [well(3, 3) / 3], True),
    ("multi_dot", lambda *t: L.multi_dot(t), lambda *t: T.multi_dot(t),
     lambda: [normal(3), normal(3, 4), normal(4, 5), normal(5)], True),
    ("multi_dot matrices", lambda *t: L.multi_dot(list(t)), lambda *t: T.multi_dot(list(t)),
     lambda: [normal(6, 1), normal(1, 6), normal(6, 2)], True),
    ("vecdot", L.vecdot, T.vecdot, lambda: [normal(2, 1, 3), normal(4, 3)], True),
    ("vecdot dim", lambda x, y: L.vecdot(x, y, dim=0), lambda x, y: T.vecdot(x, y, dim=0),
     lambda: [normal(3, 2), normal(3, 1)], True),
    ("cond", L.cond, T.cond, lambda: [well(2, 3, 3)], True),
    ("cond 2 tall", lambda a: L.cond(a, 2), lambda a: T.cond(a, 2), lambda: [normal(2, 4, 3)], True),
    ("cond -2", lambda a: L.cond(a, -2), lambda a: T.cond(a, -2), lambda: [well(3, 3)], True),
    ("diagonal", lambda a: L.diagonal(a, offset=1), lambda a: T.diagonal(a, offset=1), lambda: [normal(2, 3, 4)],
     False),
    ("diagonal dims", lambda a: L.diagonal(a, dim1=0, dim2=2), lambda a: T.diagonal(a, dim1=0, dim2=2),
     lambda: [normal(3, 2, 3)], False),
    ("matmul", L.matmul, T.matmul, lambda: [normal(2, 3, 4), normal(4)], True),
    ("inv_ex", lambda a: tuple(L.inv_ex(a)), lambda a: tuple(T.inv_ex(a)), lambda: [well(2, 3, 3)], True),
    ("solve_ex", lambda a, b: tuple(L.solve_ex(a, b)), lambda a, b: tuple(T.solve_ex(a, b)),
     lambda: [well(2, 3, 3), normal(2, 3)], True),
    ("solve_ex right", lambda a, b: L.solve_ex(a, b, left=False).result,
     lambda a, b: T.solve_ex(a, b, left=False).result, lambda: [well(2, 3, 3), normal(2, 4, 3)], True),
    ("vander", lambda x: L.vander(x, N=4), lambda x: T.vander(x, N=4), lambda: [np.array([[0.0, 1.5, -2.0],
                                                                                           [0.5, 1.0, 2.0]])], True),
    ("tensorinv", lambda a: L.tensorinv(a, ind=1), lambda a: T.tensorinv(a, ind=1),
     lambda: [well(4, 4).reshape(4, 2, 2)], True),
    ("tensorsolve", L.tensorsolve, T.tensorsolve, lambda: [well(6, 6).reshape(2, 3, 6), normal(2, 3)], True),
    ("tensorsolve dims", lambda a, b: L.tensorsolve(a, b, dims=(0,)), lambda a, b: T.tensorsolve(a, b, dims=(0,)),
     lambda: [np.moveaxis(well(6, 6).reshape(6, 2, 3), 0, 1), normal(6)], True),
    ("matrix_norm nuc", lambda a: L.matrix_norm(a, "nuc"), lambda a: T.matrix_norm(a, "nuc"),
     lambda: [normal(2, 3, 4)], True),
    ("matrix_norm 2 over dims", lambda a: L.matrix_norm(a, 2, dim=(0, 2), keepdim=True),
     lambda a: T.matrix_norm(a, 2, dim=(0, 2), keepdim=True), lambda: [normal(2, 3, 4)], True),
    ("matrix_norm -2", lambda a: L.matrix_norm(a, -2), lambda a: T.matrix_norm(a, -2), lambda: [normal(3, 3)], True),
    ("norm nuc", lambda a: L.norm(a, "nuc"), lambda a: T.norm(a, "nuc"), lambda: [normal(3, 4)], True),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_values_and_gradients_match_pytorch(case):
    _, ours, theirs, inputs, second = case
    compare(ours, theirs, inputs(), second=second)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular_matches_pytorch_in_every_form(upper, left, unitriangular):
    b = normal(2, 3, 2) if left else normal(2, 2, 3)
    compare(lambda a, b: L.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular),
            lambda a, b: T.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular), [well(2, 3, 3), b])


@pytest.mark.parametrize("p", ["fro", "nuc", inf, -inf, 1, -1])
def test_cond_in_the_other_norms_is_the_norm_of_a_times_that_of_its_inverse(p):
    # PyTorch 2.13 computes these values but cannot differentiate them (its inverse is changed
    # in place): the gradients are compared with its ‖A‖ ‖A⁻¹‖
    matrices = well(2, 3, 3)
    assert_same(L.cond(vg.tensor(matrices), p), T.cond(torch.tensor(matrices), p), 1e-10, f"cond p={p}")
    compare(lambda a: L.cond(a, p), lambda a: T.matrix_norm(a, p) * T.matrix_norm(T.inv(a), p), [matrices])


def test_cond_of_singular_matrices_is_inf_as_in_pytorch():
    singular = np.stack([np.eye(2), np.array([[1.0, 2.0], [2.0, 4.0]])])
    for p in (1, "fro", inf):
        ours, theirs = L.cond(vg.tensor(singular), p), T.cond(torch.tensor(singular), p)
        assert ours.tolist() == theirs.tolist() == [pytest.approx(theirs[0].item()), inf]


# --- the factorizations' defining properties -------------------------------------------------------

def _identity(n, batch=()):
    return np.broadcast_to(np.eye(n), batch + (n, n))


def test_qr_multiplies_back_with_orthonormal_q_and_upper_triangular_r():
    for shape, mode in (((2, 5, 3), "reduced"), ((2, 3, 5), "reduced"), ((4, 3), "complete"), ((3, 4), "complete")):
        a = normal(*shape)
        q, r = L.qr(vg.tensor(a), mode=mode)
        k = q.shape[-1]
        np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
        np.testing.assert_allclose((q.mT @ q).numpy(), _identity(k, shape[:-2]), atol=1e-12)
        np.testing.assert_array_equal(r.numpy(), np.triu(r.numpy()))
        assert tuple(q.shape) == tuple(T.qr(torch.tensor(a), mode=mode).Q.shape)
    a = normal(4, 3)
    q, r = L.qr(vg.tensor(a), mode="r")
    assert tuple(q.shape) == (0,) and tuple(r.shape) == (3, 3)
    assert_same(r, T.qr(torch.tensor(a), mode="r").R, 1e-12, "R of mode='r'")


def test_cholesky_factors_multiply_back_and_are_triangular():
    a = spd(3, 4, 4)
    lower = L.cholesky(vg.tensor(a)).numpy()
    np.testing.assert_allclose(lower @ np.swapaxes(lower, -1, -2), a, atol=1e-12)
    np.testing.assert_array_equal(lower, np.tril(lower))
    upper = L.cholesky(vg.tensor(a), upper=True).numpy()
    np.testing.assert_allclose(np.swapaxes(upper, -1, -2) @ upper, a, atol=1e-12)
    np.testing.assert_allclose(upper, np.swapaxes(lower, -1, -2), atol=1e-12)
    # only the lower (upper) triangle is read: what lies in the other one changes nothing
    noisy = a + np.triu(normal(3, 4, 4), 1)
    np.testing.assert_array_equal(L.cholesky(vg.tensor(noisy)).numpy(), lower)
    noisy = a + np.tril(normal(3, 4, 4), -1)
    np.testing.assert_array_equal(L.cholesky(vg.tensor(noisy), upper=True).numpy(), upper)


def test_eigh_reconstructs_with_ascending_values_and_orthonormal_vectors():
    a = symmetric(2, 5, 5)
    w, v = L.eigh(vg.tensor(a))
    w, v = w.numpy(), v.numpy()
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, _identity(5, (2,)), atol=1e-12)
    assert np.all(np.diff(w, axis=-1) > 0)
    np.testing.assert_allclose(L.eigvalsh(vg.tensor(a)).numpy(), w, atol=1e-12)
    np.testing.assert_allclose(L.eigvalsh(vg.tensor(np.triu(a)), UPLO="U").numpy(), w, atol=1e-12)


def test_svd_reconstructs_and_its_full_bases_are_orthogonal():
    for shape in ((2, 5, 3), (3, 4)):
        a = normal(*shape)
        u, s, vh = L.svd(vg.tensor(a))
        m, n = shape[-2:]
        k = min(m, n)
        assert tuple(u.shape[-2:]) == (m, m) and tuple(vh.shape[-2:]) == (n, n) and tuple(s.shape[-1:]) == (k,)
        np.testing.assert_allclose((u[..., :k] * s.unsqueeze(-2) @ vh[..., :k, :]).numpy(), a, atol=1e-12)
        np.testing.assert_allclose((u.mT @ u).numpy(), _identity(m, shape[:-2]), atol=1e-12)
        np.testing.assert_allclose((vh @ vh.mT).numpy(), _identity(n, shape[:-2]), atol=1e-12)
        assert np.all(np.diff(s.numpy(), axis=-1) <= 0)
        np.testing.assert_allclose(L.svdvals(vg.tensor(a)).numpy(), s.numpy(), atol=1e-12)


def test_pinv_meets_the_penrose_conditions_also_for_deficient_rank():
    a = vg.tensor(normal(2, 5, 2) @ normal(2, 2, 4))        # rank 2, 5×4
    p = L.pinv(a)
    np.testing.assert_allclose((a @ p @ a).numpy(), a.numpy(), atol=1e-10)
    np.testing.assert_allclose((p @ a @ p).numpy(), p.numpy(), atol=1e-10)
    np.testing.assert_allclose((a @ p).mT.numpy(), (a @ p).numpy(), atol=1e-10)
    np.testing.assert_allclose((p @ a).mT.numpy(), (p @ a).numpy(), atol=1e-10)
    assert_same(p, T.pinv(torch.tensor(a.numpy())), 1e-10, "pinv of rank 2")
    assert L.matrix_rank(a).tolist() == T.matrix_rank(torch.tensor(a.numpy())).tolist() == [2, 2]


def test_lstsq_solves_the_normal_equations_and_fills_fields_as_pytorch():
    a, b = normal(2, 6, 3), normal(2, 6, 2)
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        ours, theirs = L.lstsq(vg.tensor(a), vg.tensor(b), driver=driver), T.lstsq(torch.tensor(a), torch.tensor(b),
                                                                                   driver=driver)
        x = ours.solution.numpy()
        np.testing.assert_allclose(np.swapaxes(a, -1, -2) @ (a @ x - b), 0, atol=1e-12)    # Aᵀ(AX - B) = 0
        for field in ("solution", "residuals", "rank", "singular_values"):
            mine, reference = getattr(ours, field), getattr(theirs, field)
            assert tuple(mine.shape) == tuple(reference.shape), (driver, field)
            assert mine.dtype.name == str(reference.dtype).removeprefix("torch."), (driver, field)
            np.testing.assert_allclose(mine.numpy(), reference.numpy(), atol=1e-10, err_msg=f"{driver} {field}")
    deficient = np.ones((4, 3))                                    # rank 1: the smallest solution, as gelsy's
    ours, theirs = L.lstsq(vg.tensor(deficient), vg.tensor(np.ones((4, 1)))), T.lstsq(torch.tensor(deficient),
                                                                                      torch.tensor(np.ones((4, 1))))
    assert_same(ours.solution, theirs.solution, 1e-12, "rank-deficient solution")
    assert ours.rank.item() == theirs.rank.item() == 1
    # rcond drops the smallest direction: the rank agrees with every driver, the solution with
    # the SVD's (gelsy truncates its pivoted QR instead, vizgrad always the SVD)
    scaled = np.vstack([np.diag([5.0, 2.0, 0.5]), np.ones((1, 3))])
    for driver in ("gelsy", "gelsd"):
        ours = L.lstsq(vg.tensor(scaled), vg.tensor(np.ones((4, 2))), rcond=0.2, driver=driver)
        theirs = T.lstsq(torch.tensor(scaled), torch.tensor(np.ones((4, 2))), rcond=0.2, driver=driver)
        assert ours.rank.item() == theirs.rank.item() == 2
    assert_same(ours.solution, theirs.solution, 1e-12, "solution with rcond")


def test_solve_triangular_reads_one_triangle_and_solves():
    a, b = well(2, 4, 4), normal(2, 4, 3)
    x = L.solve_triangular(vg.tensor(a), vg.tensor(b), upper=True).numpy()
    np.testing.assert_allclose(np.triu(a) @ x, b, atol=1e-12)
    unit = np.triu(a, 1) + np.eye(4)
    x = L.solve_triangular(vg.tensor(a), vg.tensor(b), upper=True, unitriangular=True).numpy()
    np.testing.assert_allclose(unit @ x, b, atol=1e-12)
    x = L.solve_triangular(vg.tensor(a), vg.tensor(np.swapaxes(b, -1, -2)), upper=False, left=False).numpy()
    np.testing.assert_allclose(x @ np.tril(a), np.swapaxes(b, -1, -2), atol=1e-12)


def test_a_zero_on_the_diagonal_gives_pytorchs_inf_and_nan_not_an_error():
    a = np.array([[1.0, 2.0], [0.0, 0.0]])
    ours = L.solve_triangular(vg.tensor(a), vg.tensor(np.ones((2, 1))), upper=True)
    theirs = T.solve_triangular(torch.tensor(a), torch.tensor(np.ones((2, 1))), upper=True)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_matrix_exp_inverts_with_minus_a_and_matches_the_series():
    a = normal(2, 4, 4) * 3                                   # norms above θ₁₃: scaled and squared
    e, e_minus = L.matrix_exp(vg.tensor(a)).numpy(), L.matrix_exp(vg.tensor(-a)).numpy()
    np.testing.assert_allclose(e @ e_minus, _identity(4, (2,)), atol=1e-9)
    diagonal = np.diag([1.0, -2.0, 0.5])
    np.testing.assert_allclose(L.matrix_exp(vg.tensor(diagonal)).numpy(), np.diag(np.exp([1.0, -2.0, 0.5])),
                               rtol=1e-14)
    np.testing.assert_allclose(L.matrix_exp(vg.tensor(a, dtype=vg.float32)).numpy(), e, rtol=1e-4, atol=1e-3)
    assert L.matrix_exp(vg.tensor(a, dtype=vg.float32)).dtype is vg.float32


def test_matrix_power_is_repeated_products_and_works_on_integers():
    a = well(3, 3) / 3
    np.testing.assert_allclose(L.matrix_power(vg.tensor(a), 7).numpy(), np.linalg.matrix_power(a, 7), rtol=1e-12)
    np.testing.assert_allclose(L.matrix_power(vg.tensor(a), -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-12)
    integers = np.array([[1, 1], [1, 0]], dtype=np.int64)
    fibonacci = L.matrix_power(vg.tensor(integers), 10)
    assert fibonacci.dtype is vg.int64 and fibonacci.tolist() == [[89, 55], [55, 34]]
    assert vg.matrix_power(vg.tensor(integers), 0).tolist() == [[1, 0], [0, 1]]


# --- decompositions at their degenerate points: PyTorch's documented behaviour ---------------------

def test_values_only_have_finite_gradients_at_repeated_values():
    for function, torch_function in ((L.svdvals, T.svdvals), (L.eigvalsh, T.eigvalsh),
                                     (lambda a: L.matrix_norm(a, "nuc"), lambda a: T.matrix_norm(a, "nuc")),
                                     (lambda a: L.svd(a).S, lambda a: T.svd(a).S),
                                     (lambda a: L.eigh(a).eigenvalues, lambda a: T.eigh(a).eigenvalues)):
        mine, reference = vg.eye(3, dtype=vg.float64, requires_grad=True), torch.eye(3, dtype=torch.float64,
                                                                                       requires_grad=True)
        (function(mine) * vg.tensor([1.0, 2.0, 3.0])).sum().backward()
        (torch_function(reference) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        assert np.isfinite(mine.grad.numpy()).all()
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-12)


def test_vectors_of_repeated_values_have_no_finite_gradient_as_in_pytorch():
    weights = _weights((3, 3))
    for function, torch_function in ((lambda a: L.eigh(a).eigenvectors, lambda a: T.eigh(a).eigenvectors),
                                     (lambda a: L.svd(a).U, lambda a: T.svd(a).U)):
        mine, reference = vg.eye(3, dtype=vg.float64, requires_grad=True), torch.eye(3, dtype=torch.float64,
                                                                                       requires_grad=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            (function(mine) * vg.tensor(weights)).sum().backward()
        (torch_function(reference) * torch.tensor(weights)).sum().backward()
        assert not np.isfinite(mine.grad.numpy()).all()
        assert not np.isfinite(reference.grad.numpy()).all()


def test_an_unused_vector_output_leaves_the_values_gradient_finite_at_repeated_values():
    # the engine gives the unused eigenvectors a zero gradient: it stays zero (PyTorch skips it)
    mine = vg.tensor(np.diag([2.0, 2.0, 5.0]), requires_grad=True)
    L.eigh(mine).eigenvalues.sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), np.eye(3), atol=1e-12)
    mine = vg.tensor(np.diag([2.0, 2.0, 5.0]), requires_grad=True)
    (L.svd(mine).S * vg.tensor([1.0, 2.0, 3.0], dtype=vg.float64)).sum().backward()
    reference = torch.tensor(np.diag([2.0, 2.0, 5.0]), requires_grad=True)
    (T.svd(reference).S * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-12)


def test_qr_backward_refuses_what_pytorch_refuses():
    a = vg.tensor(normal(3, 3), requires_grad=True)
    q, r = L.qr(a, mode="r")
    assert q.shape == (0,) and r.requires_grad
    with pytest.raises(BackwardError, match="linalg.qr: the derivative of linalg.qr depends on Q, which is not "
                                            "computed when mode='r'"):
        r.sum().backward()
    q, r = L.qr(vg.tensor(normal(4, 3), requires_grad=True), mode="complete")
    with pytest.raises(BackwardError, match=r"linalg.qr: the QR decomposition is not differentiable when "
                                            r"mode='complete' and A has more rows than columns \(4 > 3\)"):
        (q.sum() + r.sum()).backward()
    with pytest.raises(RuntimeError):
        T.qr(torch.tensor(normal(4, 3), requires_grad=True), mode="complete").Q.sum().backward()


def test_svd_ignores_the_gradient_of_the_extra_columns_of_full_matrices():
    a = normal(5, 3)
    mine, reference = vg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    L.svd(mine).U.sum().backward()
    T.svd(reference).U.sum().backward()
    # the signs of the first columns are each library's: compare with the signs aligned
    ours_u, theirs_u = L.svd(vg.tensor(a)).U.numpy(), T.svd(torch.tensor(a)).U.numpy()
    np.testing.assert_allclose(np.abs(ours_u[:, :3]), np.abs(theirs_u[:, :3]), atol=1e-12)
    if np.allclose(ours_u[:, :3], theirs_u[:, :3]):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-10)
    assert np.isfinite(mine.grad.numpy()).all()


# --- the "_ex" functions: info instead of errors ---------------------------------------------------

def test_info_of_the_ex_functions_is_pytorchs():
    indefinite = np.stack([spd(3, 3), -np.eye(3), np.diag([1.0, 2.0, -1.0])])
    ours, theirs = L.cholesky_ex(vg.tensor(indefinite)), T.cholesky_ex(torch.tensor(indefinite))
    assert ours.info.dtype is vg.int32 and ours.info.tolist() == theirs.info.tolist() == [0, 1, 3]
    np.testing.assert_allclose(ours.L.numpy()[0], theirs.L.numpy()[0], atol=1e-12)
    singular = np.stack([well(3, 3), np.ones((3, 3)), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])])
    ours, theirs = L.inv_ex(vg.tensor(singular)), T.inv_ex(torch.tensor(singular))
    assert ours.info.dtype is vg.int32 and ours.info.tolist() == theirs.info.tolist()
    assert ours.info.tolist()[0] == 0 and min(ours.info.tolist()[1:]) > 0
    np.testing.assert_allclose(ours.inverse.numpy()[0], theirs.inverse.numpy()[0], atol=1e-12)
    assert not np.isfinite(ours.inverse.numpy()[1]).all()
    ours, theirs = L.solve_ex(vg.tensor(singular), vg.ones(3, 2, dtype=vg.float64)), T.solve_ex(
        torch.tensor(singular), torch.ones(3, 2, dtype=torch.float64))
    assert ours.info.tolist() == theirs.info.tolist()
    np.testing.assert_allclose(ours.result.numpy()[0], theirs.result.numpy()[0], atol=1e-12)


def test_named_tuples_are_pytorchs_return_types():
    array = spd(3, 3)
    a, t = vg.tensor(array), torch.tensor(array)
    for name, fields, call in (("linalg_cholesky_ex", ("L", "info"), lambda m, l, x: l.cholesky_ex(x)),
                               ("linalg_qr", ("Q", "R"), lambda m, l, x: l.qr(x)),
                               ("linalg_eigh", ("eigenvalues", "eigenvectors"), lambda m, l, x: l.eigh(x)),
                               ("linalg_svd", ("U", "S", "Vh"), lambda m, l, x: l.svd(x)),
                               ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"),
                                lambda m, l, x: l.lstsq(x, x)),
                               ("linalg_inv_ex", ("inverse", "info"), lambda m, l, x: l.inv_ex(x)),
                               ("linalg_solve_ex", ("result", "info"), lambda m, l, x: l.solve_ex(x, x))):
        ours, theirs = call(vg, L, a), call(torch, T, t)
        assert type(ours) is getattr(vg.return_types, name) and type(ours).__name__ == type(theirs).__name__
        assert ours._fields == fields and len(theirs) == len(fields)
        for position, field in enumerate(fields):
            assert getattr(ours, field) is ours[position]
            assert tuple(getattr(theirs, field).shape) == tuple(ours[position].shape), (name, field)
        assert repr(ours).startswith(f"vizgrad.return_types.{name}(\n{fields[0]}=tensor(")


def test_grad_fn_names_are_pytorchs():
    a = vg.tensor(spd(3, 3), requires_grad=True)
    t = torch.tensor(spd(3, 3), requires_grad=True)
    for ours, theirs in ((L.cholesky(a), T.cholesky(t)), (L.qr(a).Q, T.qr(t).Q), (L.eigh(a).eigenvectors, T.eigh(t)[1]),
                         (L.eigvalsh(a), T.eigvalsh(t)), (L.svd(a).U, T.svd(t).U), (L.svdvals(a), T.svdvals(t)),
                         (L.pinv(a), T.pinv(t)), (L.solve_triangular(a, a, upper=True),
                                                  T.solve_triangular(t, t, upper=True)),
                         (L.matrix_exp(a), T.matrix_exp(t)), (L.inv_ex(a).inverse, T.inv_ex(t).inverse),
                         (L.solve_ex(a, a).result, T.solve_ex(t, t).result), (L.inv(a), T.inv(t))):
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__


def test_every_public_name_is_torch_linalgs():
    assert set(L.__all__) - {"LinAlgError"} <= set(dir(T))
    for name in L.__all__:
        assert callable(getattr(L, name))
    new = {"cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "solve_triangular",
           "matrix_power", "multi_dot", "vecdot", "matrix_rank", "cond", "diagonal", "matmul", "inv_ex", "solve_ex",
           "matrix_exp", "vander", "tensorinv", "tensorsolve"}
    assert new <= set(L.__all__)
    assert not any("." in name for name in dir(vg)) and not any("." in name for name in vg.ops.__all__)
    assert vg.matrix_exp is vg.ops.OPS["matrix_exp"].function and vg.Tensor.matrix_power is vg.matrix_power


def test_matrix_rank_tolerances_are_pytorchs():
    a = np.stack([np.diag([4.0, 1.0, 0.01]), np.diag([3.0, 0.3, 1e-17])])
    for kwargs in ({}, {"atol": 0.5}, {"rtol": 0.1}, {"atol": 0.05, "rtol": 0.2}, {"hermitian": True}):
        ours, theirs = L.matrix_rank(vg.tensor(a), **kwargs), T.matrix_rank(torch.tensor(a), **kwargs)
        assert ours.dtype is vg.int64 and ours.tolist() == theirs.tolist(), kwargs
        np.testing.assert_allclose(L.pinv(vg.tensor(a), **{k: v for k, v in kwargs.items()}).numpy(),
                                   T.pinv(torch.tensor(a), **kwargs).numpy(), atol=1e-9)
    tolerances = np.array([0.5, 0.2])
    assert L.matrix_rank(vg.tensor(a), atol=vg.tensor(tolerances)).tolist() == T.matrix_rank(
        torch.tensor(a), atol=torch.tensor(tolerances)).tolist() == [2, 2]
    assert L.matrix_rank(vg.tensor(a), tol=0.5).tolist() == T.matrix_rank(torch.tensor(a), tol=0.5).tolist()


def test_float32_stays_float32():
    a = spd(2, 3, 3).astype(np.float32)
    for function in (L.cholesky, lambda x: L.qr(x).Q, lambda x: L.eigh(x).eigenvalues, L.svdvals, L.pinv, L.matrix_exp,
                     lambda x: L.lstsq(x, x).solution, lambda x: L.solve_triangular(x, x, upper=True),
                     lambda x: L.inv_ex(x).inverse, L.cond):
        out = function(vg.tensor(a))
        assert out.dtype is vg.float32


# --- errors: vizgrad's classes, in the called function's words, where PyTorch raises too ------------

def _both(make):
    """The call for vizgrad and for torch."""
    return make(vg, L), make(torch, T)


ERRORS = [
    ("cholesky not positive-definite", lambda m, l: l.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])), LinAlgError,
     r"^linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
     r"\(the leading minor of order 2 is not positive-definite\); A has shape \(2, 2\)$"),
    ("cholesky batch element", lambda m, l: l.cholesky(m.stack([m.eye(3), -m.eye(3)])), LinAlgError,
     r"^linalg.cholesky: \(Batch element 1\): The factorization could not be completed because the input is not "
     r"positive-definite \(the leading minor of order 1 is not positive-definite\); A has shape \(2, 3, 3\)$"),
    ("cholesky_ex check_errors", lambda m, l: l.cholesky_ex(m.stack([m.eye(2), m.eye(2), -m.eye(2)]), check_errors=True),
     LinAlgError, r"^linalg.cholesky_ex: \(Batch element 2\): .*leading minor of order 1"),
    ("cholesky non-square", lambda m, l: l.cholesky(m.ones(2, 3)), ShapeError,
     r"^linalg.cholesky: A must be a square matrix or a batch of them, got shape \(2, 3\)"),
    ("cholesky integers", lambda m, l: l.cholesky(m.ones(2, 2, dtype=m.int64)), DTypeError,
     r"^linalg.cholesky: A must be a float32 or float64 tensor, got int64$"),
    ("cholesky 1-D", lambda m, l: l.cholesky(m.ones(3)), ShapeError,
     r"^linalg.cholesky: A must have at least 2 dimensions \(a matrix or a batch of them\), got shape \(3,\)$"),
    ("qr mode", lambda m, l: l.qr(m.ones(2, 2), mode="full"), ArgumentError,
     r"^linalg.qr: mode must be 'reduced' \(the default\), 'complete' or 'r', got 'full'$"),
    ("qr integers", lambda m, l: l.qr(m.ones(2, 3, dtype=m.int64)), DTypeError, r"^linalg.qr: A must be a float32"),
    ("eigh non-square", lambda m, l: l.eigh(m.ones(2, 3)), ShapeError, r"^linalg.eigh: A must be a square matrix"),
    ("eigh UPLO", lambda m, l: l.eigh(m.eye(2), UPLO="X"), ArgumentError, r"^linalg.eigh: UPLO must be 'L' or 'U', "
                                                                            r"got 'X'$"),
    ("eigvalsh integers", lambda m, l: l.eigvalsh(m.eye(2, dtype=m.int64)), DTypeError, r"^linalg.eigvalsh: A must be"),
    ("svd 1-D", lambda m, l: l.svd(m.ones(3)), ShapeError, r"^linalg.svd: A must have at least 2 dimensions"),
    ("svdvals integers", lambda m, l: l.svdvals(m.ones(2, 2, dtype=m.int64)), DTypeError,
     r"^linalg.svdvals: A must be a float32 or float64 tensor, got int64$"),
    ("pinv integers", lambda m, l: l.pinv(m.ones(3, 2, dtype=m.int64)), DTypeError, r"^linalg.pinv: A must be"),
    ("lstsq rows", lambda m, l: l.lstsq(m.ones(3, 2), m.ones(4, 1)), ShapeError,
     r"^linalg.lstsq: B must have 3 rows to match A of shape \(3, 2\), got shape \(4, 1\)$"),
    ("lstsq dtypes", lambda m, l: l.lstsq(m.ones(3, 2), m.ones(3, 1, dtype=m.float64)), DTypeError,
     r"^linalg.lstsq: A and B must have one dtype, got float32 and float64$"),
    ("lstsq driver", lambda m, l: l.lstsq(m.ones(3, 2), m.ones(3, 1), driver="lapack"), ArgumentError,
     r"^linalg.lstsq: driver must be one of 'gels', 'gelsy' \(the default\), 'gelsd' or 'gelss', got 'lapack'$"),
    ("lstsq 1-D", lambda m, l: l.lstsq(m.ones(3), m.ones(3)), ShapeError, r"^linalg.lstsq: A must have at least 2"),
    ("solve_triangular vector", lambda m, l: l.solve_triangular(m.eye(3), m.ones(3), upper=True), ShapeError,
     r"^linalg.solve_triangular: B must have at least 2 dimensions"),
    ("solve_triangular shapes", lambda m, l: l.solve_triangular(m.eye(3), m.ones(2, 1), upper=True), ShapeError,
     r"^linalg.solve_triangular: A of shape \(3, 3\) and B of shape \(2, 1\) do not fit the equation AX = B"),
    ("solve_triangular non-square", lambda m, l: l.solve_triangular(m.ones(3, 2), m.ones(3, 1), upper=True),
     ShapeError, r"^linalg.solve_triangular: A must be a square matrix"),
    ("solve_triangular integers", lambda m, l: l.solve_triangular(m.eye(3, dtype=m.int64), m.ones(3, 1,
                                                                                                   dtype=m.int64),
                                                                  upper=True), DTypeError,
     r"^linalg.solve_triangular: A must be a float32 or float64 tensor, got int64$"),
    ("matrix_power non-square", lambda m, l: l.matrix_power(m.ones(2, 3), 2), ShapeError,
     r"^linalg.matrix_power: A must be a square matrix"),
    ("matrix_power negative of integers", lambda m, l: l.matrix_power(m.ones(2, 2, dtype=m.int64), -1), DTypeError,
     r"^linalg.matrix_power: A must be a floating point tensor for a negative n \(-1\), got int64$"),
    ("matrix_power float n", lambda m, l: l.matrix_power(m.ones(2, 2), 2.0), ArgumentTypeError,
     r"^linalg.matrix_power: n must be an int, got a float \(2.0\)$"),
    ("matrix_power singular", lambda m, l: l.matrix_power(m.ones(2, 2), -1), LinAlgError,
     r"^linalg.matrix_power: A is singular"),
    ("multi_dot one", lambda m, l: l.multi_dot([m.ones(2, 3)]), ArgumentError,
     r"^linalg.multi_dot: expected at least 2 tensors, got 1$"),
    ("multi_dot shapes", lambda m, l: l.multi_dot([m.ones(2, 3), m.ones(2, 3)]), ShapeError,
     r"^linalg.multi_dot: tensors\[0\] of shape \(2, 3\) and tensors\[1\] of shape \(2, 3\) cannot be multiplied$"),
    ("multi_dot 3-D", lambda m, l: l.multi_dot([m.ones(2, 3), m.ones(3, 2, 2)]), ShapeError,
     r"^linalg.multi_dot: the last tensor must be 1-D or 2-D, got shape \(3, 2, 2\)$"),
    ("multi_dot dtypes", lambda m, l: l.multi_dot([m.ones(2, 3), m.ones(3, 2, dtype=m.float64)]), DTypeError,
     r"^linalg.multi_dot: expected tensors\[0\] and tensors\[1\] to have the same dtype"),
    ("vecdot shapes", lambda m, l: l.vecdot(m.ones(3), m.ones(4)), ShapeError,
     r"^linalg.vecdot: x of shape \(3,\) and y of shape \(4,\) do not broadcast$"),
    ("vecdot integers", lambda m, l: l.vecdot(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64)), DTypeError,
     r"^linalg.vecdot: x must be a floating point tensor, got int64$"),
    ("vecdot dtypes", lambda m, l: l.vecdot(m.ones(3), m.ones(3, dtype=m.float64)), DTypeError,
     r"^linalg.vecdot: x and y must have one dtype, got float32 and float64$"),
    ("vecdot dim", lambda m, l: l.vecdot(m.ones(2, 3), m.ones(3), dim=2), IndexError,
     r"^linalg.vecdot: dim 2 is out of range"),
    ("matrix_rank 1-D", lambda m, l: l.matrix_rank(m.ones(3)), ShapeError, r"^linalg.matrix_rank: A must have at"),
    ("cond non-square", lambda m, l: l.cond(m.ones(3, 2), 1), ShapeError, r"^linalg.cond: A must be a square matrix"),
    ("cond p", lambda m, l: l.cond(m.ones(3, 3), 3), ArgumentError,
     r"^linalg.cond: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got 3$"),
    ("cond integers", lambda m, l: l.cond(m.ones(3, 3, dtype=m.int64)), DTypeError, r"^linalg.cond: A must be"),
    ("inv_ex check_errors", lambda m, l: l.inv_ex(m.ones(3, 3), check_errors=True), LinAlgError,
     r"^linalg.inv_ex: A is singular: the diagonal element 2 of its LU factorization is zero"),
    ("inv_ex batch element", lambda m, l: l.inv_ex(m.stack([m.eye(2), m.ones(2, 2)]), check_errors=True), LinAlgError,
     r"^linalg.inv_ex: \(Batch element 1\): A is singular"),
    ("solve_ex check_errors", lambda m, l: l.solve_ex(m.ones(3, 3), m.ones(3), check_errors=True), LinAlgError,
     r"^linalg.solve_ex: A is singular"),
    ("solve_ex rows", lambda m, l: l.solve_ex(m.eye(2), m.ones(3)), ShapeError,
     r"^linalg.solve_ex: B must have 2 rows to match A of shape \(2, 2\), got shape \(3,\)$"),
    ("matrix_exp integers", lambda m, l: l.matrix_exp(m.ones(3, 3, dtype=m.int64)), DTypeError,
     r"^linalg.matrix_exp: A must be a floating point tensor, got int64$"),
    ("matrix_exp non-square", lambda m, l: m.matrix_exp(m.ones(3, 2)), ShapeError,
     r"^matrix_exp: input must be a square matrix or a batch of them, got shape \(3, 2\)"),
    ("vander N", lambda m, l: l.vander(m.ones(3), N=1), ArgumentError, r"^linalg.vander: N must be greater than 1, "
                                                                       r"got 1$"),
    ("vander bool", lambda m, l: l.vander(m.ones(3, dtype=m.bool)), DTypeError, r"^linalg.vander: x must be"),
    ("tensorinv ind", lambda m, l: l.tensorinv(m.ones(4, 2, 2), ind=0), ArgumentError,
     r"^linalg.tensorinv: ind must be a positive int below A's number of dims \(3\), got 0$"),
    ("tensorinv shapes", lambda m, l: l.tensorinv(m.ones(4, 2, 3), ind=1), ShapeError,
     r"^linalg.tensorinv: the product of the first ind=1 dims of A \(4\) must equal that of the others \(6\)"),
    ("tensorinv singular", lambda m, l: l.tensorinv(m.ones(4, 2, 2), ind=1), LinAlgError,
     r"^linalg.tensorinv: A is singular"),
    ("tensorsolve shapes", lambda m, l: l.tensorsolve(m.ones(2, 3, 6), m.ones(3)), ShapeError,
     r"^linalg.tensorsolve: A \(shape \(2, 3, 6\)\) must start with B's shape \(3,\)"),
    ("diagonal 1-D", lambda m, l: l.diagonal(m.ones(3)), ShapeError, r"^linalg.diagonal: A must have at least 2 dimensions, got shape \(3,\)$"),
    ("matrix_norm nuc integers", lambda m, l: l.matrix_norm(m.ones(2, 2, dtype=m.int64), "nuc"), DTypeError,
     r"^matrix_norm: A must be a float32 or float64 tensor, got int64$"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[case[0] for case in ERRORS])
def test_mistakes_raise_vizgrad_errors_in_the_called_functions_words(case):
    _, call, kind, message = case
    with pytest.raises(kind, match=message) as info:
        call(vg, L)
    assert isinstance(info.value, VizgradError)
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)):    # PyTorch refuses it too
        call(torch, T)


def test_the_linalg_error_is_pytorchs_runtime_error_and_is_exported():
    assert L.LinAlgError is LinAlgError and issubclass(LinAlgError, RuntimeError)
    with pytest.raises(T.LinAlgError):
        T.cholesky(-torch.eye(2))
    with pytest.raises(L.LinAlgError):
        L.cholesky(-vg.eye(2))


def test_b_is_a_batch_of_vectors_only_when_shaped_as_a_without_its_last_dim():
    a = well(3, 3, 3)
    for b in (normal(3, 2), normal(3, 3), normal(3)):      # (n, k) broadcast over the batch; (*, n); (n,)
        for ours, theirs in ((L.solve, T.solve), (lambda x, y: L.solve_ex(x, y).result,
                                                  lambda x, y: T.solve_ex(x, y).result)):
            assert_same(ours(vg.tensor(a), vg.tensor(b)), theirs(torch.tensor(a), torch.tensor(b)), 1e-12,
                        f"B of shape {b.shape}")
