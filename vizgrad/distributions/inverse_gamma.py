"""``InverseGamma(concentration, rate)``: 1/x for x ~ Gamma(concentration, rate), a
``TransformedDistribution`` as in PyTorch."""

import math

from ..ops import binary
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """The law of 1/x for x ~ Gamma(α, β) (a conjugate prior for a normal's variance).

    log p(y) = α log β - log Γ(α) - (α + 1) log y - β/y;  mean β/(α - 1) (α > 1, else ∞),
    mode β/(α + 1), variance β²/((α - 1)²(α - 2)) (α > 2, else ∞);
    H = α + log β + log Γ(α) - (1 + α) ψ(α). ``rsample`` inverts Gamma's reparameterised sample.

    Example::

        InverseGamma(3.0, 2.0).mean      # tensor(1.)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-1.0), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return binary.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        alpha = self.concentration
        finite = self.rate ** 2 / ((alpha - 1) ** 2 * (alpha - 2))
        return binary.where(alpha > 2, finite, math.inf)

    def entropy(self):
        alpha = self.concentration
        return alpha + self.rate.log() + alpha.lgamma() - (1 + alpha) * alpha.digamma()
