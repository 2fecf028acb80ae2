"""``LogNormal``, ``HalfNormal`` and ``Gumbel``: a base distribution through transforms, as PyTorch
defines them (so they are ``TransformedDistribution``s), with closed forms where they have them."""

import math

from .. import creation, dtypes
from ..ops import binary
from . import constraints
from .distribution import broadcast_all
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform
from .uniform import Uniform

EULER_GAMMA = 0.57721566490153286061


class LogNormal(TransformedDistribution):
    """The law of eˣ for x ~ N(``loc``, ``scale``²): Normal through ExpTransform.

    log p(y) = log N(log y; μ, σ²) - log y;  mean e^(μ + σ²/2), mode e^(μ - σ²),
    variance (e^(σ²) - 1) e^(2μ + σ²);  H = H(Normal) + μ;  CDF Φ((log y - μ)/σ).

    Example::

        LogNormal(0.0, 1.0).mean     # tensor(1.6487)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all("LogNormal", loc=loc, scale=scale)
        super().__init__(Normal(loc, scale, validate_args=False), ExpTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale ** 2 / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale ** 2).exp()

    @property
    def variance(self):
        variance = self.scale ** 2
        return variance.expm1() * (2 * self.loc + variance).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class HalfNormal(TransformedDistribution):
    """The law of |x| for x ~ N(0, ``scale``²), on [0, ∞).

    log p(y) = log 2 + log N(y; 0, σ²) for y ≥ 0;  mean σ√(2/π), variance σ²(1 - 2/π), mode 0;
    CDF 2Φ(y/σ) - 1;  H = H(Normal) - log 2.

    Example::

        HalfNormal(1.0).mean     # tensor(0.7979)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        scale, = broadcast_all("HalfNormal", scale=scale)
        super().__init__(Normal(0.0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)

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


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution of ``loc`` μ and ``scale`` β: the law of
    μ - β log(-log u) for u ~ U(0, 1), as transforms of a uniform.

    log p(x) = -(z + e⁻ᶻ) - log β, z = (x - μ)/β;  CDF e^(-e⁻ᶻ);  mean μ + βγ (γ: Euler's
    constant), mode μ, variance π²β²/6;  H = log β + 1 + γ.

    Example::

        Gumbel(0.0, 1.0).log_prob(vizgrad.tensor(0.0))   # tensor(-1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all("Gumbel", loc=loc, scale=scale)
        info = dtypes.finfo(self.loc.dtype)
        base = Uniform(creation.full_like(self.loc, info.tiny), creation.full_like(self.loc, 1 - info.eps),
                       validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-1.0), ExpTransform().inv,
                      AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value):
        self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    def cdf(self, value):
        """e^(-e^(-z)), z = (x - μ)/β: in closed form, so the far right tail gives 1 (PyTorch's,
        through its uniform base, refuses x where the CDF rounds to 1)."""
        self._validate_sample(value, "cdf")
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        """μ - β log(-log p)."""
        return self.loc - self.scale * (-value.log()).log()

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)
