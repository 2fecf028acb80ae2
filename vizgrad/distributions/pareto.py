"""``Pareto(scale, alpha)``: scale · eˣ for x ~ Exponential(alpha), a ``TransformedDistribution``
as in PyTorch."""

from . import constraints
from .distribution import broadcast_all
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution of ``scale`` xₘ and shape ``alpha`` α, on [xₘ, ∞).

    log p(y) = log α + α log xₘ - (α + 1) log y;  mean α xₘ/(α - 1) (∞ for α ≤ 1), mode xₘ,
    variance xₘ² α/((α - 1)²(α - 2)) (∞ for α ≤ 2);  H = log(xₘ/α) + 1 + 1/α.

    Example::

        Pareto(1.0, 3.0).mean        # tensor(1.5000)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all("Pareto", scale=scale, alpha=alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(0, self.scale)], validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        alpha = self.alpha.clamp(min=1)
        return alpha * self.scale / (alpha - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        alpha = self.alpha.clamp(min=2)
        return self.scale ** 2 * alpha / ((alpha - 1) ** 2 * (alpha - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
