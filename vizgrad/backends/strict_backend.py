"""array_api_strict behind device "strict": a CPU stand-in that proves ops use only the
portable Array API. Its extra kernels round-trip through NumPy, which is fine for a
test backend and keeps the op code itself portable."""

import numpy as np

import array_api_strict as strict

from . import numpy_backend as host
from ..errors import DTypeError
from .base import Backend, namespace


def _host(function):
    def kernel(*args, **kwargs):
        args = [np.from_dlpack(a) if type(a) is StrictBackend.array_type else a for a in args]
        return strict.asarray(function(*args, **kwargs))
    kernel.__name__ = function.__name__
    return kernel


def _host_many(function):
    """A NumPy kernel returning a tuple of arrays, over array_api_strict arrays."""
    def kernel(*args, **kwargs):
        args = [np.from_dlpack(a) if type(a) is StrictBackend.array_type else a for a in args]
        return tuple(strict.asarray(np.array(out, order="C")) for out in function(*args, **kwargs))
    kernel.__name__ = function.__name__
    return kernel


def _einsum(subscripts, *operands):
    return strict.asarray(np.einsum(subscripts, *(np.from_dlpack(a) for a in operands)))


def _keep_where(mask, values):
    return strict.where(mask, values, strict.zeros_like(values))


def _put_add(x, key, values):
    key = _host_key(key)
    return strict.asarray(host.put_add(np.from_dlpack(x), key, np.from_dlpack(values)))


def _host_key(key):
    if isinstance(key, tuple):
        return tuple(_host_key(k) for k in key)
    return np.from_dlpack(key) if type(key) is StrictBackend.array_type else key


class StrictBackend(Backend):
    name = "array_api_strict"
    device_type = "strict"
    array_type = type(strict.asarray(0))
    xp = namespace(strict, {
        "erf": _host(host.erf), "erfc": _host(host.erfc), "lgamma": _host(host.lgamma),
        "digamma": _host(host.digamma), "polygamma": _host(host.polygamma), "index_add": _host(host.index_add),
        "scatter_add": _host(host.scatter_add), "put_add": _put_add, "pad": _host(host.pad),
        "einsum": _einsum, "sliding_windows": _host(host.sliding_windows), "keep_where": _keep_where,
        "solve_triangular": _host(host.NumpyBackend.xp.solve_triangular),
        "matrix_exp": _host(host.NumpyBackend.xp.matrix_exp),
        "cholesky_ex": _host_many(host.NumpyBackend.xp.cholesky_ex), "inv_ex": _host_many(host.NumpyBackend.xp.inv_ex),
        "solve_ex": _host_many(host.NumpyBackend.xp.solve_ex),
        "lu_det": _host_many(host.NumpyBackend.xp.lu_det)})

    def asarray(self, data, dtype, device_index):
        if isinstance(data, (np.ndarray, np.generic)):
            data = np.array(data, order="C")
        return strict.asarray(data, dtype=None if dtype is None else self.native_dtype(dtype))

    def to_numpy(self, array):
        return np.from_dlpack(array)

    def native_dtype(self, dtype):
        native = getattr(strict, dtype.name, None)
        if native is None:
            raise DTypeError(f"the array_api_strict backend has no {dtype.name}")
        return native

    def dtype_name(self, array):
        return str(array.dtype).rpartition(".")[2]

    def memory_owner(self, array):
        return id(array)

    def memory_layout(self, array):
        return super().memory_layout(np.from_dlpack(array))
