"""``vizgrad.special``: PyTorch's ``torch.special``, for the functions vizgrad computes: each
is the vizgrad op of the same meaning (``expit`` is :func:`vizgrad.sigmoid`), with its
gradients to any order.

Example::

    vizgrad.special.expit(vizgrad.tensor([0.0]))                          # tensor([0.5000])
    vizgrad.special.xlog1py(vizgrad.tensor([2.0]), vizgrad.tensor([3.0]))  # tensor([2.7726])
"""

from .ops.activation import log_softmax, softmax
from .ops.binary import xlog1py, xlogy
from .ops.reduce import logsumexp
from .ops.unary import erf, exp2, expm1, log1p, logit, round, sinc
from .ops.unary import sigmoid as expit

__all__ = ["erf", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit", "logsumexp", "round", "sinc",
           "softmax", "xlog1py", "xlogy"]


def __getattr__(name):
    """torch.special's other functions (gammaln, digamma, erfc, the Bessel functions...) are not
    computed by vizgrad: say so, and what it has."""
    if name.startswith("__"):
        raise AttributeError(f"module 'vizgrad.special' has no attribute {name!r}")
    raise AttributeError(f"vizgrad.special has no {name!r}: of torch.special, vizgrad computes "
                         f"{', '.join(__all__)}")
