"""The regularised incomplete gamma functions and the reparameterised gamma sample: one kernel
gives P(a, x), Q(a, x) = 1 - P(a, x) and the derivative in ``a`` that both need.

P(a, x) = γ(a, x) / Γ(a) is the Gamma(a, 1) distribution's CDF; p(x) = x^(a-1) e^(-x) / Γ(a) its
density. The kernel sums, per element, the series of P/p where x < a + 1 and the continued
fraction of Q/p elsewhere, each with its derivative in ``a``:

* series: P/p = Σₙ rₙ with r₀ = x/a, rₙ₊₁ = rₙ x/(a + n + 1); each term of P is
  rₙ·p = x^(a+n) e^(-x) / Γ(a+n+1), whose a-derivative is itself times log x - ψ(a+n+1), and
  ψ(a+n+1) = ψ(a+1) + Hₙ with Hₙ = Σₖ₌₁..ₙ 1/(a+k). So -(∂P/∂a)/p = Σ rₙ Hₙ - (log x - ψ(a+1)) Σ rₙ.
* continued fraction: Γ(a, x) = e^(-x) x^a F with F = 1/(b₀ + a₁/(b₁ + a₂/(b₂ + ...))),
  bₖ = x + 2k + 1 - a, aₖ = k(a - k); its convergents Pₖ/Qₖ follow the three-term recurrence,
  and so do their a-derivatives (the product rule on it). Q/p = x F and
  -(∂P/∂a)/p = (∂Q/∂a)/p = x (F (log x - ψ(a)) + ∂F/∂a).

A Gamma(α, 1) sample z keeps its quantile u = P(α, z) fixed as α moves, so
dz/dα = -(∂P/∂α)/p(z): the implicit reparameterisation gradient, the same quantity. Both sums
need about 9√a terms near x ≈ a (fewer elsewhere): for large a (past 1e5 in double precision,
100 in single) Temme's uniform asymptotic expansion gives P and Q, and the fixed-quantile
derivative of its leading term dz/dα. Everything is written with ``ctx.xp``, so the
backward records its own graph under ``create_graph=True``.
"""

import math

import numpy as np

from ..autograd.function import Op
from ..dtypes import finfo
from ..errors import DTypeError, not_a_tensor
from ..tensor import Tensor
from .registry import Sample, register
from .samples import values
from .special_functions import _scipy_special


def _eps(ctx, array):
    """The relative precision the sums stop at: the machine epsilon of ``array``'s dtype."""
    return float(finfo(ctx.backend.dtype_name(array)).eps)


def _ones(xp, a, x):
    """Ones of a and x's broadcast shape."""
    return xp.ones_like(a) * xp.ones_like(x)


def _safe(xp, a, x):
    """``(valid, a, x)``: where 0 < a, x < ∞; elsewhere a = x = 1 (sums that converge at once),
    the answer there being set by the caller."""
    valid = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    ones = _ones(xp, a, x)
    return valid, xp.where(valid, a * ones, ones), xp.where(valid, x * ones, ones)


def _limit(xp, a):
    """An iteration cap comfortably above what the sums need (about 9√a near x ≈ a)."""
    return 64 + int(16 * math.sqrt(float(xp.max(a)))) if math.prod(a.shape) else 0


def _series(xp, a, x, eps, derivative):
    """``(Σ rₙ, Σ rₙ Hₙ)``: P/p and the sum behind its a-derivative, for x < a + 1."""
    term = x / a
    total, weighted, harmonic = term, term * 0, term * 0
    for n in range(1, _limit(xp, a)):
        term = term * x / (a + n)
        total = total + term
        if derivative:
            harmonic = harmonic + 1 / (a + n)
            weighted = weighted + term * harmonic
        change = term / total if not derivative else term * (1 + harmonic) / (total + weighted)
        if float(xp.max(change)) <= eps:
            break
    return total, weighted


