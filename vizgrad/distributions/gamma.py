"""``Gamma(concentration, rate)`` and ``Chi2(df)``, with reparameterised samplers."""

from .. import creation, dtypes
from ..ops.binary import xlogy
from ..ops.gamma import igamma, standard_gamma
from . import constraints
from .distribution import Distribution, broadcast_all, draw_on_host


def sample_standard_gamma(concentration, shape):
    """Gamma(α, 1) samples of ``shape`` (α broadcast to it), at least the dtype's smallest normal
    number, and differentiable in α by implicit reparameterisation (see ``vizgrad.ops.gamma``)."""
    concentration = concentration.expand(shape)
    drawn = draw_on_host(lambda rng, alpha: rng.standard_gamma(alpha), concentration, shape, concentration)
    return standard_gamma(concentration, drawn.clamp(min=dtypes.finfo(concentration.dtype).tiny))


class Gamma(Distribution):
    """The gamma distribution of shape α (``concentration``) and ``rate`` β on [0, ∞).

    log p(x) = α log β + (α - 1) log x - β x - log Γ(α);  mean α/β, variance α/β²;
    H = α - log β + log Γ(α) + (1 - α) ψ(α);  CDF P(α, βx), the regularised incomplete gamma
    function. ``rsample`` draws z ~ Gamma(α, 1) and returns z/β; z's gradient in α is the implicit
    one, dz/dα = -(∂P(α, z)/∂α) / p(z), so gradients reach α and β.

    Example::

        q = Gamma(alpha, beta)
        q.rsample((100,)).mean().backward()      # d/dα and d/dβ of a Monte Carlo estimate of α/β
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(type(self).__name__, concentration=concentration, rate=rate)
        super().__init__(tuple(self.concentration.shape), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return sample_standard_gamma(self.concentration, shape) / self.rate.expand(shape)

    def log_prob(self, value):
        self._validate_sample(value)
        alpha, rate = self.concentration, self.rate
        return xlogy(alpha, rate) + xlogy(alpha - 1, value) - rate * value - alpha.lgamma()

    def entropy(self):
        alpha = self.concentration
        return alpha - self.rate.log() + alpha.lgamma() + (1 - alpha) * alpha.digamma()

    def cdf(self, value):
        """P(α, βx)."""
        self._validate_sample(value, "cdf")
        return igamma(self.concentration, self.rate * value)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: Gamma(df/2, 1/2), the law of
    a sum of ``df`` squared standard normals.

    Example::

        Chi2(vizgrad.tensor([3.0])).mean     # tensor([3.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        df, = broadcast_all("Chi2", df=df)
        super().__init__(0.5 * df, creation.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2
