"""The inverse trigonometric functions and the hyperbolic family: asin, acos, asinh, acosh,
atanh, sinh, cosh (split from :mod:`vizgrad.ops.unary`, where sin, cos, tan, tanh and atan
live). Integers and bools promote to the default float dtype, as PyTorch's do.
"""

import numpy as np

from ..autograd.function import Op
from .registry import register
from .samples import unary

class Asin(Op):
    promotes, int_to_float = (0,), True   # integers and bools give the default float dtype

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.asin(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / ctx.xp.sqrt(1 - a * a)


@register(np.arcsin, unary(-0.9, 0.9), aliases=("arcsin",))
def asin(input):
    """Elementwise arcsine, in [-π/2, π/2] (NaN outside [-1, 1]).  d(asin x)/dx = 1/√(1 - x²).

    Example::

        vizgrad.asin(vizgrad.tensor([0.0, 1.0]))   # tensor([0.0000, 1.5708])
    """
    return Asin.apply(input)


class Acos(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.acos(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return -grad / ctx.xp.sqrt(1 - a * a)


@register(np.arccos, unary(-0.9, 0.9), aliases=("arccos",))
def acos(input):
    """Elementwise arccosine, in [0, π] (NaN outside [-1, 1]).  d(acos x)/dx = -1/√(1 - x²).

    Example::

        vizgrad.acos(vizgrad.tensor([1.0, 0.0]))   # tensor([0.0000, 1.5708])
    """
    return Acos.apply(input)


class Asinh(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.asinh(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / ctx.xp.sqrt(a * a + 1)


@register(np.arcsinh, unary(-3.0, 3.0), aliases=("arcsinh",))
def asinh(input):
    """Elementwise inverse hyperbolic sine.  d(asinh x)/dx = 1/√(x² + 1).

    Example::

        vizgrad.asinh(vizgrad.tensor([0.0, 1.0]))   # tensor([0.0000, 0.8814])
    """
    return Asinh.apply(input)


class Acosh(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.acosh(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / ctx.xp.sqrt((a - 1) * (a + 1))


@register(np.arccosh, unary(1.2, 4.0), aliases=("arccosh",))
def acosh(input):
    """Elementwise inverse hyperbolic cosine, for input ≥ 1 (NaN below).
    d(acosh x)/dx = 1/√(x² - 1).

    Example::

        vizgrad.acosh(vizgrad.tensor([1.0, 2.0]))   # tensor([0.0000, 1.3170])
    """
    return Acosh.apply(input)


class Atanh(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.atanh(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (1 - a * a)


@register(np.arctanh, unary(-0.9, 0.9), aliases=("arctanh",))
def atanh(input):
    """Elementwise inverse hyperbolic tangent, for input in (-1, 1) (±inf at ±1, NaN beyond).
    d(atanh x)/dx = 1/(1 - x²).

    Example::

        vizgrad.atanh(vizgrad.tensor([0.0, 0.5]))   # tensor([0.0000, 0.5493])
    """
    return Atanh.apply(input)


class Sinh(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.sinh(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.xp.cosh(a)


@register(np.sinh, unary())
def sinh(input):
    """Elementwise hyperbolic sine.  d(sinh x)/dx = cosh x.

    Example::

        vizgrad.sinh(vizgrad.tensor([0.0, 1.0]))   # tensor([0.0000, 1.1752])
    """
    return Sinh.apply(input)


class Cosh(Op):
    promotes, int_to_float = (0,), True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return ctx.xp.cosh(a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.xp.sinh(a)


@register(np.cosh, unary())
def cosh(input):
    """Elementwise hyperbolic cosine.  d(cosh x)/dx = sinh x.

    Example::

        vizgrad.cosh(vizgrad.tensor([0.0, 1.0]))   # tensor([1.0000, 1.5431])
    """
    return Cosh.apply(input)
