"""Tensor operators and in-place methods.

Registered ops bind themselves as methods (``x.exp()``); this module adds the Python
operators and the in-place variants (``add_``, ``x[i] = v``, ...).

In-place rules, as in PyTorch: every in-place change bumps the tensor's version
counter (shared with its views), so backward detects values that were saved and then
overwritten. A leaf that requires grad cannot be changed in place while recording;
under ``no_grad`` it can (that is how optimizers update parameters). The write itself is
:func:`vizgrad.ops.inplace.apply_inplace`.
"""

import numbers

from . import dtypes, ops
from .errors import ArgumentTypeError, DTypeError, public
from .ops.inplace import apply_inplace, mark_written, writes_recorded
from .tensor import Tensor


def _reflected(function):
    def method(self, other):
        return function(other, self)
    method.__name__ = f"r{function.__name__}"
    return method


def _rtruediv(self, other):
    """``other / self``; for a number ``other`` as PyTorch computes it, ``self.reciprocal() * other``
    (so the values, and the nodes ``MulBackward0`` after ``ReciprocalBackward0``, are PyTorch's)."""
    if isinstance(other, numbers.Number):
        return ops.mul(ops.reciprocal(self), other)
    return ops.div(other, self)


Tensor.__add__ = ops.add
Tensor.__radd__ = _reflected(ops.add)
Tensor.__sub__ = ops.sub
Tensor.__rsub__ = ops.rsub           # 2 - x: rsub(x, 2), PyTorch's RsubBackward1
Tensor.__mul__ = ops.mul
Tensor.__rmul__ = _reflected(ops.mul)
Tensor.__truediv__ = ops.div
Tensor.__rtruediv__ = _rtruediv
Tensor.__floordiv__ = ops.floor_divide
Tensor.__rfloordiv__ = _reflected(ops.floor_divide)
Tensor.__mod__ = ops.remainder
Tensor.__rmod__ = _reflected(ops.remainder)
Tensor.__pow__ = ops.pow
Tensor.__rpow__ = _reflected(ops.pow)
Tensor.__matmul__ = ops.matmul
Tensor.__rmatmul__ = _reflected(ops.matmul)
Tensor.__neg__ = ops.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = ops.abs
Tensor.__eq__ = ops.eq
Tensor.__ne__ = ops.ne
Tensor.__lt__ = ops.lt
Tensor.__le__ = ops.le
Tensor.__gt__ = ops.gt
Tensor.__ge__ = ops.ge
Tensor.__and__ = ops.bitwise_and        # on bools the logical ones; floats are refused, as in PyTorch
Tensor.__rand__ = _reflected(ops.bitwise_and)
Tensor.__or__ = ops.bitwise_or
Tensor.__ror__ = _reflected(ops.bitwise_or)
Tensor.__xor__ = ops.bitwise_xor
Tensor.__rxor__ = _reflected(ops.bitwise_xor)
Tensor.__invert__ = ops.bitwise_not
Tensor.__lshift__ = ops.bitwise_left_shift
Tensor.__rlshift__ = _reflected(ops.bitwise_left_shift)
Tensor.__rshift__ = ops.bitwise_right_shift
Tensor.__rrshift__ = _reflected(ops.bitwise_right_shift)
Tensor.__getitem__ = ops.index.getitem


# --- in-place --------------------------------------------------------------
def _inplace_method(function, name):
    def method(self, *args, **kwargs):
        return apply_inplace(self, lambda t: function(t, *args, **kwargs), name, *args, *kwargs.values())
    method.__name__ = name
    method.__doc__ = f"In-place :func:`vizgrad.{function.__name__}`: changes this tensor and returns it."
    return method


for _name in ("add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "clamp", "neg", "exp", "log", "sqrt",
              "abs", "tanh", "sigmoid", "relu", "sin", "cos", "reciprocal", "square", "floor", "ceil", "round", "sign",
              "trunc", "frac", "logit", "nan_to_num", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv",
              "index_put", "exp2", "sinc", "erf", "erfc", "lgamma", "digamma"):
    setattr(Tensor, _name + "_", _inplace_method(getattr(ops, _name), _name + "_"))

# the other elementwise ops PyTorch has in-place methods of (aliases included: x.arcsin_())
ELEMENTWISE_INPLACE = (
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "sinh", "cosh", "tan", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "atan2", "arctan2", "log2", "log10", "log1p", "expm1", "rsqrt", "erfinv",
    "i0", "sgn", "negative", "deg2rad", "rad2deg", "xlogy", "copysign", "hypot", "fmod", "heaviside", "nextafter",
    "ldexp", "gcd", "lcm", "igamma", "igammac", "mvlgamma", "renorm", "multiply", "subtract", "divide",
    "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift")
for _name in ELEMENTWISE_INPLACE:
    _function = ops.registry.OPS[ops.registry.ALIASES.get(_name, _name)].function
    setattr(Tensor, _name + "_", _inplace_method(_function, _name + "_"))


def float_power_(self, exponent):
    """In-place :func:`vizgrad.float_power`: the result is float64, so this tensor must be too."""
    if self.dtype is not dtypes.float64:
        raise DTypeError(f"float_power_: the base given to float_power_ has dtype {self.dtype.torch_name} but "
                         "the operation's result requires dtype Double; convert it first (x = x.double())")
    return apply_inplace(self, lambda target: ops.binary.float_power(target, exponent), "float_power_", exponent)


def hardshrink(self, lambd=0.5):
    """:func:`vizgrad.nn.functional.hardshrink` of this tensor."""
    return ops.hardshrink(self, lambd)


def prelu(self, weight):
    """:func:`vizgrad.nn.functional.prelu` of this tensor with ``weight``."""
    return ops.prelu(self, weight)


