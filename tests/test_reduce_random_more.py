"""Statistics (median, quantile, kthvalue, mode, cov, trapezoid, gradient, windows, ...) and
random sampling (in-place samplers, bernoulli, poisson, binomial, the generator's state)
compared with PyTorch, beyond the registry samples tests/test_ops.py runs; and cumprod's
derivatives at zeros."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _pair(array, requires_grad=True):
    return (vg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _same(ours, theirs, atol=1e-12):
    ours = np.asarray(ours.detach().numpy() if hasattr(ours, "detach") else ours)
    theirs = np.asarray(theirs.detach().numpy() if hasattr(theirs, "detach") else theirs)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    np.testing.assert_allclose(ours, theirs, atol=atol, rtol=1e-9, equal_nan=True)


def _grads(ours_out, theirs_out, ours_in, theirs_in, seed=0):
    weights = np.random.default_rng(seed).standard_normal(tuple(theirs_out.shape))
    mine = vg.autograd.grad((ours_out * vg.tensor(weights)).sum(), ours_in, allow_unused=True)
    reference = torch.autograd.grad((theirs_out * torch.tensor(weights)).sum(), theirs_in, allow_unused=True)
    for a, b in zip(mine, reference):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            _same(a, b)


# --- cumprod at zeros ----------------------------------------------------------------------

@pytest.mark.parametrize("row", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.5, 0.0, 0.0, -2.0, 3.0],
                                 [0.0, 0.0, 0.0], [3.0, -1.0, 0.5, 0.0]])
def test_cumprod_first_and_second_derivatives_at_zeros_match_pytorch(row):
    array = np.array([row, list(reversed(row))])
    for dim in (0, 1):
        (mine, reference) = _pair(array)
        weights = np.arange(1.0, array.size + 1).reshape(array.shape)
        grad, = vg.autograd.grad((vg.cumprod(mine, dim) * vg.tensor(weights)).sum(), mine, create_graph=True)
        theirs, = torch.autograd.grad((torch.cumprod(reference, dim) * torch.tensor(weights)).sum(), reference,
                                      create_graph=True)
        _same(grad, theirs)
        second = vg.autograd.grad((grad * vg.tensor(weights[::-1].copy())).sum(), mine)[0]
        their_second = torch.autograd.grad((theirs * torch.tensor(weights[::-1].copy())).sum(), reference)[0]
        _same(second, their_second)
        assert np.any(second.numpy() != 0)         # the zeros' mixed derivatives are there
    x = vg.tensor(array, dtype=vg.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(1), (x,)) and gradgradcheck(lambda t: t.cumprod(1), (x,))


# --- median, nanmedian, kthvalue, mode, msort ----------------------------------------------

SHAPES = [(7,), (4, 6), (3, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_median_values_indices_and_gradients_match_pytorch(shape):
    rng = np.random.default_rng(1)
    array = rng.standard_normal(shape)
    mine, reference = _pair(array)
    ours, theirs = vg.median(mine), torch.median(reference)
    _same(ours, theirs)
    _grads(ours, theirs, [mine], [reference])
    for dim in range(-len(shape), len(shape)):
        for keepdim in (False, True):
            ours, theirs = mine.median(dim, keepdim), reference.median(dim, keepdim)
            assert type(ours).__name__ == "median" and ours._fields == ("values", "indices")
            _same(ours.values, theirs.values)
            assert ours.indices.tolist() == theirs.indices.tolist() and ours.indices.dtype is vg.int64
            _grads(ours.values, theirs.values, [mine], [reference])


def test_median_gradient_over_everything_is_shared_among_ties_as_pytorch():
    mine, reference = _pair(np.array([[1.0, 2.0, 2.0], [2.0, 5.0, 0.0]]))
    vg.median(mine).backward()
    torch.median(reference).backward()
    _same(mine.grad, reference.grad)
    assert mine.grad.tolist() == [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]]


def test_median_and_nanmedian_with_nan_match_pytorch():
    nan = math.nan
    array = np.array([[1.0, nan, 2.0, 0.0], [3.0, 1.0, 2.0, 4.0], [nan, 5.0, nan, 1.0]])
    mine, reference = _pair(array, requires_grad=False)
    for name in ("median", "nanmedian"):
        _same(getattr(vg, name)(mine), getattr(torch, name)(reference))
        for dim in (0, 1):
            ours, theirs = getattr(mine, name)(dim), getattr(reference, name)(dim)
            _same(ours.values, theirs.values)
            assert ours.indices.tolist() == theirs.indices.tolist()
    assert math.isnan(vg.median(mine).item()) and vg.nanmedian(mine).item() == 2.0
    assert math.isnan(vg.nanmedian(vg.tensor([nan, nan])).item())


@pytest.mark.parametrize("shape", SHAPES)
def test_kthvalue_matches_pytorch(shape):
    array = np.random.default_rng(2).standard_normal(shape)
    mine, reference = _pair(array)
    for dim in (0, -1):
        for k in (1, shape[dim] // 2 + 1, shape[dim]):
            for keepdim in (False, True):
                ours, theirs = mine.kthvalue(k, dim, keepdim), reference.kthvalue(k, dim, keepdim)
                assert type(ours).__name__ == "kthvalue"
                _same(ours.values, theirs.values)
                assert ours.indices.tolist() == theirs.indices.tolist()
                _grads(ours.values, theirs.values, [mine], [reference])
    with pytest.raises(vg.ArgumentError, match=r"kthvalue: k \(0\) is out of range"):
        mine.kthvalue(0)
    with pytest.raises(IndexError, match="kthvalue: dim 5 is out of range"):
        mine.kthvalue(1, 5)


def test_median_and_nanmedian_pick_among_ties_as_pytorch_on_the_cpu():
    rng = np.random.default_rng(14)
    for trial in range(200):
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 30)))
        array = rng.integers(0, 4, size=shape).astype(np.float64)
        if trial % 3 == 0:
            array[rng.random(shape) < 0.2] = math.nan
        if trial % 10 == 0:
            array[0] = math.nan                       # a row (or column) of NaN only
        dim = int(rng.integers(0, 2))
        for name in ("median", "nanmedian"):
            ours, theirs = getattr(vg.tensor(array), name)(dim), getattr(torch.tensor(array), name)(dim)
            _same(ours.values, theirs.values)
            assert ours.indices.tolist() == theirs.indices.tolist(), (name, array, dim)
    for n in (1, 2, 4, 7, 16, 33):
        assert vg.full((n,), math.nan).nanmedian(0).indices.item() == \
            torch.full((n,), math.nan).nanmedian(0).indices.item()


def test_kthvalue_picks_among_ties_as_pytorch_on_the_cpu():
    rng = np.random.default_rng(13)
    for trial in range(200):
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 30)))
        array = rng.integers(0, 4, size=shape).astype(np.float64)
        if trial % 3 == 0:
            array[rng.random(shape) < 0.2] = math.nan
        dim = int(rng.integers(0, 2))
        k = int(rng.integers(1, shape[dim] + 1))
        mine, reference = _pair(array)
        ours, theirs = mine.kthvalue(k, dim), reference.kthvalue(k, dim)
        _same(ours.values, theirs.values)
        assert ours.indices.tolist() == theirs.indices.tolist(), (array, k, dim)
        if trial % 20 == 0:
            _grads(ours.values, theirs.values, [mine], [reference])
    integers = rng.integers(0, 3, size=(4, 9))
    assert vg.tensor(integers).kthvalue(4).indices.tolist() == torch.tensor(integers).kthvalue(4).indices.tolist()


def test_mode_values_indices_and_gradient_match_pytorch():
    rng = np.random.default_rng(3)
    for array in (rng.integers(0, 4, size=(5, 9)), rng.integers(-2, 2, size=(3, 4, 6)), np.array([1, 2, 2, 3, 3])):
        ours, theirs = vg.tensor(array), torch.tensor(array)
        for dim in range(-array.ndim, array.ndim):
            for keepdim in (False, True):
                a, b = ours.mode(dim, keepdim), theirs.mode(dim, keepdim)
                assert type(a).__name__ == "mode"
                assert a.values.tolist() == b.values.tolist() and a.indices.tolist() == b.indices.tolist()
    floats = rng.integers(0, 3, size=(4, 7)).astype(np.float64)
    mine, reference = _pair(floats)
    ours, theirs = mine.mode(1), reference.mode(1)
    _same(ours.values, theirs.values)
    _grads(ours.values, theirs.values, [mine], [reference])   # to the index chosen


def test_msort_matches_pytorch():
    array = np.random.default_rng(4).standard_normal((5, 3))
    mine, reference = _pair(array)
    _same(vg.msort(mine), torch.msort(reference))
    _grads(mine.msort(), reference.msort(), [mine], [reference])


# --- quantile, nanquantile -----------------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("shape", SHAPES)
def test_quantile_values_and_gradients_match_pytorch(shape, interpolation):
    rng = np.random.default_rng(5)
    array = rng.standard_normal(shape)
    mine, reference = _pair(array)
    levels = np.array([0.0, 0.1, 0.37, 0.5, 0.9, 1.0])
    for q in (0.3, levels, np.array(0.65)):
        for dim in [None] + list(range(len(shape))):
            for keepdim in (False, True):
                q_mine = vg.tensor(q) if isinstance(q, np.ndarray) else q
                q_theirs = torch.tensor(q) if isinstance(q, np.ndarray) else q
                for name in ("quantile", "nanquantile"):
                    ours = getattr(vg, name)(mine, q_mine, dim, keepdim, interpolation=interpolation)
                    theirs = getattr(torch, name)(reference, q_theirs, dim, keepdim, interpolation=interpolation)
                    _same(ours, theirs)
                _grads(ours, theirs, [mine], [reference])


def test_quantile_with_nan_and_the_gradient_in_q_match_pytorch():
    nan = math.nan
    array = np.array([[1.0, nan, 3.0, 2.0, 0.5], [0.5, 1.5, 2.5, 3.5, 0.0], [nan, nan, nan, nan, nan]])
    mine, reference = _pair(array, requires_grad=False)
    for name in ("quantile", "nanquantile"):
        for q in (0.25, torch.tensor([0.1, 0.5, 0.8], dtype=torch.float64)):
            q_mine = vg.tensor(q.numpy()) if isinstance(q, torch.Tensor) else q
            for dim in (None, 0, 1):
                _same(getattr(vg, name)(mine, q_mine, dim), getattr(torch, name)(reference, q, dim))
    x, t = _pair(np.random.default_rng(6).standard_normal((3, 5)))
    qv, qt = _pair(np.array([0.2, 0.55]))
    ours, theirs = vg.quantile(x, qv, dim=1), torch.quantile(t, qt, dim=1)
    _grads(ours, theirs, [x, qv], [t, qt])


def test_quantile_refuses_what_pytorch_refuses():
    x = vg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(vg.ArgumentError, match=r"quantile: q must be in the range \[0, 1\]"):
        vg.quantile(x, 1.5)
    with pytest.raises(vg.ArgumentError, match=r"nanquantile: q values must be in the range \[0, 1\]"):
        vg.nanquantile(x, vg.tensor([0.5, -0.1]))
    with pytest.raises(vg.DTypeError, match="quantile: input tensor must be either float or double"):
        vg.quantile(vg.tensor([1, 2]), 0.5)
    with pytest.raises(vg.DTypeError, match="quantile: q tensor must be same dtype"):
        vg.quantile(x, vg.tensor([0.5], dtype=vg.float64))
    with pytest.raises(vg.ArgumentError, match="quantile: interpolation must be one of"):
        vg.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(vg.ShapeError, match="quantile: q must be a scalar or 1D tensor"):
        vg.quantile(x, vg.full((2, 2), 0.5))


# --- cov, corrcoef -------------------------------------------------------------------------

def test_cov_and_corrcoef_match_pytorch():
    rng = np.random.default_rng(7)
    for shape in ((3, 8), (8,), (2, 5), (1, 6)):
        array = rng.standard_normal(shape)
        fweights = rng.integers(1, 5, size=shape[-1])
        aweights = rng.uniform(0.1, 2.0, size=shape[-1])
        for correction in (0, 1, 2):
            for fw, aw in ((None, None), (fweights, None), (None, aweights), (fweights, aweights)):
                mine, reference = _pair(array)
                kwargs_mine = {"correction": correction, "fweights": None if fw is None else vg.tensor(fw),
                               "aweights": None if aw is None else vg.tensor(aw)}
                kwargs_theirs = {"correction": correction, "fweights": None if fw is None else torch.tensor(fw),
                                 "aweights": None if aw is None else torch.tensor(aw)}
                ours, theirs = vg.cov(mine, **kwargs_mine), torch.cov(reference, **kwargs_theirs)
                _same(ours, theirs, atol=1e-10)
                _grads(ours, theirs, [mine], [reference])
        mine, reference = _pair(array)
        ours, theirs = mine.corrcoef(), reference.corrcoef()
        _same(ours, theirs, atol=1e-10)
        _grads(ours, theirs, [mine], [reference])
    _same(vg.cov(vg.tensor([[1, 2, 4], [0, 3, 3]])), torch.cov(torch.tensor([[1, 2, 4], [0, 3, 3]])), atol=1e-6)
    with pytest.raises(vg.ShapeError, match="cov: expected input to have two or fewer dimensions"):
        vg.cov(vg.ones(2, 2, 2))
    with pytest.raises(vg.DTypeError, match="cov: expected fweights to have integral dtype"):
        vg.cov(vg.ones(2, 3), fweights=vg.ones(3))
    with pytest.raises(vg.ArgumentError, match="cov: aweights cannot be negative"):
        vg.cov(vg.ones(2, 3), aweights=vg.tensor([1.0, -1.0, 1.0]))


# --- trapezoid, cumulative_trapezoid, gradient ---------------------------------------------

def test_trapezoid_and_cumulative_trapezoid_match_pytorch():
    rng = np.random.default_rng(8)
    y = rng.standard_normal((3, 5))
    x1 = np.sort(rng.uniform(0, 4, size=5))
    x_full = np.sort(rng.uniform(0, 4, size=(3, 5)), axis=1)
    for name in ("trapezoid", "trapz", "cumulative_trapezoid"):
        for args, kwargs in (((), {}), ((), {"dx": 0.3}), ((x1,), {}), ((x_full,), {}), ((x1[:3],), {"dim": 0})):
            mine, reference = _pair(y)
            ours = getattr(vg, name)(mine, *[vg.tensor(a) for a in args], **kwargs)
            theirs = getattr(torch, name)(reference, *[torch.tensor(a) for a in args], **kwargs)
            _same(ours, theirs)
            _grads(ours, theirs, [mine], [reference])
    _same(vg.trapezoid(vg.ones(3, 0)), torch.trapezoid(torch.ones(3, 0)))
    with pytest.raises(vg.ShapeError, match="trapezoid: there must be one `x` value for each sample point"):
        vg.trapezoid(vg.ones(4), vg.ones(3))


def test_gradient_matches_pytorch():
    rng = np.random.default_rng(9)
    array = rng.standard_normal((5, 6))
    coordinates = [np.cumsum(rng.uniform(0.5, 1.5, size=5)), np.cumsum(rng.uniform(0.5, 1.5, size=6))]
    for kwargs in ({}, {"spacing": 0.5}, {"spacing": [2.0, 0.25]}, {"dim": 1}, {"dim": [0]},
                   {"spacing": [coordinates[1]], "dim": 1}):
        for edge_order in (1, 2):
            mine, reference = _pair(array)
            kw_mine = dict(kwargs, edge_order=edge_order)
            kw_theirs = dict(kwargs, edge_order=edge_order)
            if "spacing" in kwargs and isinstance(kwargs["spacing"], list) and isinstance(kwargs["spacing"][0],
                                                                                         np.ndarray):
                kw_mine["spacing"] = [vg.tensor(c) for c in kwargs["spacing"]]
                kw_theirs["spacing"] = [torch.tensor(c) for c in kwargs["spacing"]]
            ours, theirs = vg.gradient(mine, **kw_mine), torch.gradient(reference, **kw_theirs)
            assert isinstance(ours, tuple) and len(ours) == len(theirs)
            for a, b in zip(ours, theirs):
                _same(a, b, atol=1e-10)
            _grads(ours[0], theirs[0], [mine], [reference])
    with pytest.raises(vg.ShapeError, match="gradient: expected each dimension size to be at least edge_order"):
        vg.gradient(vg.ones(2), edge_order=2)


# --- logspace, windows ----------------------------------------------------------------------

def test_logspace_and_windows_match_pytorch():
    for args, kwargs in (((0, 2, 5), {}), ((-1.0, 1.0, 4), {"base": 2.0}), ((0, 3, 4), {"base": 2, "dtype": "int64"}),
                         ((1, 1, 1), {}), ((0, 1, 0), {})):
        dtype = kwargs.pop("dtype", None)
        ours = vg.logspace(*args, **kwargs, **({"dtype": getattr(vg, dtype)} if dtype else {}))
        theirs = torch.logspace(*args, **kwargs, **({"dtype": getattr(torch, dtype)} if dtype else {}))
        assert ours.dtype.name == str(theirs.dtype).rpartition(".")[2]
        _same(ours, theirs, atol=1e-5)
    for name in ("hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"):
        for length in (0, 1, 2, 7, 10):
            for periodic in (True, False):
                for dtype in ("float32", "float64"):
                    ours = getattr(vg, name)(length, periodic, dtype=getattr(vg, dtype))
                    theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
                    assert ours.dtype.name == dtype
                    _same(ours, theirs, atol=1e-6 if dtype == "float32" else 1e-12)
        with pytest.raises(vg.DTypeError, match=f"{name} expects floating point dtypes"):
            getattr(vg, name)(4, dtype=vg.int64)
    _same(vg.kaiser_window(6, True, 5.0), torch.kaiser_window(6, True, 5.0), atol=1e-6)
    _same(vg.hamming_window(6, False, 0.5, 0.5), torch.hamming_window(6, False, 0.5, 0.5), atol=1e-6)


# --- random ----------------------------------------------------------------------------------

SAMPLERS = [("uniform_", (-2.0, 3.0)), ("normal_", (1.0, 2.0)), ("exponential_", (2.0,)), ("cauchy_", (0.5, 2.0)),
            ("log_normal_", (0.0, 0.5)), ("geometric_", (0.3,)), ("bernoulli_", (0.3,)), ("random_", (2, 9))]


@pytest.mark.parametrize("name, args", SAMPLERS)
def test_in_place_samplers_are_reproducible_with_seed_and_generator(name, args):
    vg.manual_seed(11)
    first = getattr(vg.empty(50, dtype=vg.float64), name)(*args)
    vg.manual_seed(11)
    second = getattr(vg.empty(50, dtype=vg.float64), name)(*args)
    assert first.tolist() == second.tolist()
    other = getattr(vg.empty(50, dtype=vg.float64), name)(*args)
    assert first.tolist() != other.tolist()
    g = vg.Generator().manual_seed(5)
    a = getattr(vg.empty(20, dtype=vg.float64), name)(*args, generator=g)
    g.manual_seed(5)
    vg.manual_seed(0)
    b = getattr(vg.empty(20, dtype=vg.float64), name)(*args, generator=g)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name, args, mean, var", [
    ("uniform_", (-2.0, 3.0), 0.5, 25 / 12), ("normal_", (1.0, 2.0), 1.0, 4.0), ("exponential_", (2.0,), 0.5, 0.25),
    ("log_normal_", (0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
    ("geometric_", (0.3,), 1 / 0.3, 0.7 / 0.09), ("bernoulli_", (0.3,), 0.3, 0.21),
    ("random_", (2, 9), 5.0, (49 - 1) / 12)])
def test_in_place_samplers_have_their_distributions_moments(name, args, mean, var):
    n = 200_000
    vg.manual_seed(2)
    x = getattr(vg.empty(n, dtype=vg.float64), name)(*args).numpy()
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n)
    assert abs(x.var() - var) < 0.03 * var
    # the same distribution as PyTorch's (their draws differ; their moments do not)
    theirs = getattr(torch.empty(n, dtype=torch.float64), name)(*args).numpy()
    assert abs(x.mean() - theirs.mean()) < 7 * math.sqrt(var / n)


def test_cauchy_quartiles_and_ranges():
    vg.manual_seed(3)
    x = vg.empty(100_000, dtype=vg.float64).cauchy_(1.0, 2.0).numpy()
    np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.06)
    u = vg.empty(10_000).uniform_(2.0, 2.5).numpy()
    assert u.min() >= 2.0 and u.max() < 2.5
    g = vg.empty(10_000).geometric_(0.5).numpy()
    assert g.min() >= 1 and np.all(g == np.floor(g))


@pytest.mark.parametrize("dtype, top", [("float32", 2 ** 24), ("float64", 2 ** 53), ("float16", 2 ** 11),
                                        ("int32", 2 ** 31 - 1), ("int64", 2 ** 63 - 1), ("bool", 1)])
def test_random_ranges_and_dtypes_as_pytorch(dtype, top):
    vg.manual_seed(4)
    x = vg.empty(20_000, dtype=getattr(vg, dtype)).random_()
    assert x.dtype is getattr(vg, dtype)
    values = np.asarray(x.numpy(), dtype=np.float64 if "float" in dtype else object)
    assert min(values) >= 0 and max(values) <= top and max(values) > top / 2
    theirs = torch.empty(20_000, dtype=getattr(torch, dtype)).random_()
    assert theirs.double().max().item() <= top
    if dtype != "bool":
        small = vg.empty(5000, dtype=getattr(vg, dtype)).random_(3).tolist()
        assert set(small) == {0, 1, 2}
        shifted = vg.empty(5000, dtype=getattr(vg, dtype)).random_(-3, 2).tolist()
        assert set(shifted) == {-3, -2, -1, 0, 1}
        from_only = np.asarray(vg.empty(5000, dtype=getattr(vg, dtype)).random_(7, None).tolist(), dtype=object)
        assert min(from_only) >= 7 and max(from_only) <= top
    with pytest.raises(vg.ArgumentError, match="random_ expects 'from' to be less than 'to'"):
        vg.empty(3, dtype=getattr(vg, dtype)).random_(5, 3)
    with pytest.raises(RuntimeError):
        torch.empty(3, dtype=getattr(torch, dtype)).random_(5, 3)


def test_random_out_of_bounds_as_pytorch():
    with pytest.raises(vg.ArgumentError, match="random_: to - 1 = 2147483648 is out of bounds for int32"):
        vg.empty(3, dtype=vg.int32).random_(0, 2 ** 31 + 1)
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(3, dtype=torch.int32).random_(0, 2 ** 31 + 1)
    with pytest.raises(vg.ArgumentError, match="random_: to - 1 = 4 is out of bounds for bool"):
        vg.empty(3, dtype=vg.bool).random_(5)


def test_in_place_samplers_follow_the_in_place_rules():
    leaf = vg.ones(3, requires_grad=True)
    with pytest.raises(vg.BackwardError, match="normal_: a leaf tensor that requires grad"):
        leaf.normal_()
    with vg.no_grad():
        leaf.uniform_()
    assert leaf._version == 1 and leaf.requires_grad
    y = leaf * 2
    version = y._version
    assert y.exponential_() is y and y._version == version + 1 and y.requires_grad
    y.sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 0.0]        # as PyTorch: the samplers' gradient is zero
    base = vg.zeros(4, 3)
    base[1].fill_(0.0)
    base[1].bernoulli_(1.0)
    assert base.sum().item() == 3.0 and base[1].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(vg.DTypeError, match="uniform_: expects a floating point tensor"):
        vg.zeros(3, dtype=vg.int64).uniform_()
    with pytest.raises(vg.ArgumentError, match="normal_ expects std >= 0.0"):
        vg.zeros(3).normal_(0.0, -1.0)
    with pytest.raises(vg.ArgumentError, match=r"geometric_ expects p to be in \(0, 1\)"):
        vg.zeros(3).geometric_(1.0)
    with pytest.raises(vg.ArgumentError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        vg.zeros(3).bernoulli_(1.5)
    with pytest.raises(vg.ArgumentError, match="exponential_ expects lambda > 0.0"):
        vg.zeros(3).exponential_(0.0)


def test_bernoulli_poisson_binomial():
    vg.manual_seed(6)
    p = vg.tensor([[0.0, 1.0, 0.25]], dtype=vg.float64).expand(40_000, 3)
    draws = vg.bernoulli(p)
    assert draws.dtype is vg.float64 and set(np.unique(draws.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.numpy().mean(0), [0.0, 1.0, 0.25], atol=0.01)
    np.testing.assert_allclose(p.bernoulli(0.5).numpy().mean(), 0.5, atol=0.01)
    g = vg.Generator(3)
    a = vg.bernoulli(vg.full((50,), 0.5), generator=g)
    assert a.tolist() == vg.bernoulli(vg.full((50,), 0.5), generator=vg.Generator(3)).tolist()
    rates = vg.tensor([0.0, 1.0, 30.0], dtype=vg.float64).expand(50_000, 3)
    counts = vg.poisson(rates).numpy()
    np.testing.assert_allclose(counts.mean(0), [0.0, 1.0, 30.0], atol=0.1)
    np.testing.assert_allclose(counts.var(0), [0.0, 1.0, 30.0], rtol=0.05, atol=0.01)
    trials = vg.full((50_000,), 20.0)
    successes = vg.binomial(trials, vg.full((50_000,), 0.3)).numpy()
    assert successes.dtype == np.float32 and successes.max() <= 20
    assert abs(successes.mean() - 6.0) < 0.05 and abs(successes.var() - 4.2) < 0.15
    with pytest.raises(vg.ArgumentError, match="poisson: invalid Poisson rate"):
        vg.poisson(vg.tensor([-1.0]))
    with pytest.raises(vg.ArgumentError, match=r"bernoulli: expected every value of input to be in \[0, 1\]"):
        vg.bernoulli(vg.tensor([1.5]))


def test_rng_state_round_trip_and_seeds():
    vg.manual_seed(123)
    assert vg.initial_seed() == 123
    state = vg.get_rng_state()
    first = (vg.rand(5).tolist(), vg.empty(4).normal_().tolist(), vg.randint(0, 100, (3,)).tolist())
    vg.set_rng_state(state)
    again = (vg.rand(5).tolist(), vg.empty(4).normal_().tolist(), vg.randint(0, 100, (3,)).tolist())
    assert first == again
    assert vg.get_rng_state().tolist() != state.tolist()
    fresh = vg.seed()
    assert isinstance(fresh, int) and vg.initial_seed() == fresh
    assert isinstance(vg.Generator().initial_seed(), int)
    with pytest.raises(vg.ArgumentError, match="set_rng_state: new_state must be an int64 tensor"):
        vg.set_rng_state(vg.zeros(3))
    assert vg.random.get_rng_state is vg.get_rng_state and vg.random.manual_seed is vg.manual_seed


def test_num_threads_reach_the_blas_library():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = vg.get_num_threads()
    try:
        vg.set_num_threads(1)
        assert vg.get_num_threads() == 1
        assert all(info["num_threads"] == 1 for info in threadpoolctl.threadpool_info())
        vg.set_num_threads(2)
        assert vg.get_num_threads() == (2 if threadpoolctl.threadpool_info() else 1)
    finally:
        vg.set_num_threads(before)
    with pytest.raises(vg.ArgumentError, match="set_num_threads: int must be positive"):
        vg.set_num_threads(0)


def test_histogramdd_matches_pytorch():
    rng = np.random.default_rng(12)
    points = rng.standard_normal((60, 3)).astype(np.float32)
    weights = rng.uniform(size=60).astype(np.float32)
    edges = [np.array([-3.0, 0.0, 3.0], dtype=np.float32), np.array([-1.0, 0.0, 0.5, 1.0], dtype=np.float32),
             np.array([-2.0, 2.0], dtype=np.float32)]
    for kwargs in ({"bins": 4}, {"bins": [2, 3, 5]}, {"bins": 3, "range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]},
                   {"bins": 4, "density": True}, {"bins": [2, 3, 2], "weight": True}, {"bins": edges}):
        mine, theirs = dict(kwargs), dict(kwargs)
        if kwargs.get("weight"):
            mine["weight"], theirs["weight"] = vg.tensor(weights), torch.tensor(weights)
        if kwargs["bins"] is edges:
            mine["bins"], theirs["bins"] = [vg.tensor(e) for e in edges], [torch.tensor(e) for e in edges]
        ours, reference = vg.histogramdd(vg.tensor(points), **mine), torch.histogramdd(torch.tensor(points), **theirs)
        assert type(ours).__name__ == "histogramdd" and ours.hist.dtype is vg.float32
        _same(ours.hist, reference.hist, atol=1e-6)
        assert len(ours.bin_edges) == len(reference.bin_edges) == 3
        for a, b in zip(ours.bin_edges, reference.bin_edges):
            _same(a, b, atol=1e-6)
    for constant in (np.array([[1.0, 2.0], [1.0, 3.0], [1.0, 2.5]], dtype=np.float32), np.zeros((0, 2), np.float32)):
        ours, reference = vg.histogramdd(vg.tensor(constant), bins=2), torch.histogramdd(torch.tensor(constant), bins=2)
        _same(ours.hist, reference.hist)
        for a, b in zip(ours.bin_edges, reference.bin_edges):
            _same(a, b, atol=1e-6)
    with pytest.raises(vg.ShapeError, match="histogramdd: expected 3 bin counts"):
        vg.histogramdd(vg.tensor(points), bins=[2, 2])
