"""Affine layers: ``Identity``, ``Linear``, ``Bilinear``."""

import math

from .. import creation
from ..errors import check_size
from ..ops.activation import bilinear, linear
from . import init
from .module import Module, Parameter


def _empty(*shape, device=None, dtype=None):
    return creation.empty(*shape, device=device, dtype=dtype)


def uniform_bias_(bias, fan_in):
    """PyTorch's default bias init: U(-1/√fan_in, 1/√fan_in)."""
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. for a removed layer).

    Example::

        nn.Identity()(x) is x     # True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x Wᵀ + b``: weight (out_features, in_features), bias (out_features).

    Both start in U(-1/√in_features, 1/√in_features), as PyTorch (the weight through
    ``kaiming_uniform_(a=√5)``).

    Example::

        layer = nn.Linear(3, 4)
        layer(vizgrad.randn(8, 3)).shape     # (8, 4)
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features = check_size("Linear", "in_features", in_features)
        self.out_features = out_features = check_size("Linear", "out_features", out_features)
        self.weight = Parameter(_empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the weight and bias again, from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            uniform_bias_(self.bias, self.in_features)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``yₒ = x₁ᵀ Aₒ x₂ + bₒ``: weight (out_features, in1_features, in2_features).

    Weight and bias start in U(-1/√in1_features, 1/√in1_features), as PyTorch.

    Example::

        layer = nn.Bilinear(3, 4, 5)
        layer(vizgrad.randn(8, 3), vizgrad.randn(8, 4)).shape    # (8, 5)
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
