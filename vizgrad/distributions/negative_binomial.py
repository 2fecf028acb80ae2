"""``NegativeBinomial(total_count, probs=... | logits=...)``: failures before ``total_count`` successes."""

from ..ops import binary
from ..ops.activation import softplus
from ..tensor import Tensor
from . import constraints
from .distribution import ProbsOrLogits, broadcast_all, lazy_property
from .gamma import Gamma
from .poisson import Poisson


class NegativeBinomial(ProbsOrLogits):
    """The number of successes of probability p (``probs``, or ``logits`` l = log(p/(1 - p)))
    before ``total_count`` r failures: a Gamma(r, (1 - p)/p) mixture of Poissons.

    log p(k) = log Γ(r + k) - log Γ(r) - log k! + r log σ(-l) + k log σ(l);  mean r eˡ,
    variance mean/σ(-l), mode ⌊(r - 1) eˡ⌋⁺.

    Example::

        NegativeBinomial(3.0, probs=vizgrad.tensor(0.4)).mean     # tensor(2.)
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        if isinstance(total_count, Tensor) and not total_count.is_floating_point():
            total_count = total_count.to(parameter.dtype)        # counts as the parameter's floats, as PyTorch
        self.total_count, parameter = broadcast_all("NegativeBinomial", total_count=total_count,
                                                    **{name: parameter})
        super().__init__(validate_args=validate_args, **{name: parameter})

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        """The mixing Gamma(r, e⁻ˡ) (unchecked: r may be 0)."""
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        """Float counts of ``sample_shape + batch_shape``: Poisson draws at Gamma-drawn rates."""
        return Poisson(self._gamma.sample(sample_shape), validate_args=False).sample()

    def log_prob(self, value):
        self._validate_sample(value)
        r, logits = self.total_count, self.logits
        value = value.to(logits.dtype)
        unnormalised = -r * softplus(logits) - value * softplus(-logits)
        normaliser = -(r + value).lgamma() + (1.0 + value).lgamma() + r.lgamma()
        normaliser = binary.where(r + value == 0, 0.0, normaliser)     # r = 0 puts all mass on k = 0
        return unnormalised - normaliser
