"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``, ``LPPool1d/2d/3d`` (no parameters),
calling the functional pooling of :mod:`vizgrad.ops.pooling` and :mod:`vizgrad.ops.adaptive_pooling`."""

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


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W); ``stride`` defaults to ``kernel_size``.

    Example::

        nn.MaxPool3d(2)(vizgrad.randn(1, 3, 4, 8, 8)).shape  # (1, 3, 2, 4, 4)
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W); ``stride`` defaults to ``kernel_size``.

    Example::

        nn.AvgPool3d(2)(vizgrad.randn(1, 3, 4, 8, 8)).shape  # (1, 3, 2, 4, 4)
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed ``output_size`` (an int or
    a triple; None keeps that size).

    Example::

        nn.AdaptiveAvgPool3d(1)(vizgrad.randn(2, 8, 3, 5, 5)).shape   # (2, 8, 1, 1, 1)
    """

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) to a fixed length ``output_size``.

    Example::

        nn.AdaptiveMaxPool1d(1)(vizgrad.randn(2, 3, 10)).shape   # (2, 3, 1)
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) to a fixed ``output_size`` (an int or a pair;
    None keeps that size).

    Example::

        nn.AdaptiveMaxPool2d((2, 2))(vizgrad.randn(2, 3, 7, 7)).shape   # (2, 3, 2, 2)
    """

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed ``output_size``.

    Example::

        nn.AdaptiveMaxPool3d(1)(vizgrad.randn(2, 3, 4, 5, 5)).shape   # (2, 3, 1, 1, 1)
    """

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        d = self._dims

        def spread(value):
            return (value,) * d if isinstance(value, int) else tuple(value)
        self.kernel_size = spread(kernel_size)
        self.stride = spread(stride if stride is not None else kernel_size)
        self.padding = spread(padding)

    def forward(self, input, indices, output_size=None):
        unpool = {1: F.max_unpool1d, 2: F.max_unpool2d, 3: F.max_unpool3d}[self._dims]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool1d`: values back at their indices, zeros elsewhere.

    Example::

        pool, unpool = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
        unpool(*pool(vizgrad.tensor([[[1.0, 3.0, 2.0, 5.0]]])))     # [[[0., 3., 0., 5.]]]
    """

    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool2d`: values back at their indices, zeros elsewhere;
    ``forward(input, indices, output_size)`` picks the size where it is ambiguous.

    Example::

        pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        unpool(*pool(vizgrad.randn(1, 1, 4, 4))).shape               # (1, 1, 4, 4)
    """


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool3d`.

    Example::

        pool, unpool = nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)
        unpool(*pool(vizgrad.randn(1, 1, 4, 4, 4))).shape            # (1, 1, 4, 4, 4)
    """

    _dims = 3


class _LPPoolNd(Module):
    _dims = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        pool = {1: F.lp_pool1d, 2: F.lp_pool2d, 3: F.lp_pool3d}[self._dims]
        return pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) or (C, L): the ``norm_type``-norm of each window.

    Example::

        nn.LPPool1d(2, 2)(vizgrad.tensor([[[3.0, 4.0]]]))    # [[[5.]]]
    """

    _dims = 1


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W): the ``norm_type``-norm of each window.

    Example::

        nn.LPPool2d(2, 2)(vizgrad.rand(1, 3, 8, 8)).shape    # (1, 3, 4, 4)
    """


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        nn.LPPool3d(2, 2)(vizgrad.rand(1, 3, 4, 4, 4)).shape    # (1, 3, 2, 2, 2)
    """

    _dims = 3