def _continued_fraction(xp, a, x, eps, derivative):
    """``(F, ∂F/∂a)``, Γ(a, x) = e^(-x) x^a F, for x ≥ a + 1: the convergents Pₖ/Qₖ of
    b₀ + a₁/(b₁ + ...) and their a-derivatives by the three-term recurrence, rescaled at each
    step by Pₖ (a common factor leaves every ratio, and the derivative formula, unchanged)."""
    one = xp.ones_like(x)
    p_before, p_now, q_before, q_now = one, x + 1 - a, one * 0, one
    dp_before, dp_now, dq_before, dq_now = one * 0, -one, one * 0, one * 0
    fraction, slope = q_now / p_now, dq_now * 0
    for k in range(1, _limit(xp, a)):
        numerator, denominator = k * (a - k), x + (2 * k + 1) - a
        p_next = denominator * p_now + numerator * p_before
        q_next = denominator * q_now + numerator * q_before
        if derivative:   # d(numerator)/da = k, d(denominator)/da = -1
            dp_next = denominator * dp_now - p_now + numerator * dp_before + k * p_before
            dq_next = denominator * dq_now - q_now + numerator * dq_before + k * q_before
            dp_before, dp_now = dp_now / p_next, dp_next / p_next
            dq_before, dq_now = dq_now / p_next, dq_next / p_next
        p_before, q_before, q_now = p_now / p_next, q_now / p_next, q_next / p_next
        p_now = one
        previous, previous_slope = fraction, slope
        fraction = q_now
        change = xp.abs(fraction - previous) / fraction
        if derivative:
            slope = dq_now - q_now * dp_now          # (dQ P - Q dP) / P², with P = 1
            change = xp.maximum(change, xp.abs(slope - previous_slope) / (xp.abs(slope) + fraction))
        if float(xp.max(change)) <= eps:
            break
    return fraction, slope


def _log_density(xp, a, x):
    """log p(x) = (a - 1) log x - x - log Γ(a)."""
    return (a - 1) * xp.log(x) - x - xp.lgamma(a)


# Above this a the sums would need thousands of terms (about 9√a): Temme's uniform asymptotic
# expansion takes over there (DLMF 8.12), its first omitted term below 1e-15 of P or Q.
_LARGE_A = 1e5


def _large_a(eps):
    """``(expansion, stirling)``: the a past which P and Q come from the expansion, and past which
    p(x) comes from Stirling's series (:func:`_density`). Both 1e5 in double precision; in single
    100 and 10, where each is already exact to float32 and log p(x) = (a - 1) log x - x - log Γ(a)
    would lose digits to cancellation."""
    return (_LARGE_A, _LARGE_A) if eps < 1e-10 else (100.0, 10.0)

# The Taylor coefficients at η = 0 of the expansion's c₀(η) = 1/(λ-1) - 1/η and
# c₁(η) = 1/η³ - 1/(λ-1)³ - 1/(λ-1)² - 1/(12(λ-1)) (DLMF 8.12.8), where the closed forms cancel.
_C0 = (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -1.7875514403292181e-4, 3.9192631785224378e-5,
       -2.1854485106799922e-6, -1.85406221071516e-6, 8.296711340953086e-7, -1.7665952736826079e-7)
_C1 = (-1 / 540, -1 / 288, 1 / 378, -9.9022633744855967e-4, 2.0576131687242798e-4,
       -4.0187757201646091e-7, -1.8098550334489978e-5, 7.6491609160811101e-6, -1.6120900894563446e-6)


def _polynomial(coefficients, t):
    """Σ coefficients[k] tᵏ by Horner's rule."""
    total = t * 0 + coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        total = total * t + coefficient
    return total


def _temme_variables(xp, a, x):
    """``(μ, h, η)`` with λ = x/a: μ = λ - 1, h = λ - 1 - log λ (its series where μ is small,
    no cancellation) and η = sign(μ) √(2h)."""
    mu = (x - a) / a
    small = xp.abs(mu) < 0.1
    m = xp.where(small, mu, mu * 0)
    series, power = mu * 0, m * m
    for k in range(2, 22):                           # Σₖ (-μ)ᵏ / k, to below 1e-22 for |μ| < 0.1
        series = series + power * ((-1) ** k / k)
        power = power * m
    h = xp.where(small, series, mu - (xp.log(x) - xp.log(a)))
    return mu, h, xp.sign(mu) * xp.sqrt(2 * h)


