"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` infer their input size at the first call.

Until then their weight and bias are :class:`UninitializedParameter`: using them (their
shape, an init function, ``numel``) raises an error that says to run the module once.
The first forward gives the parameters their shape and PyTorch's default init, in place
(an optimizer made before keeps working), and the module becomes a plain ``Linear``,
``Conv2d``, ``BatchNorm1d``... The normalization layers' running statistics get their size
then too.
"""

from ..errors import ArgumentError
from .. import creation
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            _reset_affine)
from .linear import Linear
from .module import Module, Parameter, UninitializedParameter


class LazyModuleMixin:
    """Shared by lazy modules: ``has_uninitialized_params`` and the first-call initialization."""

    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def _materialize(self, name, template):
        """Give the uninitialized parameter ``name`` the shape, dtype and device of ``template``."""
        param = self._parameters.get(name)
        if isinstance(param, UninitializedParameter):
            param._array = template._array
            param.__class__ = Parameter

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            self.reset_parameters()
            if self.cls_to_become is not None:
                object.__setattr__(self, "__class__", self.cls_to_become)
        return Module.__call__(self, *args, **kwargs)      # (not super(): the class may have changed)


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is the last dim of its first input.

    Example::

        layer = nn.LazyLinear(4)
        layer(vizgrad.randn(8, 3))     # now Linear(in_features=3, out_features=4, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, out_features, bias=False, device=device, dtype=dtype)
        self._factory = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        from .. import creation
        self.in_features = input.shape[-1]
        factory = dict(self._factory)
        factory["dtype"] = factory["dtype"] or input.dtype
        factory["device"] = factory["device"] or input.device
        self._materialize("weight", creation.empty(self.out_features, self.in_features, **factory))
        self._materialize("bias", creation.empty(self.out_features, **factory))
        del self._factory


class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` comes from its first input ((N, C, *size) or (C, *size))."""

    def _make_parameters(self, shape, bias, device, dtype):
        self.in_channels = 0
        self._factory = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        name = type(self).__name__
        channels = input.shape[0] if input.ndim == self._dims + 1 else input.shape[1]
        if channels % self.groups:
            raise ArgumentError(f"{name}: in_channels ({channels}) must be divisible by groups ({self.groups})")
        self.in_channels = channels
        factory = dict(self._factory)
        factory["dtype"] = factory["dtype"] or input.dtype
        factory["device"] = factory["device"] or input.device
        if self._transposed:
            shape = (channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, channels // self.groups) + self.kernel_size
        self._materialize("weight", creation.empty(*shape, **factory))
        self._materialize("bias", creation.empty(self.out_channels, **factory))
        del self._factory


def _lazy_conv(base, doc):
    """The lazy form of the convolution layer ``base``: the same arguments less ``in_channels``."""
    # (in_channels is given as groups, which divides it, until the first input gives it)
    if base._transposed:
        def signature(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                      dilation=1, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, groups, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                          dilation, padding_mode, device=device, dtype=dtype)
    else:
        def signature(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                      padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, groups, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                          padding_mode, device=device, dtype=dtype)
    name = "Lazy" + base.__name__
    signature.__name__, signature.__qualname__ = "__init__", f"{name}.__init__"
    return type(name, (_LazyConvMixin, base), {"__init__": signature, "cls_to_become": base, "__doc__": doc,
                                                "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, """A :class:`Conv1d` whose ``in_channels`` comes from its first input.

    Example::

        conv = nn.LazyConv1d(8, kernel_size=3)
        conv(vizgrad.randn(2, 3, 10)).shape       # (2, 8, 8); now Conv1d(3, 8, ...)
    """)
LazyConv3d = _lazy_conv(Conv3d, """A :class:`Conv3d` whose ``in_channels`` comes from its first input.

    Example::

        conv = nn.LazyConv3d(4, kernel_size=3)
        conv(vizgrad.randn(1, 2, 5, 5, 5)).shape  # (1, 4, 3, 3, 3)
    """)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, """A :class:`ConvTranspose1d` whose ``in_channels`` comes from
    its first input.

    Example::

        up = nn.LazyConvTranspose1d(2, kernel_size=3, stride=2)
        up(vizgrad.randn(1, 4, 10)).shape         # (1, 2, 21)
    """)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, """A :class:`ConvTranspose2d` whose ``in_channels`` comes from
    its first input.

    Example::

        up = nn.LazyConvTranspose2d(4, kernel_size=2, stride=2)
        up(vizgrad.randn(2, 8, 7, 7)).shape       # (2, 4, 14, 14)
    """)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, """A :class:`ConvTranspose3d` whose ``in_channels`` comes from
    its first input.

    Example::

        up = nn.LazyConvTranspose3d(2, kernel_size=2, stride=2)
        up(vizgrad.randn(1, 4, 3, 3, 3)).shape    # (1, 2, 6, 6, 6)
    """)


LazyConv2d = _lazy_conv(Conv2d, """A :class:`Conv2d` whose ``in_channels`` comes from its first input ((N, C, H, W)
    or (C, H, W)).

    Example::

        conv = nn.LazyConv2d(8, kernel_size=3)
        conv(vizgrad.randn(2, 3, 10, 10)).shape   # (2, 8, 8, 8); now Conv2d(3, 8, ...)
    """)


class _LazyNormMixin(LazyModuleMixin):
    """A batch or instance normalization whose ``num_features`` is dim 1 of its first input
    (dim 0 of an unbatched instance-norm input); its parameters and running statistics are
    made then."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(1, eps, momentum, affine, track_running_stats, device, dtype)
        self.num_features = 0
        self._factory = {"device": device, "dtype": dtype}
        for name in ("weight", "bias"):
            if self._parameters.get(name) is not None:
                self._parameters[name] = UninitializedParameter()
        for name in ("running_mean", "running_var"):
            if self._buffers.get(name) is not None:
                self._buffers[name] = creation.empty(0, device=device, dtype=dtype)

    def has_uninitialized_params(self):
        return self.num_features == 0

    def reset_parameters(self):
        if self.num_features != 0:
            self.reset_running_stats()
            _reset_affine(self)

    def initialize_parameters(self, input, *args, **kwargs):
        unbatched = isinstance(self, _LazyInstanceNorm) and input.ndim == self._input_dims[0]
        self.num_features = input.shape[0] if unbatched else input.shape[1]
        factory = dict(self._factory)
        factory["dtype"] = factory["dtype"] or input.dtype
        factory["device"] = factory["device"] or input.device
        for name in ("weight", "bias"):
            self._materialize(name, creation.empty(self.num_features, **factory))
        for name in ("running_mean", "running_var"):
            if self._buffers.get(name) is not None:
                self._buffers[name] = creation.empty(self.num_features, **factory)
        del self._factory


class _LazyInstanceNorm(_LazyNormMixin):
    """(Its unbatched inputs have their channels in dim 0.)"""


def _lazy_norm(base, mixin, example):
    name = "Lazy" + base.__name__
    doc = f"""A :class:`{base.__name__}` whose ``num_features`` comes from its first input.

    Example::

        {example}
    """
    return type(name, (mixin, base), {"cls_to_become": base, "__doc__": doc, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, _LazyNormMixin, "nn.LazyBatchNorm1d()(vizgrad.randn(4, 3)).shape    # (4, 3)")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, _LazyNormMixin,
                             "nn.LazyBatchNorm2d()(vizgrad.randn(4, 3, 5, 5)).shape    # (4, 3, 5, 5)")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, _LazyNormMixin,
                             "nn.LazyBatchNorm3d()(vizgrad.randn(2, 3, 2, 4, 4)).shape    # (2, 3, 2, 4, 4)")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, _LazyInstanceNorm,
                                "nn.LazyInstanceNorm1d()(vizgrad.randn(4, 3, 6)).shape    # (4, 3, 6)")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, _LazyInstanceNorm,
                                "nn.LazyInstanceNorm2d()(vizgrad.randn(4, 3, 5, 5)).shape    # (4, 3, 5, 5)")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, _LazyInstanceNorm,
                                "nn.LazyInstanceNorm3d()(vizgrad.randn(2, 3, 2, 4, 4)).shape    # (2, 3, 2, 4, 4)")
