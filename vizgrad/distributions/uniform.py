"""``Uniform(low, high)``: every value of [low, high) equally likely, with a reparameterised sampler."""

import math

from .. import creation
from ..ops import binary
from . import constraints
from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    """The continuous uniform distribution on [low, high), batched over its parameters' shape.

    log p(x) = -log(high - low) inside, -inf outside;  H = log(high - low);
    ``rsample`` = low + (high - low) u with u ~ U[0, 1), differentiable in low and high.

    Example::

        Uniform(0.0, 2.0).log_prob(vizgrad.tensor(0.5))   # tensor(-0.6931)
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all("Uniform", low=low, high=high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()):
        """low + (high - low) u, u ~ U[0, 1) of shape ``sample_shape + batch_shape``."""
        uniform = creation.rand(*self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + uniform * (self.high - self.low)

    def log_prob(self, value):
        self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        return binary.where(inside, 0.0, -math.inf) - (self.high - self.low).log()

    def cdf(self, value):
        """(x - low) / (high - low), clamped to [0, 1]."""
        self._validate_sample(value, "cdf")
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
