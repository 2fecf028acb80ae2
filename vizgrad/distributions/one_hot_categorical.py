"""``OneHotCategorical(probs=... | logits=...)``: a Categorical whose samples are one-hot vectors."""

from .. import creation
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """One of K classes, as a one-hot vector of length K (the event), from the last dim of
    ``probs`` or ``logits`` (as :class:`Categorical`).

    log p(e_k) = log p_k;  mean p, variance p(1 - p), mode the one-hot of the likeliest class;
    H = -Σ p_k log p_k.

    Example::

        OneHotCategorical(probs=vizgrad.tensor([0.2, 0.8])).sample()   # tensor([0., 1.]) for example
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

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
        return self.probs

    @property
    def mode(self):
        return self._one_hot(self.probs.argmax(-1))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _one_hot(self, indices):
        probs = self._categorical._param
        return creation.eye(self.event_shape[0], dtype=probs.dtype, device=probs.device)[indices]

    def sample(self, sample_shape=()):
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value):
        self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        """The K one-hot vectors, shaped (K, 1, ..., 1, K) or expanded to (K,) + batch_shape + (K,)."""
        count = self.event_shape[0]
        values = self._one_hot(self._categorical.enumerate_support(expand=False))
        return values.expand(count, *self._batch_shape, count) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A OneHotCategorical whose ``rsample`` is the straight-through estimator: the one-hot
    sample in the forward pass, the gradient of the probabilities in the backward
    (sample + p - p.detach()).

    Example::

        OneHotCategoricalStraightThrough(logits=scores).rsample() @ embeddings   # gradients reach scores
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
