"""NumPy behind device "cpu"."""

import functools
import math
import types
import warnings

import numpy as np

from .. import dtypes
from . import blas_threads, linalg_kernels
from .base import Backend, namespace

# NumPy's floating-point warnings: what vizgrad's modules never show (vizgrad_pytest has the same).
FLOATING_POINT_MESSAGE = r"(invalid value|divide by zero|overflow|underflow) encountered in"


def quiet_floating_point_warnings():
    """Silence NumPy's floating-point warnings ("invalid value encountered in arcsin") raised in
    vizgrad's own modules: PyTorch gives the inf and NaN of domain errors silently, and so does
    vizgrad. A warnings filter costs nothing until a warning is raised (no per-op errstate); the
    user's own NumPy code still warns. Installed at import; a ``warnings.catch_warnings`` block
    around the import restores the filters it found, so under pytest (which runs collection and
    each test in one) the plugin ``vizgrad_pytest`` installs the same filter for every test."""
    warnings.filterwarnings("ignore", message=FLOATING_POINT_MESSAGE, category=RuntimeWarning, module=r"vizgrad\.")


quiet_floating_point_warnings()

# erf by W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations for
# the error function", Math. Comp. 23 (1969) 631-637; the coefficients of his CALERF), one per
# range of |x|: erf itself below 0.46875, erfc = e^(-x²) R(|x|) up to 4, and the asymptotic form
# erfc = e^(-x²)/|x| (1/√π + R(1/x²)/x²) beyond. Evaluated in float64 to float64 rounding;
# e^(-x²) with x² split in two (Cody's way), so that erfc keeps its relative accuracy where it
# is tiny (erf = 1 - erfc would not need it).
_ERF_SMALL_P = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
                3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_SMALL_Q = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
                2.84423683343917062e03)
_ERFC_MID_P = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
               2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
               2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERFC_MID_Q = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
               1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
               3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_LARGE_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
                 1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERFC_LARGE_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
                 6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 5.6418958354775628695e-1
_ERF_SMALL_END, _ERFC_MID_END = 0.46875, 4.0
_ERF_IS_ONE = 6.0        # erfc(6) ≈ 2e-17 is below half an ulp of 1: erf rounds to ±1 from here


def _rational(t, p, q):
    """``(p[-1] t^n + p[0] t^(n-1) + ... + p[n-1]) / (t^n + q[0] t^(n-1) + ... + q[n-1])``,
    Cody's nesting, with n = len(q)."""
    num, den = p[-1] * t, t.copy()
    for a, b in zip(p[:len(q) - 1], q[:-1]):
        num += a
        num *= t
        den += b
        den *= t
    return (num + p[len(q) - 1]) / (den + q[-1])


_ERF_BLOCK = 65536      # elements per pass: the float64 temporaries stay in cache (2x faster at 262k)


def erf(x):
    """The error function, elementwise, in the dtype of ``x`` (computed in float64)."""
    return _in_blocks(_erf_block, x)


def erfc(x):
    """The complementary error function 1 - erf(x), elementwise, in the dtype of ``x``
    (computed in float64, to relative accuracy where it is tiny: erfc(10) ≈ 2e-45)."""
    return _in_blocks(_erfc_block, x)


def _in_blocks(block, x):
    x = np.asarray(x)
    if x.size <= _ERF_BLOCK:
        return block(x).astype(x.dtype, copy=False)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _ERF_BLOCK):
        out[start:start + _ERF_BLOCK] = block(flat[start:start + _ERF_BLOCK])
    return out.reshape(x.shape)


def _gaussian(y):
    """e^(-y²) to relative accuracy: y² split as s² + (y - s)(y + s), s = y rounded down to
    sixteenths (s² exact in float64), as Cody does for erfc."""
    split = np.trunc(y * 16) / 16
    with np.errstate(invalid="ignore"):                  # (inf - inf: the callers set erfc(inf) = 0)
        return np.exp(-(split * split)) * np.exp(-((y - split) * (y + split)))


