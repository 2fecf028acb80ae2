"""``vizgrad.special``: PyTorch's ``torch.special``, for the functions vizgrad computes: each
is the vizgrad op of the same meaning (``expit`` is :func:`vizgrad.sigmoid`), with its
gradients to any order.

Example::

    vizgrad.special.expit(vizgrad.tensor([0.0]))                          # tensor([0.5000])
    vizgrad.special.xlog1py(vizgrad.tensor([2.0]), vizgrad.tensor([3.0]))  # tensor([2.7726])
"""

import math

from .errors import public
from .ops.activation import log_softmax, softmax
from .ops.binary import xlog1py, xlogy
from .ops.reduce import logsumexp
from .ops.gamma import igamma as gammainc
from .ops.gamma import igammac as gammaincc
from .ops.special_functions import digamma, erf, erfc, erfinv, polygamma
from .ops.special_functions import digamma as psi
from .ops.special_functions import lgamma as gammaln
from .ops.unary import exp2, expm1, log1p, logit, round, sinc
from .ops.unary import sigmoid as expit

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "log1p",
           "log_softmax", "logit", "logsumexp", "ndtr", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
           "xlogy"]


@public("ndtr")
def ndtr(input):
    """The standard normal distribution's cumulative distribution function,
    ``Φ(x) = erfc(-x/√2) / 2``, accurate far into the left tail (Φ(-10) ≈ 7.6e-24, where
    PyTorch's float64 ndtr gives 0).  dΦ/dx = e^(-x²/2) / √(2π).

    Example::

        vizgrad.special.ndtr(vizgrad.tensor([0.0, 1.0]))   # tensor([0.5000, 0.8413])
    """
    return erfc(input * (-1 / math.sqrt(2))) * 0.5


def __getattr__(name):
    """torch.special's other functions (the Bessel functions, zeta, erfinv...) are not computed
    by vizgrad: say so, and what it has."""
    if name.startswith("__"):
        raise AttributeError(f"module 'vizgrad.special' has no attribute {name!r}")
    raise AttributeError(f"vizgrad.special has no {name!r}: of torch.special, vizgrad computes "
                         f"{', '.join(__all__)}")
