"""``Multinomial(total_count, probs=... | logits=...)``: the counts of each of K classes in
``total_count`` independent Categorical draws."""

import math
import numbers

from .. import creation
from ..errors import ArgumentTypeError
from ..ops import binary
from ..ops.special_functions import lgamma
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution


class Multinomial(Distribution):
    """Counts x of K classes (the event, the last dim of ``probs`` or ``logits``) in n =
    ``total_count`` draws (one n for the whole batch, as in PyTorch).

    log p(x) = log n! - Σₖ log xₖ! + Σₖ xₖ log pₖ;  mean n p, variance n p (1 - p);
    H = n H(Categorical) - log n! + Σₖ E[log xₖ!], xₖ ~ Binomial(n, pₖ).

    Example::

        Multinomial(10, probs=vizgrad.tensor([0.2, 0.8])).sample()    # tensor([2., 8.]) for example
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral) or isinstance(total_count, bool):
            raise ArgumentTypeError(f"Multinomial: total_count must be an int (inhomogeneous total_count is not "
                                    f"supported), got {type(total_count).__name__}")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Float counts of ``sample_shape + batch_shape + (K,)``: ``total_count`` class draws, counted."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs
        if self.total_count == 0:
            return creation.zeros(*shape, dtype=probs.dtype, device=probs.device)
        draws = self._categorical.sample((self.total_count,) + shape[:len(shape) - len(self._batch_shape) - 1])
        return creation.eye(shape[-1], dtype=probs.dtype, device=probs.device)[draws].sum(0)

    def log_prob(self, value):
        self._validate_sample(value)
        value = value.to(self.logits.dtype)
        logits = self.logits
        logits = binary.where((value == 0) & (logits == -float("inf")), 0.0, logits)   # 0 · log 0 = 0
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        n = self.total_count
        binomial = Binomial(n, probs=self.probs, validate_args=False)
        counts = binomial.enumerate_support(expand=False)[1:]
        expected_log_factorials = (binomial.log_prob(counts).exp() * lgamma(counts + 1)).sum((0, -1))
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_factorials
