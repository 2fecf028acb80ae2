"""``Dropout``: random zeroing in training mode, the identity in evaluation mode."""

from ..errors import ArgumentError, as_number
from . import functional as F
from .module import Module


class Dropout(Module):
    """Zero each element with probability ``p`` during training and scale the others by
    1/(1-p), so the expected value is unchanged; the identity after ``.eval()``.
    Random numbers come from vizgrad's generator (``vizgrad.manual_seed``).

    Example::

        drop = nn.Dropout(0.5)
        drop(vizgrad.ones(8))            # zeros and 2.0s
        drop.eval()(vizgrad.ones(8))     # ones
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        p = as_number(type(self).__name__, "p", p)
        if not 0.0 <= p <= 1.0:
            raise ArgumentError(f"{type(self).__name__}: dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