def _erfc_tail(y):
    """erfc(y) for y > 0.46875 (float64): Cody's e^(-y²) R(y) up to 4, his asymptotic form beyond."""
    out = np.empty_like(y)
    mid = y <= _ERFC_MID_END
    large = ~mid                                         # nan goes here and stays nan
    if mid.any():
        ym = y[mid]
        out[mid] = _gaussian(ym) * _rational(ym, _ERFC_MID_P, _ERFC_MID_Q)
    if large.any():
        yl = y[large]
        inv_square = 1 / (yl * yl)
        tail = inv_square * _rational(inv_square, _ERFC_LARGE_P, _ERFC_LARGE_Q)
        out[large] = np.where(np.isinf(yl), 0.0, _gaussian(yl) * (_INV_SQRT_PI - tail) / yl)
    return out


def _erfc_block(x):
    """erfc of x in float64: 1 - erf near 0, Cody's tail above, 2 - the tail of |x| below."""
    x64 = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x64)
    near = np.abs(x64) <= _ERF_SMALL_END
    if near.any():
        xs = x64[near]
        out[near] = 1 - xs * _rational(xs * xs, _ERF_SMALL_P, _ERF_SMALL_Q)
    far = ~near                                          # nan goes here and stays nan
    if far.any():
        xf = x64[far]
        tail = _erfc_tail(np.abs(xf))
        out[far] = np.where(xf < 0, 2 - tail, tail)
    return out


def _erf_block(x):
    """erf of x in float64, by the range of |x| (see above)."""
    x64 = np.asarray(x, dtype=np.float64)
    y = np.minimum(np.abs(x64), _ERF_IS_ONE)            # ±inf becomes 6 (erf = ±1); nan stays nan
    out = np.empty_like(x64)
    small = y <= _ERF_SMALL_END
    if small.any():
        ys = y[small]
        out[small] = ys * _rational(ys * ys, _ERF_SMALL_P, _ERF_SMALL_Q)
    if not small.all():
        out[~small] = 1 - _erfc_tail(y[~small])
    np.copysign(out, x64, out=out)                       # erf is odd (and erf(-0) = -0)
    return out


# --- the gamma function's logarithm and its derivatives ---------------------------------
# lgamma by Lanczos' approximation (g = 7, nine terms: Godfrey's coefficients), with the
# reflection formula below 1/2; digamma by the recurrence ψ(x) = ψ(x + 1) - 1/x up to x ≥ 10
# and the asymptotic series there; polygamma(n ≥ 1) from the Hurwitz zeta function,
# ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n + 1, x), summed directly up to q > 9 and by Euler-Maclaurin beyond;
# both reflected below 1/2. All in float64 (relative errors about 1e-15 away from their zeros,
# against SciPy), returned in the input's floating dtype.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_HALF_LOG_2PI = 0.91893853320467274178
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)   # B₂ₖ / 2k
_ZETA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
                -174611 / 330, 854513 / 138, -236364091 / 2730)                         # B₂ⱼ


def _sin_pi(x):
    """sin(π x) without the rounding of π x for large x (x reduced to [-1/2, 1/2] first)."""
    whole = np.round(x)
    return np.sin(np.pi * (x - whole)) * np.where(np.fmod(whole, 2) == 0, 1.0, -1.0)


def _elementwise(function):
    """``function`` (float64 arrays to float64) applied in the dtype of its input."""
    def apply(x):
        x = np.asarray(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return function(x.astype(np.float64)).astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)
    return apply


@_elementwise
def lgamma(x):
    """log |Γ(x)|, elementwise (inf at 0, the negative integers and ±inf)."""
    reflect = x < 0.5
    z = np.where(reflect, 1 - x, x) - 1
    series = np.full_like(z, _LANCZOS[0])
    for k, c in enumerate(_LANCZOS[1:], start=1):
        series += c / (z + k)
    t = z + _LANCZOS_G + 0.5
    direct = _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(series)
    out = np.where(reflect, np.log(np.pi / np.abs(_sin_pi(x))) - direct, direct)
    return np.where(np.isinf(x), np.inf, out)


