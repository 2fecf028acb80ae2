"""Issue 34: nothing silently wrong. Each test compares with PyTorch, the reference for every
semantic question (skipped where PyTorch is not installed)."""

import math
import warnings

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


def _assert_matches(ours, theirs, rtol=1e-7, atol=1e-12):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


# --- hangs --------------------------------------------------------------------------------

def _with_inf(shape, where):
    a = np.random.default_rng(0).standard_normal(shape)
    a[where] = np.inf if where != (0, 1, 0) else np.nan
    return a


@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize("where", [(0, 0, 0), (0, 1, 0)], ids=["inf", "nan"])
@pytest.mark.parametrize("call, at_nonfinite", [
    (lambda lib, x: lib.linalg.svdvals(x), math.nan),
    (lambda lib, x: lib.linalg.svd(x).S, math.nan),
    (lambda lib, x: lib.linalg.pinv(x), 0.0),
    (lambda lib, x: lib.linalg.matrix_norm(x, ord=2), math.nan),
    (lambda lib, x: lib.linalg.cond(x), math.nan),
    (lambda lib, x: lib.linalg.matrix_rank(x), 0),
], ids=["svdvals", "svd", "pinv", "matrix_norm", "cond", "matrix_rank"])
def test_linalg_answers_at_once_on_a_matrix_holding_inf_or_nan(call, at_nonfinite, where):
    a = _with_inf((2, 5, 5), where)            # the first matrix non-finite, the second ordinary
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = call(vg, vg.tensor(a))
    try:
        theirs = call(torch, torch.tensor(a))
    except RuntimeError:    # where LAPACK reports no convergence, PyTorch refuses: its second answer is ours
        theirs = call(torch, torch.tensor(np.stack([np.zeros((5, 5)), a[1]])))
        np.testing.assert_array_equal(ours[0].numpy(), np.full(tuple(ours[0].shape), at_nonfinite))
        ours, theirs = ours[1:], theirs[1:]
    _assert_matches(ours, theirs, rtol=1e-10)


@pytest.mark.timeout(60, method="thread")
def test_lstsq_and_svd_vectors_answer_on_a_matrix_holding_inf():
    a = _with_inf((5, 5), (0, 0))
    result = vg.linalg.lstsq(vg.tensor(a), vg.ones(5, 1, dtype=vg.float64))
    # PyTorch's pivoted QR ('gelsy') gives LAPACK's arbitrary answer there; vizgrad's is A⁺ B with A⁺ = 0
    np.testing.assert_array_equal(result.solution.numpy(), np.zeros((5, 1)))
    assert result.rank.item() == 0
    u, s, vh = vg.linalg.svd(vg.tensor(a))
    assert bool(s.isnan().all())
    np.testing.assert_allclose((u @ u.mT).numpy(), np.eye(5), atol=1e-12)   # orthogonal, as PyTorch's
    np.testing.assert_allclose((vh @ vh.mT).numpy(), np.eye(5), atol=1e-12)


@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a, x", [(3e38, 3e38), (3e38, 1.0), (1e30, 1e30), (2e5, 2e5 - 300), (2e5, 2e5 + 1000),
                                  (2e5, 1e5), (1e6, 1e6 + 500), (5e4, 5e4 + 100)])
