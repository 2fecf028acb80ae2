"""``Laplace(loc, scale)``: the double exponential, with a reparameterised sampler."""

import math

from .. import creation, dtypes
from .distribution import LocationScale


class Laplace(LocationScale):
    """The Laplace distribution of location μ and scale b, batched over its parameters' shape.

    log p(x) = -log 2b - |x - μ| / b;  H = 1 + log 2b;  ``rsample`` = μ - b sign(u) log(1 - |u|)
    with u ~ U(-1, 1), differentiable in μ and b.

    Example::

        Laplace(0.0, 1.0).log_prob(vizgrad.tensor(1.0))   # tensor(-1.6931)
    """

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale ** 2

    def rsample(self, sample_shape=()):
        """μ - b sign(u) log(1 - |u|), u ~ U(-1 + ε, 1) of shape ``sample_shape + batch_shape``."""
        eps = dtypes.finfo(self.loc.dtype).eps
        u = creation.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        u = u * (2 - eps) + (eps - 1)                  # U(-1 + ε, 1): log(1 - |u|) stays finite
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        """½ - ½ sign(x - μ) (e^(-|x - μ|/b) - 1)."""
        self._validate_sample(value, "cdf")
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
