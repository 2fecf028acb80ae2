"""``HalfCauchy(scale)``: |x| for x ~ Cauchy(0, scale), a ``TransformedDistribution`` as in PyTorch."""

import math

from .. import creation
from ..ops import binary
from . import constraints
from .cauchy import Cauchy
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class HalfCauchy(TransformedDistribution):
    """The law of |x| for x ~ Cauchy(0, ``scale``), on [0, ∞) (a common prior for scales).

    log p(y) = log 2 + log Cauchy(y; 0, σ) for y ≥ 0;  mean and variance ∞, mode 0;
    CDF 2F(y) - 1 = (2/π) atan(y/σ);  H = H(Cauchy) - log 2.

    Example::

        HalfCauchy(1.0).icdf(vizgrad.tensor(0.5))     # tensor(1.)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        scale, = broadcast_all("HalfCauchy", scale=scale)
        super().__init__(Cauchy(0.0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return creation.full(self._batch_shape, math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return binary.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        self._validate_sample(value, "cdf")
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
