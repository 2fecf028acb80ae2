"""Probability distributions with PyTorch's names (``torch.distributions``): what
policy-gradient (REINFORCE) and variational-autoencoder code uses.

``Normal``, ``Uniform``, ``Exponential``, ``Laplace``, ``Categorical``, ``Bernoulli`` and
``Independent`` sample, score (``log_prob``) and measure (``entropy``, ``kl_divergence``) with
vizgrad ops, so gradients flow through ``log_prob``, ``entropy``, ``kl_divergence`` and the
continuous ones' ``rsample`` (reparameterised: ``Normal``'s ``loc + scale·ε``, ε ~ N(0, 1)). Samples come from vizgrad's generator:
``vizgrad.manual_seed`` makes them reproducible.

Example::

    from vizgrad.distributions import Categorical
    dist = Categorical(logits=policy(state))
    action = dist.sample()
    loss = -dist.log_prob(action) * reward     # REINFORCE
"""

from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .bernoulli import Bernoulli
from .categorical import Categorical
from .exponential import Exponential
from .laplace import Laplace
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "Normal", "Uniform",
           "kl_divergence", "register_kl"]