def test_igamma_of_huge_arguments_returns_pytorchs_value(a, x, dtype):
    lib_dtype = getattr(vg, dtype)
    ours_a, ours_x = vg.tensor([a], dtype=lib_dtype), vg.tensor([x], dtype=lib_dtype)
    theirs_a, theirs_x = torch.tensor([a], dtype=getattr(torch, dtype)), torch.tensor([x], dtype=getattr(torch, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p, q = vg.igamma(ours_a, ours_x), vg.igammac(ours_a, ours_x)
        special_p, special_q = vg.special.gammainc(ours_a, ours_x), vg.special.gammaincc(ours_a, ours_x)
    tolerance = 1e-5 if dtype == "float32" else 1e-10
    _assert_matches(p, torch.igamma(theirs_a, theirs_x), rtol=tolerance, atol=tolerance)
    _assert_matches(q, torch.igammac(theirs_a, theirs_x), rtol=tolerance, atol=tolerance)
    assert p.item() == special_p.item() and q.item() == special_q.item()


def test_igamma_for_large_a_matches_the_exact_value_and_its_derivatives():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for a, x in [(2e5, 2e5 - 300), (2e5, 2e5 + 1000), (3e5, 3e5)]:
        a_, x_ = vg.tensor(a, dtype=vg.float64, requires_grad=True), vg.tensor(x, dtype=vg.float64, requires_grad=True)
        p = vg.igamma(a_, x_)
        p.backward()
        exact = mpmath.gammainc(mpmath.mpf(a), 0, mpmath.mpf(x), regularized=True)
        density = mpmath.exp((a - 1) * mpmath.log(x) - x - mpmath.loggamma(a))
        slope = mpmath.diff(lambda s: mpmath.gammainc(s, 0, mpmath.mpf(x), regularized=True), mpmath.mpf(a))
        assert p.item() == pytest.approx(float(exact), rel=1e-12)
        assert x_.grad.item() == pytest.approx(float(density), rel=1e-10)
        assert a_.grad.item() == pytest.approx(float(slope), rel=1e-8)


# --- wrong values on ordinary inputs --------------------------------------------------------

def _both(call):
    """``call`` run with vizgrad and with PyTorch."""
    return call(vg), call(torch)


def _grads(lib, function, *values):
    """``function``'s output and the gradients of its sum in each input."""
    inputs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    out = function(lib, *inputs)
    out.sum().backward()
    return (out, *(t.grad for t in inputs))


def _assert_all_match(ours, theirs):
    for a, b in zip(ours, theirs, strict=True):
        _assert_matches(a, b)


def test_cosine_similarity_of_an_input_broadcast_along_dim():
    a, b = np.random.default_rng(0).standard_normal((3, 4)), np.random.default_rng(1).standard_normal((1, 4))
    ours, theirs = _both(lambda L: _grads(L, lambda L, x, y: L.nn.functional.cosine_similarity(x, y, dim=0), a, b))
    _assert_all_match(ours, theirs)
    assert float(ours[0].abs().max()) <= 1


def test_nearest_interpolation_copies_an_inf_without_spreading_nans():
    x = [[[[1.0, math.inf], [3.0, -math.inf]]]]
    for mode in ("nearest", "nearest-exact"):
        for size in ((3, 5), (4, 4), (1, 1)):
            ours, theirs = _both(lambda L: _grads(L, lambda L, x: L.nn.functional.interpolate(x, size=size, mode=mode), x))
            _assert_all_match(ours, theirs)


def test_diagonal_matrices_keep_an_inf_without_spreading_nans():
    x = [[1.0, math.inf, 2.0], [math.nan, 3.0, -math.inf]]
    for call in (lambda L, x: L.diag_embed(x), lambda L, x: L.diag(x[0], 1), lambda L, x: L.diagflat(x),
                 lambda L, x: L.diag_embed(x, offset=-1, dim1=0, dim2=2)):
        ours, theirs = _both(lambda L: _grads(L, call, x))
        _assert_all_match(ours, theirs)


def test_clamp_with_min_above_max_gives_the_gradient_to_max_only():
    x, low, high = [0.5, 1.5, 3.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]
    ours, theirs = _both(lambda L: _grads(L, lambda L, x, lo, hi: L.clamp(x, lo, hi), x, low, high))
    _assert_all_match(ours, theirs)
    ours, theirs = _both(lambda L: _grads(L, lambda L, x, lo, hi: L.clamp(x, lo, hi), x, [0.0, 2.0, 1.0], [1.0, 1.0, 2.0]))
    _assert_all_match(ours, theirs)


@pytest.mark.parametrize("indices", [[5, 2, 7], [8, 3], [-2, 4], [3, 3, 1, 9]])
def test_tensor_split_and_hsplit_at_decreasing_indices_slice_as_pytorch(indices):
    for name in ("tensor_split", "hsplit"):
        ours, theirs = _both(lambda L: getattr(L, name)(L.arange(10), indices))
        _assert_all_match(ours, theirs)
    x = np.arange(12.0).reshape(2, 6)
    ours, theirs = _both(lambda L: L.tensor_split(L.tensor(x, requires_grad=True), [4, 1], dim=1))
    _assert_all_match(ours, theirs)


def test_isin_compares_a_float_test_element_without_truncating():
    for call in (lambda L: L.isin(L.tensor([1, 2, 3]), 2.5), lambda L: L.isin(L.tensor([1, 2, 3]), 2.0),
                 lambda L: L.isin(2, L.tensor([2.5, 1.0])), lambda L: L.isin(2, L.tensor([2.0])),
                 lambda L: L.isin(L.tensor([2, 3]), L.tensor([2.5])), lambda L: L.isin(L.tensor([1.5]), 1)):
        ours, theirs = _both(call)
        _assert_matches(ours, theirs)


def test_isclose_on_integers_uses_rtol():
    cases = [((100, 105), (101, 100), {"rtol": 0.05}), ((100, 105), (101, 100), {}),
             ((2**62,), (2**62 + 1,), {"rtol": 0.0, "atol": 0.0}), ((0, 200), (5, 190), {"rtol": 0.06})]
    for a, b, options in cases:
        ours, theirs = _both(lambda L: L.isclose(L.tensor(a), L.tensor(b), **options))
        _assert_matches(ours, theirs)


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "kl_div"])
@pytest.mark.parametrize("size_average", [True, 1, "yes"])
def test_a_truthy_legacy_size_average_averages(loss, size_average):
    x, y = np.array([[-1.0, -2.0, -3.0], [-0.5, -1.5, -2.5]]), np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _both(lambda L: getattr(L.nn.functional, loss)(L.tensor(x), L.tensor(y), size_average=size_average))
    _assert_matches(ours, theirs)


