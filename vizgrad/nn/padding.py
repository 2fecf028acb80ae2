"""Padding layers, as PyTorch: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad``
and ``CircularPad`` in 1d, 2d and 3d. Each pads the last 1, 2 or 3 dims with
:func:`vizgrad.nn.functional.pad`; ``padding`` is one int for every side or a tuple
``(left, right, top, bottom, front, back)`` (as many as the layer pads)."""

from ..errors import ArgumentTypeError
from . import functional as F
from .module import Module


def _padding(layer, padding, dims):
    """``padding`` as a tuple: an int repeated for the 2·dims sides, a sequence kept as given
    (PyTorch passes a sequence of another length on to ``pad`` unchanged)."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * dims)
    try:
        sides = tuple(padding)
    except TypeError:
        raise ArgumentTypeError(f"{layer}: padding must be an int or a tuple of {2 * dims} ints, got "
                                f"{type(padding).__name__}") from None
    if not all(isinstance(side, int) and not isinstance(side, bool) for side in sides):
        raise ArgumentTypeError(f"{layer}: padding must be an int or a tuple of {2 * dims} ints, got {padding!r}")
    return sides


class _PadNd(Module):
    """Pad the last ``_dims`` dims of its input in ``_mode``."""

    _mode = "constant"
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: (C, W) or (N, C, W) to width W + left + right.

    Example::

        nn.ConstantPad1d(2, 3.5)(vizgrad.zeros(1, 1, 2))    # [[[3.5, 3.5, 0, 0, 3.5, 3.5]]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``; ``padding`` = (left, right, top, bottom).

    Example::

        nn.ConstantPad2d((1, 0, 2, 0), -1.0)(vizgrad.zeros(1, 3, 3)).shape    # (1, 5, 4)
    """

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``; ``padding`` = (left, right, top, bottom, front, back).

    Example::

        nn.ConstantPad3d(1, 0.5)(vizgrad.zeros(1, 2, 2, 2)).shape    # (1, 4, 4, 4)
    """

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros.

    Example::

        nn.ZeroPad1d((1, 2))(vizgrad.ones(1, 2))    # tensor([[0., 1., 1., 0., 0.]])
    """


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros; ``padding`` = (left, right, top, bottom).

    Example::

        nn.ZeroPad2d(1)(vizgrad.ones(1, 1, 2, 2)).shape    # (1, 1, 4, 4)
    """

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros; ``padding`` = (left, right, top, bottom, front, back).

    Example::

        nn.ZeroPad3d((1, 1, 0, 0, 2, 0))(vizgrad.ones(1, 2, 2, 2)).shape    # (1, 4, 2, 4)
    """

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) with its reflection about the edge entries
    (each amount below W).

    Example::

        nn.ReflectionPad1d(2)(vizgrad.arange(4.0).view(1, 1, 4))   # [[[2, 1, 0, 1, 2, 3, 2, 1]]]
    """

    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) by reflection.

    Example::

        nn.ReflectionPad2d((1, 1, 2, 0))(vizgrad.randn(1, 3, 4, 4)).shape    # (1, 3, 6, 6)
    """

    _mode = "reflect"
    _dims = 2


class ReflectionPad3d(_PadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) by reflection.

    Example::

        nn.ReflectionPad3d(1)(vizgrad.randn(1, 1, 2, 2, 2)).shape    # (1, 1, 4, 4, 4)
    """

    _mode = "reflect"
    _dims = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) by repeating its edge entries.

    Example::

        nn.ReplicationPad1d((1, 2))(vizgrad.arange(3.0).view(1, 3))   # [[0, 0, 1, 2, 2, 2]]
    """

    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) by repeating the edge entries.

    Example::

        nn.ReplicationPad2d(1)(vizgrad.randn(2, 3, 4, 4)).shape    # (2, 3, 6, 6)
    """

    _mode = "replicate"
    _dims = 2


class ReplicationPad3d(_PadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) by repeating the edge entries.

    Example::

        nn.ReplicationPad3d(2)(vizgrad.randn(1, 1, 2, 2, 2)).shape    # (1, 1, 6, 6, 6)
    """

    _mode = "replicate"
    _dims = 3


class CircularPad1d(_PadNd):
    """Pad the last dim of (C, W) or (N, C, W) by wrapping around (periodic boundaries).

    Example::

        nn.CircularPad1d(1)(vizgrad.arange(3.0).view(1, 3))    # tensor([[2., 0., 1., 2., 0.]])
    """

    _mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dims of (C, H, W) or (N, C, H, W) by wrapping around.

    Example::

        nn.CircularPad2d((1, 1, 0, 2))(vizgrad.randn(1, 2, 3, 3)).shape    # (1, 2, 5, 5)
    """

    _mode = "circular"
    _dims = 2


class CircularPad3d(_PadNd):
    """Pad the last three dims of (C, D, H, W) or (N, C, D, H, W) by wrapping around.

    Example::

        nn.CircularPad3d(1)(vizgrad.randn(1, 1, 2, 2, 2)).shape    # (1, 1, 4, 4, 4)
    """

    _mode = "circular"
    _dims = 3