def _gaussian(xp, a, h):
    """e^(-a h), h ≥ 0, without overflowing a h (past 1000 it is 0 in every dtype)."""
    return xp.exp(-xp.minimum(h, 1000 / a) * a)


def _temme(xp, a, x):
    """``(P, Q)`` for large a: Q = ½ erfc(η √(a/2)) + e^(-a η²/2) / √(2πa) · (c₀(η) + c₁(η)/a)."""
    mu, h, eta = _temme_variables(xp, a, x)
    near = xp.abs(eta) < 0.3
    e, m = xp.where(near, eta * 0 + 1, eta), xp.where(near, mu * 0 + 1, mu)      # stand-ins near 0
    c0 = xp.where(near, _polynomial(_C0, eta), 1 / m - 1 / e)
    c1 = xp.where(near, _polynomial(_C1, eta), 1 / e**3 - 1 / m**3 - 1 / m**2 - 1 / (12 * m))
    remainder = _gaussian(xp, a, h) / (math.sqrt(2 * math.pi) * xp.sqrt(a)) * (c0 + c1 / a)
    z = eta * xp.sqrt(a / 2)
    return 0.5 * xp.erfc(-z) - remainder, 0.5 * xp.erfc(z) + remainder


def _temme_slope(xp, a, x):
    """-(∂P/∂a)/p for large a: λ (1 - h/μ) (1 + 1/(6a)), to O(1/a²) (the fixed-quantile
    derivative of the expansion's leading term, η √a held fixed, with its first correction)."""
    mu, h, _ = _temme_variables(xp, a, x)
    at_mean = mu == 0
    ratio = xp.where(at_mean, mu * 0, h / xp.where(at_mean, mu * 0 + 1, mu))
    return (1 + mu) * (1 - ratio) * (1 + 1 / a / 6)


# Stirling's series Γ*(a) = Γ(a) / (√(2π/a) aᵃ e⁻ᵃ) = Σ gₖ a⁻ᵏ
_STIRLING = (1, 1 / 12, 1 / 288, -139 / 51840, -571 / 2488320)


def _density(xp, a, x, large):
    """p(x); where a is ``large`` by Stirling's series, p = √(a/2π) e^(-a h) / (x Γ*(a))
    (log Γ(a) alone would cancel against a log x)."""
    _, h, _ = _temme_variables(xp, a, x)
    stirling = xp.sqrt(a) / math.sqrt(2 * math.pi) * _gaussian(xp, a, h) / (x * _polynomial(_STIRLING, 1 / a))
    one = a * 0 + 1
    return xp.where(large, stirling, xp.exp(_log_density(xp, xp.where(large, one, a), xp.where(large, one, x))))


def _regions(xp, a, x, large_a):
    """``(valid, large, a, x, a_sums, lower, x_series, x_fraction)``: :func:`_safe`'s, where a
    exceeds ``large_a`` (the asymptotic expansion), the a the sums run on (1 where a is large),
    where the series applies (x < a + 1), and the x each sum runs on (stand-ins where the other
    one applies, and where a is large)."""
    valid, a_safe, x_safe = _safe(xp, a, x)
    large = a_safe > large_a
    a_sums, x_sums = xp.where(large, a_safe * 0 + 1, a_safe), xp.where(large, x_safe * 0 + 1, x_safe)
    lower = x_sums < a_sums + 1
    x_series = xp.where(lower, x_sums, a_sums * 0.5)
    x_fraction = xp.where(lower, a_sums * 2 + 2, x_sums)
    return valid, large, a_safe, x_safe, a_sums, lower, x_series, x_fraction


