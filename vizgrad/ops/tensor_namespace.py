"""The Array API names that backward code uses, implemented over Tensors with vizgrad's
own differentiable ops.

Under ``create_graph=True`` the engine hands backwards this namespace as ``ctx.xp``
instead of the backend's, so a backward written once records its own graph.
Backward code may use the operators and exactly the functions defined here.
"""

import functools
import types

import numpy as np

from .. import dtypes
from . import (binary, compare, conversion, cumulative, division, gather_scatter, hyperbolic, index, joins, padding, reduce, shape,
               special_functions, unary)
from . import decompositions as _decompositions
from . import matrix_functions as _matrix_functions
from . import solvers as _solvers
from . import linalg as _linalg
from . import contractions as _contractions


def _dtype(value):
    if value is None or isinstance(value, dtypes.dtype):
        return value
    try:
        return dtypes.as_dtype(value)
    except TypeError:
        return dtypes.as_dtype(str(value).rpartition(".")[2])


def _tensor():
    from ..tensor import Tensor
    return Tensor


# elementwise
abs, exp, log, log1p, expm1, sqrt = unary.abs, unary.exp, unary.log, unary.log1p, unary.expm1, unary.sqrt
sin, cos, tanh, sign, square = unary.sin, unary.cos, unary.tanh, unary.sign, unary.square
erf, erfc, lgamma = special_functions.erf, special_functions.erfc, special_functions.lgamma
digamma, polygamma = special_functions.digamma, special_functions.polygamma
negative = unary.neg
sinh, cosh = hyperbolic.sinh, hyperbolic.cosh
add, subtract, multiply, divide, pow = binary.add, binary.sub, binary.mul, division.div, binary.pow
maximum, minimum = binary.maximum, binary.minimum
equal, not_equal, greater, less = compare.eq, compare.ne, compare.gt, compare.lt
greater_equal, less_equal = compare.ge, compare.le
logical_and, logical_or, logical_not = compare.logical_and, compare.logical_or, compare.logical_not
isnan, isfinite, isinf = compare.isnan, compare.isfinite, compare.isinf
floor = unary.floor


def where(condition, x1, x2):
    return binary.where(condition, x1, x2)


def keep_where(mask, values):
    """``values`` where ``mask`` holds, 0 elsewhere (differentiable: a where)."""
    return binary.where(mask, values, 0.0)


def clip(x, min=None, max=None):
    return binary.clamp(x, min, max)


def astype(x, dtype, copy=True):
    return conversion.to_dtype(x, _dtype(dtype))


def asarray(x, copy=None):
    return conversion.clone(x) if copy else x


# creation (on the device of the tensor they are derived from)
def zeros(shape, dtype=None, device=None):
    from ..creation import zeros as make
    return make(shape, dtype=_dtype(dtype), device=device)


def ones(shape, dtype=None, device=None):
    from ..creation import ones as make
    return make(shape, dtype=_dtype(dtype), device=device)


def full(shape, fill_value, dtype=None, device=None):
    from ..creation import full as make
    return make(shape, fill_value, dtype=_dtype(dtype), device=device)


def zeros_like(x, dtype=None):
    from ..creation import zeros_like as make
    return make(x, dtype=_dtype(dtype))


def ones_like(x, dtype=None):
    from ..creation import ones_like as make
    return make(x, dtype=_dtype(dtype))


def full_like(x, fill_value, dtype=None):
    from ..creation import full_like as make
    return make(x, fill_value, dtype=_dtype(dtype))


# reductions
def sum(x, axis=None, keepdims=False):
    if axis == ():  # the Array API reduces over no axis here; vizgrad's dim=() means all of them
        return x
    return reduce.sum(x, dim=axis, keepdim=keepdims)


def mean(x, axis=None, keepdims=False):
    if axis == ():  # the Array API reduces over no axis here; vizgrad's dim=() means all of them
        return x
    return reduce.mean(x, dim=axis, keepdim=keepdims)


def prod(x, axis=None, keepdims=False):
    if axis == ():  # the Array API reduces over no axis here; vizgrad's dim=() means all of them
        return x
    return reduce.prod(x, dim=axis, keepdim=keepdims)


def max(x, axis=None, keepdims=False):
    return reduce.amax(x, dim=() if axis is None else axis, keepdim=keepdims)


def min(x, axis=None, keepdims=False):
    return reduce.amin(x, dim=() if axis is None else axis, keepdim=keepdims)


def argmax(x, axis=None, keepdims=False):
    return reduce.argmax(x, dim=axis, keepdim=keepdims)


def cumulative_sum(x, axis=None):
    return cumulative.cumsum(x, 0 if axis is None else axis)


def cumulative_prod(x, axis=None):
    return cumulative.cumprod(x, 0 if axis is None else axis)


# shapes
def reshape(x, shape_, copy=None):
    return shape.reshape(x, tuple(shape_))


def broadcast_to(x, shape_):
    return shape.broadcast_to(x, tuple(shape_))


def expand_dims(x, axis=0):
    return shape.unsqueeze(x, axis)


def squeeze(x, axis):
    return shape.squeeze(x, axis)


def permute_dims(x, axes):
    return shape.permute(x, tuple(axes))


def matrix_transpose(x):
    return shape.transpose(x, -2, -1)


def moveaxis(x, source, destination):
    return shape.movedim(x, source, destination)


def concat(arrays, axis=0):
    return joins.cat(list(arrays), axis)


def stack(arrays, axis=0):
    return joins.stack(list(arrays), axis)


def flip(x, axis=None):
    return padding.flip(x, tuple(range(x.ndim)) if axis is None else axis)


def tril(x, k=0):
    return padding.tril(x, k)


def triu(x, k=0):
    return padding.triu(x, k)


def pad(x, widths, value):
    """NumPy-style ``((before, after), ...)`` per axis, turned into vizgrad's last-axis-first form."""
    flat = []
    for before, after in reversed(list(widths)):
        flat.extend((before, after))
    return padding.pad(x, tuple(flat), value=value)


# indexing
def take(x, indices, axis=None):
    return index.index_select(x, 0 if axis is None else axis, indices)


def take_along_axis(x, indices, axis=-1):
    return gather_scatter.gather(x, axis, indices)


def index_add(x, axis, index_, values):
    return index.index_add(x, axis, index_, values)


def scatter_add(x, axis, index_, src):
    return gather_scatter.scatter_add(x, axis, index_, src)


def put_add(x, key, values):
    return index.put_add(x, key, values)


# linear algebra
def matmul(x1, x2):
    return _linalg.matmul(x1, x2)


def einsum(subscripts, *operands):
    return _contractions.einsum(subscripts, *operands)


def solve_triangular(a, b, upper, unitriangular=False):
    return _solvers.triangular_solve(a, b, upper, unitriangular)


def matrix_exp(a):
    return _matrix_functions.matrix_exp(a)


def _svd(x, full_matrices=True):
    return _decompositions.svd(x, full_matrices=full_matrices)


# the Array API's linalg extension, as far as backwards use it
linalg = types.SimpleNamespace(inv=_linalg.inverse, det=_linalg.det,
                               solve=functools.partial(_linalg.solve_system, "linalg.solve"),
                               eigh=_decompositions.eigh, svd=_svd)


pi, e, inf, nan = np.pi, np.e, np.inf, np.nan
