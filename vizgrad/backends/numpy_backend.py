"""NumPy behind device "cpu"."""

import math

import numpy as np

from .base import Backend, namespace

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    return _erf(x).astype(x.dtype) if x.ndim else np.asarray(math.erf(x), dtype=x.dtype)


def index_add(x, axis, index, values):
    out = x.copy()
    np.add.at(out, (slice(None),) * axis + (index,), values)
    return out


def scatter_add(x, axis, index, src):
    out = x.copy()
    key = list(np.indices(index.shape, sparse=True))
    key[axis] = index
    np.add.at(out, tuple(key), src[tuple(slice(0, n) for n in index.shape)])
    return out


def put_add(x, key, values):
    out = x.copy()
    np.add.at(out, key, values)
    return out


def pad(x, widths, value):
    return np.pad(x, widths, constant_values=value)


def sliding_windows(x, window, axes):
    return np.lib.stride_tricks.sliding_window_view(x, window, axis=axes)


def _reduction(ufunc):
    """The Array API reduction ``sum``/``prod`` as the ufunc's own reduce:
    what np.sum and friends compute, without their Python dispatch (half their cost on the
    small arrays of a training step)."""
    def reduce(x, /, *, axis=None, dtype=None, keepdims=False):
        return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
    reduce.__name__ = ufunc.__name__ + ".reduce"
    return reduce


def _extremum(ufunc):
    """The Array API ``max``/``min`` as the ufunc's own reduce. Over a short last axis of a
    row-major array NumPy reduces one row at a time (0.4 ms for the (10000, 10) logits of a
    softmax); reducing the transposed copy along its first axis runs the rows side by side,
    up to ten times faster, with the same values (an extremum does not depend on order)."""
    def reduce(x, /, *, axis=None, keepdims=False):
        last = x.ndim - 1
        if last > 0 and axis in ((last,), last, -1) and x.shape[-1] <= 64 and x.flags.c_contiguous:
            return ufunc.reduce(x.T.copy(), axis=0, keepdims=keepdims).T
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = ufunc.__name__ + ".reduce"
    return reduce


def mean(x, /, *, axis=None, keepdims=False):
    """np.mean as the sum's ufunc reduce over the count (what np.mean computes, float16 summed
    in float32 as there), without its Python dispatch: a third of the cost on small arrays."""
    half = x.dtype == np.float16
    total = np.add.reduce(x, axis=axis, dtype=np.float32 if half else None, keepdims=keepdims)
    count = x.size // max(total.size, 1)   # (a NumPy scalar has .size too)
    result = total / count
    return result.astype(np.float16) if half else result


def ones_like(x, /, *, dtype=None, device=None):
    """np.ones_like without its Python layers: an empty array, filled."""
    out = np.empty(x.shape, dtype=x.dtype if dtype is None else dtype)
    out.fill(1)
    return out


def astype(x, dtype, /, *, copy=True, device=None):
    """np.astype as the array's own method (np.astype adds a Python layer around it)."""
    return x.astype(dtype, copy=copy)


def matrix_transpose(x, /):
    """np.matrix_transpose as the array's own swapaxes, without the function's Python wrappers
    (five times the cost of the swap on small arrays)."""
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.swapaxes(-1, -2)


def reshape(x, /, shape, *, copy=None):
    """np.reshape as the array's own method, without the function's Python dispatch."""
    return x.reshape(shape, copy=copy)


class NumpyBackend(Backend):
    name = "numpy"
    device_type = "cpu"
    array_type = np.ndarray
    checks_index_bounds = True
    xp = namespace(np, {"erf": erf, "index_add": index_add, "scatter_add": scatter_add,
                        "put_add": put_add, "pad": pad, "einsum": np.einsum,
                        "sliding_windows": sliding_windows,
                        "sum": _reduction(np.add), "prod": _reduction(np.multiply), "mean": mean,
                        "max": _extremum(np.maximum), "min": _extremum(np.minimum),
                        "astype": astype, "ones_like": ones_like,
                        "matrix_transpose": matrix_transpose, "reshape": reshape})

    def asarray(self, data, dtype, device_index):
        if hasattr(data, "__cuda_array_interface__"):
            data = data.get()
        elif not isinstance(data, (np.ndarray, np.generic, list, tuple, int, float, bool)):
            data = np.from_dlpack(data)
        return np.array(data, dtype=None if dtype is None else dtype.numpy, copy=None)

    def is_contiguous(self, array):
        return array.flags.c_contiguous

    def owns_memory(self, array):
        return array.base is None

    def to_numpy(self, array):
        return array

    def is_floating(self, array):
        return array.dtype.kind == "f"
