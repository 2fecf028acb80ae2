"""``VonMises(loc, concentration)``: the circular normal distribution of angles."""

import math

from .. import creation, dtypes
from ..autograd.grad_mode import no_grad
from ..ops import binary
from . import constraints
from .distribution import Distribution, broadcast_all, lazy_property

# Abramowitz & Stegun 9.8.1–9.8.4: I₀ and I₁ as polynomials in (x/3.75)² below 3.75 and, scaled by
# eˣ/√x, in 3.75/x above (relative error below 2e-7), the approximations PyTorch uses.
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633,
           0.00392377],
          [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654,
           -0.00420059])


def _polynomial(x, coefficients):
    """Σ cₖ xᵏ by Horner's rule."""
    result = x * 0 + coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        result = result * x + coefficient
    return result


def log_modified_bessel(x, order):
    """log Iₙ(x) for x > 0 and n = ``order`` 0 or 1 (differentiable in x)."""
    small = _polynomial((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, _LARGE[order]).log()
    return binary.where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    """The von Mises distribution of the angle ``loc`` μ (any real, read modulo 2π) and
    ``concentration`` κ > 0.

    log p(x) = κ cos(x - μ) - log 2π - log I₀(κ);  circular mean and mode μ, circular variance
    1 - I₁(κ)/I₀(κ). Samples lie in [-π, π), drawn in float64 by Best and Fisher's rejection
    sampler (1979) from vizgrad's generator; there is no rsample.

    Example::

        VonMises(vizgrad.tensor(0.0), vizgrad.tensor(4.0)).log_prob(vizgrad.tensor(0.0))   # tensor(-0.2628)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all("VonMises", loc=loc, concentration=concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def log_prob(self, value):
        self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - log_modified_bessel(self.concentration, 0))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        kappa = self.concentration
        return 1 - (log_modified_bessel(kappa, 1) - log_modified_bessel(kappa, 0)).exp()

    def sample(self, sample_shape=()):
        """Best–Fisher rejection: a wrapped-Cauchy proposal of parameter r, accepted per entry
        until every entry of ``sample_shape + batch_shape`` has a draw."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            loc, kappa = self.loc.double().expand(*shape), self.concentration.double().expand(*shape)
            tau = 1 + (1 + 4 * kappa ** 2).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
            r = binary.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))   # Taylor near κ = 0
            x = creation.zeros(*shape, dtype=dtypes.float64, device=loc.device)
            done = creation.zeros(*shape, dtype=dtypes.bool_, device=loc.device)
            while not bool(done.all()):
                u1, u2, u3 = creation.rand(3, *shape, dtype=dtypes.float64, device=loc.device).unbind(0)
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = binary.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)