Tensor.float_power_, Tensor.hardshrink, Tensor.prelu = float_power_, hardshrink, prelu
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_


def _inplace_function(name):
    """``vizgrad.<name>(input, ...)``: the in-place method ``input.<name>(...)`` (``vizgrad.relu_``)."""
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise ArgumentTypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
        return getattr(Tensor, name)(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"In-place :meth:`Tensor.{name}`: changes ``input`` and returns it."
    return function


# the in-place functions of PyTorch's top-level namespace (vizgrad/__init__ exports them)
INPLACE_FUNCTIONS = {name: _inplace_function(name) for name in (
    "abs_", "absolute_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "fill_")}


def polygamma(self, n):
    """:func:`vizgrad.polygamma` of this tensor: ``x.polygamma(n)`` is ``polygamma(n, x)``."""
    return ops.polygamma(n, self)


def polygamma_(self, n):
    """In-place :func:`vizgrad.polygamma`: changes this tensor and returns it."""
    return apply_inplace(self, lambda target: ops.polygamma(n, target), "polygamma_")


Tensor.polygamma, Tensor.polygamma_ = polygamma, polygamma_
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.clip_ = Tensor.clamp_
Tensor.fix_ = Tensor.trunc_
Tensor.absolute_ = Tensor.abs_
Tensor.aminmax = ops.reduce.aminmax


def zero_(self):
    """Fill with zeros in place."""
    return fill_(self, 0)


def fill_(self, value):
    """Fill with ``value`` (a number or a one-element tensor) in place, converted to this
    tensor's dtype."""
    def compute(target):
        return ops.where(_nowhere(target), target, value)
    return apply_inplace(self, compute, "fill_", value, cast=True)


def copy_(self, source):
    """Copy the values of ``source`` (broadcast to this shape; any dtype or device) into this
    tensor, converted to its dtype (floats into integers truncate, as in PyTorch)."""
    def compute(target):
        return ops.where(_nowhere(target), target, source.to(device=target.device))
    return apply_inplace(self, compute, "copy_", source, cast=True)


def _nowhere(tensor):
    """An all-false mask of ``tensor``'s shape: ``where(_nowhere(t), t, v)`` is ``v`` broadcast
    to ``t``'s shape, with the gradient going to ``v`` alone."""
    backend = tensor._backend()
    return Tensor._make(backend.xp.zeros(tensor._array.shape, dtype=backend.native_dtype(dtypes.bool_)))


def setitem(self, key, value):
    """``x[key] = value`` in place, ``value`` converted to ``x``'s dtype; differentiable for
    both ``x`` and ``value``."""
    if not writes_recorded(self, value) and _is_basic_key(key) and _write_basic(self, key, value):
        return
    if isinstance(value, Tensor) and value.ndim and value.shape[0] == 1:
        value = value.reshape(_without_leading_ones(value.shape))    # as PyTorch: (1, 27) fills a (27,) row
    apply_inplace(self, lambda target: ops.index.index_put(target, key, value), "__setitem__", value,
                  cast=True)


def _without_leading_ones(shape):
    """``shape`` without its leading 1s: PyTorch views the value of ``x[key] = value`` so
    before broadcasting it to ``x[key]``'s shape."""
    start = 0
    while start < len(shape) and shape[start] == 1:
        start += 1
    return tuple(shape[start:])


def _is_basic_key(key):
    """Whether ``key`` holds only ints, slices with positive steps, None and ``...``: keys
    that select the same elements in every backend as in PyTorch."""
    for entry in key if type(key) is tuple else (key,):
        if type(entry) is int or entry is None or entry is Ellipsis:
            continue
        if type(entry) is not slice or (entry.step is not None and (type(entry.step) is not int or entry.step <= 0)):
            return False
    return True


def _write_basic(target, key, value):
    """Write ``value`` at a basic ``key`` straight into ``target``'s array (the backend casts
    to its dtype, truncating floats into integers as PyTorch does). False, having written
    nothing, when the backend refuses: the general path then converts or explains."""
    array = target._array
    if isinstance(value, Tensor):
        if type(value._array) is not type(array):
            return False
        value = value._array
    elif type(value) not in (int, float, bool):
        return False
    try:
        array[key] = value
    except (IndexError, ValueError, TypeError):
        return False
    mark_written(target)
    return True


def masked_fill_(self, mask, value):
    return apply_inplace(self, lambda target: ops.masked_fill(target, mask, value), "masked_fill_", value)


def index_add_(self, dim, index, source, *, alpha=1):
    return apply_inplace(self, lambda target: ops.index_add(target, dim, index, source, alpha=alpha),
                         "index_add_", source)


def scatter_add_(self, dim, index, src):
    _same_dtype("scatter_add_", self, src, "src")
    return apply_inplace(self, lambda target: ops.scatter_add(target, dim, index, src), "scatter_add_", src)


def _same_dtype(op_name, target, values, name):
    """PyTorch's scatter_add_ takes values of the tensor's own dtype only (index_add checks its own)."""
    if isinstance(values, Tensor) and values.dtype is not target.dtype:
        raise DTypeError(f"{op_name}: self ({target.dtype.torch_name}) and {name} ({values.dtype.torch_name}) "
                         f"must have the same dtype: convert {name} with .to({target.dtype!r})")


Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_
Tensor.__setitem__ = setitem
Tensor.masked_fill_ = masked_fill_
Tensor.index_add_ = index_add_
Tensor.scatter_add_ = scatter_add_

public("to")(Tensor.to)                     # errors beneath these methods name them
public("requires_grad_")(Tensor.requires_grad_)