@_elementwise
def digamma(x):
    """ψ(x) = d/dx log Γ(x), elementwise (-inf at 0, NaN at the negative integers and -inf)."""
    return _polygamma(0, x)


def polygamma(n, x):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma, elementwise (n ≥ 0)."""
    return _elementwise(lambda values: _polygamma(n, values))(x)


def _polygamma(n, x):
    """ψ⁽ⁿ⁾ in float64: for x ≥ 1/2 directly (digamma by its series, n ≥ 1 from the Hurwitz
    zeta function), below by reflection: ψ⁽ⁿ⁾(x) = (-1)ⁿ ψ⁽ⁿ⁾(1 - x) - πⁿ⁺¹ Pₙ(cot πx), where
    Pₙ is the polynomial in c = cot πx of the n-th derivative of cot (P₀ = c, Pₖ₊₁ = -(1 + c²) Pₖ')."""
    reflect = x < 0.5
    y = np.where(reflect, 1 - x, x)
    finite = np.isfinite(y)
    y = np.where(finite, y, 1.0)
    out = _digamma_positive(y) if n == 0 else (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, y)
    if reflect.any():
        whole = np.round(x)
        cot = np.cos(np.pi * (x - whole)) / np.sin(np.pi * (x - whole))      # (period 1: x reduced first)
        polynomial = np.array([0.0, 1.0])
        for _ in range(n):
            derivative = np.polynomial.polynomial.polyder(polynomial)
            polynomial = -np.polynomial.polynomial.polymul([1.0, 0.0, 1.0], derivative)
        reflected = (-1.0) ** n * out - np.pi ** (n + 1) * np.polynomial.polynomial.polyval(cot, polynomial)
        out = np.where(reflect, reflected, out)
        # at the poles, as PyTorch: digamma -inf at 0 and NaN below, the others (-1)ⁿ⁺¹ inf
        pole = reflect & (x == whole)
        at_pole = np.where(x == 0, -np.inf, np.nan) if n == 0 else (-1.0) ** (n + 1) * np.inf
        out = np.where(pole, at_pole, out)
    at_infinity = np.inf if n == 0 else 0.0
    return np.where(np.isnan(x) | (x == -np.inf), np.nan, np.where(x == np.inf, at_infinity, out))


def _digamma_positive(y):
    """ψ(y) for y > 0: ψ(y) = ψ(y + 1) - 1/y up to y ≥ 10, then the asymptotic series."""
    shift = np.zeros_like(y)
    for _ in range(10):
        small = y < 10
        if not small.any():
            break
        shift -= np.where(small, 1 / y, 0.0)
        y = np.where(small, y + 1, y)
    inverse_square = 1 / (y * y)
    series = np.zeros_like(y)
    for c in reversed(_DIGAMMA_SERIES):
        series = (series + c) * inverse_square
    return np.log(y) - 0.5 / y - series + shift


def _hurwitz_zeta(s, q):
    """ζ(s, q) = Σₖ (q + k)⁻ˢ for integer s ≥ 2 and q ≥ 1/2: the terms up to q + k > 9, the
    rest by Euler-Maclaurin (the Bernoulli numbers to B₂₄)."""
    total = np.zeros_like(q)
    a = q.copy()
    for _ in range(9):
        total += a ** -s
        a += 1
    below = a <= 9                                   # (at most one more term: q ≥ 1/2)
    total += np.where(below, a ** -s, 0.0)
    a = np.where(below, a + 1, a)
    tail = a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    rising, power = float(s), a ** (-s - 1)        # s(s+1)…(s+2j-2) and a^(-s-2j+1)
    inverse_square = 1 / (a * a)
    for j, bernoulli in enumerate(_ZETA_SERIES, start=1):
        tail += bernoulli / math.factorial(2 * j) * rising * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        power = power * inverse_square
    return total + tail


def index_add(x, axis, index, values):
    out = x.copy()
    if index.ndim != 1 or index.size < 64 or values.size < 8 * index.size:   # single numbers: add.at is quick
        np.add.at(out, (slice(None),) * axis + (index,), values)
        return out
    # np.add.at adds one element at a time; sorting the index once and summing each run of
    # equal entries (reduceat) adds whole rows instead: an embedding's backward, 5x faster
    index = index % x.shape[axis]
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sums = np.add.reduceat(np.take(values, order, axis=axis), starts, axis=axis)
    np.moveaxis(out, axis, 0)[ordered[starts]] += np.moveaxis(sums, axis, 0)    # distinct rows: no collisions
    return out


def scatter_add(x, axis, index, src):
    out = x.copy()
    key = list(np.indices(index.shape, sparse=True))
    key[axis] = index
    np.add.at(out, tuple(key), src[tuple(slice(0, n) for n in index.shape)])
    return out


def put_add(x, key, values):
    out = x.copy()
    np.add.at(out, key, values)
    return out


def pad(x, widths, value):
    return np.pad(x, widths, constant_values=value)


def sliding_windows(x, window, axes):
    return np.lib.stride_tricks.sliding_window_view(x, window, axis=axes)


_BLAS_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_BLAS_SUM_MIN_SIZE = 4096      # below this NumPy's reduce costs less than calling BLAS
_BLAS_SUM_MAX_ROW = 1024       # longer rows keep NumPy's pairwise summation (its error grows as log n)


@functools.cache
def _ones(n, dtype):
    ones = np.ones(n, dtype)
    ones.flags.writeable = False
    return ones


def _blas_sum(x, axis, keepdims):
    """Σ over the leading and/or trailing axes of a row-major float32/float64 array (a layer
    norm's features, a bias gradient's rows, a batch norm's (N, H, W)), as matrix-vector
    products with ones; None where that does not apply. BLAS runs the rows (or columns) side
    by side: four to six times faster than NumPy's reduce there. Along rows the result agrees
    with NumPy's to rounding; down columns both add in order."""
    if (axis is None or x.size < _BLAS_SUM_MIN_SIZE or x.dtype not in _BLAS_SUM_DTYPES or x.ndim < 2
            or not x.flags.c_contiguous):        # the cheap tests first: every small sum pays for them
        return None
    axes = sorted(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    if not axes or len(axes) == x.ndim or len(set(axes)) != len(axes):
        return None
    lead = next(i for i in range(len(axes) + 1) if i == len(axes) or axes[i] != i)   # axes 0 .. lead-1
    trail = len(axes) - lead                                                         # the last `trail` axes
    if axes[lead:] != list(range(x.ndim - trail, x.ndim)):
        return None                                      # an axis in the middle, between kept ones
    total = x
    if trail:                                            # a dot per row
        row = math.prod(x.shape[x.ndim - trail:])
        if row > _BLAS_SUM_MAX_ROW:
            return None
        total = np.matmul(x.reshape(-1, row), _ones(row, x.dtype)).reshape(x.shape[:x.ndim - trail])
    if lead:                                             # rows added in order
        rows = math.prod(x.shape[:lead])
        total = np.matmul(_ones(rows, x.dtype), total.reshape(rows, -1)).reshape(total.shape[lead:])
    if keepdims:
        total = total.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return total


def _sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """The Array API ``sum`` as np.add's own reduce (what np.sum computes, without its Python
    dispatch: half its cost on a training step's small arrays), through BLAS where
    :func:`_blas_sum` applies."""
    if dtype is None or dtype == x.dtype:
        total = _blas_sum(x, axis, keepdims)
        if total is not None:
            return total
    return np.add.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _product(x, /, *, axis=None, dtype=None, keepdims=False):
    """The Array API ``prod`` as np.multiply's own reduce, without np.prod's Python dispatch."""
    return np.multiply.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)


def _extremum(ufunc):
    """The Array API ``max``/``min`` as the ufunc's own reduce. Over a short last axis of a
    row-major array NumPy reduces one row at a time (0.4 ms for the (10000, 10) logits of a
    softmax); reducing the transposed copy of its rows along their first axis runs the rows
    side by side, up to ten times faster, with the same values (an extremum does not depend on
    order). The rows are viewed as one matrix first: transposing every axis of a 4-D array
    (attention scores) would copy with no locality at all."""
    def reduce(x, /, *, axis=None, keepdims=False):
        last = x.ndim - 1
        if last > 0 and axis in ((last,), last, -1) and x.shape[-1] <= 64 and x.flags.c_contiguous:
            columns = x.reshape(-1, x.shape[-1]).T.copy()
            return ufunc.reduce(columns, axis=0).reshape(x.shape[:-1] + ((1,) if keepdims else ()))
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = ufunc.__name__ + ".reduce"
    return reduce


def mean(x, /, *, axis=None, keepdims=False):
    """np.mean as the sum's ufunc reduce over the count (what np.mean computes, float16 summed
    in float32 as there), without its Python dispatch: a third of the cost on small arrays."""
    half = x.dtype == np.float16
    total = np.add.reduce(x, axis=axis, dtype=np.float32, keepdims=keepdims) if half else _sum(
        x, axis=axis, keepdims=keepdims)
    count = x.size // max(total.size, 1)   # (a NumPy scalar has .size too)
    result = total / count
    return result.astype(np.float16) if half else result


def ones_like(x, /, *, dtype=None, device=None):
    """np.ones_like without its Python layers: an empty array, filled."""
    out = np.empty(x.shape, dtype=x.dtype if dtype is None else dtype)
    out.fill(1)
    return out


_SAME_SIZE_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def keep_where(mask, values):
    """``values`` where ``mask`` holds, +0 elsewhere, whatever is there (PyTorch's masked
    backward kernels: an inf or NaN gradient outside the mask gives 0). A product with the 0/1
    mask would turn them into NaN, and np.where branches per element (over ten times slower
    on a random mask), so floats keep their bits through an AND with the mask's all-ones words."""
    values = np.asarray(values)
    ints = _SAME_SIZE_INTS.get(values.dtype.itemsize) if values.dtype.kind == "f" or values.dtype == _BFLOAT16 else None
    if ints is None:
        return np.where(mask, values, values.dtype.type(0))
    mask = np.asarray(mask)            # (a NumPy bool from a 0-d comparison: its astype is no array)
    shape = np.broadcast_shapes(mask.shape, values.shape)
    bits = (mask if mask.shape == shape else np.broadcast_to(mask, shape)).astype(ints)
    bits *= -1                         # 1 and 0 become all ones and all zeros
    np.bitwise_and(bits, values.view(ints), out=bits)
    return bits.view(values.dtype)


def astype(x, dtype, /, *, copy=True, device=None):
    """np.astype as the array's own method (np.astype adds a Python layer around it)."""
    return x.astype(dtype, copy=copy)


def matrix_transpose(x, /):
    """np.matrix_transpose as the array's own swapaxes, without the function's Python wrappers
    (five times the cost of the swap on small arrays)."""
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.swapaxes(-1, -2)


def reshape(x, /, shape, *, copy=None):
    """np.reshape as the array's own method, without the function's Python dispatch."""
    return x.reshape(shape, copy=copy)


# --- bfloat16 -------------------------------------------------------------------------------
# ml_dtypes gives NumPy a bfloat16 dtype with elementwise loops (each result computed in float32
# and rounded, as PyTorch's CPU kernels do). The functions below either have no bfloat16 loop
# (matmul, einsum) or would round every partial sum where PyTorch's kernels accumulate in
# float32: they run in float32 on bfloat16 arrays, their floating results rounded once.
_BFLOAT16, _FLOAT32 = dtypes.bfloat16.numpy, np.dtype(np.float32)
_IN_FLOAT32 = ("sum", "prod", "mean", "std", "var", "cumulative_sum", "cumulative_prod", "matmul", "tensordot",
               "vecdot", "einsum", "lgamma", "digamma", "polygamma", "matrix_exp")


def _in_float32(function):
    """``function``, computed in float32 when an argument is a bfloat16 array (see above); an
    explicit ``dtype=`` result is left as asked."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        for arg in args:
            if getattr(arg, "dtype", None) is _BFLOAT16:
                break
        else:
            return function(*args, **kwargs)
        result = function(*(arg.astype(_FLOAT32) if getattr(arg, "dtype", None) is _BFLOAT16 else arg
                            for arg in args), **kwargs)
        return result if kwargs.get("dtype") is not None else _rounded(result)
    return run


def _rounded(result):
    if isinstance(result, tuple):
        return tuple(_rounded(part) for part in result)
    return result.astype(_BFLOAT16) if getattr(result, "dtype", None) is _FLOAT32 else result


def _keeps_bfloat16(function):
    """``function`` (where, clip) keeping bfloat16 where ml_dtypes' promotion would make a
    bfloat16 array and a Python float float32: PyTorch's result is bfloat16."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        result = function(*args, **kwargs)
        if result.dtype is not _FLOAT32:
            return result
        bfloat16 = False
        for arg in args:
            kind = getattr(arg, "dtype", None)
            if kind is _FLOAT32:
                return result
            bfloat16 = bfloat16 or kind is _BFLOAT16
        return result.astype(_BFLOAT16) if bfloat16 else result
    return run


def _refuses_bfloat16(function):
    """A linear algebra function refusing bfloat16 as NumPy refuses float16 (PyTorch's CPU kernels
    take neither)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        if any(getattr(arg, "dtype", None) is _BFLOAT16 for arg in args):
            raise TypeError("array type bfloat16 is unsupported in linalg")
        return function(*args, **kwargs)
    return run


def _bfloat16_safe(xp):
    """``xp`` with the functions of ``_IN_FLOAT32`` computing bfloat16 in float32, ``where`` and
    ``clip`` keeping it, and ``linalg`` refusing it (but for ``matrix_power``, a matmul)."""
    for name in _IN_FLOAT32:
        setattr(xp, name, _in_float32(getattr(xp, name)))
    for name in ("where", "clip"):
        setattr(xp, name, _keeps_bfloat16(getattr(xp, name)))
    linalg = types.SimpleNamespace()
    for name, value in vars(xp.linalg).items():
        if not name.startswith("_"):
            function = callable(value) and not isinstance(value, type)     # (LinAlgError stays a class)
            setattr(linalg, name, _refuses_bfloat16(value) if function else value)
    linalg.matrix_power = _in_float32(xp.linalg.matrix_power)
    xp.linalg = linalg
    return xp


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"
    array_type = np.ndarray
    checks_index_bounds = True
    xp = _bfloat16_safe(namespace(np, {
        "erf": erf, "erfc": erfc, "lgamma": lgamma, "digamma": digamma, "polygamma": polygamma,
        "index_add": index_add, "scatter_add": scatter_add, "put_add": put_add, "pad": pad, "einsum": np.einsum,
        "sliding_windows": sliding_windows, "sum": _sum, "prod": _product, "mean": mean,
        "max": _extremum(np.maximum), "min": _extremum(np.minimum), "astype": astype, "ones_like": ones_like,
        "matrix_transpose": matrix_transpose, "reshape": reshape, "matmul": blas_threads.matmul,
        "keep_where": keep_where,
        **linalg_kernels.extras(np)}))

    def asarray(self, data, dtype, device_index):
        if hasattr(data, "__cuda_array_interface__"):
            data = data.get()
        elif not isinstance(data, (np.ndarray, np.generic, list, tuple, int, float, bool)):
            data = np.from_dlpack(data)
        return np.array(data, dtype=None if dtype is None else dtype.numpy, copy=None)

    def is_contiguous(self, array):
        return array.flags.c_contiguous

    def owns_memory(self, array):
        return array.base is None

    def to_numpy(self, array):
        return array

    def is_floating(self, array):
        return array.dtype.kind == "f" or array.dtype is _BFLOAT16
