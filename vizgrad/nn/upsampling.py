"""Resampling layers: ``Upsample`` (and its fixed-mode forms), ``PixelShuffle``, ``PixelUnshuffle``, and
``ChannelShuffle``, which reorders channels."""

from . import functional as F
from .module import Module


class Upsample(Module):
    """Resize (N, C, L) or (N, C, H, W) inputs to ``size`` or by ``scale_factor`` (see
    :func:`vizgrad.nn.functional.interpolate` for the modes).

    Example::

        nn.Upsample(scale_factor=2, mode="bilinear")(vizgrad.randn(1, 3, 4, 4)).shape   # (1, 3, 8, 8)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        shown = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{shown}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """:class:`Upsample` with ``mode="nearest"`` for (N, C, H, W) inputs.

    Example::

        nn.UpsamplingNearest2d(scale_factor=2)(vizgrad.randn(1, 1, 2, 2)).shape   # (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """:class:`Upsample` with ``mode="bilinear"`` and ``align_corners=True``, as PyTorch's.

    Example::

        nn.UpsamplingBilinear2d(size=4)(vizgrad.randn(1, 1, 2, 2)).shape   # (1, 1, 4, 4)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C·r², H, W) to (*, C, H·r, W·r) (see :func:`vizgrad.nn.functional.pixel_shuffle`).

    Example::

        nn.PixelShuffle(2)(vizgrad.randn(1, 8, 3, 3)).shape    # (1, 2, 6, 6)
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H·r, W·r) to (*, C·r², H, W) (see :func:`vizgrad.nn.functional.pixel_unshuffle`).

    Example::

        nn.PixelUnshuffle(2)(vizgrad.randn(1, 2, 6, 6)).shape    # (1, 8, 3, 3)
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of (N, C, *) inputs across ``groups`` (ShuffleNet's shuffle; see
    :func:`vizgrad.nn.functional.channel_shuffle`).

    Example::

        nn.ChannelShuffle(2)(vizgrad.arange(4.0).view(1, 4, 1)).flatten()   # tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
