"""``Bernoulli(probs=... | logits=...)``: 0/1 outcomes with probability p of a one."""

import numpy as np

from .. import creation
from ..autograd.grad_mode import no_grad
from ..ops.classification import binary_cross_entropy_with_logits
from . import constraints
from .distribution import ProbsOrLogits


class Bernoulli(ProbsOrLogits):
    """P(1) = p, P(0) = 1 - p elementwise, given ``probs`` p or ``logits`` log(p / (1 - p)).

    log p(x) = x log p + (1 - x) log(1 - p) (computed from the logits, stable);
    H = -p log p - (1 - p) log(1 - p).

    Example::

        coin = Bernoulli(probs=vizgrad.tensor([0.3, 0.9]))
        coin.sample()                          # tensor([0., 1.]) for example
        coin.log_prob(vizgrad.tensor([1.0, 1.0]))
    """

    support = constraints.boolean
    has_enumerate_support = True

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return (self.probs >= 0.5).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """0./1. values of shape ``sample_shape + batch_shape`` (one uniform draw each)."""
        with no_grad():
            probs = self.probs
            uniform = creation.rand(*self._extended_shape(sample_shape), dtype=probs.dtype, device=probs.device)
            return (uniform < probs).to(probs.dtype)

    def log_prob(self, value):
        self._validate_sample(value)
        logits = self.logits
        value = value.to(logits.dtype)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(logits.shape))
        logits, value = logits.expand(shape), value.expand(shape)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        """The values 0. and 1., shaped (2, 1, ..., 1) or expanded to (2,) + batch_shape."""
        values = creation.tensor([0.0, 1.0], dtype=self._param.dtype, device=self._param.device)
        return self._over_batch(values, expand)
