"""Elementwise ops of two operands, with broadcasting (copysign, ldexp, nextafter, gcd and lcm
live in :mod:`vizgrad.ops.representation`, div, floor_divide, remainder and fmod in
:mod:`vizgrad.ops.division`).

Each op's forward and backward sit together; gradients come back in the
broadcast shape and the engine sums them to each input's shape.
"""

import math

import numpy as np

from .. import dtypes
from ..autograd.function import Op
from ..dtypes import bool_
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, as_integer_scalar, as_number, not_a_tensor, public
from ..tensor import Tensor
from .registry import Sample, bind_method, register
from .samples import binary, booleans, values


class OnBools(Op):
    """Arithmetic of bools as PyTorch defines it (``+`` and ``maximum`` are a logical or,
    ``*`` and ``minimum`` a logical and); bools have no gradient."""

    differentiable = False
    function = ""

    @classmethod
    def forward(cls, ctx, a, b, **params):
        xp = ctx.xp
        return getattr(xp, cls.function)(xp.asarray(a), xp.asarray(b))


class BoolOr(OnBools):
    function = "logical_or"


class BoolAnd(OnBools):
    function = "logical_and"


class BoolSub(Op):
    differentiable = False

    @staticmethod
    def forward(ctx, a, b, **params):
        raise DTypeError("sub: subtracting two bool tensors (the - operator) is not supported; use the ^ "
                         "operator or logical_xor() instead, or convert with .int() first")


class Add(Op):
    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolOr

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = alpha
        return a + b if alpha == 1 else a + b * alpha

    @staticmethod
    def backward(ctx, grad):
        return grad, grad if ctx.alpha == 1 else grad * ctx.alpha


@register(lambda a, b, alpha=1: a + b * alpha, binary())
def add(input, other, *, alpha=1):
    """Elementwise ``input + alpha * other``, broadcasting.

    d/da = 1, d/db = alpha.

    Example::

        vizgrad.add(vizgrad.ones(2, 3), vizgrad.arange(3.0))   # each row + [0, 1, 2]
    """
    return Add.apply(input, other, alpha=alpha)


class Sub(Op):
    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolSub

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = alpha
        return a - b if alpha == 1 else a - b * alpha

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.alpha == 1 else grad * -ctx.alpha


def _refuse_bool_tensors(op, input, other):
    """PyTorch refuses ``-`` with a bool tensor on either side, whatever the other operand."""
    bools = (getattr(input, "dtype", None) is bool_) + (getattr(other, "dtype", None) is bool_)
    if bools == 2:
        raise DTypeError(f"{op}: subtracting two bool tensors (the - operator) is not supported; use the ^ "
                         "operator or logical_xor() instead, or convert with .int() first")
    if bools:
        raise DTypeError(f"{op}: subtraction, the - operator, with a bool tensor is not supported; to invert "
                         "a mask use the ~ operator or logical_not() instead")


