"""``Dirichlet(concentration)`` over the probability simplex and ``Beta(concentration1,
concentration0)`` on [0, 1], with reparameterised samplers."""

from .. import creation, dtypes
from ..errors import ShapeError, format_shape
from ..ops.binary import where, xlog1py, xlogy
from ..ops.joins import stack
from . import constraints
from .distribution import Distribution, as_parameter, broadcast_all
from .gamma import sample_standard_gamma


class Dirichlet(Distribution):
    """The Dirichlet distribution of ``concentration`` α (last dim: the K categories) over
    vectors x ≥ 0 with Σ xᵢ = 1.

    log p(x) = Σ (αᵢ - 1) log xᵢ + log Γ(α₀) - Σ log Γ(αᵢ), α₀ = Σ αᵢ;  mean α/α₀;
    H = Σ log Γ(αᵢ) - log Γ(α₀) + (α₀ - K) ψ(α₀) - Σ (αᵢ - 1) ψ(αᵢ).
    ``rsample`` normalises independent Gamma(αᵢ, 1) draws (each reparameterised), so gradients
    reach α.

    Example::

        Dirichlet(vizgrad.tensor([1.0, 2.0, 3.0])).rsample()     # a point of the simplex
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        concentration = as_parameter(concentration, "concentration", "Dirichlet")
        if concentration.ndim < 1:
            raise ShapeError(f"Dirichlet: `concentration` parameter must be at least one-dimensional (its last dim "
                             f"holds the categories), got shape {format_shape(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(αᵢ - 1)⁺ / Σ (αⱼ - 1)⁺; where every αᵢ < 1 the density is unbounded at each vertex, and
        the first vertex is returned (as PyTorch)."""
        excess = (self.concentration - 1).clamp(min=0)
        mode = excess / excess.sum(-1, keepdim=True)
        first = creation.eye(self.concentration.shape[-1], dtype=mode.dtype, device=mode.device)[0]
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        return where(below_one, first, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = sample_standard_gamma(self.concentration, shape)
        info = dtypes.finfo(gammas.dtype)
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=info.tiny, max=1 - info.eps)

    def log_prob(self, value):
        self._validate_sample(value)
        alpha = self.concentration
        return (xlogy(alpha - 1.0, value).sum(-1) + alpha.sum(-1).lgamma() - alpha.lgamma().sum(-1))

    def entropy(self):
        alpha = self.concentration
        total = alpha.sum(-1)
        categories = alpha.shape[-1]
        return (alpha.lgamma().sum(-1) - total.lgamma() + (total - categories) * total.digamma()
                - ((alpha - 1.0) * alpha.digamma()).sum(-1))


class Beta(Distribution):
    """The beta distribution of ``concentration1`` a and ``concentration0`` b on [0, 1]: the first
    coordinate of Dirichlet([a, b]).

    log p(x) = (a - 1) log x + (b - 1) log(1 - x) - log B(a, b);  mean a/(a + b);
    ``rsample`` is G₁/(G₁ + G₂) for reparameterised gamma draws, differentiable in a and b.

    Example::

        Beta(2.0, 5.0).mean     # tensor(0.2857)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        concentration1, concentration0 = broadcast_all("Beta", concentration1=concentration1,
                                                       concentration0=concentration0)
        self._dirichlet = Dirichlet(stack([concentration1, concentration0], -1), validate_args=False)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return xlogy(a - 1, value) + xlog1py(b - 1, -value) + (a + b).lgamma() - a.lgamma() - b.lgamma()

    def entropy(self):
        return self._dirichlet.entropy()
