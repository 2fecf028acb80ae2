"""Issue 34, round 3: PyTorch's result or PyTorch's refusal, each refusal a vizgrad error of the
builtin class PyTorch raises. Every case runs PyTorch (2.13, CPU) beside vizgrad: mvlgamma
below (p-1)/2, trigamma at the poles and far left, trapezoid's positional x, LU pivots and
Cholesky factors of non-finite matrices, the matrix products of bool and integer tensors, and
grid_sample's bicubic mode."""

import math

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf


def _close(ours, theirs, rtol=1e-12, atol=0.0):
    theirs = theirs.detach().numpy()
    ours = ours.detach().numpy()
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


def _pair(data, dtype="float64", requires_grad=False):
    return (vg.tensor(data, dtype=getattr(vg, dtype), requires_grad=requires_grad),
            torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad))


# --- 1. mvlgamma: PyTorch 2.13 no longer refuses elements at or below (p-1)/2 -------------------

@pytest.mark.parametrize("p, data", [(2, [0.4, 0.5, -1.3, 2.0, -1.0]), (3, [0.9, 1.0, 0.25, 3.5])])
def test_mvlgamma_below_the_domain_gives_pytorch_values_and_gradients(p, data):
    ours, theirs = _pair(data, requires_grad=True)
    out, expected = vg.mvlgamma(ours, p), torch.mvlgamma(theirs, p)
    _close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    _close(ours.grad, theirs.grad, rtol=1e-10)
    assert math.isclose(vg.mvlgamma(vg.tensor([0.4], dtype=vg.float64), 2).item(), 3.738004093355273, rel_tol=1e-12)


def test_mvlgamma_of_integers_and_its_refusals():
    _close(vg.mvlgamma(vg.tensor([0, 1, 2]), 2), torch.mvlgamma(torch.tensor([0, 1, 2]), 2), rtol=1e-6)
    with pytest.raises(RuntimeError):
        torch.mvlgamma(torch.tensor([True]), 1)
    with pytest.raises(vg.VizgradError, match="mvlgamma: .*bool") as info:
        vg.mvlgamma(vg.tensor([True]), 1)
    assert isinstance(info.value, RuntimeError)


# --- 2. trigamma: PyTorch's reflection with sin(πx) as rounded ----------------------------------

TRIGAMMA_POINTS = [0.0, -0.0, -1.0, -2.0, -3.5, -100.5, -1e6 + 0.5, -1e10 + 0.3, 0.25, 7.5, inf, -inf, nan]


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 1e-6)])
def test_trigamma_at_the_poles_and_far_left_is_pytorch_s(dtype, rtol):
    ours, theirs = _pair(TRIGAMMA_POINTS, dtype)
    expected = torch.special.polygamma(1, theirs)
    _close(vg.special.polygamma(1, ours), expected, rtol=rtol)
    _close(vg.polygamma(1, ours), expected, rtol=rtol)
    # finite where sin(πx) does not round to 0: 6.58e32 at -1 in float64, 1.29e15 in float32
    assert math.isclose(vg.polygamma(1, ours)[2].item(), expected[2].item(), rel_tol=rtol)
    assert math.isfinite(vg.polygamma(1, ours)[2].item())


def test_digamma_gradient_at_a_negative_integer_is_pytorch_s_trigamma():
    ours, theirs = _pair([-1.0, -2.5, 0.3], requires_grad=True)
    vg.digamma(ours).sum().backward()
    torch.digamma(theirs).sum().backward()
    _close(ours.grad, theirs.grad, rtol=1e-13)


# --- 3. trapezoid, trapz, cumulative_trapezoid: x is a Tensor, dx is passed by name -------------

