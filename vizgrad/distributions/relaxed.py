"""The Concrete (Gumbel-softmax) relaxations of PyTorch: ``RelaxedBernoulli`` and
``RelaxedOneHotCategorical`` (and the logit- and log-space laws they are transformed from,
``LogitRelaxedBernoulli`` and ``ExpRelaxedCategorical``), with reparameterised samplers."""

from .. import creation
from . import constraints
from .categorical import Categorical
from .distribution import Distribution, ProbsOrLogits, as_parameter, broadcast_all, clamp_probs
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: its base's ``temperature``, ``logits`` and ``probs``, transformed."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LogitRelaxedBernoulli(ProbsOrLogits):
    """The logit of a relaxed Bernoulli at ``temperature`` τ: (L + l)/τ with L = log(u/(1 - u)),
    u ~ U(0, 1), and l the logits.

    log p(y) = log τ + (l - τy) - 2 log(1 + e^(l - τy)).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        name, parameter = self._given_probs_or_logits(probs, logits)
        self.temperature = as_parameter(temperature, "temperature", type(self).__name__, like=parameter)
        parameter, = broadcast_all(type(self).__name__, **{name: parameter})
        super().__init__(validate_args=validate_args, **{name: parameter})

    def expand(self, batch_shape, _instance=None):
        temperature = self.temperature
        new = super().expand(batch_shape, _instance)
        new.temperature = temperature                  # one temperature, not a batched parameter
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(*shape))
        uniform = clamp_probs(creation.rand(*shape, dtype=probs.dtype, device=probs.device))
        return (uniform.log() - (-uniform).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        self._validate_sample(value)
        difference = self.logits - value * self.temperature
        return self.temperature.log() + difference - 2 * difference.exp().log1p()


class RelaxedBernoulli(_Relaxed):
    """A Bernoulli relaxed onto (0, 1) at ``temperature`` τ: σ((L + l)/τ) (LogitRelaxedBernoulli
    through SigmoidTransform); as τ → 0 samples approach 0 or 1 with probabilities 1 - p, p.

    Example::

        RelaxedBernoulli(vizgrad.tensor(0.5), probs=p).rsample()     # differentiable in p
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The logarithm of a relaxed one-hot vector at ``temperature`` τ: log softmax((l + G)/τ) for
    Gumbel noise G (the Gumbel-softmax trick in log space; its true support is a submanifold
    of the reals' vectors).

    log p(y) = log Γ(K) + (K - 1) log τ + Σₖ (sₖ - logsumexp s), s = l - τy.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = as_parameter(temperature, "temperature", type(self).__name__,
                                        like=self._categorical._param)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        temperature = self.temperature
        new = super().expand(batch_shape, _instance)
        new.temperature = temperature                  # one temperature, not a batched parameter
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        uniform = clamp_probs(creation.rand(*shape, dtype=logits.dtype, device=logits.device))
        scores = (logits - (-uniform.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        self._validate_sample(value)
        count = self._categorical._num_events
        log_scale = creation.full_like(self.temperature, float(count)).lgamma() + (count - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A one-hot Categorical relaxed onto the simplex at ``temperature`` τ: softmax((l + G)/τ)
    for Gumbel noise G (the Gumbel-softmax / Concrete distribution).

    Example::

        RelaxedOneHotCategorical(vizgrad.tensor(0.5), logits=scores).rsample()   # soft one-hot
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)
