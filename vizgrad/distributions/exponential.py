"""``Exponential(rate)``: waiting times of rate λ, with a reparameterised sampler."""

from .. import creation
from . import constraints
from .distribution import Distribution, broadcast_all


class Exponential(Distribution):
    """The exponential distribution of rate λ on [0, ∞), batched over the rate's shape.

    log p(x) = log λ - λ x;  H = 1 - log λ;  ``rsample`` = -log(1 - u) / λ with u ~ U[0, 1),
    differentiable in λ.

    Example::

        Exponential(2.0).log_prob(vizgrad.tensor(1.0))   # tensor(-1.3069)
    """

    has_rsample = True
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all("Exponential", rate=rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate * 0

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate ** -2

    def rsample(self, sample_shape=()):
        """-log(1 - u) / λ, u ~ U[0, 1) of shape ``sample_shape + batch_shape``."""
        uniform = creation.rand(*self._extended_shape(sample_shape), dtype=self.rate.dtype, device=self.rate.device)
        return -(-uniform).log1p() / self.rate

    def log_prob(self, value):
        self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """1 - e^(-λ x)."""
        self._validate_sample(value, "cdf")
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
