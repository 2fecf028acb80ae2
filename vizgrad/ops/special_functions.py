"""Elementwise special functions of one tensor: the error functions (erf, erfc, erfinv), the
gamma family (lgamma, digamma, polygamma, mvlgamma), the Bessel function i0, and frexp.

Their references are SciPy's special functions where NumPy has none (see ``_scipy_special``).
"""

import math

import numpy as np

from ..autograd.function import Op
from ..dtypes import bool_
from ..errors import ArgumentError, DTypeError, DTypeNotImplementedError, as_int, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import unary, values


def _erf_reference(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x) if np.ndim(x) else np.asarray(math.erf(x))


class Erf(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.erf(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * (2 / math.sqrt(math.pi)) * ctx.xp.exp(-(a * a))


@register(_erf_reference, unary())
def erf(input):
    """Elementwise error function ``2/√π ∫₀ˣ e^(-t²) dt``.  d erf(x)/dx = 2/√π · e^(-x²)."""
    return Erf.apply(input)


class Erfc(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.erfc(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * (-2 / math.sqrt(math.pi)) * ctx.xp.exp(-(a * a))


def _erfc_reference(x):
    return np.vectorize(math.erfc, otypes=[np.float64])(x) if np.ndim(x) else np.asarray(math.erfc(x))


@register(_erfc_reference, unary(-3.0, 3.0))
def erfc(input):
    """Elementwise complementary error function ``1 - erf(input)``, accurate where it is tiny
    (``erfc(10)`` is about 2e-45, where 1 - erf(10) is 0).  d erfc(x)/dx = -2/√π · e^(-x²).

    Example::

        vizgrad.erfc(vizgrad.tensor([0.0, 1.0]))   # tensor([1.0000, 0.1573])
    """
    return Erfc.apply(input)


def _scipy_special(name):
    """A SciPy special function, the reference of the registry's tests (SciPy comes with
    scikit-learn, a test dependency; vizgrad itself never imports it)."""
    def reference(*args):
        import scipy.special
        return getattr(scipy.special, name)(*args)
    return reference


class Erfinv(Op):
    """erf⁻¹(x): Winitzki's closed form (within 2e-3) refined by Halley's method on erf(y) = x
    (on erfc(y) = 1 - |x| for |x| > ½, where 1 - |x| is exact); dy/dx = √π/2 · e^(y²)."""

    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        size = xp.abs(a)
        inside = size < 1                                           # (False at NaN)
        size = xp.where(inside, size, xp.zeros_like(size))          # ±1, beyond and NaN are set at the end
        log_room = xp.log1p(-size) + xp.log1p(size)                 # log(1 - x²), exact near |x| = 1
        shift = 2 / (math.pi * 0.147) + log_room / 2
        y = xp.sqrt(xp.sqrt(shift * shift - log_room / 0.147) - shift)
        y = xp.where(size < 1e-3, size * (math.sqrt(math.pi) / 2), y)   # the closed form cancels there
        for _ in range(3):
            residual = xp.where(size > 0.5, (1 - size) - xp.erfc(y), xp.erf(y) - size)
            step = residual / ((2 / math.sqrt(math.pi)) * xp.exp(-(y * y)))
            y = y - step / (1 + y * step)
        y = xp.where(inside, y, xp.where(xp.abs(a) == 1, xp.full_like(y, math.inf), xp.full_like(y, math.nan)))
        out = xp.copysign(y, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * (math.sqrt(math.pi) / 2) * ctx.xp.exp(y * y)


@register(_scipy_special("erfinv"), unary(-0.95, 0.95))
def erfinv(input):
    """Elementwise inverse error function: ``erfinv(erf(y)) = y`` for ``input`` in (-1, 1)
    (±inf at ±1, NaN beyond).  d erfinv(x)/dx = √π/2 · e^(erfinv(x)²).

    Example::

        vizgrad.erfinv(vizgrad.tensor([0.0, 0.5]))   # tensor([0.0000, 0.4769])
    """
    return Erfinv.apply(input)


class Lgamma(Op):
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.lgamma(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.xp.digamma(a)


def _trigamma(xp, a):
    """ψ⁽¹⁾(a) as PyTorch computes it (its ``calc_trigamma``), in a's dtype: below 1/2 the
    reflection ψ⁽¹⁾(x) = π²/sin²(πx) - ψ⁽¹⁾(1 - x) with sin(πx) rounded as it is, then six steps
    of ψ⁽¹⁾(x) = 1/x² + ψ⁽¹⁾(x + 1) and the asymptotic series 1/x + 1/(2x²) + 1/(6x³) - ... So the
    values are PyTorch's where rounding decides them: inf at 0, but a large finite number at
    the negative integers (sin(πx) is not exactly 0 there: 6.58e32 at -1 in float64), and
    float32's rounding of πx far from 0."""
    reflect = a < 0.5
    sine = xp.sin(math.pi * a)
    pi_squared = xp.full_like(a, math.pi) ** 2                 # (π rounded to a's dtype, squared there)
    x = xp.where(reflect, 1 - a, a)
    result = xp.where(reflect, -pi_squared / (sine * sine), xp.zeros_like(a))
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    inverse_square = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + inverse_square * (1 / 6 - inverse_square * (1 / 30 - inverse_square / 42))) / x
    return xp.where(reflect, -result, result)


def _polygamma(xp, n, a):
    """ψ⁽ⁿ⁾(a) with PyTorch's values: trigamma by its formula (:func:`_trigamma`); for n ≥ 2 (its
    Hurwitz zeta) NaN at inf and (-1)ⁿ⁺¹ inf at -inf; digamma agrees there already. On Tensors
    (a backward recording its graph) the ops themselves, whose derivatives are the next ψ."""
    if n == 0:
        return xp.digamma(a)
    if n == 1:
        return xp.polygamma(1, a) if isinstance(a, Tensor) else _trigamma(xp, a)
    out = xp.polygamma(n, a)
    out = xp.where(a == math.inf, xp.full_like(out, math.nan), out)
    return xp.where(a == -math.inf, xp.full_like(out, (-1) ** (n + 1) * math.inf), out)


class Polygamma(Op):
    """ψ⁽ⁿ⁾(x) (n = 0: digamma); d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x)."""
    promotes, int_to_float = (0,), True   # integers give the default float dtype

    @staticmethod
    def forward(ctx, a, n):
        ctx.n = n
        ctx.save_for_backward(a)
        return _polygamma(ctx.xp, n, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * _polygamma(ctx.xp, ctx.n + 1, a)


def _gamma_samples(rng):
    yield from unary(0.2, 6.0)(rng)
    # below 0: between the poles at the negative integers, at least 0.2 from each
    between = np.floor(values(rng, (3, 4), -3.0, 0.0)) + values(rng, (3, 4), 0.2, 0.8)
    yield Sample((between,), name="negative, between poles")


@register(_scipy_special("gammaln"), _gamma_samples)
def lgamma(input):
    """Elementwise ``log |Γ(input)|`` (inf at 0 and the negative integers).  d/dx = ψ(x), the digamma function.

    Example::

        vizgrad.lgamma(vizgrad.tensor([1.0, 3.0, 0.5]))   # tensor([0.0000, 0.6931, 0.5724])
    """
    return Lgamma.apply(input)


@register(_scipy_special("digamma"), _gamma_samples)
def digamma(input):
    """Elementwise digamma function ``ψ(x) = d/dx log Γ(x)`` (-inf at 0, NaN at the negative
    integers).  dψ/dx = ψ⁽¹⁾(x), ``polygamma(1, x)``.

    Example::

        vizgrad.digamma(vizgrad.tensor([1.0, 2.0]))   # tensor([-0.5772,  0.4228])
    """
    return Polygamma.apply(input, n=0)


def _polygamma_samples(rng):
    for n in (1, 2, 3):
        for sample in _gamma_samples(rng):
            yield Sample((n, *sample.args), name=f"n={n}, {sample.name}")


@register(_scipy_special("polygamma"), _polygamma_samples, method=False)
def polygamma(n, input):
    """The ``n``-th derivative of the digamma function, ``ψ⁽ⁿ⁾(input)``, elementwise
    (n = 0 is digamma).  d/dx ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x).

    Example::

        vizgrad.polygamma(1, vizgrad.tensor([1.0]))   # tensor([1.6449]), π²/6
    """
    n = as_int("polygamma", "n", n)
    if n < 0:
        raise ArgumentError(f"polygamma: n must be a non-negative integer, got {n}")
    if not isinstance(input, Tensor):
        raise not_a_tensor("polygamma", "input", input)
    return Polygamma.apply(input, n=n)


_BESSEL_SERIES_UP_TO = 20.0   # |x| at most this: the power series (36 terms reach 1e-17 relative)


def _bessel_i(xp, a, order):
    """The modified Bessel function I₀ (``order`` 0) or I₁ (1) of ``a``, from xp operations
    alone (so that, run on Tensors, it records its own derivatives): the power series
    Σ (x/2)^(2k+n) / (k! (k+n)!) for |x| ≤ 20, and beyond the asymptotic expansion
    eˣ/√(2πx) Σ (-1)^k c_k(n) / x^k, c_k(n) = Π_{j≤k} (4n² - (2j-1)²) / (k! 8^k)."""
    size = xp.abs(a)
    near = size <= _BESSEL_SERIES_UP_TO
    x = xp.where(near, a, xp.zeros_like(a))                     # each branch sees safe inputs only
    quarter_square = x * x / 4
    term = xp.ones_like(x) if order == 0 else x / 2
    series = term
    for k in range(1, 37):
        term = term * quarter_square / (k * (k + order))
        series = series + term
    far = xp.where(near, xp.full_like(size, 2 * _BESSEL_SERIES_UP_TO), size)
    term, expansion = xp.ones_like(far), xp.ones_like(far)
    for k in range(1, 31):
        term = term * -(4 * order * order - (2 * k - 1) ** 2) / (8 * k * far)
        expansion = expansion + term
    asymptotic = xp.exp(far - xp.log(far * (2 * math.pi)) / 2) * expansion
    if order == 1:
        asymptotic = xp.where(a < 0, -asymptotic, asymptotic)
    return xp.where(near, series, asymptotic)


class I0(Op):
    """I₀(x); d I₀/dx = I₁(x), computed from xp operations (so second derivatives follow)."""

    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _bessel_i(ctx.xp, a, 0)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * _bessel_i(ctx.xp, a, 1)


@register(np.i0, unary(-25.0, 25.0), rtol=1e-12)
def i0(input):
    """The modified Bessel function of the first kind of order zero, elementwise:
    I₀(x) = Σ_k (x²/4)^k / (k!)².  d I₀/dx = I₁(x).

    Example::

        vizgrad.i0(vizgrad.tensor([0.0, 1.0]))   # tensor([1.0000, 1.2661])
    """
    return I0.apply(input)


class Frexp(Op):
    """Mantissa and exponent, x = m · 2^e with 0.5 ≤ |m| < 1 (m = x, e = 0 at 0, ±inf, NaN).
    ∂m/∂x = 2^-e (as PyTorch's; the exponent has no gradient)."""

    @staticmethod
    def forward(ctx, a):
        xp = ctx.xp
        size = xp.abs(a)
        regular = xp.isfinite(a) & (a != 0)
        safe = xp.where(regular, size, xp.ones_like(size))
        exponent = xp.floor(xp.log2(safe)) + 1
        mantissa = safe / xp.pow(xp.full_like(safe, 2.0), exponent)
        # log2 may round across a power of two: one doubling or halving puts m in [0.5, 1)
        low, high = mantissa < 0.5, mantissa >= 1
        mantissa = xp.where(low, mantissa * 2, xp.where(high, mantissa / 2, mantissa))
        exponent = xp.where(low, exponent - 1, xp.where(high, exponent + 1, exponent))
        mantissa = xp.where(regular, xp.copysign(mantissa, a), a)
        exponent = xp.where(regular, exponent, xp.zeros_like(exponent))
        ctx.save_for_backward(xp.pow(xp.full_like(safe, 0.5), exponent))       # a constant: 2^-e
        exponent = xp.astype(exponent, xp.int32)
        ctx.mark_non_differentiable(exponent)
        return mantissa, exponent

    @staticmethod
    def backward(ctx, grad_mantissa, grad_exponent):
        scale, = ctx.saved_tensors
        return grad_mantissa * scale


def _frexp_reference(x):
    mantissa, exponent = np.frexp(x)
    return mantissa, exponent.astype(np.int32)


def _frexp_samples(rng):     # (the special values, where no finite difference exists: tests/test_silently_wrong.py)
    yield from unary(-100.0, 100.0)(rng)


@register(_frexp_reference, _frexp_samples, smooth=False)
def frexp(input):
    """Decompose ``input`` into a mantissa and an exponent, ``input = mantissa · 2^exponent``
    with 0.5 ≤ |mantissa| < 1 (the exponent int32); floating point tensors only.

    Example::

        vizgrad.frexp(vizgrad.tensor([8.0, -0.75]))
        # vizgrad.return_types.frexp(mantissa=tensor([ 0.5000, -0.7500]), exponent=tensor([4, 0], dtype=vizgrad.int32))
    """
    from ..return_types import frexp as frexp_type
    if not isinstance(input, Tensor):
        raise not_a_tensor("frexp", "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"frexp: only supports floating-point dtypes, got {input.dtype.name}")
    return frexp_type(*Frexp.apply(input))


def _mvlgamma_reference(x, p):
    import scipy.special
    return scipy.special.multigammaln(x, p) if np.ndim(x) == 0 else np.vectorize(
        lambda v: scipy.special.multigammaln(v, p), otypes=[np.float64])(x)


def _mvlgamma_samples(rng):
    for p in (1, 2, 3):
        yield Sample((values(rng, (3, 4), 1.2, 5.0), p), name=f"p={p}")
    yield Sample((values(rng, (), 1.5, 4.0), 2), name="0-d")


@register(_mvlgamma_reference, _mvlgamma_samples)
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``, elementwise:
    log Γ_p(x) = p(p-1)/4 · log π + Σ_{i<p} log Γ(x - i/2). As in PyTorch (2.13), elements at or
    below (p-1)/2, outside its domain, are not refused: they give that sum (inf at the poles).
    d/dx = Σ_{i<p} ψ(x - i/2).

    Example::

        vizgrad.mvlgamma(vizgrad.tensor([2.5]), 2)   # tensor([0.8570])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("mvlgamma", "input", input)
    if input.dtype is bool_:
        raise DTypeNotImplementedError("mvlgamma: the input tensor may not be a boolean tensor (input has dtype "
                                       "bool)")
    p = as_int("mvlgamma", "p", p)
    if p < 1:
        raise ArgumentError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    total = lgamma(input)
    for i in range(1, p):
        total = total + lgamma(input - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)
