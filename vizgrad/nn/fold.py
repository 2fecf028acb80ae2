"""``Unfold`` and ``Fold``: im2col and col2im as layers (see :func:`vizgrad.nn.functional.unfold`)."""

from . import functional as F
from .module import Module


class Unfold(Module):
    """The sliding blocks of an (N, C, H, W) input as columns (N, C·kH·kW, L).

    Example::

        nn.Unfold(kernel_size=2)(vizgrad.randn(1, 3, 4, 4)).shape    # (1, 12, 9)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Columns of blocks (N, C·kH·kW, L) summed back into an (N, C, H, W) image of ``output_size``.

    Example::

        nn.Fold(output_size=(4, 4), kernel_size=2)(vizgrad.randn(1, 12, 9)).shape    # (1, 3, 4, 4)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
