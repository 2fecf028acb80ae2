"""Probability distributions with PyTorch's names (``torch.distributions``): what
policy-gradient (REINFORCE), variational-autoencoder and Bayesian code uses.

Continuous: ``Normal``, ``LogNormal``, ``HalfNormal``, ``Uniform``, ``Exponential``, ``Laplace``,
``Cauchy``, ``Gumbel``, ``StudentT``, ``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``,
``MultivariateNormal``; discrete: ``Bernoulli``, ``Binomial``, ``Geometric``, ``Poisson``,
``Categorical``, ``OneHotCategorical``; built from others: ``Independent`` and
``TransformedDistribution`` (with :mod:`~vizgrad.distributions.transforms`). They sample, score
(``log_prob``) and measure (``entropy``, ``kl_divergence``) with vizgrad ops, so gradients flow
through ``log_prob``, ``entropy``, ``kl_divergence`` and every ``rsample`` (reparameterised:
``Normal``'s ``loc + scale·ε``, ε ~ N(0, 1); the gamma family's by implicit differentiation).
Parameters and values are checked against :mod:`~vizgrad.distributions.constraints`.
Samples come from vizgrad's generator: ``vizgrad.manual_seed`` makes them reproducible.

Example::

    from vizgrad.distributions import Categorical
    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -dist.log_prob(action) * reward     # REINFORCE
"""

from . import constraints, transforms
from .distribution import Distribution
from .independent import Independent
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Beta, Dirichlet
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .geometric import Geometric
from .laplace import Laplace
from .log_normal import Gumbel, HalfNormal, LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform,
                         TanhTransform, Transform)
from .uniform import Uniform
from .kl import kl_divergence, register_kl

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "StudentT", "TransformedDistribution",
           "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
           "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform", "TanhTransform",
           "Transform"]
