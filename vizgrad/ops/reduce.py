"""Reductions: sums, means, products, extrema, norms, variances (the cumulative ones live in
:mod:`vizgrad.ops.cumulative`; all, any and nonzero in :mod:`vizgrad.ops.truth`).

Every reduction takes PyTorch's ``dim`` (an int, a tuple of ints, negative counting
from the end, or None for all dims) and ``keepdim``. Each op's backward first undoes
the reduction, giving the gradient the input's shape: when ``keepdim`` was False the
reduced axes are put back with size 1 (:func:`_keepdim`), then the values are broadcast
along them (:func:`_unreduce`). Backwards that need a value computed from the input
(a mean, a product of the other elements) recompute it from the saved input, so
second derivatives come out right.
"""

import builtins
import functools
import math
import numbers

import numpy as np

from .. import dtypes, return_types
from ..autograd.function import Op
from ..errors import (DTypeError, ShapeError, format_shape, ArgumentError, ArgumentTypeError, not_a_tensor, check_dim,
                      public)
from ..tensor import Tensor
from . import binary
from .conversion import to_dtype
from .registry import Sample, register
from .samples import non_contiguous, values

# max(input, dim) and min(input, dim) return these, as torch.return_types.max / .min do
_MaxResult, _MinResult, AminmaxResult = return_types.max, return_types.min, return_types.aminmax


# --- dims ---------------------------------------------------------------------


def numpy_names(function):
    """Accept NumPy's ``axis=`` and ``keepdims=`` for ``dim=`` and ``keepdim=``, as PyTorch's
    reductions do (``x.sum(axis=0, keepdims=True)``)."""
    @functools.wraps(function)
    def reduction(*args, **kwargs):
        for numpy_name, name in (("axis", "dim"), ("keepdims", "keepdim")):
            if numpy_name in kwargs:
                if name in kwargs:
                    raise ArgumentTypeError(f"{function.__name__}: got both {name}= and its alias {numpy_name}=")
                kwargs[name] = kwargs.pop(numpy_name)
        return function(*args, **kwargs)
    return reduction

def _axes(op, input, dim):
    """``dim`` as a sorted tuple of non-negative axes of ``input``.

    None and, as in PyTorch, an empty tuple mean every axis. A 0-d tensor accepts
    dim 0 and -1 and has no axis to reduce, so it gives ``()``.
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor(op, "input", input)
    ndim = input.ndim
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int:  # the common case, one dim: no duplicates to look for, nothing to sort
        axis = check_dim(op, dim, ndim)
        return (axis,) if ndim else ()
    dims = (dim,) if _is_int(dim) else dim
    if not isinstance(dims, (tuple, list)) or not builtins.all(_is_int(d) for d in dims):
        raise ArgumentTypeError(f"{op}: dim must be an int, a tuple of ints or None, got {dim!r}")
    if not dims:
        return tuple(range(ndim))
    axes = []
    for d in dims:
        axis = check_dim(op, int(d), ndim)
        if axis in axes:
            raise ShapeError(f"{op}: dim {d} appears more than once in dim={tuple(dims)!r}")
        axes.append(axis)
    return tuple(sorted(axes)) if ndim else ()


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _kept(shape, axes):
    """``shape`` with the reduced ``axes`` kept as size 1 (the ``keepdim=True`` shape)."""
    return tuple([1 if axis in axes else n for axis, n in enumerate(shape)])


def _dropped(shape, axes):
    """``shape`` without the reduced ``axes`` (the ``keepdim=False`` shape)."""
    return tuple([n for axis, n in enumerate(shape) if axis not in axes])


def _count(shape, axes):
    """How many elements each output element of a reduction over ``axes`` combines."""
    return math.prod([shape[axis] for axis in axes])


def _keepdim(xp, value, ctx):
    """A reduction's output (or its gradient) in the keepdim shape, to broadcast against the input."""
    return value if ctx.keepdim else xp.reshape(value, _kept(ctx.shape, ctx.axes))


def _unreduce(xp, grad, ctx):
    """The gradient of a reduction's output broadcast back to the input's shape."""
    if grad.ndim:                       # (a 0-d gradient broadcasts as it is)
        grad = _keepdim(xp, grad, ctx)
    return xp.broadcast_to(grad, ctx.shape)


def _remember(ctx, a, axes, keepdim):
    ctx.shape, ctx.axes, ctx.keepdim = tuple(a.shape), axes, keepdim


