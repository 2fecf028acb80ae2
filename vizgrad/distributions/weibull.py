"""``Weibull(scale, concentration)``: scale · x^(1/k) for x ~ Exponential(1), a
``TransformedDistribution`` as in PyTorch."""

from .. import creation
from . import constraints
from .distribution import broadcast_all
from .log_normal import EULER_GAMMA
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform


class Weibull(TransformedDistribution):
    """The Weibull distribution of ``scale`` λ and shape ``concentration`` k, on (0, ∞).

    log p(y) = log(k/λ) + (k - 1) log(y/λ) - (y/λ)ᵏ;  CDF 1 - e^(-(y/λ)ᵏ);  mean λ Γ(1 + 1/k),
    mode λ ((k - 1)/k)^(1/k), variance λ² (Γ(1 + 2/k) - Γ(1 + 1/k)²);  H = γ(1 - 1/k) + log(λ/k) + 1.

    Example::

        Weibull(1.0, 1.0).mean       # tensor(1.): Exponential(1)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all("Weibull", scale=scale, concentration=concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(creation.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(self.concentration_reciprocal), AffineTransform(0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** self.concentration_reciprocal

    @property
    def variance(self):
        inverse = self.concentration_reciprocal
        return self.scale ** 2 * ((1 + 2 * inverse).lgamma().exp() - (2 * (1 + inverse).lgamma()).exp())

    def entropy(self):
        inverse = self.concentration_reciprocal
        return EULER_GAMMA * (1 - inverse) + (self.scale * inverse).log() + 1
