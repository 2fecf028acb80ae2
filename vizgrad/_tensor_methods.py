"""Tensor operators and in-place methods.

Registered ops bind themselves as methods (``x.exp()``); this module adds the Python
operators and the in-place variants (``add_``, ``x[i] = v``, ...).

In-place rules, as in PyTorch: every in-place change bumps the tensor's version
counter (shared with its views), so backward detects values that were saved and then
overwritten. A leaf that requires grad cannot be changed in place while recording;
under ``no_grad`` it can (that is how optimizers update parameters).
"""

from . import ops
from .autograd.grad_mode import no_grad, state
from .errors import BackwardError, DTypeError, ShapeError, format_shape, public, public_name_from
from .tensor import Tensor


def _reflected(function):
    def method(self, other):
        return function(other, self)
    method.__name__ = f"r{function.__name__}"
    return method


def _floordiv(self, other):
    return ops.div(self, other, rounding_mode="floor")


def _remainder(self, other):
    return self - ops.div(self, other, rounding_mode="floor") * other


def _logical(function):
    def method(self, other):
        return function(self, other)
    return method


Tensor.__add__ = ops.add
Tensor.__radd__ = _reflected(ops.add)
Tensor.__sub__ = ops.sub
Tensor.__rsub__ = _reflected(ops.sub)
Tensor.__mul__ = ops.mul
Tensor.__rmul__ = _reflected(ops.mul)
Tensor.__truediv__ = ops.div
Tensor.__rtruediv__ = _reflected(ops.div)
Tensor.__floordiv__ = _floordiv
Tensor.__rfloordiv__ = lambda self, other: ops.div(other, self, rounding_mode="floor")
Tensor.__mod__ = _remainder
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
Tensor.__and__ = ops.logical_and
Tensor.__or__ = ops.logical_or
Tensor.__xor__ = ops.logical_xor
Tensor.__invert__ = ops.logical_not
Tensor.__getitem__ = ops.index.getitem


# --- in-place --------------------------------------------------------------
def _recording(target, *others):
    if not state.grad_enabled:
        return False
    return target.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others)


@public_name_from("op_name")
def apply_inplace(target, compute, op_name, *others):
    """Make ``target`` hold ``compute(target)``; ``compute`` builds the out-of-place result.

    While recording, the result's history becomes ``target``'s: the old value (with
    its history) stays available to the new node through a private copy.
    """
    if _recording(target, *others):
        if target.requires_grad and target.grad_fn is None:
            raise BackwardError(
                f"{op_name}: a leaf tensor that requires grad cannot be modified in place while "
                "gradients are recorded (its .grad would no longer match its value). Do the update "
                "inside `with vizgrad.no_grad():`, or use an out-of-place op.")
        if target._base is not None and target._base.requires_grad:
            raise BackwardError(
                f"{op_name}: in-place changes to a view of a tensor that requires grad are not "
                "supported by vizgrad; clone() the view first, or build the result out of place.")
        previous = Tensor._make(target._backend().xp.asarray(target._array, copy=True),
                                target.requires_grad, target.grad_fn, target._output_nr)
        result = compute(previous)
        _write(target, result, op_name)
        target.grad_fn = result.grad_fn
        target._output_nr = result._output_nr
        target.requires_grad = result.requires_grad
    else:
        with no_grad():
            result = compute(target)
        _write(target, result, op_name)
    target._bump_version()
    return target


def _write(target, result, op_name):
    if result.shape != target.shape:
        raise ShapeError(f"{op_name}: the result has shape {format_shape(result.shape)}, which does not "
                         f"fit in place into a tensor of shape {format_shape(target.shape)}")
    if result._array.dtype != target._array.dtype:
        if result.is_floating_point() and not target.is_floating_point():
            raise DTypeError(f"{op_name}: a {result.dtype.name} result cannot be stored in place into a "
                             f"{target.dtype.name} tensor")
    if type(result._array) is not type(target._array):
        raise BackwardError(f"{op_name}: the result is on {result.device}, the tensor on {target.device}")
    xp = target._backend().xp
    target._array[...] = result._array if result._array.dtype == target._array.dtype \
        else xp.astype(result._array, target._array.dtype)


def _inplace_method(function, name):
    def method(self, *args, **kwargs):
        return apply_inplace(self, lambda t: function(t, *args, **kwargs), name, *args, *kwargs.values())
    method.__name__ = name
    method.__doc__ = f"In-place :func:`vizgrad.{function.__name__}`: changes this tensor and returns it."
    return method


for _name in ("add", "sub", "mul", "div", "pow", "clamp", "neg", "exp", "log", "sqrt", "abs", "tanh",
              "sigmoid", "relu", "sin", "cos", "reciprocal", "square", "floor", "ceil", "round", "sign"):
    setattr(Tensor, _name + "_", _inplace_method(getattr(ops, _name), _name + "_"))
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.clip_ = Tensor.clamp_


def zero_(self):
    """Fill with zeros in place."""
    return fill_(self, 0)


def fill_(self, value):
    """Fill with ``value`` (a number or a one-element tensor) in place."""
    def compute(target):
        return ops.add(target * 0, value)
    return apply_inplace(self, compute, "fill_", value)


def copy_(self, source):
    """Copy the values of ``source`` (broadcast to this shape; any dtype or device) into this tensor."""
    def compute(target):
        moved = source.to(device=target.device, dtype=target.dtype)
        return ops.add(target * 0, moved)
    return apply_inplace(self, compute, "copy_", source)


def setitem(self, key, value):
    """``x[key] = value`` in place; differentiable for both ``x`` and ``value``."""
    apply_inplace(self, lambda target: ops.index.index_put(target, key, value), "__setitem__", value)


def masked_fill_(self, mask, value):
    return apply_inplace(self, lambda target: ops.masked_fill(target, mask, value), "masked_fill_", value)


def index_add_(self, dim, index, source, *, alpha=1):
    return apply_inplace(self, lambda target: ops.index_add(target, dim, index, source, alpha=alpha),
                         "index_add_", source)


def scatter_add_(self, dim, index, src):
    return apply_inplace(self, lambda target: ops.scatter_add(target, dim, index, src), "scatter_add_", src)


Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_
Tensor.__setitem__ = setitem
Tensor.masked_fill_ = masked_fill_
Tensor.index_add_ = index_add_
Tensor.scatter_add_ = scatter_add_

public("to")(Tensor.to)                     # errors beneath these methods name them
public("requires_grad_")(Tensor.requires_grad_)