def _floating(op, input):
    if not input.is_floating_point():
        raise DTypeError(f"{op}: expected a floating point tensor, got {input.dtype.name}; "
                         "convert it first, e.g. with .float() or dtype=vizgrad.float32")


def _nonempty(op, input, axes):
    if _count(input.shape, axes) == 0:
        raise ShapeError(f"{op}: cannot reduce a tensor of shape {format_shape(input.shape)} over dims {axes}: "
                         "they contain no elements and the reduction has no identity")


def _cast(input, dtype):
    """``input`` cast to ``dtype`` (a differentiable cast), or bool promoted to int64 when None."""
    if dtype is not None:
        return to_dtype(input, dtype)
    return to_dtype(input, dtypes.int64) if input.dtype is dtypes.bool_ else input


def _in_dtype(out, dtype):
    """A sum's or product's result in the ``dtype`` asked for: the backend accumulates integers
    in int64, where PyTorch keeps an explicit ``dtype=int32`` (integers have no gradient to cast)."""
    return out if dtype is None or out.dtype is dtype else to_dtype(out, dtype)


# --- reference helpers for the tests (NumPy, PyTorch's argument names) -----------

def _np_axis(x, dim):
    if dim is None or np.ndim(x) == 0 or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _samples(dims, zero_d=(None, 0, -1), low=-2.0, high=2.0):
    """Samples of a reduction: a (3, 4, 2) input reduced over each of ``dims`` with and
    without keepdim, 0-d inputs with each dim of ``zero_d``, a 1-d input, and a
    non-contiguous one reduced over its strided axis. A dim of None omits the argument."""
    def call(dim, keepdim=None):
        kwargs = {} if dim is None else {"dim": dim}
        if keepdim is not None:
            kwargs["keepdim"] = keepdim
        return kwargs

    def samples(rng):
        for dim in zero_d:
            yield Sample((values(rng, (), low, high),), call(dim), name=f"0-d dim={dim}")
        for dim in dims:
            for keepdim in (False, True):
                yield Sample((values(rng, (3, 4, 2), low, high),), call(dim, keepdim),
                             name=f"dim={dim} keepdim={keepdim}")
        yield Sample((values(rng, (5,), low, high),), call(-1, True), name="1-d")
        yield Sample((non_contiguous(values(rng, (4, 3), low, high)),), call(0), name="non-contiguous")
    return samples


# --- sum, mean, prod ------------------------------------------------------------

