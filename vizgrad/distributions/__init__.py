"""Probability distributions with PyTorch's names (``torch.distributions``): what
policy-gradient (REINFORCE), variational-autoencoder and Bayesian code uses.

Continuous: ``Normal``, ``LogNormal``, ``HalfNormal``, ``Uniform``, ``Exponential``, ``Laplace``,
``Cauchy``, ``HalfCauchy``, ``Gumbel``, ``StudentT``, ``Gamma``, ``InverseGamma``, ``Chi2``, ``Beta``,
``Dirichlet``, ``Pareto``, ``Weibull``, ``Kumaraswamy``, ``FisherSnedecor``, ``GeneralizedPareto``,
``ContinuousBernoulli``, ``LogisticNormal``, ``VonMises``, ``MultivariateNormal``, ``LowRankMultivariateNormal``;
over matrices: ``LKJCholesky``, ``Wishart``; relaxed
(Gumbel-softmax): ``RelaxedBernoulli``, ``RelaxedOneHotCategorical``; discrete: ``Bernoulli``, ``Binomial``,
``NegativeBinomial``, ``Geometric``, ``Poisson``, ``Categorical``, ``OneHotCategorical``,
``OneHotCategoricalStraightThrough``, ``Multinomial``; mixtures: ``MixtureSameFamily``; built from others: ``Independent`` and
``TransformedDistribution`` (with :mod:`~vizgrad.distributions.transforms`; ``biject_to`` and
``transform_to`` give the transform from the reals onto a constraint). They sample, score
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
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .independent import Independent
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .exponential import Exponential
from .exponential_family import ExponentialFamily
from .fishersnedecor import FisherSnedecor
from .gamma import Chi2, Gamma
from .generalized_pareto import GeneralizedPareto
from .half_cauchy import HalfCauchy
from .inverse_gamma import InverseGamma
from .geometric import Geometric
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .log_normal import Gumbel, HalfNormal, LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform,
                         SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform, identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .wishart import Wishart
from .weibull import Weibull
from .kl import kl_divergence, register_kl

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky",
           "Laplace",
           "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution",
           "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence",
           "register_kl", "transform_to", "transforms",
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]