@register(lambda a, b, alpha=1: a - b * alpha, binary(), aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """Elementwise ``input - alpha * other``, broadcasting.  d/da = 1, d/db = -alpha."""
    _refuse_bool_tensors("sub", input, other)
    return Sub.apply(input, other, alpha=alpha)


class Rsub(Op):
    """``other - alpha * input``: what Python's ``2 - x`` computes; PyTorch names its node
    ``RsubBackward1`` when ``other`` is a number, ``RsubBackward0`` when it is a tensor."""

    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolSub

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = alpha
        ctx.number_other = not hasattr(b, "shape")
        return b - a if alpha == 1 else b - a * alpha

    @staticmethod
    def backward(ctx, grad):
        return -grad if ctx.alpha == 1 else grad * -ctx.alpha, grad


@register(lambda a, b, alpha=1: b - a * alpha, binary(), method=False)
def rsub(input, other, *, alpha=1):
    """Elementwise ``other - alpha * input`` (``2 - x`` is ``rsub(x, 2)``), broadcasting.
    d/dinput = -alpha, d/dother = 1.

    Example::

        vizgrad.rsub(vizgrad.tensor([1.0, 2.0]), 1)     # tensor([0., -1.])
    """
    _refuse_bool_tensors("rsub", input, other)
    return Rsub.apply(input, other, alpha=alpha)


class Mul(Op):
    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolAnd

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return grad * b if needs_a else None, grad * a if needs_b else None


@register(np.multiply, binary(), aliases=("multiply",))
def mul(input, other):
    """Elementwise product, broadcasting.  d(ab)/da = b, d(ab)/db = a.

    Example::

        x = vizgrad.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()     # x.grad == [3., 3.]
    """
    return Mul.apply(input, other)


def _reference_dtype(result, *operands):
    """A NumPy result in the dtype PyTorch gives it: integer true division and integers
    combined with Python floats give float32 (the default dtype), where NumPy gives float64."""
    arrays = [operand for operand in operands if isinstance(operand, np.ndarray)]
    if arrays and all(array.dtype.kind in "biu" for array in arrays) and np.asarray(result).dtype == np.float64:
        return np.asarray(result, dtype=np.float32)
    return result


def _integers(rng, shape, low, high, nonzero=False):
    array = rng.integers(low, high, size=shape)
    return np.where(array == 0, 1, array) if nonzero else array


@public("float_power")
def float_power(input, exponent):
    """``input ** exponent`` computed in float64, whatever the dtypes given.

    Example::

        vizgrad.float_power(vizgrad.tensor([2]), 2)  # tensor([4.], dtype=vizgrad.float64)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("float_power", "input", input)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dtypes.float64)
    else:
        exponent = as_number("float_power", "exponent", exponent)
    return pow(input.to(dtypes.float64), exponent)


def _xlogy_reference(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y)))
    return np.where(np.isnan(y), y, out)


def _xlogy_samples(rng):
    # (x = 0 is a kink: the gradients there are PyTorch's zeros, tested against it in test_torch_api)
    yield Sample((values(rng, (3, 4), away_from=0.0), values(rng, (3, 4), 0.5, 2.0)), name="same shape")
    yield Sample((values(rng, (4,), away_from=0.0), values(rng, (3, 4), 0.5, 2.0)), name="broadcast")


class XLogY(Op):
    """``x · log(y)``, or ``x · log(1 + y)`` with ``shifted``: 0 where x is 0 (NaN where y is).
    Where x is 0 and the log is -inf or NaN (y ≤ 0, or ≤ -1 shifted) the gradients are 0,
    elsewhere d/dx = log(y) (at x = 0 too, as PyTorch) and d/dy = x / y. Integers and bools
    give the default float dtype."""

    broadcasts = True
    promotes = (0, 1)
    int_to_float = True

    @staticmethod
    def forward(ctx, x, y, shifted):
        xp = ctx.xp
        ctx.shifted = shifted
        ctx.save_for_backward(x, y)
        _, safe = XLogY.defined(xp, x, y, shifted)
        out = x * (xp.log1p(safe) if shifted else xp.log(safe))
        return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(out), out)     # +0 where x is 0, as PyTorch

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        xp, shifted = ctx.xp, ctx.shifted
        needs_x, needs_y = ctx.needs_input_grad
        undefined, safe = XLogY.defined(xp, x, y, shifted)
        grad_x = grad_y = None
        if needs_x:
            log = xp.log1p(safe) if shifted else xp.log(safe)
            grad_x = grad * xp.where(undefined, xp.zeros_like(log), log)
        if needs_y:
            grad_y = grad * (x / (safe + 1 if shifted else safe))
        return grad_x, grad_y

    @staticmethod
    def defined(xp, x, y, shifted):
        """``(undefined, safe)``: where x is 0 and the log of y is not finite (y ≤ 0, or ≤ -1
        shifted), and y with the log's neutral point there (1 for log, 0 for log1p)."""
        neutral = 0.0 if shifted else 1.0
        undefined = (x == 0) & (y <= neutral - 1)
        return undefined, xp.where(undefined, xp.full_like(y, neutral), y)


@register(_xlogy_reference, _xlogy_samples)
def xlogy(input, other):
    """``input · log(other)``, and 0 where ``input`` is 0 (NaN where ``other`` is): the
    entropy-style term. d/dx = log(y) (0 where x is 0 and y ≤ 0), d/dy = x / y.

    Example::

        vizgrad.xlogy(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([0.0, 3.0]))   # tensor([0.0000, 2.1972])
    """
    _require_tensors("xlogy", input=input, other=other)
    return XLogY.apply(input, other, shifted=False)


def _xlog1py_reference(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0.0, x * np.log1p(np.where(x == 0, 0.0, y)))
    return np.where(np.isnan(y), y, out)


@register(_xlog1py_reference, _xlogy_samples, method=False)
def xlog1py(input, other):
    """``input · log(1 + other)``, and 0 where ``input`` is 0 (NaN where ``other`` is):
    ``torch.special.xlog1py``. d/dx = log(1 + y) (0 where x is 0 and y ≤ -1), d/dy = x / (1 + y).

    Example::

        vizgrad.special.xlog1py(vizgrad.tensor([0.0, 2.0]), vizgrad.tensor([-1.0, 3.0]))   # tensor([0.0000, 2.7726])
    """
    _require_tensors("xlog1py", input=input, other=other)
    return XLogY.apply(input, other, shifted=True)


def _heaviside_samples(rng):
    x = values(rng, (3, 4))
    x.flat[[1, 6]] = 0.0
    yield Sample((x, values(rng, (4,))), name="zeros")


@register(np.heaviside, _heaviside_samples, differentiable=False)
def heaviside(input, values):
    """The step function: 0 where ``input`` < 0, 1 where it is > 0, and ``values`` where it
    is 0. No gradient.

    Example::

        vizgrad.heaviside(vizgrad.tensor([-1.0, 0.0, 2.0]), vizgrad.tensor([0.5]))   # tensor([0.0000, 0.5000, 1.0000])
    """
    _require_tensors("heaviside", input=input, values=values)
    if values.dtype is not input.dtype:
        raise DTypeError(f"heaviside: values is {values.dtype.name} but input is {input.dtype.name}; they must "
                         "have the same dtype")
    steps = where(input > 0, input.new_ones(()), input.new_zeros(()))
    return where(input == 0, values, steps).detach()


class Pow(Op):
    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        integer_exponents = not isinstance(b, (int, float)) and not ctx.backend.is_floating(b)
        if integer_exponents and bool(xp.any(b < 0)):
            out = _negative_integer_power(xp, a, b)
        else:
            out = a ** b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs_a:
            if isinstance(b, (int, float)):
                grad_a = grad * b * a ** (b - 1) if b != 0 else xp.zeros_like(grad)
            else:
                grad_a = grad * b * a ** (b - 1)
        if needs_b:
            # d(a^b)/db = a^b log a; where a == 0 (and b >= 0) the limit is 0
            if isinstance(a, (int, float)):
                grad_b = grad * out * math.log(a) if a != 0 else xp.zeros_like(grad)
            else:
                safe = xp.where(a == 0, 1.0, a)
                grad_b = xp.where(a == 0, 0.0, grad * out * xp.log(safe))
        return grad_a, grad_b


def _negative_integer_power(xp, a, b):
    """``a ** b`` for integers where some of the exponents ``b`` are negative, as PyTorch:
    there the result is 1 where ``a`` is 1, (-1)^b where it is -1 and 0 elsewhere (0 too)."""
    if isinstance(a, int):
        a = xp.asarray(a, dtype=b.dtype)
    negative = b < 0
    powered = a ** xp.where(negative, xp.zeros_like(b), b)
    one, zero = xp.ones_like(powered), xp.zeros_like(powered)
    reciprocal = xp.where(a == 1, one, xp.where(a == -1, one - 2 * (b & 1), zero))
    return xp.where(negative, reciprocal, powered)


def _pow_samples(rng):
    yield from binary(low=0.5, high=2.0, other_low=-1.5, other_high=1.5, scalar=None)(rng)
    for exponent in (2, 3, 0.5, -1.5, 0):
        yield Sample((values(rng, (3, 4), 0.5, 2.0), exponent), name=f"scalar exponent {exponent}")
    yield Sample((values(rng, (3,), -2.0, 2.0), 2), name="negative base, integer exponent")
    yield Sample((2.0, values(rng, (3,), -1.0, 1.0)), name="scalar base")


@register(np.power, _pow_samples)
def pow(input, exponent):
    """Elementwise ``input ** exponent``; either may be a tensor or a number.

    Integer tensors raised to integer exponents stay integers; as in PyTorch, a negative
    Python-int exponent is then an error, while a negative exponent in an integer tensor
    gives 1 where the base is 1, ±1 where it is -1 and 0 elsewhere. A float on either side
    gives a float result. Bool with bool is refused, as in PyTorch, except a bool tensor to a
    Python bool (``x ** True`` is a copy, ``x ** False`` all True).

    d(a^b)/da = b·a^(b-1), d(a^b)/db = a^b·ln a.
    """
    if type(exponent) is int and exponent < 0 and not dtypes.result_type(input, exponent).is_floating_point:
        raise ArgumentError(f"pow: integers to negative integer powers are not allowed (input "
                            f"{_describe(input)}, exponent {_describe(exponent)}); use a float input, "
                            "e.g. x.float() ** -1")
    tensors = isinstance(input, Tensor) or isinstance(exponent, Tensor)
    if tensors and dtypes.result_type(input, exponent) is bool_:
        if not (isinstance(input, Tensor) and type(exponent) is bool):
            raise DTypeError(f"pow: not implemented for a bool input with a bool exponent (input "
                             f"{_describe(input)}, exponent {_describe(exponent)}); convert one with .int()")
        return input.clone() if exponent else input.new_ones(input.shape)   # PyTorch's x ** 1 and x ** 0
    return Pow.apply(input, exponent)


def _describe(value):
    return f"of dtype {value.dtype.name}" if isinstance(value, Tensor) else repr(value)


class Maximum(Op):
    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolOr

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.maximum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_at_ties(ctx.xp, grad, a > b, a == b)


class Minimum(Op):
    broadcasts = True
    promotes = (0, 1)
    on_bools = BoolAnd

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.minimum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _split_at_ties(ctx.xp, grad, a < b, a == b)


def _split_at_ties(xp, grad, a_wins, tie):
    """The gradient goes to the winner; at a tie each side gets half."""
    half = grad * 0.5
    grad_a = xp.where(a_wins, grad, xp.where(tie, half, 0.0))
    grad_b = xp.where(a_wins, 0.0, xp.where(tie, half, grad))
    return grad_a, grad_b


def _extremum_samples(rng):
    yield from binary(scalar=0.3)(rng)
    tie = values(rng, (4,))
    yield Sample((tie, tie.copy()), name="ties")


@register(np.maximum, _extremum_samples, smooth=False)
def maximum(input, other):
    """Elementwise larger of two tensors, broadcasting. The gradient goes to the larger
    input; at a tie it is split evenly."""
    return Maximum.apply(input, other)


@register(np.minimum, _extremum_samples, smooth=False)
def minimum(input, other):
    """Elementwise smaller of two tensors, broadcasting. The gradient goes to the smaller
    input; at a tie it is split evenly."""
    return Minimum.apply(input, other)


def _require_tensors(op, **arguments):
    """The composites' entry check: each of ``arguments`` must be a Tensor."""
    for name, value in arguments.items():
        if not isinstance(value, Tensor):
            raise not_a_tensor(op, name, value)


def _require_promoted(op, input, other, floating):
    """Two tensors whose promoted dtype is floating (``floating``) or an integer one (not bool),
    as PyTorch's kernels of ``op`` exist for those alone."""
    _require_tensors(op, input=input, other=other)
    result = dtypes.result_type(input, other)
    if result.is_floating_point != floating or result is bool_:
        kind = "floating point" if floating else "integer"
        raise DTypeError(f"{op}: the operands must be {kind} tensors, got {input.dtype.name} and {other.dtype.name} "
                         f"(\"{op}\" is not implemented for '{result.torch_name}')")


def _require_floating(op, **arguments):
    """Each of ``arguments`` must be a floating point Tensor (PyTorch has no integer kernel)."""
    _require_tensors(op, **arguments)
    for name, value in arguments.items():
        if not value.is_floating_point():
            raise DTypeError(f"{op}: {name} must be a floating point tensor, got {value.dtype.name}")


def _clamp_bound_samples(rng):
    yield Sample((values(rng, (3, 4), away_from=0.25), 0.25), name="number")
    yield Sample((values(rng, (3, 4)), values(rng, (4,), -0.5, 0.5)), name="tensor")


@register(lambda a, low: np.maximum(a, low), _clamp_bound_samples, smooth=False)
def clamp_min(input, min):
    """``clamp(input, min=min)``: values below ``min`` become ``min``.

    Example::

        vizgrad.tensor([1.0, -1.0]).clamp_min(0)     # tensor([1., 0.])
    """
    return clamp(input, min=min)


@register(lambda a, high: np.minimum(a, high), _clamp_bound_samples, smooth=False)
def clamp_max(input, max):
    """``clamp(input, max=max)``: values above ``max`` become ``max``.

    Example::

        vizgrad.tensor([1.0, -1.0]).clamp_max(0)     # tensor([ 0., -1.])
    """
    return clamp(input, max=max)


def _lerp_samples(rng):
    yield Sample((values(rng, (3, 4)), values(rng, (4,)), 0.25), name="number weight")
    yield Sample((values(rng, (3, 4)), values(rng, (3, 4)), values(rng, (3, 1), 0.0, 1.0)), name="tensor weight")


@register(lambda a, b, weight: a + weight * (b - a), _lerp_samples)
def lerp(input, end, weight):
    """Linear interpolation, broadcasting: ``input + weight · (end - input)``.

    d/d input = 1 - weight, d/d end = weight, d/d weight = end - input.

    Example::

        vizgrad.lerp(vizgrad.zeros(2), vizgrad.ones(2), 0.25)    # tensor([0.2500, 0.2500])
    """
    _require_floating("lerp", input=input, end=end)
    if not isinstance(weight, Tensor):
        weight = as_number("lerp", "weight", weight)
    for name, value in (("end", end), ("weight", weight)):
        if isinstance(value, Tensor) and value.dtype is not input.dtype:
            raise DTypeError(f"lerp: {name} is {value.dtype.name} but input is {input.dtype.name}; they must "
                             f"have the same dtype")
    return input + weight * (end - input)


def _addc_samples(away_from=None):
    def samples(rng):
        yield Sample((values(rng, (3, 4)), values(rng, (4,)), values(rng, (3, 1), away_from=away_from)), name="default")
        yield Sample((values(rng, (3, 4)), values(rng, (3, 4)), values(rng, (3, 4), away_from=away_from)),
                     {"value": -0.5}, name="value")
    return samples


@register(lambda a, b, c, value=1: a + value * b * c, _addc_samples())
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value · tensor1 · tensor2``, broadcasting (what optimizers write); on integers
    ``value`` is truncated to an integer, as in PyTorch.

    Example::

        vizgrad.addcmul(vizgrad.ones(2), vizgrad.ones(2), vizgrad.ones(2), value=0.5)   # tensor([1.5000, 1.5000])
    """
    _require_tensors("addcmul", input=input, tensor1=tensor1, tensor2=tensor2)
    value = as_number("addcmul", "value", value)
    common = dtypes.promote_types(dtypes.promote_types(input.dtype, tensor1.dtype), tensor2.dtype)
    if common is bool_:
        raise DTypeError("addcmul: not implemented for bool tensors, as in PyTorch; convert them first, e.g. with "
                         ".int() or .float()")
    if not common.is_floating_point:       # integers stay integers: value truncated, as PyTorch converts it
        value = as_integer_scalar("addcmul", "value", value)
    return input + value * tensor1 * tensor2


@register(lambda a, b, c, value=1: a + value * b / c, _addc_samples(away_from=0.5))
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value · tensor1 / tensor2``, broadcasting (Adam's update is one).

    Example::

        vizgrad.addcdiv(vizgrad.zeros(2), vizgrad.ones(2), vizgrad.full((2,), 4.0))   # tensor([0.2500, 0.2500])
    """
    _require_tensors("addcdiv", input=input, tensor1=tensor1, tensor2=tensor2)
    return input + as_number("addcdiv", "value", value) * tensor1 / tensor2


class Logaddexp(Op):
    """``log(eᵃ + eᵇ)`` as PyTorch computes it: the larger plus ``log1p(e^-|a - b|)`` (taken as
    ``log1p(1)`` where a = b, so the same infinity twice is itself); d/da = 1 / (1 + e^(b - a)),
    as PyTorch's formula (NaN where a and b are the same infinity)."""

    broadcasts = True
    promotes = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        ctx.save_for_backward(a, b)
        gap = xp.where(a == b, 0.0, a - b)
        return xp.maximum(a, b) + xp.log1p(xp.exp(-xp.abs(gap)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        xp = ctx.xp
        needs_a, needs_b = ctx.needs_input_grad
        return (grad / (1 + xp.exp(b - a)) if needs_a else None,
                grad / (1 + xp.exp(a - b)) if needs_b else None)


@register(np.logaddexp, binary(scalar=None))
def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, computed without overflow (the larger is factored
    out; the same infinity twice gives itself); d/d input = sigmoid(input - other).

    Example::

        vizgrad.logaddexp(vizgrad.tensor([1000.0]), vizgrad.tensor([1000.0]))   # tensor([1000.6931])
    """
    _require_promoted("logaddexp", input, other, floating=True)
    return Logaddexp.apply(input, other)


@register(np.hypot, binary(away_from=0.25, scalar=None))
def hypot(input, other):
    """The hypotenuse ``sqrt(input² + other²)``, broadcasting; d/d input = input / hypot.

    Example::

        vizgrad.hypot(vizgrad.tensor([3.0]), vizgrad.tensor([4.0]))   # tensor([5.])
    """
    _require_floating("hypot", input=input, other=other)
    return (input * input + other * other).sqrt()


class Where(Op):
    broadcasts = True
    promotes = (1, 2)

    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.save_for_backward(condition)
        return ctx.xp.where(condition, a, b)

    @staticmethod
    def backward(ctx, grad):
        condition, = ctx.saved_tensors
        xp = ctx.xp
        _, needs_a, needs_b = ctx.needs_input_grad
        return (None, xp.keep_where(condition, grad) if needs_a else None,
                xp.keep_where(xp.logical_not(condition), grad) if needs_b else None)


def _where_samples(rng):
    for shape_c, shape_a, shape_b in (((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((), (2,), ())):
        yield Sample((booleans(rng, shape_c), values(rng, shape_a), values(rng, shape_b)))
    yield Sample((booleans(rng, (5,)), values(rng, (5,)), 0.0), name="scalar other")


@register(np.where, _where_samples, method=False)
def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``, broadcasting all three.
    The gradient flows to whichever side was chosen."""
    if not isinstance(condition, Tensor):
        raise ArgumentTypeError(f"where: condition must be a bool Tensor, got {type(condition).__name__}")
    if condition.dtype is not bool_:
        raise DTypeError(f"where: expected condition to be a boolean tensor, but got a tensor with dtype "
                         f"{condition.dtype.name}; compare first, e.g. where(x > 0, ...)")
    return Where.apply(condition, input, other)


class Clamp(Op):
    broadcasts = True
    promotes = (0, 1, 2)

    @staticmethod
    def forward(ctx, a, low, high):
        ctx.save_for_backward(a, low, high)
        out = a
        if low is not None:
            out = ctx.xp.maximum(out, low)
        if high is not None:
            out = ctx.xp.minimum(out, high)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, low, high = ctx.saved_tensors
        xp = ctx.xp
        below = a < low if low is not None else None
        above = a > high if high is not None else None
        inside = grad
        if below is not None:
            inside = xp.where(below, 0.0, inside)
        if above is not None:
            inside = xp.where(above, 0.0, inside)
        _, needs_low, needs_high = ctx.needs_input_grad
        if below is not None and above is not None:   # min > max: max is taken everywhere (PyTorch's rule)
            below, above = below & (low < high), above | (high < low)
        grad_low = xp.where(below, grad, 0.0) if needs_low else None
        grad_high = xp.where(above, grad, 0.0) if needs_high else None
        return inside, grad_low, grad_high


def _clamp_samples(rng):
    yield Sample((values(rng, (3, 4), away_from=0.5),), {"min": -0.5, "max": 0.5})
    yield Sample((values(rng, (5,)),), {"min": 0.25})
    yield Sample((values(rng, (5,)),), {"max": 0.25})
    yield Sample((values(rng, (3, 4)),), {"min": values(rng, (4,), -1.5, -0.5), "max": values(rng, (3, 1), 0.5, 1.5)})


def _clamp_reference(a, min=None, max=None):
    return np.clip(a, min, max)


@register(_clamp_reference, _clamp_samples, smooth=False, aliases=("clip",))
def clamp(input, min=None, max=None):
    """Limit values to ``[min, max]`` (either bound may be None, a number or a tensor).
    The gradient passes where the input is inside the bounds and goes to a tensor
    bound where that bound was taken."""
    if min is None and max is None:
        raise ArgumentError("clamp: at least one of min and max must be given")
    return Clamp.apply(input, min, max)


class Atan2(Op):
    broadcasts = True
    promotes = (0, 1)
    int_to_float = True   # integers and bools give the default float dtype

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.atan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        scale = grad / (a * a + b * b)
        return scale * b if needs_a else None, -scale * a if needs_b else None


@register(np.arctan2, binary(away_from=0.0, scalar=None), aliases=("arctan2",))
def atan2(input, other):
    """The angle of the point (``other``, ``input``) from the x axis, in (-π, π], elementwise
    and broadcasting (``atan(input / other)`` in the right quadrant).
    d/d input = other / (input² + other²), d/d other = -input / (input² + other²).

    Example::

        vizgrad.atan2(vizgrad.tensor([1.0, 1.0]), vizgrad.tensor([1.0, -1.0]))   # tensor([0.7854, 2.3562])
    """
    _require_tensors("atan2", input=input, other=other)
    return Atan2.apply(input, other)


class NanIgnoringExtremum(Op):
    """fmax and fmin: the larger (smaller) of two values, a NaN counting only where both are NaN.
    The gradient goes to ``a`` where it is chosen (ties included), else to ``b``."""

    broadcasts = True
    promotes = (0, 1)
    larger = True

    @classmethod
    def forward(cls, ctx, a, b):
        xp = ctx.xp
        a_wins = ((a >= b) if cls.larger else (a <= b)) | (b != b)    # (b != b: b is NaN)
        ctx.save_for_backward(a_wins)
        return xp.where(a_wins, a, b)

    @staticmethod
    def backward(ctx, grad):
        a_wins, = ctx.saved_tensors
        xp = ctx.xp
        zeros = xp.zeros_like(grad)
        return xp.where(a_wins, grad, zeros), xp.where(a_wins, zeros, grad)


class Fmax(NanIgnoringExtremum):
    larger = True
    on_bools = BoolOr


class Fmin(NanIgnoringExtremum):
    larger = False
    on_bools = BoolAnd


def _nan_extremum_samples(rng):
    yield from binary(scalar=None)(rng)
    with_nans = values(rng, (5,))
    other = values(rng, (5,))
    with_nans[[0, 2]], other[[3, 4]] = np.nan, np.nan      # (never both: no gradient to check there)
    yield Sample((with_nans, other), name="nans")


@register(np.fmax, _nan_extremum_samples, smooth=False)
def fmax(input, other):
    """Elementwise larger of two tensors, broadcasting, ignoring NaN: where one of the two is
    NaN the other is taken (NaN only where both are). The gradient goes to the value taken
    (to ``input`` at ties).

    Example::

        vizgrad.fmax(vizgrad.tensor([1.0, float("nan")]), vizgrad.tensor([float("nan"), 2.0]))   # tensor([1., 2.])
    """
    _require_tensors("fmax", input=input, other=other)
    return Fmax.apply(input, other)


@register(np.fmin, _nan_extremum_samples, smooth=False)
def fmin(input, other):
    """Elementwise smaller of two tensors, broadcasting, ignoring NaN (see :func:`fmax`).

    Example::

        vizgrad.fmin(vizgrad.tensor([1.0, float("nan")]), vizgrad.tensor([float("nan"), 2.0]))   # tensor([1., 2.])
    """
    _require_tensors("fmin", input=input, other=other)
    return Fmin.apply(input, other)


@register(np.logaddexp2, binary(scalar=None))
def logaddexp2(input, other):
    """``log₂(2^input + 2^other)``, computed without overflow (the larger is factored out);
    d/d input = 2^input / (2^input + 2^other).

    Example::

        vizgrad.logaddexp2(vizgrad.tensor([1.0, 100.0]), vizgrad.tensor([1.0, 100.0]))   # tensor([  2., 101.])
    """
    _require_promoted("logaddexp2", input, other, floating=True)
    larger, smaller = maximum(input, other), minimum(input, other)
    spread = (smaller - larger).exp2()
    return where(larger == smaller, larger + 1, larger + spread.log1p() / math.log(2.0))


bind_method("float_power", float_power)
