"""``FisherSnedecor(df1, df2)``: the F distribution, the ratio of two scaled chi-squared laws."""

import math

from .. import dtypes
from ..ops import binary
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import Gamma


class FisherSnedecor(Distribution):
    """Snedecor's F with ``df1`` d₁ and ``df2`` d₂ degrees of freedom: the law of (X₁/d₁)/(X₂/d₂)
    for independent X₁ ~ χ²(d₁), X₂ ~ χ²(d₂).

    log p(x) = log Γ((d₁ + d₂)/2) - log Γ(d₁/2) - log Γ(d₂/2) + (d₁/2) log(d₁/d₂)
    + (d₁/2 - 1) log x - ((d₁ + d₂)/2) log(1 + d₁x/d₂);  mean d₂/(d₂ - 2) (d₂ > 2, else NaN),
    mode (d₁ - 2)/d₁ · d₂/(d₂ + 2) (d₁ > 2), variance 2d₂²(d₁ + d₂ - 2)/(d₁(d₂ - 2)²(d₂ - 4)) (d₂ > 4).
    ``rsample`` divides two reparameterised Gamma draws: gradients reach d₁ and d₂.

    Example::

        FisherSnedecor(5.0, 10.0).mean      # tensor(1.2500)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all("FisherSnedecor", df1=df1, df2=df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)     # X₁/d₁ ~ Gamma(d₁/2, d₁)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    @property
    def mean(self):
        df2 = self.df2
        return binary.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        df1, df2 = self.df1, self.df2
        return binary.where(df1 > 2, (df1 - 2) / df1 * df2 / (df2 + 2), math.nan)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        finite = 2 * df2 ** 2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))
        return binary.where(df2 > 4, finite, math.nan)

    def rsample(self, sample_shape=()):
        tiny = dtypes.finfo(self.df1.dtype).tiny
        first, second = self._gamma1.rsample(sample_shape), self._gamma2.rsample(sample_shape)
        return (first / second.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        self._validate_sample(value)
        half1, half2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        normaliser = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return normaliser + half1 * ratio.log() + (half1 - 1) * value.log() - (half1 + half2) * (ratio * value).log1p()