class Sum(Op):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        _remember(ctx, a, axes, keepdim)
        return ctx.xp.sum(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _unreduce(ctx.xp, grad, ctx)


def _sum_reference(x, dim=None, keepdim=False, dtype=None):
    x = x.astype(np.int64) if x.dtype == np.bool_ else x
    return np.sum(x, axis=_np_axis(x, dim), keepdims=keepdim)


@register(_sum_reference, _samples((None, 0, -1, (0, 2), (-1, 0))))
@numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of the elements over ``dim`` (all of them when None).

    out = Σᵢ xᵢ over the reduced dims; d out / d xᵢ = 1, so the gradient is the
    output's gradient broadcast back over the reduced dims. Integer and bool inputs
    sum to int64; ``dtype`` casts the input first.

    Example::

        x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x.sum()          # tensor(10.)
        x.sum(dim=0)     # tensor([4., 6.])
        x.sum().backward()   # x.grad == [[1., 1.], [1., 1.]]
    """
    axes = _axes("sum", input, dim)
    return _in_dtype(Sum.apply(_cast(input, dtype), axes=axes, keepdim=keepdim), dtype)


class Mean(Op):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        _remember(ctx, a, axes, keepdim)
        return ctx.xp.mean(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _unreduce(ctx.xp, grad / _count(ctx.shape, ctx.axes), ctx)   # divided before it is broadcast


@register(lambda x, dim=None, keepdim=False, dtype=None: np.mean(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _samples((None, 0, -1, (0, 2), (-1, 0))))
@numpy_names
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim`` (all dims when None); floating inputs only.

    out = (1/n) Σᵢ xᵢ with n the number of reduced elements; d out / d xᵢ = 1/n.

    Example::

        vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(dim=1)   # tensor([1.5, 3.5])
    """
    axes = _axes("mean", input, dim)
    if dtype is not None:
        input = to_dtype(input, dtype)
    _floating("mean", input)
    return Mean.apply(input, axes=axes, keepdim=keepdim)


class Prod(Op):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        _remember(ctx, a, axes, keepdim)
        ctx.save_for_backward(a)
        return ctx.xp.prod(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        # d out / d xᵢ = Πⱼ≠ᵢ xⱼ = Q / sᵢ · Πⱼ≠ᵢ, xⱼ=0 xⱼ, where Q is the product of the
        # non-zero elements and s is x with zeros replaced by 1. The last factor is 1 when
        # no other element is zero, that other zero (value 0, derivative 1) when exactly
        # one is, and 0 when more are: exact at zeros, for second derivatives too.
        a, = ctx.saved_tensors
        xp = ctx.xp
        axes = ctx.axes
        is_zero = a == 0
        safe = xp.where(is_zero, 1.0, a)
        nonzero_product = xp.prod(safe, axis=axes, keepdims=True)
        zeros = xp.astype(is_zero, a.dtype)
        other_zeros = xp.sum(zeros, axis=axes, keepdims=True) - zeros
        zero_values = xp.where(is_zero, a, 0.0)
        the_other_zero = xp.sum(zero_values, axis=axes, keepdims=True) - zero_values
        factor = xp.where(other_zeros == 0, 1.0, xp.where(other_zeros == 1, the_other_zero, 0.0))
        return _keepdim(xp, grad, ctx) * nonzero_product / safe * factor


def _prod_samples(rng):
    yield from _samples((None, 0, -1, (0, 2)), low=0.5, high=1.5)(rng)
    for zeros in (1, 2, 3):
        x = values(rng, (2, 4), 0.5, 1.5)
        x[0, :zeros] = 0.0
        for dim in (None, 1):
            yield Sample((x,), {} if dim is None else {"dim": dim}, name=f"{zeros} zeros dim={dim}")


@register(lambda x, dim=None, keepdim=False, dtype=None: np.prod(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _prod_samples)
@numpy_names
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of the elements over ``dim`` (all of them when None).

    out = Πᵢ xᵢ; d out / d xᵢ = Πⱼ≠ᵢ xⱼ, computed without dividing by zero: exact
    when the input holds zeros.

    Example::

        x = vizgrad.tensor([2.0, 0.0, 5.0], requires_grad=True)
        x.prod().backward()      # x.grad == [0., 10., 0.]
    """
    axes = _axes("prod", input, dim)
    return _in_dtype(Prod.apply(_cast(input, dtype), axes=axes, keepdim=keepdim), dtype)


# --- var, std --------------------------------------------------------------------

def _divisor(ctx, correction):
    """n - correction, the divisor of the variance (PyTorch's: never below zero)."""
    ctx.divisor = builtins.max(_count(ctx.shape, ctx.axes) - correction, 0)
    return ctx.divisor


def _sum_of_squares(xp, a, axes, keepdim):
    centred = a - xp.mean(a, axis=axes, keepdims=True)
    return xp.sum(centred * centred, axis=axes, keepdims=keepdim)


def _centred_over_divisor(xp, a, ctx):
    """(x - mean) / divisor, recomputed from the input (inf when the divisor is 0, as PyTorch)."""
    centred = a - xp.mean(a, axis=ctx.axes, keepdims=True)
    return centred * (1 / ctx.divisor) if ctx.divisor else centred * math.inf


class Var(Op):
    @staticmethod
    def forward(ctx, a, axes, correction, keepdim):
        xp = ctx.xp
        _remember(ctx, a, axes, keepdim)
        ctx.save_for_backward(a)
        return xp.asarray(_sum_of_squares(xp, a, axes, keepdim) / _divisor(ctx, correction))

    @staticmethod
    def backward(ctx, grad):
        # d/dxᵢ Σⱼ (xⱼ - m)² / d = 2 (xᵢ - m) / d (the terms through m sum to zero)
        a, = ctx.saved_tensors
        xp = ctx.xp
        return _unreduce(xp, grad, ctx) * 2 * _centred_over_divisor(xp, a, ctx)


class Std(Op):
    @staticmethod
    def forward(ctx, a, axes, correction, keepdim):
        xp = ctx.xp
        _remember(ctx, a, axes, keepdim)
        out = xp.asarray(xp.sqrt(_sum_of_squares(xp, a, axes, keepdim) / _divisor(ctx, correction)))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # d σ / d xᵢ = (xᵢ - m) / (d σ); where σ = 0 every xᵢ - m is 0 and so is the gradient
        a, out = ctx.saved_tensors
        xp = ctx.xp
        std = _keepdim(xp, out, ctx)
        safe = xp.where(std == 0, 1.0, std)
        return _keepdim(xp, grad, ctx) * _centred_over_divisor(xp, a, ctx) / safe


def _correction(op, correction, unbiased):
    if unbiased is None:
        return correction
    if correction != 1:
        raise ArgumentError(f"{op}: pass either correction or unbiased, not both")
    return 1 if unbiased else 0


def _var_reference(x, dim=None, *, correction=1, keepdim=False, unbiased=None):
    axis = _np_axis(x, dim)
    n = np.size(x) if axis is None else math.prod(np.shape(x)[a] for a in np.atleast_1d(axis))
    centred = x - np.mean(x, axis=axis, keepdims=True)
    return np.sum(centred * centred, axis=axis, keepdims=keepdim) / builtins.max(n - correction, 0)


def _var_samples(rng):
    yield from _samples((None, 0, -1, (0, 2), (-1, 0)), zero_d=())(rng)
    yield Sample((values(rng, ()),), {"correction": 0}, name="0-d")
    yield Sample((values(rng, ()),), {"dim": -1, "correction": 0, "keepdim": True}, name="0-d dim=-1")
    yield Sample((values(rng, (3, 4)),), {"dim": 1, "correction": 0}, name="correction=0")
    yield Sample((values(rng, (3, 4)),), {"dim": (0, 1), "correction": 2}, name="correction=2")


@register(_var_reference, _var_samples)
@numpy_names
def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """Variance over ``dim`` (all dims when None), with Bessel's ``correction``.

    var = Σᵢ (xᵢ - mean)² / max(n - correction, 0); d var / d xᵢ = 2 (xᵢ - mean) /
    (n - correction). ``unbiased=False`` is the old spelling of ``correction=0``.

    Example::

        vizgrad.tensor([1.0, 2.0, 3.0, 4.0]).var()                 # tensor(1.6667)
        vizgrad.tensor([1.0, 2.0, 3.0, 4.0]).var(correction=0)     # tensor(1.25)
    """
    axes = _axes("var", input, dim)
    _floating("var", input)
    return Var.apply(input, axes=axes, correction=_correction("var", correction, unbiased), keepdim=keepdim)


def _std_reference(x, dim=None, *, correction=1, keepdim=False, unbiased=None):
    return np.sqrt(_var_reference(x, dim, correction=correction, keepdim=keepdim))


@register(_std_reference, _var_samples)
@numpy_names
def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """Standard deviation over ``dim``: the square root of :func:`var` (same arguments).

    d std / d xᵢ = (xᵢ - mean) / ((n - correction) · std), taken as 0 where std = 0.

    Example::

        vizgrad.tensor([[1.0, 3.0], [2.0, 2.0]]).std(dim=1)   # tensor([1.4142, 0.    ])
    """
    axes = _axes("std", input, dim)
    _floating("std", input)
    return Std.apply(input, axes=axes, correction=_correction("std", correction, unbiased), keepdim=keepdim)


@public("var_mean")
@numpy_names
def var_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(var(input, dim, ...), mean(input, dim, ...))`` in one call, as PyTorch's
    ``var_mean``; the arguments are :func:`var`'s.

    Example::

        vizgrad.var_mean(vizgrad.tensor([1.0, 2.0, 4.0]))      # (tensor(2.3333), tensor(2.3333))
    """
    return var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased), mean(input, dim, keepdim)


@public("std_mean")
@numpy_names
def std_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(std(input, dim, ...), mean(input, dim, ...))`` in one call, as PyTorch's
    ``std_mean``; the arguments are :func:`std`'s.

    Example::

        vizgrad.std_mean(vizgrad.tensor([1.0, 2.0, 4.0]))      # (tensor(1.5275), tensor(2.3333))
    """
    return std(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased), mean(input, dim, keepdim)


def _nan_samples(rng):
    data = values(rng, (3, 4))
    data.flat[[1, 6]] = np.nan
    yield Sample((data,), name="all")
    yield Sample((data,), {"dim": 1, "keepdim": True}, name="dim=1")


def _nansum_reference(a, dim=None, keepdim=False):
    return np.nansum(a, axis=dim, keepdims=keepdim)


def _nanmean_reference(a, dim=None, keepdim=False):
    return np.nanmean(a, axis=dim, keepdims=keepdim)


@register(_nansum_reference, _nan_samples)
@numpy_names
def nansum(input, dim=None, keepdim=False):
    """Sum over ``dim`` with NaN taken as zero; the gradient is zero at the NaNs.

    Example::

        vizgrad.tensor([1.0, float("nan"), 2.0]).nansum()      # tensor(3.)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("nansum", "input", input)
    if not input.is_floating_point():
        return sum(input, dim, keepdim)
    return sum(input.masked_fill(input.isnan(), 0.0), dim, keepdim)


@register(_nanmean_reference, _nan_samples)
@numpy_names
def nanmean(input, dim=None, keepdim=False):
    """Mean over ``dim`` of the values that are not NaN (NaN where all are); the gradient
    is zero at the NaNs.

    Example::

        vizgrad.tensor([1.0, float("nan"), 2.0]).nanmean()     # tensor(1.5000)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("nanmean", "input", input)
    _floating("nanmean", input)
    missing = input.isnan()
    kept = sum(missing.logical_not(), dim, keepdim)
    return sum(input.masked_fill(missing, 0.0), dim, keepdim) / kept


# --- amax, amin, max, min ----------------------------------------------------------

class Amax(Op):
    """The largest element over ``axes``; the gradient is shared evenly among ties."""

    function = "max"

    @classmethod
    def forward(cls, ctx, a, axes, keepdim):
        _remember(ctx, a, axes, keepdim)
        out = ctx.xp.asarray(getattr(ctx.xp, cls.function)(a, axis=axes, keepdims=keepdim))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        chosen = a == _keepdim(xp, out, ctx)
        ties = xp.sum(xp.astype(chosen, a.dtype), axis=ctx.axes, keepdims=True)
        return xp.where(chosen, _keepdim(xp, grad, ctx) / ties, 0.0)


class Amin(Amax):
    function = "min"


class Max(Amax):
    """``max(input)``: Amax over every dim (its own class, so the graph says MaxBackward)."""


class Min(Amin):
    """``min(input)``: Amin over every dim."""


class MaxDim(Op):
    """The largest element along one axis and its index; the gradient goes to that index."""

    function = "argmax"

    @classmethod
    def forward(cls, ctx, a, axis, keepdim):
        xp = ctx.xp
        if a.ndim == 0:
            out, indices, chosen = xp.asarray(a, copy=True), xp.zeros((), dtype=xp.int64), xp.asarray(True)
        else:
            indices = getattr(xp, cls.function)(a, axis=axis, keepdims=True)
            out = xp.take_along_axis(a, indices, axis=axis)
            positions = xp.reshape(xp.arange(a.shape[axis]), tuple(-1 if i == axis else 1 for i in range(a.ndim)))
            chosen = positions == indices
            if not keepdim:
                dropped = _dropped(a.shape, (axis,))
                out, indices = xp.reshape(out, dropped), xp.reshape(indices, dropped)
        _remember(ctx, a, (axis,) if a.ndim else (), keepdim)
        ctx.save_for_backward(chosen)    # a constant mask: the gradient's path, not a value
        ctx.mark_non_differentiable(indices)
        return out, indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        chosen, = ctx.saved_tensors
        return ctx.xp.where(chosen, _keepdim(ctx.xp, grad, ctx), 0.0)


class MinDim(MaxDim):
    function = "argmin"


def _amax_reference(x, dim=(), keepdim=False):
    return np.max(x, axis=_np_axis(x, dim), keepdims=keepdim)


def _amin_reference(x, dim=(), keepdim=False):
    return np.min(x, axis=_np_axis(x, dim), keepdims=keepdim)


# Finite differences break ties, so gradcheck cannot see the even split there: the
# samples avoid ties, and tests/test_reduce_extra.py checks the split itself.
_extremum_reduction_samples = _samples(((), 0, -1, (0, 2), (-1, 0)), zero_d=((), 0, -1))


@register(_amax_reference, _extremum_reduction_samples, smooth=False)
@numpy_names
def amax(input, dim=(), keepdim=False):
    """The largest element over ``dim`` (every dim when ``()``, the default).

    d out / d xᵢ = 1/k if xᵢ is one of the k elements equal to the maximum, else 0:
    the gradient is split evenly among ties.

    Example::

        x = vizgrad.tensor([1.0, 3.0, 3.0], requires_grad=True)
        x.amax().backward()      # x.grad == [0.0, 0.5, 0.5]
    """
    axes = _axes("amax", input, dim)
    _nonempty("amax", input, axes)
    return Amax.apply(input, axes=axes, keepdim=keepdim)


@register(_amin_reference, _extremum_reduction_samples, smooth=False)
@numpy_names
def amin(input, dim=(), keepdim=False):
    """The smallest element over ``dim`` (every dim when ``()``, the default); the
    gradient is split evenly among ties, as in :func:`amax`.

    Example::

        vizgrad.tensor([[1.0, -2.0], [0.5, 4.0]]).amin(dim=1)   # tensor([-2. ,  0.5])
    """
    axes = _axes("amin", input, dim)
    _nonempty("amin", input, axes)
    return Amin.apply(input, axes=axes, keepdim=keepdim)


@public("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (every dim when None), as a named tuple with fields
    ``min`` and ``max`` (PyTorch's ``aminmax``); gradients as in :func:`amin` and :func:`amax`.

    Example::

        vizgrad.aminmax(vizgrad.tensor([1.0, 4.0, -2.0]))     # aminmax(min=tensor(-2.), max=tensor(4.))
    """
    every = () if dim is None else dim
    return AminmaxResult(amin(input, every, keepdim), amax(input, every, keepdim))


def _extremum(op, input, dim, keepdim, full, along, binary_op, result):
    if isinstance(dim, Tensor):
        return binary_op(input, dim)
    if dim is None:
        axes = _axes(op, input, None)
        _nonempty(op, input, axes)
        return full.apply(input, axes=axes, keepdim=False)
    if not _is_int(dim):
        raise ArgumentTypeError(f"{op}: dim must be an int (or other a Tensor), got {dim!r}; "
                                f"for several dims use a{op}(input, dim=(...))")
    axis = check_dim(op, int(dim), input.ndim)
    if input.ndim:
        _nonempty(op, input, (axis,))
    return result(*along.apply(input, axis=axis, keepdim=keepdim))


def _max_reference(x, dim=None, keepdim=False):
    if isinstance(dim, np.ndarray) or isinstance(dim, float):
        return np.maximum(x, dim)
    if dim is None:
        return np.max(x)
    if np.ndim(x) == 0:
        return x, np.asarray(0)
    return np.max(x, axis=dim, keepdims=keepdim), np.argmax(x, axis=dim, keepdims=keepdim)


def _min_reference(x, dim=None, keepdim=False):
    if isinstance(dim, np.ndarray) or isinstance(dim, float):
        return np.minimum(x, dim)
    if dim is None:
        return np.min(x)
    if np.ndim(x) == 0:
        return x, np.asarray(0)
    return np.min(x, axis=dim, keepdims=keepdim), np.argmin(x, axis=dim, keepdims=keepdim)


def _extremum_samples(rng):
    yield from _samples((0, 1, -1), zero_d=(None, 0, -1))(rng)
    yield Sample((values(rng, (3, 4, 2)),), name="all dims")
    yield Sample((values(rng, (3, 4)), values(rng, (4,))), name="elementwise, broadcast")


@register(_max_reference, _extremum_samples, smooth=False)
@numpy_names
def max(input, dim=None, keepdim=False):
    """The largest element, as PyTorch's three forms:

    * ``max(input)``: a 0-d tensor; the gradient is split evenly among ties.
    * ``max(input, dim, keepdim=False)``: ``(values, indices)`` along ``dim``; the
      gradient goes to the element at ``indices`` (the first maximum); indices have none.
    * ``max(input, other)``: the elementwise :func:`maximum` of two tensors.

    Example::

        x = vizgrad.tensor([[1.0, 5.0], [7.0, 2.0]])
        x.max()                  # tensor(7.)
        x.max(dim=1)             # max(values=tensor([5., 7.]), indices=tensor([1, 0]))
    """
    return _extremum("max", input, dim, keepdim, Max, MaxDim, binary.maximum, _MaxResult)


@register(_min_reference, _extremum_samples, smooth=False)
@numpy_names
def min(input, dim=None, keepdim=False):
    """The smallest element, in :func:`max`'s three forms: ``min(input)``,
    ``min(input, dim, keepdim=False) -> (values, indices)`` and ``min(input, other)``.

    Example::

        vizgrad.tensor([[1.0, 5.0], [7.0, 2.0]]).min(dim=0).indices   # tensor([0, 1])
    """
    return _extremum("min", input, dim, keepdim, Min, MinDim, binary.minimum, _MinResult)


class IndexOrTruthReduction(Op):
    """Base of the reductions without a gradient (argmax, argmin, all, any): ``function``
    names the Array API function."""

    differentiable = False
    function = ""

    @classmethod
    def forward(cls, ctx, a, axis, keepdim):
        return getattr(ctx.xp, cls.function)(a, axis=axis, keepdims=keepdim)


class Argmax(IndexOrTruthReduction):
    function = "argmax"


class Argmin(IndexOrTruthReduction):
    function = "argmin"


def _arg_axis(op, input, dim):
    if input.dtype is dtypes.bool_:
        raise DTypeError(f"{op}: does not support bool input; convert it first, e.g. with .int()")
    if dim is None:
        _nonempty(op, input, tuple(range(input.ndim)))
        return None
    if not _is_int(dim):
        raise ArgumentTypeError(f"{op}: dim must be an int or None, got {dim!r}")
    axis = check_dim(op, int(dim), input.ndim)
    if input.ndim == 0:
        return None
    _nonempty(op, input, (axis,))
    return axis


@register(lambda x, dim=None, keepdim=False: np.argmax(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _samples((None, 0, -1)), differentiable=False)
@numpy_names
def argmax(input, dim=None, keepdim=False):
    """The index of the largest element along ``dim``; with ``dim=None``, the index into
    the flattened tensor. The first one wins ties. Not differentiable (int64 result).

    Example::

        vizgrad.tensor([[1.0, 5.0], [7.0, 2.0]]).argmax()        # tensor(2)
        vizgrad.tensor([[1.0, 5.0], [7.0, 2.0]]).argmax(dim=1)   # tensor([1, 0])
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("argmax", "input", input)
    return Argmax.apply(input, axis=_arg_axis("argmax", input, dim), keepdim=keepdim)


@register(lambda x, dim=None, keepdim=False: np.argmin(x, axis=_np_axis(x, dim), keepdims=keepdim),
          _samples((None, 0, -1)), differentiable=False)
@numpy_names
def argmin(input, dim=None, keepdim=False):
    """The index of the smallest element along ``dim`` (of the flattened tensor when
    None). Not differentiable.

    Example::

        vizgrad.tensor([3.0, -1.0, 2.0]).argmin()   # tensor(1)
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("argmin", "input", input)
    return Argmin.apply(input, axis=_arg_axis("argmin", input, dim), keepdim=keepdim)


# --- logsumexp, norm ---------------------------------------------------------------

class Logsumexp(Op):
    @staticmethod
    def forward(ctx, a, axes, keepdim):
        xp = ctx.xp
        _remember(ctx, a, axes, keepdim)
        # log Σ eˣ = m + log Σ e^(x - m) with m the max: no overflow; m = 0 where it is ±inf
        if _count(a.shape, axes):
            shift = xp.max(a, axis=axes, keepdims=True)
            shift = xp.where(xp.isfinite(shift), shift, 0.0)
        else:
            shift = xp.zeros(_kept(a.shape, axes), dtype=a.dtype)
        out = xp.log(xp.sum(xp.exp(a - shift), axis=axes, keepdims=True)) + shift
        out = out if keepdim else xp.reshape(out, _dropped(a.shape, axes))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        # d out / d xᵢ = e^(xᵢ - out): the softmax of x over the reduced dims
        a, out = ctx.saved_tensors
        xp = ctx.xp
        return _keepdim(xp, grad, ctx) * xp.exp(a - _keepdim(xp, out, ctx))


def _logsumexp_reference(x, dim, keepdim=False):
    axis = _np_axis(x, dim)
    shift = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdim else np.squeeze(out, axis=axis)


def _logsumexp_samples(rng):
    yield from _samples((0, -1, (0, 2), (-1, 0)), zero_d=(0, -1))(rng)
    yield Sample((values(rng, (3, 4), 999.0, 1001.0),), {"dim": 1}, name="large values")
    yield Sample((values(rng, (3, 4), -1001.0, -999.0),), {"dim": (0, 1)}, name="very negative values")


@register(_logsumexp_reference, _logsumexp_samples)
@numpy_names
def logsumexp(input, dim, keepdim=False):
    """``log Σ exp(x)`` over ``dim``, computed stably (the maximum is factored out).

    d out / d xᵢ = exp(xᵢ - out), the softmax over the reduced dims.

    Example::

        vizgrad.tensor([1000.0, 1000.0]).logsumexp(dim=0)   # 1000 + ln 2, without overflow
    """
    axes = _axes("logsumexp", input, dim)
    if not input.is_floating_point():
        input = to_dtype(input, dtypes.default_float)
    return Logsumexp.apply(input, axes=axes, keepdim=keepdim)


class Norm(Op):
    @staticmethod
    def forward(ctx, a, p, axes, keepdim):
        xp = ctx.xp
        _remember(ctx, a, axes, keepdim)
        ctx.p = p
        magnitude = xp.abs(a)
        if p == 2:
            out = xp.sqrt(xp.sum(a * a, axis=axes, keepdims=keepdim))
        elif p == 1:
            out = xp.sum(magnitude, axis=axes, keepdims=keepdim)
        elif p == math.inf:
            out = xp.max(magnitude, axis=axes, keepdims=keepdim)
        elif p == -math.inf:
            out = xp.min(magnitude, axis=axes, keepdims=keepdim)
        elif p == 0:
            out = xp.sum(xp.astype(a != 0, a.dtype), axis=axes, keepdims=keepdim)
        else:
            out = xp.sum(magnitude ** p, axis=axes, keepdims=keepdim) ** (1 / p)
        out = xp.asarray(out)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        xp = ctx.xp
        p = ctx.p
        grad = _keepdim(xp, grad, ctx)
        if p == 0:                                   # a count: piecewise constant
            return xp.zeros_like(a)
        if p == 1:                                   # d Σ|x| = sign(x)
            return grad * xp.sign(a)
        norm = _keepdim(xp, out, ctx)
        if p in (math.inf, -math.inf):               # like amax/amin of |x|: ties share evenly
            chosen = xp.abs(a) == norm
            ties = xp.sum(xp.astype(chosen, a.dtype), axis=ctx.axes, keepdims=True)
            return xp.where(chosen, grad * xp.sign(a) / ties, 0.0)
        safe_norm = xp.where(norm == 0, 1.0, norm)   # norm 0 means x = 0: gradient 0
        if p == 2:                                   # d ‖x‖ = x / ‖x‖
            return grad * a / safe_norm
        # d ‖x‖ₚ = sign(x) |x|^(p-1) / ‖x‖ₚ^(p-1); |x| is made safe at 0 for p < 1
        safe_magnitude = xp.where(a == 0, 1.0, xp.abs(a))
        return grad * xp.sign(a) * safe_magnitude ** (p - 1) / safe_norm ** (p - 1)


def _norm_order(p):
    if p == "fro" or p is None:
        return 2
    if isinstance(p, (str, bool)) or not isinstance(p, numbers.Real):
        raise ArgumentError(f"norm: p must be 'fro' or a number (inf included), got {p!r}"
                            + ("; the nuclear norm is not supported" if p == "nuc" else ""))
    return float(p)


def _norm_reference(x, p="fro", dim=None, keepdim=False, dtype=None):
    p = _norm_order(p)
    axis = _np_axis(x, dim)
    magnitude = np.abs(x)
    if p == math.inf:
        return np.max(magnitude, axis=axis, keepdims=keepdim)
    if p == -math.inf:
        return np.min(magnitude, axis=axis, keepdims=keepdim)
    if p == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdim).astype(x.dtype)
    return np.sum(magnitude ** p, axis=axis, keepdims=keepdim) ** (1 / p)


def _norm_samples(rng):
    yield from _samples((None, 0, -1, (0, 2)))(rng)
    for p in (1, math.inf, -math.inf, 3, 0.5, 0, "fro"):
        for dim in (None, 1, (0, 1)):
            kwargs = {"p": p} if dim is None else {"p": p, "dim": dim, "keepdim": dim == 1}
            yield Sample((values(rng, (3, 4), away_from=0.0),), kwargs, name=f"p={p} dim={dim}")


@register(_norm_reference, _norm_samples)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector ``p``-norm over ``dim`` (all elements when None): ‖x‖ₚ = (Σ|xᵢ|ᵖ)^(1/p).

    ``p`` is ``'fro'`` or 2 (Euclidean; gradient x/‖x‖, 0 at x = 0), 1 (gradient
    sign(x)), ``inf``/``-inf`` (largest/smallest |xᵢ|; the gradient is split evenly
    among ties), 0 (the count of non-zeros; gradient 0) or any other number
    (gradient sign(x)|x|^(p-1)/‖x‖ₚ^(p-1)).

    Example::

        x = vizgrad.tensor([3.0, 4.0], requires_grad=True)
        x.norm()                         # tensor(5.)
        x.norm(p=1), x.norm(p=float("inf"))   # tensor(7.), tensor(4.)
    """
    order = _norm_order(p)
    axes = _axes("norm", input, dim)
    if dtype is not None:
        input = to_dtype(input, dtype)
    _floating("norm", input)
    if order in (math.inf, -math.inf):
        _nonempty("norm", input, axes)
    return Norm.apply(input, p=order, axes=axes, keepdim=keepdim)

