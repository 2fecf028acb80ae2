"""Tensor methods for shape and indexing that are not registered ops: the in-place variants
(``scatter_``, ``index_copy_``, ``transpose_``, ``fill_diagonal_``, ...), the layout queries
(``stride()``, ``storage_offset()``, ``is_contiguous()``), ``unfold``, ``trace`` and the
conjugate transposes (``H``, ``mH``, ``adjoint``).

In-place rules are those of :mod:`vizgrad._tensor_methods`: values are computed out of place
and stored by :func:`~vizgrad.ops.inplace.apply_inplace` (version bump, CopySlices on a
view's base, refusal on a leaf that requires grad while recording). The in-place shape changes
(``transpose_``, ``squeeze_``, ...) give the tensor a new shape instead, as :meth:`Tensor.t_`.
"""

import numpy as np

from . import ops
from ._tensor_methods import _same_dtype
from .autograd.grad_mode import state
from .errors import ArgumentError, BackwardError, IndexingError, ShapeError, as_int, check_dim, format_shape, public
from .ops.inplace import apply_inplace
from .ops.linalg import matrix_trace
from .ops.shape import unfold_windows
from .tensor import Tensor


# --- in-place versions of the value ops ---------------------------------------------------
def _values_inplace(name, function):
    def method(self, *args, **kwargs):
        others = [value for value in (*args, *kwargs.values()) if isinstance(value, Tensor)]
        return apply_inplace(self, lambda target: function(target, *args, **kwargs), name, *others)
    method.__name__ = name
    method.__doc__ = f"In-place :func:`vizgrad.{name[:-1]}`: changes this tensor and returns it."
    return method


def put_(self, index, source, accumulate=False):
    """In-place :func:`vizgrad.put`: writes (or adds, ``accumulate=True``) ``source`` at the
    flat ``index`` of this tensor and returns it."""
    return apply_inplace(self, lambda target: ops.put(target, index, source, accumulate), "put_", source)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In-place :func:`vizgrad.scatter`: ``src`` (a tensor or a number) or ``value`` written
    along ``dim`` at ``index``; ``reduce="add"`` or ``"multiply"`` combines instead."""
    given = value if src is None else src
    if reduce is not None and isinstance(given, Tensor):
        _same_dtype("scatter_", self, given, "src")
    return apply_inplace(self, lambda target: ops.scatter(target, dim, index, src, value=value, reduce=reduce),
                         "scatter_", given)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place :func:`vizgrad.scatter_reduce`."""
    return apply_inplace(self, lambda target: ops.scatter_reduce(target, dim, index, src, reduce,
                                                                 include_self=include_self),
                         "scatter_reduce_", src)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place :func:`vizgrad.index_reduce`."""
    return apply_inplace(self, lambda target: ops.index_reduce(target, dim, index, source, reduce,
                                                               include_self=include_self),
                         "index_reduce_", source)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal with ``fill_value`` in place: entries ``[i, i]`` of a matrix (with
    ``wrap=True``, a tall matrix's diagonal starts again every ``columns + 1`` rows), or
    ``[i, i, ..., i]`` of a tensor whose dims all have one size."""
    if self.ndim < 2:
        raise ShapeError(f"fill_diagonal_: dimensions must larger than 1, got shape {format_shape(self.shape)}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise ShapeError(f"fill_diagonal_: all dimensions of input must be of equal length, got shape "
                         f"{format_shape(self.shape)}")
    shape = tuple(self.shape)
    step = int(sum(np.cumprod((1,) + shape[:0:-1])))     # the row-major distance between [i, .., i] and the next
    numel = int(np.prod(shape))
    end = numel if self.ndim == 2 and wrap else min(shape) * step
    flat = np.zeros(numel, dtype=bool)
    flat[0:min(end, numel):step] = True
    mask = Tensor._make(self._backend().asarray(flat.reshape(shape), None, self.device.index or 0))
    return apply_inplace(self, lambda target: ops.where(mask, fill_value, target), "fill_diagonal_",
                         fill_value, cast=True)


for _name in ("index_copy", "index_fill", "masked_scatter", "tril", "triu"):
    setattr(Tensor, _name + "_", _values_inplace(_name + "_", getattr(ops, _name)))
Tensor.put_ = put_
Tensor.scatter_ = scatter_
Tensor.scatter_reduce_ = scatter_reduce_
Tensor.index_reduce_ = index_reduce_
Tensor.fill_diagonal_ = fill_diagonal_


# --- in-place shape changes -----------------------------------------------------------------
def _reshaped_inplace(name, make):
    def method(self, *args):
        """The view ``make(self, *args)`` becomes this tensor (same memory, new shape)."""
        if state.grad_enabled and self.requires_grad and self.grad_fn is None:
            raise BackwardError(f"{name}: a leaf tensor that requires grad cannot be modified in place while "
                                f"gradients are recorded; use {name[:-1]}(), or do it under vizgrad.no_grad()")
        result = make(self, *args)
        if state.grad_enabled and self.requires_grad:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
        self._array = result._array
        self._bump_version()
        return self
    method.__name__ = name
    method.__doc__ = f":meth:`{name[:-1]}` in place: this tensor takes the new shape and is returned."
    return method


