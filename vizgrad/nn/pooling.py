"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool1d/2d`` (no parameters),
calling the functional pooling of :mod:`vizgrad.ops.pooling`."""

from . import functional as F
from .module import Module


def _single(value):
    return (value,) if isinstance(value, int) else tuple(value)


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L).

    Example::

        nn.MaxPool1d(2)(vizgrad.randn(1, 3, 8)).shape     # (1, 3, 4)
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W): the largest value of each window;
    ``stride`` defaults to ``kernel_size``.

    Example::

        nn.MaxPool2d(2)(vizgrad.randn(1, 3, 8, 8)).shape  # (1, 3, 4, 4)
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """1-D average pooling over (N, C, L) or (C, L).

    Example::

        nn.AvgPool1d(2)(vizgrad.randn(1, 3, 8)).shape     # (1, 3, 4)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """2-D average pooling over (N, C, H, W) or (C, H, W): the mean of each window;
    ``stride`` defaults to ``kernel_size``.

    Example::

        nn.AvgPool2d(2)(vizgrad.randn(1, 3, 8, 8)).shape  # (1, 3, 4, 4)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Average pooling of (N, C, L) or (C, L) to a fixed length ``output_size``.

    Example::

        nn.AdaptiveAvgPool1d(1)(vizgrad.randn(2, 3, 10)).shape   # (2, 3, 1)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """Average pooling of (N, C, H, W) or (C, H, W) to a fixed ``output_size`` (an int or a
    pair; None keeps that size) whatever the input size.

    Example::

        nn.AdaptiveAvgPool2d(1)(vizgrad.randn(2, 64, 7, 7)).shape   # (2, 64, 1, 1)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"