def test_kl_div_of_a_negative_target_is_nan():
    ours, theirs = _both(lambda L: L.nn.functional.kl_div(L.tensor([-1.0, -2.0, -3.0]), L.tensor([0.2, -0.3, 0.0]),
                                                          reduction="none"))
    _assert_matches(ours, theirs)


def test_frexp_mantissa_and_nextafter_pass_their_gradients():
    x = [1.5, -3.0, 0.1, 0.0, 1024.0, math.inf]
    ours, theirs = _both(lambda L: _grads(L, lambda L, x: L.frexp(x).mantissa, x))
    _assert_all_match(ours, theirs)
    for lib in (vg, torch):
        assert not lib.frexp(lib.tensor([1.0], requires_grad=True)).exponent.requires_grad
    ours, theirs = _both(lambda L: _grads(L, lambda L, x, y: L.nextafter(x, y), [1.5, -3.0, 0.0, 2.0, math.nan],
                                                 [2.0, 0.0, 0.0, 2.0, 1.0]))
    _assert_all_match(ours, theirs)


def test_frexp_and_nextafter_of_special_values():
    x = np.array([0.0, -0.0, 1.0, 0.5, -0.75, 1024.0, 3e-310, np.inf, -np.inf, np.nan])
    ours, theirs = _both(lambda L: L.frexp(L.tensor(x)))
    _assert_all_match(ours, theirs)
    a, b = np.array([0.0, 0.0, 1.0, -1.0, np.inf, np.nan, 2.0]), np.array([1.0, -1.0, 1.0, np.inf, 0.0, 1.0, np.nan])
    ours, theirs = _both(lambda L: L.nextafter(L.tensor(a), L.tensor(b)))
    _assert_matches(ours, theirs)


# --- autograd state -------------------------------------------------------------------------

def _outcome(call, lib):
    """``('ok', value)`` or ``('error', builtin class PyTorch code would catch)``."""
    try:
        return "ok", call(lib)
    except (RuntimeError, TypeError, ValueError) as error:
        if lib is vg:
            assert isinstance(error, vg.VizgradError), f"{type(error).__name__}: {error}"
        return "error", error


def _assert_both_refuse(call):
    ours, theirs = _outcome(call, vg), _outcome(call, torch)
    assert theirs[0] == "error", "PyTorch accepts this call: the test is wrong"
    assert ours[0] == "error", f"vizgrad accepted what PyTorch refuses ({theirs[1]})"
    return ours[1]


