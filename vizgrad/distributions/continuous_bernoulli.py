"""``ContinuousBernoulli(probs=... | logits=...)``: the Bernoulli likelihood normalised over [0, 1]
(for images with values in [0, 1], as a VAE's decoder)."""

import math

from .. import creation
from ..ops import binary
from ..ops.activation import softplus
from . import constraints
from .distribution import ProbsOrLogits, binary_logits, check_values, clamp_probs, lazy_property
from .exponential_family import ExponentialFamily


class ContinuousBernoulli(ExponentialFamily, ProbsOrLogits):
    """The continuous Bernoulli of ``probs`` λ (or ``logits``) on [0, 1]: p(x) = C(λ) λˣ (1 - λ)¹⁻ˣ,
    C(λ) = 2 atanh(1 - 2λ)/(1 - 2λ) (2 at λ = ½).

    Inside ``lims`` (default (0.499, 0.501)) the normaliser, mean and variance use their Taylor
    series in λ - ½, as PyTorch does, where the closed forms lose precision. ``rsample`` is the
    inverse CDF of a uniform, so gradients reach λ.

    Example::

        ContinuousBernoulli(probs=vizgrad.tensor(0.2)).mean      # tensor(0.3880)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        if name == "probs":
            validate = self._validate_default if validate_args is None else validate_args
            if validate:        # checked before the clamping below, which would hide invalid values
                check_values("ContinuousBernoulli", "probs", parameter, constraints.unit_interval.check(parameter),
                             repr(constraints.unit_interval))
            parameter = clamp_probs(parameter)
        self._lims = tuple(lims)
        super().__init__(validate_args=validate_args, **{name: parameter})

    @lazy_property
    def logits(self):
        return binary_logits(self.probs)

    @lazy_property
    def probs(self):
        return clamp_probs(self.logits.sigmoid())

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return binary.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """log C(λ)."""
        cut = self._cut_probs()
        below_half = binary.where(cut <= 0.5, cut, 0.0)
        above_half = binary.where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - binary.where(
            cut <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return binary.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        exact = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return binary.where(self._outside_unstable_region(), exact, taylor)

    @property
    def variance(self):
        cut = self._cut_probs()
        exact = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / ((-cut).log1p() - cut.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return binary.where(self._outside_unstable_region(), exact, taylor)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(creation.rand(*shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        self._validate_sample(value)
        logits = self.logits
        return logits * value - softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        self._validate_sample(value, "cdf")
        cut = self._cut_probs()
        inside = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = binary.where(self._outside_unstable_region(), inside, value)
        return binary.where(value <= 0.0, 0.0, binary.where(value >= 1.0, 1.0, inside))

    def icdf(self, value):
        cut = self._cut_probs()
        exact = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return binary.where(self._outside_unstable_region(), exact, value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log((eˣ - 1)/x), its Taylor series near x = 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = binary.where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return binary.where(outside, log_norm, taylor)
