"""``GeneralizedPareto(loc, scale, concentration)``: the law of threshold excesses in extreme value theory."""

import math

from .. import creation
from ..ops import binary
from . import constraints
from .distribution import Distribution, broadcast_all


class GeneralizedPareto(Distribution):
    """The generalised Pareto distribution of ``loc`` μ, ``scale`` σ and ``concentration`` ξ,
    on [μ, ∞) (ξ ≥ 0) or [μ, μ - σ/ξ] (ξ < 0); ξ = 0 is the exponential.

    With z = (x - μ)/σ: log p(x) = -log σ - (1/ξ + 1) log(1 + ξz) (-log σ - z at ξ = 0);
    survival (1 + ξz)^(-1/ξ) (e⁻ᶻ);  mean μ + σ/(1 - ξ) (ξ < 1), variance σ²/((1 - ξ)²(1 - 2ξ))
    (ξ < ½), NaN beyond;  mode μ;  H = log σ + ξ + 1. ``rsample`` is the inverse CDF of a uniform.

    Example::

        GeneralizedPareto(0.0, 1.0, 0.0).log_prob(vizgrad.tensor(1.0))     # tensor(-1.): Exponential(1)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(
            "GeneralizedPareto", loc=loc, scale=scale, concentration=concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def _safe_concentration(self):
        """Where ξ ≈ 0 (|ξ| ≤ 1e-8, PyTorch's isclose), and ξ with those entries replaced by 1."""
        zero = self.concentration.abs() <= 1e-8
        return zero, binary.where(zero, 1.0, self.concentration)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = binary.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(creation.rand(*shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe_concentration()
        power = 1 / xi + 1
        nonzero = binary.where(power == 0, power, power * (xi * z).log1p())
        return -self.scale.log() - binary.where(zero, z, nonzero)

    def log_survival_function(self, value):
        self._validate_sample(value, "log_survival_function")
        z = (value - self.loc) / self.scale
        zero, xi = self._safe_concentration()
        return binary.where(zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, xi = self._safe_concentration()
        log_survival = (-value).log1p()
        nonzero = self.loc + self.scale / xi * (-xi * log_survival).expm1()
        return binary.where(zero, self.loc - self.scale * log_survival, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = binary.where(valid, self.concentration, 0.5)
        return binary.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = binary.where(valid, self.concentration, 0.25)
        return binary.where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)