def regularized_gamma(xp, a, x, eps):
    """``(P(a, x), Q(a, x))`` elementwise, with PyTorch's values where 0 < a, x < ∞ fails."""
    expansion, stirling = _large_a(eps)
    valid, large, a_safe, x_safe, a_sums, lower, x_series, x_fraction = _regions(xp, a, x, expansion)
    series, _ = _series(xp, a_sums, x_series, eps, False)
    fraction, _ = _continued_fraction(xp, a_sums, x_fraction, eps, False)
    density = _density(xp, a_sums, xp.where(large, a_sums, x_safe), a_sums > stirling)
    p_large, q_large = _temme(xp, xp.where(large, a_safe, a_safe * 0 + _LARGE_A), x_safe)
    p = xp.where(large, p_large, xp.where(lower, series * density, 1 - x_fraction * fraction * density))
    q = xp.where(large, q_large, xp.where(lower, 1 - series * density, x_fraction * fraction * density))
    # the edges: P(a, 0) = 0, P(a, ∞) = 1, P(0, x > 0) = 1, P(∞, x < ∞) = 0; NaN for a < 0, x < 0
    zero, one, nan = xp.zeros_like(p), xp.ones_like(p), xp.full_like(p, math.nan)
    edge = xp.where((a > 0) & (x == 0), zero, nan)
    edge = xp.where((a > 0) & (x == math.inf) & (a < math.inf), one, edge)
    edge = xp.where((a == 0) & (x > 0), one, edge)
    edge = xp.where((a == math.inf) & (x >= 0) & (x < math.inf), zero, edge)
    edge_q = xp.where(xp.isnan(edge), edge, 1 - edge)
    return xp.where(valid, p, edge), xp.where(valid, q, edge_q)


def gamma_slope(xp, a, x, eps):
    """-(∂P(a, x)/∂a) / p(x): the derivative of a Gamma(a, 1) sample x in a at a fixed quantile
    (0 where x = 0, NaN outside the domain)."""
    valid, large, a_safe, x_safe, a_sums, lower, x_series, x_fraction = _regions(xp, a, x, _LARGE_A)
    total, weighted = _series(xp, a_sums, x_series, eps, True)
    from_series = weighted - (xp.log(x_series) - xp.digamma(a_sums + 1)) * total
    fraction, slope = _continued_fraction(xp, a_sums, x_fraction, eps, True)
    from_fraction = x_fraction * (fraction * (xp.log(x_fraction) - xp.digamma(a_sums)) + slope)
    from_expansion = _temme_slope(xp, xp.where(large, a_safe, a_safe * 0 + _LARGE_A), x_safe)
    result = xp.where(large, from_expansion, xp.where(lower, from_series, from_fraction))
    edge = xp.where((a > 0) & (x == 0), xp.zeros_like(result), xp.full_like(result, math.nan))
    return xp.where(valid, result, edge)


class Igamma(Op):
    """P(a, x), the regularised lower incomplete gamma function.
    ∂P/∂x = p(x) = x^(a-1) e^(-x) / Γ(a);  ∂P/∂a = -p(x) · gamma_slope(a, x)."""

    broadcasts = True
    promotes = (0, 1)
    upper = False

    @classmethod
    def forward(cls, ctx, a, x):
        ctx.eps = _eps(ctx, a)
        ctx.save_for_backward(a, x)
        lower, upper = regularized_gamma(ctx.xp, a, x, ctx.eps)
        return upper if cls.upper else lower

    @classmethod
    def backward(cls, ctx, grad):
        a, x = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_x = ctx.needs_input_grad
        ones = _ones(xp, a, x)
        valid, a_safe, x_safe = _safe(xp, a, x)
        density = _density(xp, a_safe, x_safe, a_safe > _large_a(ctx.eps)[1])
        at_zero = (x == 0) & (a > 0)          # P(a, 0) = 0 for every a: its x-slope is p(0), its a-slope 0
        undefined = ones * math.nan
        sign = -1 if cls.upper else 1
        grad_a = grad_x = None
        if needs_a:
            slope = xp.where(valid, density * gamma_slope(xp, a_safe, x_safe, ctx.eps),
                             xp.where(at_zero, ones * 0, undefined))
            grad_a = grad * (-sign) * slope
        if needs_x:
            density_at_zero = xp.where(a == 1, ones, xp.where(a < 1, ones * math.inf, ones * 0))
            flat = ((a == 0) & (x > 0)) | ((x == math.inf) & (a > 0))     # P ≡ 1 there
            edges = xp.where(at_zero, density_at_zero, xp.where(flat, ones * 0, undefined))
            grad_x = grad * sign * xp.where(valid, density, edges)
        return grad_a, grad_x


