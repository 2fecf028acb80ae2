"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``.

They hold a weight and a bias and call the functional convolutions of
:mod:`vizgrad.ops.conv`. Initialization is PyTorch's: the weight through
``kaiming_uniform_(a=√5)`` and the bias from U(-1/√fan_in, 1/√fan_in), with
fan_in = weight.shape[1] · prod(kernel_size).
"""

import math

from ..errors import ArgumentError, as_int, check_size
from .. import creation
from . import functional as F
from . import init
from .linear import uniform_bias_
from .module import Module, Parameter


#: Conv*d's padding modes: zeros inside the convolution, the others through F.pad first.
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(layer, value, d, name, minimum=1):
    """``value`` as ``d`` ints, each at least ``minimum``, or an error naming the layer."""
    if isinstance(value, int) and not isinstance(value, bool):
        values = (value,) * d
    elif isinstance(value, (tuple, list)) and len(value) == d:
        values = tuple(as_int(layer, name, v) for v in value)
    else:
        raise ArgumentError(f"{layer}: {name} must be an int or a tuple of {d} ints, got {value!r}")
    if any(v < minimum for v in values):
        bound = "non-negative" if minimum == 0 else "positive"
        raise ArgumentError(f"{layer}: {name} must be {bound}, got {value!r}")
    return values


class _ConvNd(Module):
    """What every convolution layer shares: arguments, parameters, init and repr."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", output_padding=0, device=None, dtype=None):
        super().__init__()
        d = self._dims
        layer = type(self).__name__
        in_channels = check_size(layer, "in_channels", in_channels, 1)
        out_channels = check_size(layer, "out_channels", out_channels, 1)
        groups = check_size(layer, "groups", groups, 1)
        if in_channels % groups:
            raise ArgumentError(f"{layer}: in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups:
            raise ArgumentError(f"{layer}: out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in PADDING_MODES:
            raise ArgumentError(f"{layer}: padding_mode must be one of {list(PADDING_MODES)}, but got "
                                f"padding_mode={padding_mode!r}")
        if self._transposed and padding_mode != "zeros":
            raise ArgumentError(f'{layer}: only "zeros" padding mode is supported, got padding_mode={padding_mode!r}')
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ArgumentError(f"{layer}: invalid padding string {padding!r}, should be one of "
                                    "['valid', 'same']")
            if padding == "same" and any(s != 1 for s in _tuple(layer, stride, d, "stride")):
                raise ArgumentError(f"{layer}: padding='same' is not supported for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(layer, kernel_size, d, "kernel_size")
        self.stride = _tuple(layer, stride, d, "stride")
        self.padding = padding if isinstance(padding, str) else _tuple(layer, padding, d, "padding", 0)
        self.dilation = _tuple(layer, dilation, d, "dilation")
        self.output_padding = _tuple(layer, output_padding, d, "output_padding", 0)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self._make_parameters(shape, bias, device, dtype)

    def _make_parameters(self, shape, bias, device, dtype):
        self.weight = Parameter(creation.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(self.out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the weight and bias again, from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            uniform_bias_(self.bias, fan_in)

    def _padded(self, input):
        """(input, padding for the convolution): with a padding mode other than zeros, the
        input padded by F.pad in that mode (PyTorch's (left, right) per dim, last dim first;
        'same' splits the kernel's reach as PyTorch does, the extra element on the right)
        and no padding left for the convolution."""
        if self.padding_mode == "zeros" or self.padding == "valid":
            return input, self.padding
        if self.padding == "same":
            reach = [dil * (k - 1) for dil, k in zip(self.dilation, self.kernel_size)]
            sides = [(total // 2, total - total // 2) for total in reach]
        else:
            sides = [(p, p) for p in self.padding]
        pad = tuple(side for pair in reversed(sides) for side in pair)
        return F.pad(input, pad, mode=self.padding_mode), 0

    def extra_repr(self):
        d = self._dims
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * d:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * d:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * d:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    """Conv1d, Conv2d and Conv3d: PyTorch's arguments in its order; the forward pads the input
    in ``padding_mode`` (see :meth:`_ConvNd._padded`), then convolves."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, input):
        input, padding = self._padded(input)
        return self._convolution(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L); weight (out, in/groups, k).

    Example::

        conv = nn.Conv1d(3, 16, kernel_size=5, padding=2)
        conv(vizgrad.randn(8, 3, 32)).shape      # (8, 16, 32)
    """

    _dims, _convolution = 1, staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (out, in/groups, kH, kW).

    Example::

        conv = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        conv(vizgrad.randn(32, 1, 28, 28)).shape   # (32, 8, 28, 28)
    """

    _convolution = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (out, in/groups, kD, kH, kW).

    Example::

        conv = nn.Conv3d(1, 4, kernel_size=3, padding=1)
        conv(vizgrad.randn(2, 1, 8, 16, 16)).shape   # (2, 4, 8, 16, 16)
    """

    _dims, _convolution = 3, staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ArgumentError(f"{type(self).__name__}: padding must be an int or a tuple, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device=device, dtype=dtype)

    def forward(self, input, output_size=None):
        return self._convolution(input, self.weight, self.bias, self.stride, self.padding,
                                 self._output_padding(input, output_size), self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's rule), or the layer's own."""
        if output_size is None:
            return self.output_padding
        d = self._dims
        output_size = tuple(output_size)[-d:]
        size_in = tuple(input.shape[-d:])
        padding = []
        for n, size, s, p, dil, k in zip(size_in, output_size, self.stride, self.padding, self.dilation,
                                          self.kernel_size):
            smallest = (n - 1) * s - 2 * p + dil * (k - 1) + 1
            if not smallest <= size < smallest + s:
                raise ArgumentError(f"requested an output size of {output_size}, but valid sizes range from "
                                    f"{smallest} to {smallest + s - 1} (for an input of {size_in})")
            padding.append(size - smallest)
        return tuple(padding)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L); weight (in, out/groups, k).

    Example::

        up = nn.ConvTranspose1d(4, 2, kernel_size=3, stride=2)
        up(vizgrad.randn(1, 4, 10)).shape       # (1, 2, 21)
    """

    _dims, _convolution = 1, staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W); weight
    (in, out/groups, kH, kW). ``forward(input, output_size)`` picks the output_padding
    that gives ``output_size``.

    Example::

        up = nn.ConvTranspose2d(8, 4, kernel_size=2, stride=2)
        up(vizgrad.randn(2, 8, 7, 7)).shape     # (2, 4, 14, 14)
    """

    _convolution = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight
    (in, out/groups, kD, kH, kW).

    Example::

        up = nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2)
        up(vizgrad.randn(1, 4, 3, 3, 3)).shape   # (1, 2, 6, 6, 6)
    """

    _dims, _convolution = 3, staticmethod(F.conv_transpose3d)
