"""``StudentT(df, loc=0., scale=1.)``: Student's t, with a reparameterised sampler."""

import math

from .. import creation
from ..ops import binary
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import Chi2


class StudentT(Distribution):
    """Student's t distribution with ``df`` ν degrees of freedom, location μ and scale σ: the
    law of μ + σ X / √(V/ν) for X ~ N(0, 1) and V ~ χ²(ν).

    log p(x) = -((ν + 1)/2) log(1 + z²/ν) - log σ - ½ log νπ - log Γ(ν/2) + log Γ((ν + 1)/2),
    z = (x - μ)/σ;  mean μ (ν > 1, else NaN), mode μ, variance σ² ν/(ν - 2) (ν > 2; ∞ for
    1 < ν ≤ 2, NaN below);  H = log σ + ((ν + 1)/2)(ψ((ν + 1)/2) - ψ(ν/2)) + ½ log ν + log B(ν/2, ½).
    ``rsample`` uses reparameterised normal and chi-squared draws: gradients reach ν, μ and σ.

    Example::

        StudentT(3.0).log_prob(vizgrad.tensor(0.0))   # tensor(-1.0048)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all("StudentT", df=df, loc=loc, scale=scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    @property
    def mean(self):
        return binary.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale ** 2 * df / binary.where(df > 2, df - 2, 1.0)
        return binary.where(df > 2, finite, binary.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        normal = creation.randn(*shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * normal * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        self._validate_sample(value)
        df = self.df
        z = (value - self.loc) / self.scale
        normaliser = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                      + (0.5 * df).lgamma() - (0.5 * (df + 1)).lgamma())
        return -0.5 * (df + 1) * (z ** 2 / df).log1p() - normaliser

    def entropy(self):
        df = self.df
        log_beta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma())
                + 0.5 * df.log() + log_beta)
