"""``Cauchy(loc, scale)``: the Lorentzian, heavy-tailed (no mean), with a reparameterised sampler."""

import math

from .. import creation
from .distribution import LocationScale


class Cauchy(LocationScale):
    """The Cauchy distribution of location μ and scale γ: the ratio of two standard normals,
    shifted and scaled.

    log p(x) = -log π - log γ - log(1 + z²), z = (x - μ)/γ;  CDF ½ + atan(z)/π, so
    ``icdf`` = μ + γ tan(π(p - ½)) and ``rsample`` applies it to u ~ U(0, 1);  H = log 4πγ.
    The mean is undefined (NaN) and the variance infinite; the mode is μ.

    Example::

        Cauchy(0.0, 1.0).cdf(vizgrad.tensor(1.0))   # tensor(0.7500)
    """

    @property
    def mean(self):
        return self.loc * math.nan

    @property
    def variance(self):
        return creation.full_like(self.loc, math.inf)

    def rsample(self, sample_shape=()):
        """μ + γ tan(π(u - ½)), u ~ U(0, 1) of shape ``sample_shape + batch_shape``."""
        uniform = creation.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * (math.pi * (uniform - 0.5)).tan()

    def log_prob(self, value):
        self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        self._validate_sample(value, "cdf")
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return self.loc + self.scale * (math.pi * (value - 0.5)).tan()

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