@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize("call", [
    lambda f, L: f(L.tensor([1.0, 2.0, 4.0, 7.0]), 2.0),
    lambda f, L: f(L.tensor([1.0, 2.0, 4.0, 7.0]), 2),
    lambda f, L: f(L.tensor([1.0, 2.0, 4.0, 7.0]), 2.0, dim=0),
    lambda f, L: f(L.tensor([1.0, 2.0, 4.0, 7.0]), x=2.0),
    lambda f, L: f(L.tensor([1.0, 2.0, 4.0, 7.0]), L.tensor([0.0, 1.0, 3.0, 6.0]), dx=1.0),
], ids=["positional float", "positional int", "positional float, dim", "x=float", "x and dx"])
def test_a_number_for_x_is_refused_as_pytorch_refuses_it(name, call):
    with pytest.raises(TypeError):
        call(getattr(torch, name), torch)
    with pytest.raises(vg.VizgradError) as info:
        call(getattr(vg, name), vg)
    assert isinstance(info.value, TypeError) and str(info.value).startswith(f"{name}: ")


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_dx_as_pytorch_takes_it(name):
    y = [1.0, 2.0, 4.0, 7.0]
    for dx in (2.0, 3, np.float64(0.5)):
        _close(getattr(vg, name)(vg.tensor(y), dx=dx), getattr(torch, name)(torch.tensor(y), dx=dx), rtol=1e-6)
    for dx in (2.0, 2):                               # a 0-d tensor is a number to PyTorch
        _close(getattr(vg, name)(vg.tensor(y), dx=vg.tensor(dx)),
               getattr(torch, name)(torch.tensor(y), dx=torch.tensor(dx)), rtol=1e-6)
    for lib in (torch, vg):                           # a 1-d one is not
        with pytest.raises(TypeError):
            getattr(lib, name)(lib.tensor(y), dx=lib.tensor([2.0]))


def test_a_bool_dx_is_one_for_trapz_and_refused_by_trapezoid():
    y = [1.0, 2.0, 4.0, 7.0]
    _close(vg.trapz(vg.tensor(y), dx=True), torch.trapz(torch.tensor(y), dx=True))
    assert vg.trapz(vg.tensor(y), dx=True).item() == 10.0
    for name in ("trapezoid", "cumulative_trapezoid"):
        with pytest.raises(RuntimeError):
            getattr(torch, name)(torch.tensor(y), dx=True)
        with pytest.raises(vg.errors.ArgumentError, match=f"{name}: dx must be a real number, got True"):
            getattr(vg, name)(vg.tensor(y), dx=True)
    with pytest.raises(TypeError):
        torch.trapz(torch.tensor(y), dx=2 + 1j)
    with pytest.raises(vg.errors.ArgumentTypeError, match="trapz: dx"):
        vg.trapz(vg.tensor(y), dx=2 + 1j)


# --- 4. LU pivots and Cholesky factors of non-finite matrices -------------------------------------

def _lu_cases():
    rng = np.random.default_rng(7)
    small = np.array([[1.0, 2.0, 3.0], [nan, 5.0, 6.0], [7.0, 8.0, 10.0]])   # NaN below a finite pivot
    large = np.eye(17)
    large[1, 0], large[2, 0] = nan, 100.0             # 17 × 17: PyTorch's LAPACK takes the NaN
    tall = rng.normal(size=(5, 3))
    tall[1, 0] = nan
    wide = rng.normal(size=(3, 20))
    wide[2, 0] = nan
    return [small, large, tall, wide]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lu_pivots_around_a_nan_are_pytorch_s(dtype):
    small_pivots = None
    for matrix in _lu_cases():
        ours, theirs = _pair(matrix, dtype)
        LU, pivots, info = vg.linalg.lu_factor_ex(ours)
        expected = torch.linalg.lu_factor_ex(theirs)
        np.testing.assert_array_equal(pivots.numpy(), expected.pivots.numpy())
        np.testing.assert_array_equal(info.numpy(), expected.info.numpy())
        _close(LU, expected.LU, rtol=1e-5)
        _close(vg.linalg.lu_factor(ours).pivots, torch.linalg.lu_factor(theirs).pivots)
        for mine, its in zip(vg.linalg.lu(ours), torch.linalg.lu(theirs)):
            _close(mine, its, rtol=1e-5)
        small_pivots = small_pivots or pivots.tolist()
    assert small_pivots == [3, 2, 3]                  # the 7, not the NaN above it


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_of_a_non_finite_leading_minor_is_pytorch_s(upper):
    for a in ([[nan, 1.0], [1.0, 2.0]], [[4.0, 1.0, 0.0], [1.0, nan, 0.0], [0.0, 0.0, 3.0]],
              [[-inf, 1.0], [1.0, 2.0]]):
        for dtype in ("float64", "float32"):
            ours, theirs = _pair(a, dtype)
            L, info = vg.linalg.cholesky_ex(ours, upper=upper)
            expected = torch.linalg.cholesky_ex(theirs, upper=upper)
            _close(L, expected.L, rtol=1e-6)
            assert info.item() == expected.info.item()
    for n in (2, 3, 16, 17, 20):
        matrix = np.eye(n) * 3 + 0.5 * np.eye(n, k=1) + 0.5 * np.eye(n, k=-1)
        for where in (0, n - 2):
            a = matrix.copy()
            a[where, where] = inf
            for dtype in ("float64", "float32"):
                ours, theirs = _pair(a, dtype)
                L, info = vg.linalg.cholesky_ex(ours, upper=upper)
                expected = torch.linalg.cholesky_ex(theirs, upper=upper)
                _close(L, expected.L, rtol=1e-5)
                assert info.item() == expected.info.item(), (n, where, dtype)
    # float32 up to order 16: NaN below the infinite root, and the next minor fails
    L, info = vg.linalg.cholesky_ex(vg.tensor([[inf, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 2.0]]))
    assert info.item() == 2 and math.isnan(L[1, 0].item()) and L[0, 0].item() == inf


