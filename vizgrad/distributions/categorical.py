"""``Categorical(probs=... | logits=...)``: one of K classes, batched over the leading dims."""

import math

import numpy as np

from .. import creation
from ..autograd.grad_mode import no_grad
from ..ops import activation, compare
from ..errors import ShapeError, format_shape
from . import constraints
from .distribution import ProbsOrLogits, check_support, check_values, clamp_probs, lazy_property


class Categorical(ProbsOrLogits):
    """A distribution over {0, ..., K-1} given by the last dim of ``probs`` (normalised to sum to
    one) or of ``logits`` (unnormalised log-probabilities); the other dims are the batch.

    log p(k) = logits[k] - logsumexp(logits);  H = -Σₖ pₖ log pₖ.

    Example::

        dist = Categorical(logits=vizgrad.tensor([[0.0, 1.0, 2.0]]))
        action = dist.sample()                   # shape (1,), int64
        dist.log_prob(action), dist.entropy()    # gradients flow to the logits
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        if parameter.ndim < 1:
            raise ShapeError(f"Categorical: `{name}` must be at least one-dimensional (the last dim holds the K "
                             f"classes), got shape {format_shape(parameter.shape)}")
        if name == "probs":
            parameter = parameter / parameter.sum(-1, keepdim=True)
        else:
            parameter = parameter - parameter.logsumexp(-1, keepdim=True)
        self._num_events = parameter.shape[-1]
        super().__init__(validate_args=validate_args, **{name: parameter})

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """Normalised log-probabilities: log p (probabilities clamped away from 0 and 1)."""
        return clamp_probs(self.probs).log()

    @lazy_property
    def probs(self):
        """Probabilities: softmax of the logits."""
        return activation.softmax(self.logits, -1)

    @property
    def mean(self):
        return creation.full(self._batch_shape, math.nan, dtype=self._param.dtype, device=self._param.device)

    variance = mean

    @property
    def mode(self):
        return self.probs.argmax(-1)

    def sample(self, sample_shape=()):
        """Class indices (int64) of shape ``sample_shape + batch_shape``: inverse-CDF sampling from
        one uniform draw per sample."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            cumulative = self.probs.cumsum(-1)
            uniform = creation.rand(*shape, 1, dtype=cumulative.dtype, device=cumulative.device)
            below = (cumulative < uniform * cumulative[..., -1:]).long().sum(-1)
            return below.clamp(max=self._num_events - 1)

    def log_prob(self, value):
        """log p(value) for integer class indices broadcastable with ``batch_shape``."""
        self._check_value_shape(value)
        if value.is_floating_point() and self._validate_args:
            check_values(repr(self), "value", value, value == value.floor(), "IntegerInterval")
        value = value.long()
        if self._validate_args:
            check_support(self, value, compare.logical_and(value >= 0, value < self._num_events),
                          f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})")
        index = value.unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(index.shape), self._batch_shape + (1,))
        logits = self.logits.expand(*shape[:-1], self._num_events)
        return logits.gather(-1, index.expand(*shape)).squeeze(-1)

    def entropy(self):
        """-Σₖ pₖ log pₖ over the last dim (0·log 0 counted as 0)."""
        lowest = float(np.finfo(self.logits.dtype.numpy).min)
        return -(self.logits.clamp(min=lowest) * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        """The K class indices, shaped (K, 1, ..., 1) or expanded to (K,) + batch_shape."""
        return self._over_batch(creation.arange(self._num_events, device=self._param.device), expand)

