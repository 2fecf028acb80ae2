"""``Kumaraswamy(concentration1, concentration0)``: a Beta-like law on [0, 1] with a closed-form
CDF, a ``TransformedDistribution`` of a uniform as in PyTorch."""

import math

from .. import creation
from ..ops import binary
from . import constraints
from .distribution import broadcast_all
from .log_normal import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform


def _moment(a, b, n):
    """E[xⁿ] = b B(1 + n/a, b)."""
    shifted = 1 + n / a
    return b * (shifted.lgamma() + b.lgamma() - (shifted + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution of a = ``concentration1`` and b = ``concentration0``: the law
    of (1 - u^(1/b))^(1/a) for u ~ U(0, 1).

    p(x) = a b x^(a-1) (1 - xᵃ)^(b-1);  CDF 1 - (1 - xᵃ)ᵇ;  E[xⁿ] = b B(1 + n/a, b);
    mode ((a - 1)/(ab - 1))^(1/a) (NaN where a < 1 or b < 1);
    H = (1 - 1/b) + (1 - 1/a)(ψ(b + 1) + γ) - log a - log b.

    Example::

        Kumaraswamy(2.0, 3.0).rsample((5,))      # differentiable in both concentrations
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(
            "Kumaraswamy", concentration1=concentration1, concentration0=concentration0)
        base = Uniform(creation.zeros_like(self.concentration0), creation.ones_like(self.concentration0),
                       validate_args=validate_args)
        transforms = [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                      PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return binary.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moment(self.concentration1, self.concentration0, 2) - self.mean ** 2

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = (b + 1).digamma() + EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()