# --- 5. the matrix products of bool and integer tensors ------------------------------------------

@pytest.mark.parametrize("call", [
    lambda L, a, b: L.bmm(b, b), lambda L, a, b: L.mm(a, a), lambda L, a, b: L.matmul(a, a),
    lambda L, a, b: L.matmul(b, a[0]), lambda L, a, b: a @ a, lambda L, a, b: L.mv(a, a[0]),
    lambda L, a, b: L.dot(a[0], a[0]), lambda L, a, b: L.addmm(a, a, a), lambda L, a, b: L.baddbmm(b, b, b),
    lambda L, a, b: L.einsum("ij,jk->ik", a, a),
], ids=["bmm", "mm", "matmul", "matmul batch-vector", "@", "mv", "dot", "addmm", "baddbmm", "einsum"])
def test_bool_matrix_products_are_refused_with_a_runtime_error(call):
    data = [[True, False], [True, True]]
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        call(torch, torch.tensor(data), torch.tensor([data, data]))
    with pytest.raises(vg.VizgradError) as info:
        call(vg, vg.tensor(data), vg.tensor([data, data]))
    error = info.value
    assert isinstance(error, RuntimeError) and isinstance(error, NotImplementedError)
    assert isinstance(error, vg.DTypeError) and "bool" in str(error)


def test_mixed_dtypes_in_a_matrix_product_are_a_runtime_error():
    for left, right in (("float32", "float64"), ("float32", "int64")):
        with pytest.raises(RuntimeError):
            torch.mm(torch.ones(2, 2, dtype=getattr(torch, left)), torch.ones(2, 2, dtype=getattr(torch, right)))
        with pytest.raises(RuntimeError, match=f"mm: expected input and mat2 to have the same dtype, but got: "
                                               f"{left} != {right}"):
            vg.mm(vg.ones(2, 2, dtype=getattr(vg, left)), vg.ones(2, 2, dtype=getattr(vg, right)))


def test_integer_matrix_products_keep_pytorch_s_dtype():
    for dtype in ("int64", "int32"):
        _same_integer_products(dtype)


def _same_integer_products(dtype):
    data = [[1, 0, 2], [3, -1, 4]]
    a, t = _pair(data, dtype)
    b, u = _pair([[2, 1], [0, 5], [-3, 1]], dtype)
    a3, t3 = _pair([data, data], dtype)
    b3, u3 = _pair([[[2, 1], [0, 5], [-3, 1]]] * 2, dtype)
    c, w = _pair([[1, 1], [1, 1]], dtype)
    for ours, theirs in ((vg.mm(a, b), torch.mm(t, u)), (vg.matmul(a, b), torch.matmul(t, u)),
                         (vg.bmm(a3, b3), torch.bmm(t3, u3)), (a @ b, t @ u), (vg.mv(a, b[:, 0]), torch.mv(t, u[:, 0])),
                         (vg.addmm(c, a, b), torch.addmm(w, t, u)), (vg.addbmm(c, a3, b3), torch.addbmm(w, t3, u3)),
                         (vg.baddbmm(vg.bmm(a3, b3), a3, b3), torch.baddbmm(torch.bmm(t3, u3), t3, u3))):
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# --- 6. grid_sample(mode="bicubic") ------------------------------------------------------------