for _name, _view in (("transpose", ops.transpose), ("swapaxes", ops.transpose), ("swapdims", ops.transpose),
                     ("squeeze", ops.squeeze), ("unsqueeze", ops.unsqueeze)):
    setattr(Tensor, _name + "_", _reshaped_inplace(_name + "_", _view))


# --- views and queries ----------------------------------------------------------------------
def _unfold(self, dimension, size, step):
    return unfold_windows(self, dimension, size, step)


_unfold.__doc__ = unfold_windows.__doc__
_unfold.__name__ = "unfold"
Tensor.unfold = public("unfold")(_unfold)


def _trace(self):
    return matrix_trace(self)


_trace.__doc__ = matrix_trace.__doc__
Tensor.trace = _trace


def where(self, condition, y):
    """``vizgrad.where(condition, self, y)``: this tensor where ``condition`` holds, else ``y``."""
    return ops.where(condition, self, y)


Tensor.where = where


def _conjugate_transpose(name, batch):
    def get(self):
        if batch:
            if self.ndim < 2:
                raise ShapeError(f"{name}: tensor.{name} is only supported on matrices or batches of matrices. "
                                 f"Got {self.ndim}-D tensor.")
            return ops.transpose(self, -2, -1)
        if self.ndim not in (0, 2):
            raise ShapeError(f"{name}: tensor.{name} is only supported on matrices (2-D tensors). "
                             f"Got {self.ndim}-D tensor.")
        return self.t()
    return get


Tensor.H = property(_conjugate_transpose("H", False), doc="The conjugate transpose of a matrix (real "
                                                           "tensors: the transpose, a view).")
Tensor.mH = property(_conjugate_transpose("mH", True), doc="The last two dims swapped and conjugated (real "
                                                            "tensors: ``mT``), a view.")


adjoint = _conjugate_transpose("adjoint", True)
adjoint.__name__, adjoint.__doc__ = "adjoint", "The conjugate transpose of the last two dims (``x.mH``), a view."
Tensor.adjoint = adjoint


def _layout(self):
    array = self._array
    try:
        return self._backend().memory_layout(array)
    except (AttributeError, KeyError, TypeError):
        return None


def stride(self, dim=None):
    """How many elements apart consecutive entries lie along each dim of this tensor's memory
    (a tuple; one int with ``dim``), as NumPy lays out vizgrad's arrays. A contiguous (2, 3)
    tensor has strides (3, 1); its transpose (1, 3); an expanded dim 0."""
    layout = _layout(self)
    if layout is None:
        strides = tuple(int(s) for s in np.cumprod((1,) + tuple(self.shape)[:0:-1])[::-1]) if self.ndim else ()
    else:
        _, byte_strides, itemsize = layout
        strides = tuple(int(s) // itemsize for s in byte_strides)
    strides = tuple(s if n > 1 else c for s, n, c in zip(strides, self.shape, _row_major(self.shape)))
    if dim is None:
        return strides
    if not self.ndim:
        raise IndexingError("stride: dimension specified as 0 but tensor has no dimensions")
    return strides[check_dim("stride", dim, self.ndim)]


def _row_major(shape):
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def storage_offset(self):
    """How many elements into its base's memory this tensor starts (0 for a tensor that is
    no view)."""
    base = self._base
    if base is None:
        return 0
    here, there = _layout(self), _layout(base)
    if here is None or there is None:
        return 0
    return max((here[0] - there[0]) // here[2], 0)


def is_contiguous(self, memory_format=None):
    """Whether this tensor's elements lie in memory in row-major order without gaps (what
    :meth:`contiguous` makes of it)."""
    return bool(self._backend().is_contiguous(self._array))


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    """A new uninitialised tensor of ``size`` with this tensor's dtype and device; vizgrad lays
    it out row-major, so ``stride`` must be the row-major strides of ``size``."""
    size, stride = tuple(as_int("new_empty_strided", "size", s) for s in size), \
        tuple(as_int("new_empty_strided", "stride", s) for s in stride)
    if len(size) != len(stride):
        raise ArgumentError(f"new_empty_strided: mismatch in length of strides and shape: size {size}, "
                            f"stride {stride}")
    if tuple(s for s, n in zip(stride, size) if n > 1) != tuple(s for s, n in zip(_row_major(size), size) if n > 1):
        raise ArgumentError(f"new_empty_strided: vizgrad lays new tensors out row-major: stride {stride} is not "
                            f"that of size {size}, {_row_major(size)}")
    return self.new_empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


Tensor.stride = stride
Tensor.storage_offset = storage_offset
Tensor.is_contiguous = is_contiguous
Tensor.new_empty_strided = new_empty_strided
