"""``kl_divergence(p, q)`` = E_p[log p - log q], dispatched on the pair of distribution types."""

import math

from ..ops import binary
from ..ops.activation import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .exponential import Exponential
from .independent import Independent, sum_rightmost
from .laplace import Laplace
from .normal import Normal
from .uniform import Uniform

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: register ``function(p, q)`` as the KL divergence of ``type_p`` from ``type_q``."""
    def decorate(function):
        _KL[type_p, type_q] = function
        return function
    return decorate


def kl_divergence(p, q):
    """KL(p ‖ q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shapes.

    Example::

        kl_divergence(Normal(mu, sigma), Normal(0.0, 1.0)).sum()     # a VAE's KL term
    """
    for type_p in type(p).__mro__:
        for type_q in type(q).__mro__:
            function = _KL.get((type_p, type_q))
            if function is not None:
                return function(p, q)
    raise NotImplementedError(f"kl_divergence: no formula is registered for {type(p).__name__} and "
                              f"{type(q).__name__} (register one with vizgrad.distributions.register_kl)")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    """½ (σp²/σq² + (μp - μq)²/σq² - 1 - log(σp²/σq²))."""
    variance_ratio = (p.scale / q.scale) ** 2
    shift = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (variance_ratio + shift - 1 - variance_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """Σₖ pₖ (log pₖ - log qₖ): 0 where pₖ = 0, ∞ where qₖ = 0 < pₖ."""
    terms = p.probs * (p.logits - q.logits)
    terms = binary.where((q.probs == 0).expand(*terms.shape), math.inf, terms)
    terms = binary.where((p.probs == 0).expand(*terms.shape), 0.0, terms)
    return terms.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p log(p/q) + (1 - p) log((1 - p)/(1 - q)), from the logits (softplus form)."""
    return p.probs * (p.logits - q.logits) + softplus(q.logits) - softplus(p.logits)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independent distributions with different "
                                  "reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    """λq/λp - 1 - log(λq/λp)."""
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log((high_q - low_q) / (high_p - low_p)), ∞ where p's interval leaves q's."""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return binary.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    """-log(bp/bq) + |μp - μq|/bq + (bp/bq) e^(-|μp - μq|/bp) - 1."""
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -ratio.log() + distance / q.scale + ratio * (-distance / p.scale).exp() - 1
