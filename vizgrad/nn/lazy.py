"""Lazy layers: ``LazyLinear`` and ``LazyConv2d`` infer their input size at the first call.

Until then their weight and bias are :class:`UninitializedParameter`: using them (their
shape, an init function, ``numel``) raises an error that says to run the module once.
The first forward gives the parameters their shape and PyTorch's default init, in place
(an optimizer made before keeps working), and the module becomes a plain ``Linear`` /
``Conv2d``.
"""

from ..errors import ArgumentError
from .conv import Conv2d
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


class LazyConv2d(LazyModuleMixin, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` comes from its first input ((N, C, H, W) or (C, H, W)).

    Example::

        conv = nn.LazyConv2d(8, kernel_size=3)
        conv(vizgrad.randn(2, 3, 10, 10)).shape   # (2, 8, 8, 8); now Conv2d(3, 8, ...)
    """

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(groups, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)
        self.in_channels = 0
        self._factory = {"device": device, "dtype": dtype}

    def _make_parameters(self, shape, bias, device, dtype):
        self.weight = UninitializedParameter()
        if bias:
            self.bias = UninitializedParameter()
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        from .. import creation
        channels = input.shape[0] if input.ndim == 3 else input.shape[1]
        if channels % self.groups:
            raise ArgumentError(f"LazyConv2d: in_channels ({channels}) must be divisible by groups ({self.groups})")
        self.in_channels = channels
        factory = dict(self._factory)
        factory["dtype"] = factory["dtype"] or input.dtype
        factory["device"] = factory["device"] or input.device
        shape = (self.out_channels, channels // self.groups) + self.kernel_size
        self._materialize("weight", creation.empty(*shape, **factory))
        self._materialize("bias", creation.empty(self.out_channels, **factory))
        del self._factory
