"""The elementwise functions added with PyTorch's names: inverse trigonometric and hyperbolic
functions, atan2, fmax/fmin, gcd/lcm, ldexp, logaddexp2, nextafter, frexp, i0, mvlgamma,
renorm, the bitwise ops and operators, the comparison aliases, and the in-place variants
(``x.sin_()``, ``vizgrad.sin_(x)``, ``F.selu_(x)``). PyTorch is the oracle: values, dtypes,
gradients (first and second order), in-place semantics and what must raise."""

import math

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad.errors import BackwardError, DTypeError, VizgradError

torch = pytest.importorskip("torch")
TF = torch.nn.functional

NAN, INF = float("nan"), float("inf")
FLOATS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 0.999, 25.0, INF, -INF, NAN]
INTEGERS = [0, 1, -1, 2, -3, 7]
BOOLS = [True, False]


def _pair(values, dtype):
    """The same data as a vizgrad tensor and a torch tensor of ``dtype`` ("float32", ...)."""
    return vg.tensor(values, dtype=getattr(vg, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def _same(actual, expected, rtol=1e-6, atol=1e-7):
    """Values and dtype of a vizgrad result equal to torch's (NaN where torch has NaN)."""
    assert actual.dtype.name == str(expected.dtype).replace("torch.", ""), (actual.dtype, expected.dtype)
    if expected.dtype == torch.float32:
        rtol = max(rtol, 3e-7)      # (float32 results of integer inputs: one rounding apart)
    assert tuple(actual.shape) == tuple(expected.shape)
    expected = expected.detach().numpy()
    actual = actual.detach().numpy()
    if expected.dtype == bool or np.issubdtype(expected.dtype, np.integer):
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def _both(vizgrad_call, torch_call, rtol=1e-6, atol=1e-7):
    """Run both; when torch raises, vizgrad must raise one of its errors; else same result."""
    try:
        expected = torch_call()
    except (RuntimeError, TypeError, NotImplementedError, ValueError):
        with pytest.raises(VizgradError):
            vizgrad_call()
        return None
    actual = vizgrad_call()
    if isinstance(expected, tuple):
        for a, e in zip(actual, expected):
            _same(a, e, rtol, atol)
    else:
        _same(actual, expected, rtol, atol)
    return actual


# --- unary functions: values and dtypes over float32, float64, int64 and bool -------------

UNARY = ["asin", "acos", "asinh", "acosh", "atanh", "sinh", "cosh", "arcsin", "arccos", "arcsinh", "arccosh",
         "arctanh", "i0", "sgn", "positive", "negative", "isposinf", "isneginf", "isreal", "frexp",
         "bitwise_not", "sign"]
CASES = [("float32", FLOATS), ("float64", FLOATS), ("int64", INTEGERS), ("bool", BOOLS)]


@pytest.mark.parametrize("dtype,data", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_dtypes(name, dtype, data):
    x, t = _pair(data, dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    _both(lambda: getattr(vg, name)(x), lambda: getattr(torch, name)(t), rtol=rtol, atol=1e-30)
    _both(lambda: getattr(x, name)(), lambda: getattr(t, name)(), rtol=rtol, atol=1e-30)


def test_domain_edges():
    x = vg.tensor([1.0, -1.0, 1.5, -1.5], dtype=vg.float64)
    assert vg.asin(x).tolist()[:2] == [math.pi / 2, -math.pi / 2] and all(map(math.isnan, vg.asin(x).tolist()[2:]))
    assert vg.atanh(x).tolist()[:2] == [INF, -INF] and all(map(math.isnan, vg.atanh(x).tolist()[2:]))
    assert vg.acosh(vg.tensor([1.0, 0.5])).tolist()[0] == 0.0 and math.isnan(vg.acosh(vg.tensor([0.5])).item())
    assert vg.asinh(vg.tensor([-0.0])).item() == 0.0 and math.copysign(1, vg.asinh(vg.tensor([-0.0])).item()) < 0
    assert vg.sinh(vg.tensor([1000.0])).item() == INF and vg.cosh(vg.tensor([-1000.0])).item() == INF


def test_i0_wide_range_matches_torch():
    data = np.concatenate([np.linspace(-30, 30, 121), [100.0, -250.0, 700.0]])
    x, t = _pair(data.tolist(), "float64")
    np.testing.assert_allclose(vg.i0(x).numpy(), torch.i0(t).numpy(), rtol=1e-12)
    x32, t32 = _pair([0.0, 3.0, -12.5, 80.0, 100.0], "float32")
    _same(vg.i0(x32), torch.i0(t32), rtol=1e-5)     # 100 overflows float32 in both


def test_frexp_is_a_named_tuple_that_reconstructs_its_input():
    x = vg.tensor([8.0, -0.75, 0.0, 3e-40, 1e30, INF, NAN])
    mantissa, exponent = vg.frexp(x)
    result = x.frexp()
    assert type(result).__name__ == "frexp" and result._fields == ("mantissa", "exponent")
    assert result.mantissa.dtype is vg.float32 and result.exponent.dtype is vg.int32
    expected = torch.frexp(torch.tensor([8.0, -0.75, 0.0, 3e-40, 1e30, INF, NAN]))
    _same(mantissa, expected.mantissa)
    assert exponent.tolist()[:5] == expected.exponent.tolist()[:5] == [4, 0, 0, -131, 100]
    np.testing.assert_array_equal(vg.ldexp(mantissa[:5], exponent[:5]).numpy(), x[:5].numpy())
    assert repr(result).startswith("vizgrad.return_types.frexp(\nmantissa=tensor(")
    with pytest.raises(DTypeError, match="frexp"):
        vg.frexp(vg.tensor([1, 2]))


def test_positive_is_the_input_and_refuses_bools():
    x = vg.tensor([1.0, -2.0])
    assert vg.positive(x) is x and x.positive() is x
    with pytest.raises(DTypeError, match="bool"):
        vg.positive(vg.tensor([True]))


def test_mvlgamma_values_gradient_and_domain():
    data = [2.5, 3.0, 7.25]
    for p in (1, 2, 3):
        x, t = _pair(data, "float64")
        x.requires_grad_(), t.requires_grad_()
        _same(vg.mvlgamma(x, p), torch.mvlgamma(t, p), rtol=1e-12)
        (gx,) = vg.autograd.grad(x.mvlgamma(p).sum(), x)
        (gt,) = torch.autograd.grad(t.mvlgamma(p).sum(), t)
        _same(gx, gt, rtol=1e-10)
    _same(vg.mvlgamma(vg.tensor([3, 4]), 2), torch.mvlgamma(torch.tensor([3, 4]), 2), rtol=1e-6)
    # below (p-1)/2 PyTorch (2.13) computes the sum of log-gammas instead of refusing
    _same(vg.mvlgamma(vg.tensor([0.9, 1.0]), 3), torch.mvlgamma(torch.tensor([0.9, 1.0]), 3), rtol=1e-6)
    with pytest.raises(VizgradError, match="p"):
        vg.mvlgamma(vg.tensor([3.0]), 0)


# --- binary functions ------------------------------------------------------------------------

BINARY = ["atan2", "arctan2", "fmax", "fmin", "gcd", "lcm", "ldexp", "logaddexp2", "nextafter", "float_power",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "greater",
          "greater_equal", "less", "less_equal", "not_equal"]
LEFT = {"float32": [0.0, -0.0, 1.5, -2.0, INF, NAN, 3.0, -1.0], "float64": [0.0, -0.0, 1.5, -2.0, INF, NAN, 3.0, -1.0],
        "int64": [0, 12, -9, 7, 5, -8, 1, 30], "int32": [0, 12, -9, 7, 5, -8, 1, 30],
        "bool": [True, False, True, False, True, True, False, False]}
RIGHT = {"float32": [0.0, 2.0, -0.0, NAN, -INF, 1.0, 3.0, 0.5], "float64": [0.0, 2.0, -0.0, NAN, -INF, 1.0, 3.0, 0.5],
         "int64": [0, 18, 6, 0, 2, 1, 63, 3], "int32": [0, 18, 6, 0, 2, 1, 31, 3],
         "bool": [True, True, False, False, True, False, True, False]}
DTYPE_PAIRS = [("float32", "float32"), ("float64", "float64"), ("int64", "int64"), ("bool", "bool"),
               ("float32", "float64"), ("int64", "float32"), ("int32", "int64"), ("bool", "int64")]


@pytest.mark.parametrize("left,right", DTYPE_PAIRS, ids=[f"{a}-{b}" for a, b in DTYPE_PAIRS])
@pytest.mark.parametrize("name", BINARY)
def test_binary_values_and_dtypes(name, left, right):
    a, ta = _pair(LEFT[left], left)
    b, tb = _pair(RIGHT[right], right)
    _both(lambda: getattr(vg, name)(a, b), lambda: getattr(torch, name)(ta, tb), rtol=1e-6, atol=1e-30)
    _both(lambda: getattr(a, name)(b), lambda: getattr(ta, name)(tb), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("number", [2, 1.5, True])
@pytest.mark.parametrize("name", ["atan2", "fmax", "gcd", "ldexp", "nextafter", "bitwise_and", "bitwise_or",
                                  "bitwise_left_shift", "float_power", "greater"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_binary_with_a_number(name, number, dtype):
    a, ta = _pair(LEFT[dtype], dtype)
    _both(lambda: getattr(vg, name)(a, number), lambda: getattr(torch, name)(ta, number), atol=1e-30)


def test_fmax_fmin_ignore_nan_unlike_maximum():
    a = vg.tensor([1.0, NAN, NAN, 2.0])
    b = vg.tensor([NAN, 3.0, NAN, -1.0])
    fmax, fmin = vg.fmax(a, b).tolist(), vg.fmin(a, b).tolist()
    assert fmax[:2] == [1.0, 3.0] and math.isnan(fmax[2]) and fmax[3] == 2.0
    assert fmin[:2] == [1.0, 3.0] and math.isnan(fmin[2]) and fmin[3] == -1.0


def test_gcd_lcm_extremes():
    a = vg.tensor([0, 0, 2 ** 40, -(2 ** 31), 1071, 17])
    b = vg.tensor([0, -5, 2 ** 20 * 3, 6, 462, 0])
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    assert vg.gcd(a, b).tolist() == torch.gcd(ta, tb).tolist() == [0, 5, 2 ** 20, 2, 21, 17]
    assert vg.lcm(a, b).tolist() == torch.lcm(ta, tb).tolist()


def test_shift_counts_out_of_range():
    a = vg.tensor([-8, 8, 1, -1, 5, 3])
    b = vg.tensor([-1, 64, 63, 70, 0, 2])
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    assert vg.bitwise_left_shift(a, b).tolist() == torch.bitwise_left_shift(ta, tb).tolist()
    assert vg.bitwise_right_shift(a, b).tolist() == torch.bitwise_right_shift(ta, tb).tolist()
    assert (a >> b).tolist() == [-1, 0, 0, -1, 5, 0]
    small, tsmall = _pair([8, -8, 1], "int32")
    _same(small << 40, tsmall << 40)
    _same(small >> 31, tsmall >> 31)


def test_logaddexp2_extremes():
    a, ta = _pair([1000.0, -1000.0, -INF, INF, 0.0, 3.0], "float64")
    b, tb = _pair([1000.0, -1001.0, -INF, 5.0, -60.0, 3.0], "float64")
    _same(vg.logaddexp2(a, b), torch.logaddexp2(ta, tb), rtol=1e-14)


# --- gradients, first and second order ---------------------------------------------------------

def _grads(vg_function, torch_function, arrays, order=2):
    """The gradients (and, with order 2, the gradients of the summed gradients) of both
    libraries for float64 inputs ``arrays``."""
    xs = [vg.tensor(a, dtype=vg.float64, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out, tout = vg_function(*xs), torch_function(*ts)
    _same(out, tout, rtol=1e-10, atol=1e-12)
    weight = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
    g = vg.autograd.grad((out * vg.tensor(weight)).sum(), xs, create_graph=True)
    tg = torch.autograd.grad((tout * torch.tensor(weight)).sum(), ts, create_graph=True)
    for a, e in zip(g, tg):
        _same(a, e, rtol=1e-8, atol=1e-10)
    if order == 2:
        gg = vg.autograd.grad(sum((d * d).sum() for d in g), xs, allow_unused=True)
        tgg = torch.autograd.grad(sum((d * d).sum() for d in tg), ts, allow_unused=True)
        for a, e in zip(gg, tgg):
            if e is None:
                assert a is None or not np.any(a.numpy())
            else:
                _same(a, e, rtol=1e-7, atol=1e-9)


INSIDE = [[-0.7, -0.2, 0.1, 0.45, 0.8]]
GRADIENT_CASES = {
    "asin": (INSIDE, None), "acos": (INSIDE, None), "atanh": (INSIDE, None),
    "asinh": ([[-3.0, -0.5, 0.0, 0.7, 4.0]], None), "acosh": ([[1.1, 1.5, 2.0, 7.0]], None),
    "sinh": ([[-2.0, -0.3, 0.0, 1.2, 3.0]], None), "cosh": ([[-2.0, -0.3, 0.0, 1.2, 3.0]], None),
    "i0": ([[-25.0, -3.0, -0.5, 0.0, 0.7, 5.0, 19.0, 21.0, 40.0]], None),
    "atan2": ([[-1.0, 0.5, 2.0, -0.3], [0.7, -1.5, 0.2, -0.4]], None),
    "ldexp": ([[-1.0, 0.5, 2.0, -0.3], [0.7, -1.5, 2.0, -3.0]], None),
    "logaddexp2": ([[-1.0, 0.5, 2.0, 30.0], [0.7, -1.5, 2.0, -3.0]], None),
    "fmax": ([[-1.0, 0.5, 2.0, -0.3], [0.7, -1.5, 2.5, -0.4]], None),
    "fmin": ([[-1.0, 0.5, 2.0, -0.3], [0.7, -1.5, 2.5, -0.4]], None),
    "float_power": ([[0.5, 1.5, 2.0, 3.0], [0.7, -1.5, 2.0, -3.0]], None),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_torch(name):
    arrays, _ = GRADIENT_CASES[name]
    # fmax and fmin are piecewise linear: their gradients are constants, with no second order
    _grads(getattr(vg, name), getattr(torch, name), arrays, order=1 if name in ("fmax", "fmin") else 2)


def test_renorm_gradients_match_torch():
    data = [[[3.0, -4.0], [0.1, 0.2]], [[0.5, 1.0], [-2.0, 0.3]]]
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 1.5), (3, -1, 0.7)):
        _grads(lambda x: vg.renorm(x, p, dim, maxnorm), lambda t: torch.renorm(t, p, dim, maxnorm), [data])
    x = vg.tensor([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(x.renorm(2, 0, 1.0).numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    with pytest.raises(VizgradError, match="2 dimensions"):
        vg.renorm(vg.ones(3), 2, 0, 1.0)


def test_grad_fn_names_are_torchs():
    x = vg.tensor([0.5], requires_grad=True)
    t = torch.tensor([0.5], requires_grad=True)
    for name in ("asin", "acos", "atanh", "asinh", "sinh", "cosh"):
        assert getattr(vg, name)(x).grad_fn.name() == getattr(torch, name)(t).grad_fn.name()
    assert vg.atan2(x, x).grad_fn.name() == torch.atan2(t, t).grad_fn.name() == "Atan2Backward0"


def test_method_forms_of_activations():
    x, t = _pair([-1.0, -0.25, 0.0, 0.3, 2.0], "float32")
    _same(x.hardshrink(0.5), t.hardshrink(0.5))
    _same(x.hardshrink(), t.hardshrink())
    _same(x.prelu(vg.tensor([0.25])), t.prelu(torch.tensor([0.25])))
    _same(vg.tensor([2, 3]).float_power(2), torch.tensor([2, 3]).float_power(2))


# --- operators -------------------------------------------------------------------------------

OPERATORS = {
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
@pytest.mark.parametrize("symbol", sorted(OPERATORS))
def test_bitwise_operators(symbol, dtype):
    operator = OPERATORS[symbol]
    a, ta = _pair(LEFT[dtype], dtype)
    b, tb = _pair([abs(v) % 5 if not isinstance(v, bool) else v for v in RIGHT[dtype]], dtype)
    _both(lambda: operator(a, b), lambda: operator(ta, tb))
    _both(lambda: operator(a, 3), lambda: operator(ta, 3))           # number on the right
    _both(lambda: operator(3, a), lambda: operator(3, ta))           # reflected
    _both(lambda: operator(a, True), lambda: operator(ta, True))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_invert_operator(dtype):
    a, ta = _pair(LEFT[dtype], dtype)
    _both(lambda: ~a, lambda: ~ta)


def test_in_place_operators_keep_the_object_and_dtype():
    a, ta = _pair([12, -9, 7], "int64")
    same = a
    a &= 6
    ta &= 6
    a |= vg.tensor([1, 2, 4])
    ta |= torch.tensor([1, 2, 4])
    a ^= 3
    ta ^= 3
    a <<= 2
    ta <<= 2
    a >>= 1
    ta >>= 1
    assert a is same and a._version == 5
    _same(a, ta)
    m = vg.tensor([True, False])
    m &= vg.tensor([True, True])
    m |= vg.tensor([False, False])
    assert m.tolist() == [True, False] and m.dtype is vg.bool
    with pytest.raises(DTypeError):
        b = vg.tensor([True])
        b |= vg.tensor([2])       # an int64 result does not fit in a bool tensor


# --- in-place variants -----------------------------------------------------------------------

# name -> (data, extra arguments) for the in-place method; values chosen inside each domain
INPLACE = {
    "asin_": ([0.3, -0.6], ()), "acos_": ([0.3, -0.6], ()), "atan_": ([0.3, -2.0], ()),
    "asinh_": ([0.3, -2.0], ()), "acosh_": ([1.3, 2.0], ()), "atanh_": ([0.3, -0.6], ()),
    "arcsin_": ([0.3, -0.6], ()), "arccos_": ([0.3, -0.6], ()), "arctan_": ([0.3, -2.0], ()),
    "arcsinh_": ([0.3, -2.0], ()), "arccosh_": ([1.3, 2.0], ()), "arctanh_": ([0.3, -0.6], ()),
    "sinh_": ([0.3, -2.0], ()), "cosh_": ([0.3, -2.0], ()), "tan_": ([0.3, -1.0], ()),
    "log2_": ([0.3, 8.0], ()), "log10_": ([0.3, 100.0], ()), "log1p_": ([0.3, 2.0], ()),
    "expm1_": ([0.3, -2.0], ()), "rsqrt_": ([0.3, 4.0], ()), "erfinv_": ([0.3, -0.6], ()),
    "i0_": ([0.3, -2.0], ()), "sgn_": ([0.3, -2.0], ()), "negative_": ([0.3, -2.0], ()),
    "deg2rad_": ([90.0, -180.0], ()), "rad2deg_": ([0.3, -2.0], ()),
    "atan2_": ([0.3, -2.0], ("other",)), "arctan2_": ([0.3, -2.0], ("other",)), "xlogy_": ([0.3, 2.0], ("other",)),
    "copysign_": ([0.3, -2.0], ("other",)), "hypot_": ([0.3, -2.0], ("other",)), "fmod_": ([3.3, -2.0], ("other",)),
    "nextafter_": ([0.3, -2.0], ("other",)), "ldexp_": ([0.3, -2.0], ("other",)),
    "heaviside_": ([0.0, -2.0], ("other",)),
    "igamma_": ([0.3, 2.0], ("other",)), "igammac_": ([0.3, 2.0], ("other",)),
    "multiply_": ([0.3, -2.0], ("other",)), "subtract_": ([0.3, -2.0], ("other",)),
    "divide_": ([0.3, -2.0], ("other",)), "true_divide_": ([0.3, -2.0], ("other",)),
    "eq_": ([0.5, -2.0], ("other",)), "ne_": ([0.5, -2.0], ("other",)), "lt_": ([0.3, -2.0], ("other",)),
    "le_": ([0.5, -2.0], ("other",)), "gt_": ([0.3, -2.0], ("other",)), "ge_": ([0.5, -2.0], ("other",)),
    "greater_": ([0.3, 2.0], ("other",)), "greater_equal_": ([0.5, -2.0], ("other",)),
    "less_": ([0.3, 2.0], ("other",)), "less_equal_": ([0.5, -2.0], ("other",)),
    "not_equal_": ([0.5, -2.0], ("other",)),
    "logical_and_": ([0.0, -2.0], ("other",)), "logical_or_": ([0.0, -2.0], ("other",)),
    "logical_xor_": ([0.0, -2.0], ("other",)), "logical_not_": ([0.0, -2.0], ()),
    "mvlgamma_": ([2.5, 4.0], (2,)), "renorm_": ([[3.0, 4.0], [0.3, 0.4]], (2, 0, 1.0)),
    "float_power_": ([0.3, 2.0], (3,)),
    "abs_": ([0.3, -2.0], ()), "clamp_": ([0.3, -2.0], (-1.0, 0.1)), "clip_": ([0.3, -2.0], (-1.0, 0.1)),
    "clamp_min_": ([0.3, -2.0], (0.0,)), "clamp_max_": ([0.3, -2.0], (0.0,)),
}
INTEGER_INPLACE = {
    "gcd_": ([12, -9], ("other",)), "lcm_": ([4, -6], ("other",)),
    "bitwise_and_": ([12, -9], ("other",)), "bitwise_or_": ([12, -9], ("other",)),
    "bitwise_xor_": ([12, -9], ("other",)), "bitwise_not_": ([12, -9], ()),
    "bitwise_left_shift_": ([12, -9], ("other",)), "bitwise_right_shift_": ([12, -9], ("other",)),
}
OTHER = {"float64": [0.5, 1.5], "int64": [18, 2]}


def _run_inplace(library, name, data, extra, dtype):
    x = library.tensor(data, dtype=getattr(library, dtype))
    args = [library.tensor(OTHER[dtype], dtype=getattr(library, dtype)) if a == "other" else a for a in extra]
    if name == "heaviside_":
        args = [library.tensor([0.5, 0.5], dtype=getattr(library, dtype))]
    before = x._version
    result = getattr(x, name)(*args)
    return x, result, before


@pytest.mark.parametrize("name", sorted(INPLACE) + sorted(INTEGER_INPLACE))
def test_inplace_method_changes_the_tensor_as_torch_does(name):
    data, extra = INPLACE.get(name) or INTEGER_INPLACE[name]
    dtype = "float64" if name in INPLACE else "int64"
    x, result, before = _run_inplace(vg, name, data, extra, dtype)
    t, _, _ = _run_inplace(torch, name, data, extra, dtype)
    assert result is x                          # the same object, changed
    assert x._version == before + 1
    _same(x, t, rtol=1e-10, atol=1e-12)


FUNCTIONS = ["asin_", "acos_", "atan_", "asinh_", "acosh_", "atanh_", "sinh_", "cosh_", "tan_", "arcsin_",
             "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "abs_", "ceil_", "floor_", "round_", "trunc_",
             "frac_", "fix_", "cos_", "sin_", "tanh_", "exp_", "expm1_", "log_", "log10_", "log1p_", "log2_",
             "sqrt_", "rsqrt_", "square_", "sigmoid_", "logit_", "reciprocal_", "neg_", "negative_", "deg2rad_",
             "rad2deg_", "nan_to_num_", "erf_", "erfc_", "exp2_", "sinc_", "i0_", "relu_", "selu_", "celu_"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_top_level_inplace_functions(name):
    data = [1.25, 1.5, 2.0] if name.startswith(("acosh", "arccosh")) else [0.25, 0.3, -0.6]
    if name in ("log_", "log10_", "log1p_", "log2_", "sqrt_", "rsqrt_", "logit_"):
        data = [0.25, 0.3, 0.6]
    x, t = _pair(data, "float32")
    assert getattr(vg, name)(x) is x
    getattr(torch, name)(t)
    _same(x, t, rtol=1e-6)


def test_top_level_inplace_functions_with_arguments():
    x, t = _pair([-1.0, 0.5, 3.0], "float32")
    vg.clamp_(x, min=-0.5, max=2.0), torch.clamp_(t, min=-0.5, max=2.0)
    _same(x, t)
    vg.clamp_min_(x, 0.0), torch.clamp_min_(t, 0.0)
    vg.clamp_max_(x, 1.0), torch.clamp_max_(t, 1.0)
    _same(x, t)
    vg.threshold_(x, 0.6, -7.0), torch.threshold_(t, 0.6, -7.0)
    _same(x, t)
    i, ti = _pair([12, 9], "int64")
    vg.gcd_(i, vg.tensor([18, 6])), torch.gcd_(ti, torch.tensor([18, 6]))
    vg.lcm_(i, vg.tensor([4, 4])), torch.lcm_(ti, torch.tensor([4, 4]))
    _same(i, ti)
    y, ty = _pair([0.5, 2.0], "float32")
    vg.ldexp_(y, vg.tensor([2, -1])), torch.ldexp_(ty, torch.tensor([2, -1]))
    vg.xlogy_(y, vg.tensor([3.0, 0.5])), torch.xlogy_(ty, torch.tensor([3.0, 0.5]))
    _same(y, ty)
    with pytest.raises(TypeError):
        vg.sin_([1.0])


@pytest.mark.parametrize("name,args", [("relu_", ()), ("elu_", (0.7,)), ("selu_", ()), ("celu_", (1.3,)),
                                       ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)),
                                       ("threshold_", (0.1, 9.0))])
def test_functional_inplace_activations(name, args):
    x, t = _pair([-2.0, -0.3, 0.0, 0.4, 1.5], "float32")
    assert getattr(F, name)(x, *args) is x and x._version == 1
    getattr(TF, name)(t, *args)
    _same(x, t)
    assert name in F.__all__


def test_inplace_on_a_non_leaf_carries_the_gradient():
    for name, extra in (("asin_", ()), ("sinh_", ()), ("atan2_", (0.7,)), ("ldexp_", ()), ("float_power_", (3,)),
                        ("i0_", ())):
        x = vg.tensor([0.2, -0.4], dtype=vg.float64, requires_grad=True)
        t = torch.tensor([0.2, -0.4], dtype=torch.float64, requires_grad=True)
        y, ty = x * 1.5, t * 1.5
        if name == "ldexp_":
            # (non-negative: PyTorch's gradient of ldexp by a negative integer exponent is 0, in integer arithmetic)
            args, targs = (vg.tensor([2, 1]),), (torch.tensor([2, 1]),)
        elif name == "atan2_":
            args, targs = (vg.tensor(extra[0], dtype=vg.float64),), (torch.tensor(extra[0], dtype=torch.float64),)
        else:
            args = targs = extra
        getattr(y, name)(*args), getattr(ty, name)(*targs)
        assert y.grad_fn.name() == ty.grad_fn.name(), name
        (y * y).sum().backward(), (ty * ty).sum().backward()
        _same(x.grad, t.grad, rtol=1e-10)
    z = vg.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=vg.float64, requires_grad=True)
    tz = torch.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=torch.float64, requires_grad=True)
    w, tw = z * 1.0, tz * 1.0
    w.renorm_(2, 0, 1.0), tw.renorm_(2, 0, 1.0)
    (w * vg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    (tw * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    _same(z.grad, tz.grad, rtol=1e-6)


def test_inplace_into_a_view_reaches_the_base():
    x = vg.tensor([0.1, 0.2, 0.3, 0.4], dtype=vg.float64, requires_grad=True)
    t = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64, requires_grad=True)
    y, ty = x * 2, t * 2
    y[1:3].asin_(), ty[1:3].asin_()
    assert y.grad_fn.name() == "CopySlices" and ty.grad_fn.name().endswith("CopySlices")
    y.sum().backward(), ty.sum().backward()
    _same(x.grad, t.grad, rtol=1e-10)


@pytest.mark.parametrize("name,args", [("asin_", ()), ("cosh_", ()), ("atan2_", (vg.tensor([1.0]),)),
                                       ("eq_", (0.5,)), ("logical_not_", ()), ("mvlgamma_", (1,)),
                                       ("renorm_", (2, 0, 1.0))])
def test_inplace_on_a_leaf_that_requires_grad_is_refused(name, args):
    x = vg.tensor([[0.5, 0.25]], requires_grad=True) if name == "renorm_" else vg.tensor([1.5, 0.5], requires_grad=True)
    with pytest.raises(BackwardError, match="leaf"):
        getattr(x, name)(*args)
    assert x._version == 0
    with vg.no_grad():
        getattr(x, name)(*args)
    assert x._version == 1


@pytest.mark.parametrize("name,args", [("asin_", ()), ("sinh_", ()), ("i0_", ()), ("atan2_", ("other",)),
                                       ("ldexp_", ("other",)), ("sgn_", ()),
                                       ("float_power_", (2,)), ("bitwise_and_", (1.5,)), ("gcd_", ("float",))])
@pytest.mark.parametrize("dtype", ["int64", "float32", "bool"])
def test_inplace_dtype_rules_match_torch(name, args, dtype):
    data = [1, 0] if dtype != "bool" else [True, False]

    def run(library):
        x = library.tensor(data, dtype=getattr(library, dtype))
        call = [library.tensor([2, 1]) if a == "other" else library.tensor([1.5, 2.5]) if a == "float" else a
                for a in args]
        return getattr(x, name)(*call)

    _both(lambda: run(vg), lambda: run(torch))


def test_float_power_in_place_needs_float64():
    x = vg.tensor([2.0, 3.0], dtype=vg.float64)
    assert x.float_power_(2) is x and x.tolist() == [4.0, 9.0]
    with pytest.raises(DTypeError, match="Double"):
        vg.tensor([2.0]).float_power_(2)
    with pytest.raises(RuntimeError):
        torch.tensor([2.0]).float_power_(2)


def test_out_argument():
    x, t = _pair([0.25, -0.5], "float32")
    out, tout = vg.empty(2), torch.empty(2)
    for name in ("asin", "sinh", "i0", "sgn"):
        result = getattr(vg, name)(x, out=out)
        getattr(torch, name)(t, out=tout)
        assert result is out
        _same(out, tout)
    a, ta = _pair([12, 9], "int64")
    out_i, tout_i = vg.empty(2, dtype=vg.int64), torch.empty(2, dtype=torch.int64)
    vg.gcd(a, vg.tensor([18, 6]), out=out_i), torch.gcd(ta, torch.tensor([18, 6]), out=tout_i)
    vg.bitwise_xor(a, vg.tensor([1, 2]), out=out_i), torch.bitwise_xor(ta, torch.tensor([1, 2]), out=tout_i)
    _same(out_i, tout_i)


def test_aliases_are_the_same_functions():
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                        ("arctanh", "atanh"), ("arctan2", "atan2"), ("greater", "gt"), ("greater_equal", "ge"),
                        ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne")):
        assert getattr(vg.Tensor, alias) is getattr(vg.Tensor, name)
        x = vg.tensor([1.5, -0.25, 0.5])
        y = vg.tensor([0.5, 0.75, 0.5])
        args = (y,) if name in ("atan2", "gt", "ge", "lt", "le", "ne") else ()
        torch_args = [torch.tensor(a.tolist()) for a in args]
        _same(getattr(vg, alias)(x, *args), getattr(torch, name)(torch.tensor(x.tolist()), *torch_args))
