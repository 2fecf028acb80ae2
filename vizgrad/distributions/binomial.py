"""``Binomial(total_count, probs=... | logits=...)``: successes in n independent trials."""

import numpy as np

from .. import creation
from ..ops.activation import softplus
from ..tensor import Tensor
from . import constraints
from .distribution import ProbsOrLogits, broadcast_all, draw_on_host


class Binomial(ProbsOrLogits):
    """The number of successes in ``total_count`` n trials of success probability p, given
    ``probs`` p or ``logits`` l = log(p / (1 - p)).

    log p(k) = log C(n, k) + k log p + (n - k) log(1 - p) = log C(n, k) + k l - n softplus(l)
    (from the logits: stable near p = 0 and 1);  mean np, variance np(1 - p),
    mode ⌊(n + 1) p⌋ (at most n). ``entropy`` sums over the support 0..n (one n for the batch).

    Example::

        Binomial(10, probs=vizgrad.tensor([0.3])).log_prob(vizgrad.tensor([3.0]))   # tensor([-1.3202])
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        if isinstance(total_count, Tensor) and not total_count.is_floating_point():
            total_count = total_count.to(parameter.dtype)        # counts as the parameter's floats, as PyTorch
        self.total_count, parameter = broadcast_all("Binomial", total_count=total_count, **{name: parameter})
        super().__init__(validate_args=validate_args, **{name: parameter})

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Float counts of ``sample_shape + batch_shape`` (NumPy's binomial sampler on vizgrad's generator)."""
        shape = self._extended_shape(sample_shape)
        return draw_on_host(lambda rng, n, p: rng.binomial(n.astype(np.int64), p), self._param, shape,
                            self.total_count, self.probs)

    def log_prob(self, value):
        self._validate_sample(value)
        n, logits = self.total_count, self.logits
        value = value.to(logits.dtype)
        log_choose = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        return log_choose + value * logits - n * softplus(logits)

    def entropy(self):
        """-Σₖ p(k) log p(k) over k = 0..n."""
        self._shared_total_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(expand=False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        """The counts 0..n, shaped (n + 1, 1, ..., 1) or expanded to (n + 1,) + batch_shape
        (one n for the whole batch)."""
        count = self._shared_total_count("enumerate_support")
        values = creation.arange(count + 1, dtype=self._param.dtype, device=self._param.device)
        return self._over_batch(values, expand)

    def _shared_total_count(self, method):
        """The total_count every element of the batch shares (0 for an empty batch), as an int."""
        if not self.total_count.numel():
            return 0
        largest = int(self.total_count.max().item())
        if int(self.total_count.min().item()) != largest:
            raise NotImplementedError(f"Binomial.{method}: inhomogeneous total count not supported by `{method}`: "
                                      f"every total_count of the batch must be equal")
        return largest