@pytest.mark.parametrize("op", [
    lambda L, x, i: x.index_select(0, i), lambda L, x, i: x.gather(0, i),
    lambda L, x, i: L.zeros(5, dtype=L.float64).scatter_add(0, i, x[:2]),
    lambda L, x, i: L.zeros(5, dtype=L.float64).index_add(0, i, x[:2]),
    lambda L, x, i: L.zeros(5, dtype=L.float64).scatter(0, i, x[:2]),
], ids=["index_select", "gather", "scatter_add", "index_add", "scatter"])
def test_an_index_modified_in_place_after_it_was_saved_makes_backward_raise(op):
    def call(L):
        x = L.tensor(np.arange(5.0), requires_grad=True)
        index = L.tensor([0, 2])
        y = op(L, x, index)
        index.add_(1)
        y.sum().backward()
    error = _assert_both_refuse(call)
    assert isinstance(error, vg.errors.BackwardError) and "version 1; expected version 0" in str(error)


def test_an_unmodified_saved_index_keeps_its_gradient():
    ours, theirs = _both(lambda L: _grads(L, lambda L, x: x.index_select(0, L.tensor([0, 0, 3])), np.arange(4.0)))
    _assert_all_match(ours, theirs)


@pytest.mark.parametrize("value", [
    lambda L: L.zeros(4), lambda L: L.zeros(3, 1), lambda L: L.zeros(3, dtype=L.float64),
    lambda L: L.zeros(3, dtype=L.int64), lambda L: [1.0, 2.0, 3.0], lambda L: 5,
], ids=["shape", "rank", "dtype", "int dtype", "list", "number"])
def test_assigning_a_wrong_grad_is_refused(value):
    def call(L):
        x = L.randn(3, requires_grad=True)
        x.grad = value(L)
    _assert_both_refuse(call)


def test_assigning_a_right_grad_or_none_is_kept():
    for lib in (vg, torch):
        x = lib.randn(3, requires_grad=True)
        x.grad = lib.ones(3)
        assert x.grad.tolist() == [1.0, 1.0, 1.0]
        x.grad = None
        assert x.grad is None
        y = lib.randn(3)           # also on a tensor that does not require grad
        y.grad = lib.ones(3)
        assert y.grad is not None


@pytest.mark.parametrize("call", [
    lambda L: setattr(L.randn(3, requires_grad=True) * 2, "requires_grad", False),
    lambda L: setattr(L.randn(3, requires_grad=True) * 2, "requires_grad", True),
    lambda L: setattr(L.randn(3), "requires_grad", "yes"),
    lambda L: setattr(L.randn(3), "requires_grad", 1),
    lambda L: setattr(L.tensor([1, 2]), "requires_grad", True),
    lambda L: (L.randn(3, requires_grad=True) * 2).requires_grad_(False),
    lambda L: L.randn(3).requires_grad_("yes"),
    lambda L: L.randn(3, 2)[0].detach_(),
    lambda L: L.randn(3, 2, requires_grad=True).view(6).detach_(),
], ids=["non-leaf False", "non-leaf True", "a string", "an int", "int tensor", "requires_grad_(False) on a result",
        "requires_grad_ of a string", "detach_ of a view", "detach_ of a view of a leaf"])
def test_requires_grad_and_detach_refuse_what_pytorch_refuses(call):
    _assert_both_refuse(call)


def test_requires_grad_and_detach_accept_what_pytorch_accepts():
    for lib in (vg, torch):
        y = lib.randn(3, requires_grad=True) * 2
        assert y.requires_grad_(True) is y
        z = lib.randn(3, 2)
        z.requires_grad = True
        assert z.requires_grad and z.detach_() is z and not z.requires_grad


@pytest.mark.parametrize("hook", [lambda g: g.double(), lambda g: g.long(), lambda g: g[:2], lambda g: 5],
                         ids=["float64", "int64", "shape", "a number"])
@pytest.mark.parametrize("on_leaf", [True, False], ids=["leaf", "result"])
def test_a_tensor_hook_may_not_change_the_gradients_type_or_shape(hook, on_leaf):
    def call(L):
        x = L.randn(3, requires_grad=True)
        y = x * 2
        (x if on_leaf else y).register_hook(hook)
        (y * 1).sum().backward()
    _assert_both_refuse(call)


def _custom(lib, backward):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return backward(grad)
    x = lib.randn(3, requires_grad=True)
    Scale.apply(x, 2.0).sum().backward()
    return x.grad


@pytest.mark.parametrize("backward", [lambda g: [g, None], lambda g: (g, g), lambda g: (g,), lambda g: (g[:2], None),
                                      lambda g: (5, None)],
                         ids=["a list", "a gradient for a number", "too few", "shape", "not a tensor"])