class Igammac(Igamma):
    """Q(a, x) = 1 - P(a, x), the regularised upper incomplete gamma function, accurate where
    it is tiny (far in the right tail)."""

    upper = True


def _check(name, input, other):
    for argument, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise not_a_tensor(name, argument, value)
    if not (input.is_floating_point() or other.is_floating_point()):
        raise DTypeError(f"{name}: not implemented for {input.dtype.name} and {other.dtype.name} inputs: "
                         "pass floating-point tensors")


def _gamma_samples(rng):
    # small: gradgradcheck differentiates the sums' loops, recorded op by op
    a, x = np.array([0.7, 2.5, 3.0, 1.2]), np.array([0.3, 1.5, 6.5, 4.0])      # series, series, fraction, fraction
    yield Sample((a + values(rng, (4,), 0.0, 0.1), x + values(rng, (4,), 0.0, 0.1)), name="both regions")
    yield Sample((values(rng, (2, 1), 0.5, 4.0), values(rng, (3,), 0.2, 7.0)), name="broadcast")
    yield Sample((values(rng, (), 0.5, 4.0), values(rng, (), 0.2, 7.0)), name="0-d")


@register(_scipy_special("gammainc"), _gamma_samples)
def igamma(input, other):
    """The regularised lower incomplete gamma function ``P(a, x) = γ(a, x) / Γ(a)``, elementwise
    for ``a = input > 0`` and ``x = other ≥ 0`` (``torch.special.gammainc``): the CDF of
    Gamma(a, 1) at x. ∂P/∂x = x^(a-1) e^(-x) / Γ(a); ∂P/∂a too (PyTorch has no gradient in a).

    Example::

        vizgrad.igamma(vizgrad.tensor([1.0, 2.0]), vizgrad.tensor([1.0, 2.0]))   # tensor([0.6321, 0.5940])
    """
    _check("igamma", input, other)
    return Igamma.apply(input, other)


@register(_scipy_special("gammaincc"), _gamma_samples)
def igammac(input, other):
    """The regularised upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, elementwise
    (``torch.special.gammaincc``), accurate where it is tiny.

    Example::

        vizgrad.igammac(vizgrad.tensor([1.0]), vizgrad.tensor([30.0]))   # tensor([9.3576e-14])
    """
    _check("igammac", input, other)
    return Igammac.apply(input, other)


class StandardGamma(Op):
    """A Gamma(α, 1) sample drawn by the caller, returned with its reparameterisation gradient
    dz/dα = -(∂P(α, z)/∂α) / p(z) (the quantile u = P(α, z) held fixed: implicit
    reparameterisation). Saving the output keeps second derivatives right."""

    @staticmethod
    def forward(ctx, concentration, sample):
        ctx.eps = _eps(ctx, concentration)
        out = sample * 1                  # a new array: saved as this op's output
        ctx.save_for_backward(concentration, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        concentration, sample = ctx.saved_tensors
        return grad * gamma_slope(ctx.xp, concentration, sample, ctx.eps), None


def standard_gamma(concentration, sample):
    """``sample`` (Gamma(concentration, 1) draws of the same shape) made differentiable in
    ``concentration`` by implicit reparameterisation (see :class:`StandardGamma`)."""
    return StandardGamma.apply(concentration, sample)
