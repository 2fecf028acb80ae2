"""``Geometric(probs=... | logits=...)``: the number of failures before the first success."""

from .. import creation, dtypes
from ..autograd.grad_mode import no_grad
from ..ops.binary import xlog1py
from ..ops.classification import binary_cross_entropy_with_logits
from . import constraints
from .distribution import ProbsOrLogits, check_values


class Geometric(ProbsOrLogits):
    """P(k) = (1 - p)ᵏ p for k = 0, 1, 2, ... (failures before the first success of a coin of
    success probability p), given ``probs`` p or ``logits`` log(p / (1 - p)).

    log p(k) = k log(1 - p) + log p;  mean (1 - p)/p, variance (1 - p)/p², mode 0;
    H = [-(1 - p) log(1 - p) - p log p] / p.

    Example::

        Geometric(probs=vizgrad.tensor([0.25])).mean     # tensor([3.])
    """

    support = constraints.nonnegative_integer

    def _check_parameters(self):
        """The unit interval, and beyond it, as PyTorch checks: probs = 0 has no first success."""
        super()._check_parameters()
        if "probs" in self.__dict__:
            check_values(repr(self), "probs", self.probs, self.probs > 0, "positive")

    @property
    def mean(self):
        return 1 / self.probs - 1

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1 / self.probs - 1) / self.probs

    def sample(self, sample_shape=()):
        """⌊log u / log(1 - p)⌋ for u ~ U(0, 1): inverse-CDF sampling."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = self.probs
            uniform = creation.rand(*shape, dtype=probs.dtype, device=probs.device)
            uniform = uniform.clamp(min=dtypes.finfo(probs.dtype).tiny)
            return (uniform.log() / (-probs).log1p()).floor()

    def log_prob(self, value):
        self._validate_sample(value)
        probs = self.probs
        return xlog1py(value.to(probs.dtype), -probs) + probs.log()     # 0 · log 0 = 0 where p = 1

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
