"""``Normal(loc, scale)``: the Gaussian, with a reparameterised sampler."""

import math

from .. import creation
from ..ops import special_functions
from .distribution import LocationScale

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Normal(LocationScale):
    """The normal distribution N(loc, scale²), batched over the broadcast shape of its parameters.

    log p(x) = -(x - μ)² / 2σ² - log σ - ½ log 2π;  H = ½ + ½ log 2π + log σ;
    ``rsample`` = μ + σ ε with ε ~ N(0, 1), so gradients reach μ and σ (a VAE's
    reparameterisation trick).

    Example::

        q = Normal(mu, logvar.mul(0.5).exp())
        z = q.rsample()                 # differentiable in mu and logvar
        q.log_prob(z).sum()
    """

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def rsample(self, sample_shape=()):
        """μ + σ ε, ε ~ N(0, 1) of shape ``sample_shape + batch_shape``; differentiable in μ and σ."""
        noise = creation.randn(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + noise * self.scale

    def log_prob(self, value):
        self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - HALF_LOG_2PI

    def entropy(self):
        return 0.5 + HALF_LOG_2PI + self.scale.log()

    def cdf(self, value):
        """Φ((x - μ)/σ) = ½ (1 + erf((x - μ) / σ√2))."""
        self._validate_sample(value, "cdf")
        return 0.5 * (1 + special_functions.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        """μ + σ √2 erf⁻¹(2p - 1)."""
        return self.loc + self.scale * special_functions.erfinv(2 * value - 1) * math.sqrt(2)
