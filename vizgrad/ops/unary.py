"""Elementwise ops of one tensor (and renorm); the special functions (erf, the gamma family,
i0, frexp) live in :mod:`vizgrad.ops.special_functions`, the inverse trigonometric and
hyperbolic ones in :mod:`vizgrad.ops.hyperbolic`.

Backwards save the input or, where the derivative is cheaper from it, the output
(exp, tanh, sigmoid, sqrt): outputs are differentiable too, so second derivatives work.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..dtypes import bool_, finfo, int64
from ..errors import ArgumentError, DTypeError, as_int, as_number, check_dim, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import unary, values


def _sigmoid_reference(x):
    return 1 / (1 + np.exp(-x))


def _refuse_bool(op, input):
    """PyTorch has no bool kernel for abs, relu and the roundings: a bool input is refused
    (one dtype check at the entry; the integer dtypes work as in PyTorch)."""
    if getattr(input, "dtype", None) is bool_:
        raise DTypeError(f"{op}: input is a bool tensor, which {op} does not support; convert it first "
                         "(x.int() or x.float())")


class Neg(Op):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def explain(name, a):
        """Only on the failure path: negating a bool tensor, in PyTorch's words."""
        if a.dtype == bool_:
            return DTypeError(f"{name}: negation, the `-` operator, on a bool tensor is not supported. If you are "
                              "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
        return None

    @staticmethod
    def backward(ctx, grad):
        return -grad


@register(np.negative, unary(), aliases=("negative",))
def neg(input):
    """Elementwise ``-input``.  d(-x)/dx = -1."""
    return Neg.apply(input)


class Abs(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.abs(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.xp.sign(a)


@register(np.abs, unary(away_from=0.0), aliases=("absolute",))
def abs(input):
    """Elementwise ``|input|``.  d|x|/dx = sign(x) (0 at 0)."""
    _refuse_bool("abs", input)
    return Abs.apply(input)


class Exp(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


@register(np.exp, unary())
def exp(input):
    """Elementwise ``e^input``.  d(e^x)/dx = e^x.

    Example::

        vizgrad.exp(vizgrad.tensor([0.0, 1.0]))   # tensor([1.0000, 2.7183])
    """
    return Exp.apply(input)


class Log(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.log(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / a


@register(np.log, unary(0.2, 3.0))
def log(input):
    """Elementwise natural logarithm.  d(ln x)/dx = 1/x."""
    return Log.apply(input)


class Log2(Op):
    promotes, int_to_float = (0,), True   # integers and bools give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.log2(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a * math.log(2.0))


@register(np.log2, unary(0.2, 3.0))
def log2(input):
    """Elementwise base-2 logarithm.  d(log₂ x)/dx = 1/(x ln 2).

    Example::

        vizgrad.tensor([1.0, 8.0]).log2()   # tensor([0., 3.])
    """
    return Log2.apply(input)


class Log10(Op):
    promotes, int_to_float = (0,), True   # integers and bools give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.log10(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a * math.log(10.0))


@register(np.log10, unary(0.2, 3.0))
def log10(input):
    """Elementwise base-10 logarithm.  d(log₁₀ x)/dx = 1/(x ln 10).

    Example::

        vizgrad.tensor([1.0, 100.0]).log10()   # tensor([0., 2.])
    """
    return Log10.apply(input)


class Log1p(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.log1p(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a + 1)


@register(np.log1p, unary(-0.8, 3.0))
def log1p(input):
    """Elementwise ``ln(1 + input)``, accurate for small inputs.  d/dx = 1/(1+x)."""
    return Log1p.apply(input)


class Expm1(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.expm1(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (out + 1)


@register(np.expm1, unary())
def expm1(input):
    """Elementwise ``e^input - 1``, accurate for small inputs.  d/dx = e^x."""
    return Expm1.apply(input)


_LN_2 = math.log(2.0)


class Exp2(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.pow(2.0, a)           # (exact at integers, as PyTorch: 2^3 is 8, not e^(3 ln 2))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (out * _LN_2)


@register(np.exp2, unary(-3.0, 3.0))
def exp2(input):
    """Elementwise ``2^input``.  d(2^x)/dx = 2^x ln 2.

    Example::

        vizgrad.exp2(vizgrad.tensor([0.0, 3.0, -1.0]))   # tensor([1.0000, 8.0000, 0.5000])
    """
    return Exp2.apply(input)


class Sinc(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        zero = a == 0
        angle = xp.where(zero, xp.ones_like(a), a) * math.pi      # (1 where a is 0: no 0/0)
        out = xp.where(zero, xp.ones_like(a), xp.sin(angle) / angle)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        zero = a == 0
        safe = xp.where(zero, xp.ones_like(a), a)
        # d/dx sin(πx)/(πx) = (cos(πx) - sinc(x)) / x; at 0 its Taylor term -π²x/3: 0, and the
        # second derivative -π²/3 (where PyTorch's is NaN)
        slope = (xp.cos(safe * math.pi) - out) / safe
        return grad * xp.where(zero, a * (-math.pi ** 2 / 3), slope)


@register(np.sinc, unary())
def sinc(input):
    """Elementwise normalized sinc, ``sin(π x) / (π x)`` (1 at 0).
    d/dx = (cos(π x) - sinc(x)) / x (0 at 0, where the second derivative is -π²/3).

    Example::

        vizgrad.sinc(vizgrad.tensor([0.0, 0.5, 1.0]))   # tensor([1.0000, 0.6366, 0.0000])
    """
    return Sinc.apply(input)


class Sqrt(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad / (out * 2)


@register(np.sqrt, unary(0.2, 3.0))
def sqrt(input):
    """Elementwise square root.  d√x/dx = 1/(2√x)."""
    return Sqrt.apply(input)


class Rsqrt(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = 1 / ctx.xp.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * -0.5 * out * out * out


@register(lambda x: 1 / np.sqrt(x), unary(0.2, 3.0))
def rsqrt(input):
    """Elementwise ``1 / sqrt(input)``.  d/dx = -x^(-3/2) / 2."""
    return Rsqrt.apply(input)


class Square(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * 2 * a


@register(np.square, unary())
def square(input):
    """Elementwise ``input²``.  d(x²)/dx = 2x. Bools square to int64, as PyTorch's ``x ** 2``."""
    if isinstance(input, Tensor) and input.dtype is bool_:
        input = input.to(int64)
    return Square.apply(input)


@register(np.deg2rad, unary(-360.0, 360.0))
def deg2rad(input):
    """Degrees to radians, ``x · π/180`` (integers give the default float dtype).

    Example::

        vizgrad.deg2rad(vizgrad.tensor([180.0]))    # tensor([3.1416])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("deg2rad", "input", input)
    return input * (math.pi / 180) if input.is_floating_point() else input.float() * (math.pi / 180)


@register(np.rad2deg, unary())
def rad2deg(input):
    """Radians to degrees, ``x · 180/π`` (integers give the default float dtype).

    Example::

        vizgrad.rad2deg(vizgrad.tensor([1.0]))    # tensor([57.2958])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("rad2deg", "input", input)
    return input * (180 / math.pi) if input.is_floating_point() else input.float() * (180 / math.pi)


class Reciprocal(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = 1 / a
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return -grad * out * out


@register(np.reciprocal, unary(0.3, 3.0))
def reciprocal(input):
    """Elementwise ``1 / input``.  d(1/x)/dx = -1/x²."""
    return Reciprocal.apply(input)


class Sin(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.sin(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.xp.cos(a)


@register(np.sin, unary())
def sin(input):
    """Elementwise sine.  d(sin x)/dx = cos x."""
    return Sin.apply(input)


class Cos(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.cos(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return -grad * ctx.xp.sin(a)


@register(np.cos, unary())
def cos(input):
    """Elementwise cosine.  d(cos x)/dx = -sin x."""
    return Cos.apply(input)


class Tan(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.tan(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (out * out + 1)


@register(np.tan, unary(-1.2, 1.2))
def tan(input):
    """Elementwise tangent.  d(tan x)/dx = 1 + tan² x."""
    return Tan.apply(input)


class Tanh(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (1 - out * out)


@register(np.tanh, unary())
def tanh(input):
    """Elementwise hyperbolic tangent.  d(tanh x)/dx = 1 - tanh² x.

    Example::

        vizgrad.tanh(vizgrad.tensor([0.0, 100.0]))   # tensor([0., 1.])
    """
    return Tanh.apply(input)


class Atan(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.atan(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (1 + a * a)


@register(np.arctan, unary(-3.0, 3.0), aliases=("arctan",))
def atan(input):
    """Elementwise arctangent, in (-π/2, π/2).  d(atan x)/dx = 1 / (1 + x²).

    Example::

        vizgrad.atan(vizgrad.tensor([0.0, 1.0]))   # tensor([0.0000, 0.7854])
    """
    return Atan.apply(input)


class Sigmoid(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        # e^-|a| never overflows: 1/(1+e^-a) for a >= 0, e^a/(1+e^a) below (one division for both)
        small = xp.exp(-xp.abs(a))
        out = xp.where(a >= 0, xp.ones_like(small), small) / (1 + small)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out * (1 - out)


@register(_sigmoid_reference, unary(-4.0, 4.0))
def sigmoid(input):
    """Elementwise logistic function ``1 / (1 + e^-x)``, stable for large |x|.
    dσ/dx = σ(x)(1 - σ(x))."""
    return Sigmoid.apply(input)


class Relu(Op):
    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return ctx.xp.keep_where(out > 0, grad)     # an inactive unit's gradient is 0, even an inf or NaN's


@register(lambda x: np.maximum(x, 0), unary(away_from=0.0))
def relu(input):
    """Elementwise ``max(x, 0)``.  The derivative is 1 for x > 0 and 0 otherwise (0 at 0)."""
    _refuse_bool("relu", input)
    return Relu.apply(input)


class PiecewiseConstant(Op):
    """Base of sign, floor, ceil, round and trunc: flat almost everywhere, so the gradient is zero."""

    function = ""

    @classmethod
    def forward(cls, ctx, a):
        return getattr(ctx.xp, cls.function)(a)

    @staticmethod
    def backward(ctx, grad):
        return ctx.xp.zeros_like(grad)


class Sign(PiecewiseConstant):
    @staticmethod
    def forward(ctx, a):
        out = ctx.xp.sign(a)
        return ctx.xp.where(a != a, ctx.xp.zeros_like(out), out)     # 0 at NaN, as PyTorch


class Floor(PiecewiseConstant):
    function = "floor"


class Ceil(PiecewiseConstant):
    function = "ceil"


class Round(PiecewiseConstant):
    function = "round"


class Trunc(PiecewiseConstant):
    function = "trunc"


@register(np.sign, unary(away_from=0.0))
def sign(input):
    """Elementwise sign: -1, 0 or 1 (0 at NaN; bools stay bools). Its gradient is zero."""
    if getattr(input, "dtype", None) is bool_:
        return input.clone()
    return Sign.apply(input)


@register(np.floor, unary(-3.0, 3.0))
def floor(input):
    """Elementwise largest integer not above the input. Its gradient is zero."""
    _refuse_bool("floor", input)
    return Floor.apply(input)


@register(np.ceil, unary(-3.0, 3.0))
def ceil(input):
    """Elementwise smallest integer not below the input. Its gradient is zero."""
    _refuse_bool("ceil", input)
    return Ceil.apply(input)


def _round_samples(rng):
    yield from unary(-3.0, 3.0)(rng)
    yield Sample((values(rng, (3, 4), -30.0, 30.0),), {"decimals": 1}, name="decimals=1")
    yield Sample((values(rng, (5,), -300.0, 300.0),), {"decimals": -2}, name="decimals=-2")


def _round_reference(a, decimals=0):
    return np.round(a, decimals)


@register(_round_reference, _round_samples)
def round(input, *, decimals=0):
    """Elementwise rounding to the nearest integer, halves to even (as NumPy and
    PyTorch do); with ``decimals``, to that many decimal places (negative: tens,
    hundreds...), as ``round(x · 10^decimals) / 10^decimals``. Its gradient is zero.

    Example::

        vizgrad.tensor([1.2345, 2.5]).round()             # tensor([1., 2.])
        vizgrad.tensor([1.2345, 2.5]).round(decimals=2)   # tensor([1.2300, 2.5000])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("round", "input", input)
    _refuse_bool("round", input)
    decimals = as_int("round", "decimals", decimals)
    if decimals:
        scale = 10.0 ** decimals
        return Round.apply(input * scale) / scale
    return Round.apply(input)


@register(np.trunc, unary(-3.0, 3.0), aliases=("fix",))
def trunc(input):
    """Elementwise rounding towards zero (also ``fix``). Its gradient is zero."""
    _refuse_bool("trunc", input)
    return Trunc.apply(input)


def _frac_reference(a):
    return a - np.trunc(a)


@register(_frac_reference, unary(-3.0, 3.0, away_from=0.0))
def frac(input):
    """Elementwise fractional part, with the sign of the input: ``x - trunc(x)``; its
    gradient is 1.

    Example::

        vizgrad.tensor([1.5, -1.25]).frac()      # tensor([ 0.5000, -0.2500])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("frac", "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"frac: input must be a floating point tensor, got {input.dtype.name}")
    return input - Trunc.apply(input)


def _logit_reference(a, eps=None):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _logit_samples(rng):
    yield from unary(0.05, 0.95)(rng)
    yield Sample((values(rng, (6,), 0.001, 0.999),), {"eps": 0.01}, name="eps")


class Logit(Op):
    """log(p / (1 - p)) of p clamped as PyTorch clamps it: eps where p < eps, else 1 - eps
    where p > 1 - eps. d/dp = 1 / (p (1 - p)), 0 where clamped (and at NaN); without eps,
    NaN outside [0, 1], where the value is NaN, as PyTorch's gradient."""

    promotes, int_to_float = (0,), True   # integers and bools give the default float dtype

    @staticmethod
    def forward(ctx, a, eps=None):
        xp = ctx.xp
        ctx.save_for_backward(a)
        ctx.eps = eps
        p = a
        if eps is not None and eps <= 0.5:
            p = xp.clip(a, eps, 1 - eps)
        elif eps is not None:      # [eps, 1 - eps] is empty: every number is clamped, NaN stays
            p = xp.where(a < eps, xp.full_like(a, eps), xp.where(a >= eps, xp.full_like(a, 1 - eps), a))
        return xp.log(p / (1 - p))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        xp, eps = ctx.xp, ctx.eps
        slope = grad / (a * (1 - a))
        if eps is None:
            return xp.where((a < 0) | (a > 1), xp.full_like(a, math.nan), slope)
        return xp.where((a >= eps) & (a <= 1 - eps), slope, xp.zeros_like(a))


@register(_logit_reference, _logit_samples)
def logit(input, eps=None):
    """Elementwise log-odds, the inverse of the sigmoid: log(p / (1 - p)), with p clamped
    to [eps, 1 - eps] when ``eps`` is given. d/dp = 1 / (p (1 - p)) (0 where clamped).
    Integers and bools are taken in the default float dtype, as PyTorch: logit(True) is inf.

    Example::

        vizgrad.tensor([0.25, 0.5]).logit()      # tensor([-1.0986,  0.0000])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("logit", "input", input)
    if eps is not None:
        eps = as_number("logit", "eps", eps)
    return Logit.apply(input, eps=eps)


def _nan_to_num_reference(a, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_samples(rng):
    special = values(rng, (3, 4))
    special.flat[[0, 5, 7]] = [np.nan, np.inf, -np.inf]
    yield Sample((values(rng, (3, 4)),), name="finite")
    yield Sample((special,), name="nan and infinities")
    yield Sample((special,), {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}, name="given values")


@register(_nan_to_num_reference, _nan_to_num_samples, smooth=False)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace NaN with ``nan`` and infinities with ``posinf`` / ``neginf`` (by default
    the dtype's largest and smallest finite values). The gradient passes through the
    values kept and is zero at those replaced.

    Example::

        vizgrad.nan_to_num(vizgrad.tensor([float("nan"), 1.0, float("inf")]))
        # tensor([0.0000e+00, 1.0000e+00, 3.4028e+38])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("nan_to_num", "input", input)
    nan = as_number("nan_to_num", "nan", nan)
    if not input.is_floating_point():
        return input.clone()
    largest = finfo(input.dtype).max
    posinf = largest if posinf is None else as_number("nan_to_num", "posinf", posinf)
    neginf = -largest if neginf is None else as_number("nan_to_num", "neginf", neginf)
    infinite = input.isinf()
    filled = input.masked_fill(input.isnan(), nan)
    filled = filled.masked_fill(infinite & (input > 0), posinf)
    return filled.masked_fill(infinite & (input < 0), neginf)


@register(np.sign, unary(away_from=0.0))
def sgn(input):
    """Elementwise ``input / |input|`` (0 at 0 and at NaN): for real tensors :func:`sign`
    (bools stay bools). Its gradient is zero.

    Example::

        vizgrad.sgn(vizgrad.tensor([-2.0, 0.0, 3.0]))   # tensor([-1.,  0.,  1.])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("sgn", "input", input)
    return sign(input)


@register(lambda x: x, unary())
def positive(input):
    """``+input``: the input itself (PyTorch refuses bool tensors).

    Example::

        x = vizgrad.tensor([1.0, -2.0])
        vizgrad.positive(x) is x      # True
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("positive", "input", input)
    if input.dtype is bool_:
        raise DTypeError("positive: the `+` operator, on a bool tensor is not supported")
    return input


# --- renorm --------------------------------------------------------------------------------

def _renorm_reference(x, p, dim, maxnorm):
    axes = tuple(axis for axis in range(x.ndim) if axis != dim % x.ndim)
    norms = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def _renorm_samples(rng):
    yield Sample((values(rng, (3, 4)), 2, 0, 1.0), name="p=2 dim=0")
    yield Sample((values(rng, (2, 3, 4)), 1, 1, 2.5), name="p=1 dim=1")
    yield Sample((values(rng, (3, 5)), 3, -1, 0.8), name="p=3 dim=-1")


@register(_renorm_reference, _renorm_samples)
def renorm(input, p, dim, maxnorm):
    """Each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` scaled down
    to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``); the others unchanged. The gradient
    flows through the norms too.

    Example::

        vizgrad.renorm(vizgrad.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        # tensor([[0.6000, 0.8000], [0.3000, 0.4000]])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("renorm", "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"renorm: input must be a floating point tensor, got {input.dtype.name}")
    p, maxnorm = as_number("renorm", "p", p), as_number("renorm", "maxnorm", maxnorm)
    if p <= 0:
        raise ArgumentError(f"renorm: non-positive norm not supported, got p={p}")
    if maxnorm < 0:
        raise ArgumentError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() < 2:
        raise ArgumentError(f"renorm: input needs at least 2 dimensions, got {input.dim()}")
    dim = check_dim("renorm", dim, input.dim())
    axes = tuple(axis for axis in range(input.dim()) if axis != dim)
    size = input.abs()
    norms = size.amax(dim=axes, keepdim=True) if p == math.inf else (size ** p).sum(dim=axes, keepdim=True) ** (1 / p)
    from .binary import where
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    return input * factor
