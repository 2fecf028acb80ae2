"""``Dropout``, its channel-wise forms ``Dropout1d/2d/3d`` and the self-normalizing
``AlphaDropout``/``FeatureAlphaDropout``: random zeroing in training mode, the identity in
evaluation mode."""

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


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p`` during training
    (see :func:`vizgrad.nn.functional.dropout1d`); the identity after ``.eval()``.

    Example::

        nn.Dropout1d(0.5)(vizgrad.ones(2, 4, 3))     # each (sample, channel) row all 0 or all 2
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zero whole feature maps of (N, C, H, W) inputs with probability ``p`` during training
    (see :func:`vizgrad.nn.functional.dropout2d`); the identity after ``.eval()``.

    Example::

        nn.Dropout2d(0.2)(vizgrad.randn(8, 16, 5, 5)).shape    # (8, 16, 5, 5)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole volumes of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p`` during
    training (see :func:`vizgrad.nn.functional.dropout3d`); the identity after ``.eval()``.

    Example::

        nn.Dropout3d(0.1)(vizgrad.randn(2, 4, 3, 3, 3)).shape    # (2, 4, 3, 3, 3)
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout for SELU networks (see :func:`vizgrad.nn.functional.alpha_dropout`): a dropped unit
    takes SELU's negative saturation value and the output keeps a unit Gaussian's mean and
    variance; the identity after ``.eval()``.

    Example::

        nn.AlphaDropout(0.2)(vizgrad.randn(8, 16)).shape     # (8, 16)
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """:class:`AlphaDropout` of whole channels of (N, C, ...) inputs (see
    :func:`vizgrad.nn.functional.feature_alpha_dropout`).

    Example::

        nn.FeatureAlphaDropout(0.2)(vizgrad.randn(2, 4, 3, 3)).shape    # (2, 4, 3, 3)
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