def test_a_custom_function_backward_returning_the_wrong_things_is_refused(backward):
    _assert_both_refuse(lambda L: _custom(L, backward))


def test_a_custom_function_backward_may_add_trailing_nones():
    for lib in (vg, torch):
        assert _custom(lib, lambda g: (g * 2, None, None)).tolist() == [2.0, 2.0, 2.0]


# --- dtypes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda L: L.log2(L.tensor([1, 8])), lambda L: L.log10(L.tensor([1, 100])),
    lambda L: L.log2(L.tensor([True, False])), lambda L: L.log10(L.tensor([True, False])),
    lambda L: L.square(L.tensor([True, False])),
    lambda L: L.zeros(3, dtype=L.int64).scatter(0, L.tensor([0, 2]), L.tensor([5, 7])),
    lambda L: L.zeros(3, dtype=L.int64).scatter(0, L.tensor([0, 2]), 5),
    lambda L: L.zeros(3, dtype=L.int32).scatter(0, L.tensor([0, 2]), L.tensor([5, 7], dtype=L.int32)),
    lambda L: L.bincount(L.tensor([0, 1, 1]), weights=L.tensor([1, 2, 3])),
    lambda L: L.bincount(L.tensor([0, 1, 1]), weights=L.tensor([True, False, True])),
    lambda L: L.bincount(L.tensor([0, 1, 1]), weights=L.tensor([0.5, 1.0, 2.0])),
    lambda L: L.block_diag(L.tensor([[1, 2]]), L.tensor([[1.5]])),
    lambda L: L.block_diag(L.tensor([[1, 2]], dtype=L.int32), L.tensor([[True]])),
    lambda L: L.cat([L.tensor([1]), L.tensor([1.5])]), lambda L: L.stack([L.tensor([True]), L.tensor([2.5])]),
], ids=["log2 int", "log10 int", "log2 bool", "log10 bool", "square bool", "scatter int", "scatter int value",
        "scatter int32", "bincount int weights", "bincount bool weights", "bincount float weights",
        "block_diag int float", "block_diag int32 bool", "cat int float", "stack bool float"])
def test_dtypes_as_pytorch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # log of 0 is -inf in both
        ours, theirs = _both(call)
    _assert_matches(ours, theirs, rtol=1e-6)   # (float32 log10(100) may differ by one ulp)


def test_scatter_on_floats_still_differentiates():
    ours, theirs = _both(lambda L: _grads(L, lambda L, x: L.zeros(4, dtype=L.float64).scatter(0, L.tensor([3, 1]), x),
                                          [1.5, -2.0]))
    _assert_all_match(ours, theirs)


def test_domain_errors_give_pytorchs_nan_and_inf_without_numpy_warnings():
    from vizgrad.backends.numpy_backend import quiet_floating_point_warnings
    with warnings.catch_warnings(record=True) as caught:
        quiet_floating_point_warnings()       # what importing vizgrad installs (pytest's collection undid it)
        ours = [vg.asin(vg.tensor(2.0)), vg.log(vg.tensor([-1.0, 0.0])), vg.tensor([1.0]) / 0, vg.exp(vg.tensor(1e4))]
        np.arcsin(np.array([2.0, 3.0]))                       # the user's own NumPy code still warns
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert messages == ["invalid value encountered in arcsin"], messages
    theirs = [torch.asin(torch.tensor(2.0)), torch.log(torch.tensor([-1.0, 0.0])), torch.tensor([1.0]) / 0,
              torch.exp(torch.tensor(1e4))]
    for a, b in zip(ours, theirs):
        _assert_matches(a, b)


def test_grad_fn_types_are_named_as_pytorchs():
    def names(L):
        x = L.randn(2, 3, requires_grad=True)
        class Twice(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        results = [x * 2, x.exp(), x + 1, x.sum(), x.clamp(0, 1), x.relu(), Twice.apply(x), x.sum(0)]
        results[-1].grad_fn.name()           # a name read from the node settles its class
        return [type(y.grad_fn).__name__ for y in results] + [type((x * 2).grad_fn.next_functions[0][0]).__name__]
    ours, theirs = _both(names)
    assert ours == theirs
    assert isinstance((vg.ones(1, requires_grad=True) * 2).grad_fn, vg.autograd.function.Node)
