"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a Categorical choice among
components of one family (a Gaussian mixture is a Categorical over a batch of Normals)."""

from ..autograd.grad_mode import no_grad
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..ops.activation import log_softmax
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamilyConstraint(constraints.Constraint):
    """A mixture's support: ``base_constraint`` (its components') checked with the component dim
    put back, every component's answer required (PyTorch's name and repr)."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, constraints.Constraint):
            raise ArgumentTypeError(f"MixtureSameFamilyConstraint: base_constraint must be a Constraint, got "
                                    f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        if value.ndim < self.event_dim:
            raise ShapeError(f"MixtureSameFamilyConstraint: expected value.dim() >= {self.event_dim}, got {value.ndim}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        kept = value.ndim - self.event_dim
        return result.reshape(*result.shape[:kept], -1).all(-1)

    def __repr__(self):
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    """The mixture Σₖ πₖ pₖ(x): π from ``mixture_distribution`` (a Categorical over K, batch B),
    pₖ the last batch dim (of size K) of ``component_distribution`` (batch B + (K,)).

    log p(x) = logsumexp_k(log πₖ + log pₖ(x));  mean Σ πₖ μₖ;  variance Σ πₖ σₖ² + Σ πₖ (μₖ - μ)²
    (the law of total variance);  CDF Σ πₖ Fₖ(x). Samples pick a component, then its sample (no
    rsample: the choice is discrete).

    Example::

        mixture = MixtureSameFamily(Categorical(logits=w), Normal(mu, sigma))   # w, mu, sigma: (K,)
        mixture.log_prob(x)
    """

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ArgumentTypeError(f"MixtureSameFamily: The Mixture distribution needs to be an instance of "
                                    f"vizgrad.distributions.Categorical, got {type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise ArgumentTypeError(f"MixtureSameFamily: The Component distribution needs to be an instance of "
                                    f"vizgrad.distributions.Distribution, got {type(component_distribution).__name__}")
        mixture_batch = tuple(mixture_distribution.batch_shape)
        if not component_distribution.batch_shape:
            raise ShapeError("MixtureSameFamily: component_distribution needs a batch dim holding the components")
        component_batch = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ShapeError(f"MixtureSameFamily: `mixture_distribution.batch_shape` ({list(mixture_batch)}) is "
                                 f"not compatible with `component_distribution.batch_shape` ({list(component_batch)})")
        count = mixture_distribution.logits.shape[-1]
        if count != component_distribution.batch_shape[-1]:
            raise ArgumentError(f"MixtureSameFamily: `mixture_distribution component` ({count}) does not equal "
                                f"`component_distribution.batch_shape[-1]` ({component_distribution.batch_shape[-1]})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = count
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args=validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @constraints.dependent_property
    def support(self):
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        batch_shape = tuple(new.batch_shape)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        return new

    def _pad(self, value):
        """``value`` with a component dim before its event dims."""
        return value.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture(self, weights):
        """The mixture's (…, K) weights shaped to broadcast against the components' (B, K) + event."""
        batch_ndims, mixture_ndims = len(self._batch_shape), len(self._mixture_distribution.batch_shape)
        extra = 0 if mixture_ndims == 1 else batch_ndims - mixture_ndims
        shape = tuple(weights.shape)
        return weights.reshape(*shape[:-1], *(1,) * extra, shape[-1], *(1,) * self._event_ndims)

    @property
    def mean(self):
        weights = self._pad_mixture(self._mixture_distribution.probs)
        return (weights * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        weights = self._pad_mixture(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        within = (weights * self._component_distribution.variance).sum(dim)
        between = (weights * (self._component_distribution.mean - self._pad(self.mean)) ** 2).sum(dim)
        return within + between

    def cdf(self, value):
        self._check_value_shape(value, "cdf")
        return (self._component_distribution.cdf(self._pad(value)) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        log_probs = self._component_distribution.log_prob(self._pad(value))       # (S, B, K)
        return (log_probs + log_softmax(self._mixture_distribution.logits, -1)).logsumexp(-1)

    def sample(self, sample_shape=()):
        """The sample of the component each draw of the mixture picks."""
        with no_grad():
            choice = self._mixture_distribution.sample(sample_shape)               # (S, B)
            samples = self._component_distribution.sample(sample_shape)             # (S, B, K, E)
            event = tuple(self._event_shape)
            index = choice.reshape(*choice.shape, 1, *(1,) * len(event)).expand(*choice.shape, 1, *event)
            return samples.gather(choice.ndim, index).squeeze(choice.ndim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})"