@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_grid_sample_values_and_gradients_match_pytorch(padding_mode, align_corners):
    rng = np.random.default_rng(3)
    for shape, grid_shape, scale in (((2, 3, 5, 6), (2, 4, 3, 2), 1.0), ((1, 2, 4, 5), (1, 3, 3, 2), 1.6),
                                     ((1, 1, 1, 4), (1, 2, 2, 2), 3.5), ((1, 1, 7, 3), (1, 5, 4, 2), 1.2)):
        data, points = rng.normal(size=shape), rng.uniform(-1, 1, size=grid_shape) * scale
        x, tx = _pair(data, requires_grad=True)
        grid, tgrid = _pair(points, requires_grad=True)
        out = F.grid_sample(x, grid, mode="bicubic", padding_mode=padding_mode, align_corners=align_corners)
        expected = torch.nn.functional.grid_sample(tx, tgrid, mode="bicubic", padding_mode=padding_mode,
                                                   align_corners=align_corners)
        _close(out, expected, rtol=1e-7, atol=1e-7)
        weights = rng.normal(size=tuple(expected.shape))
        (out * vg.tensor(weights)).sum().backward()
        (expected * torch.tensor(weights)).sum().backward()
        _close(x.grad, tx.grad, rtol=1e-7, atol=1e-7)
        _close(grid.grad, tgrid.grad, rtol=1e-7, atol=1e-7)


def test_bicubic_grid_sample_at_non_finite_points_and_its_refusal():
    data = np.arange(20.0).reshape(1, 1, 4, 5)
    points = np.array([[[[0.1, 0.2], [nan, 0.0], [inf, 0.0], [0.0, -inf], [5.0, 5.0], [-1.0, -1.0]]]])
    for padding_mode in ("zeros", "border", "reflection"):
        x, tx = _pair(data, requires_grad=True)
        grid, tgrid = _pair(points, requires_grad=True)
        out = F.grid_sample(x, grid, mode="bicubic", padding_mode=padding_mode, align_corners=False)
        expected = torch.nn.functional.grid_sample(tx, tgrid, mode="bicubic", padding_mode=padding_mode,
                                                   align_corners=False)
        _close(out, expected, rtol=1e-12, atol=1e-12)
        out.sum().backward()
        expected.sum().backward()
        _close(x.grad, tx.grad, rtol=1e-12, atol=1e-12)     # (NaN where a clipped NaN point lands)
    with pytest.raises(RuntimeError, match="bicubic"):
        torch.nn.functional.grid_sample(torch.ones(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3), mode="bicubic",
                                        align_corners=False)
    with pytest.raises(vg.ShapeError, match="grid_sample: bicubic interpolation only supports 4-D input"):
        F.grid_sample(vg.ones(1, 1, 2, 2, 2), vg.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
@pytest.mark.parametrize("source", ["int32", "int64", "bool", "float32"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "bool"])
def test_an_explicit_dtype_is_the_result_dtype_of_sums_and_products_as_in_pytorch(name, source, dtype):
    kwargs = {"dim": 0} if name.startswith("cum") else {}
    values = [1, 2, 3]
    try:
        expected = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, source)), **kwargs,
                                        dtype=getattr(torch, dtype))
    except RuntimeError:
        with pytest.raises(vg.DTypeNotImplementedError, match=name):
            getattr(vg, name)(vg.tensor(values, dtype=getattr(vg, source)), **kwargs, dtype=getattr(vg, dtype))
        return
    ours = getattr(vg, name)(vg.tensor(values, dtype=getattr(vg, source)), **kwargs, dtype=getattr(vg, dtype))
    assert ours.dtype.name == dtype
    np.testing.assert_array_equal(ours.numpy(), expected.numpy())
