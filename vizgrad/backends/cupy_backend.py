"""CuPy behind device "cuda". Imported only when CuPy is installed."""

import numpy as np

import cupy
import cupyx
import cupyx.scipy.special

from .base import Backend, namespace


def index_add(x, axis, index, values):
    out = x.copy()
    cupyx.scatter_add(out, (slice(None),) * axis + (index,), values)
    return out


def scatter_add(x, axis, index, src):
    out = x.copy()
    key = list(cupy.indices(index.shape, sparse=True))
    key[axis] = index
    cupyx.scatter_add(out, tuple(key), src[tuple(slice(0, n) for n in index.shape)])
    return out


def put_add(x, key, values):
    out = x.copy()
    cupyx.scatter_add(out, key, values)
    return out


def pad(x, widths, value):
    return cupy.pad(x, widths, constant_values=value)


def sliding_windows(x, window, axes):
    return cupy.lib.stride_tricks.sliding_window_view(x, window, axis=axes)


def _standard_namespace():
    """CuPy's own functions where it has the standard's names; array_api_compat fills the rest."""
    try:
        import array_api_compat.cupy as compat
    except ImportError:
        return cupy
    return compat


class CupyBackend(Backend):
    name = "cupy"
    device_type = "cuda"
    array_type = cupy.ndarray
    multi_device = True
    xp = namespace(_standard_namespace(), {
        "erf": cupyx.scipy.special.erf, "index_add": index_add, "scatter_add": scatter_add,
        "put_add": put_add, "pad": pad, "einsum": cupy.einsum, "sliding_windows": sliding_windows})

    def asarray(self, data, dtype, device_index):
        with cupy.cuda.Device(device_index):
            return cupy.array(data, dtype=None if dtype is None else dtype.numpy, copy=None)

    def is_contiguous(self, array):
        return array.flags.c_contiguous

    def owns_memory(self, array):
        return array.base is None

    def to_numpy(self, array):
        return cupy.asnumpy(array)

    def memory_layout(self, array):
        return array.data.ptr, array.strides, array.itemsize

    def device_index(self, array):
        return array.device.id

    def is_available(self):
        try:
            return cupy.cuda.runtime.getDeviceCount() > 0
        except cupy.cuda.runtime.CUDARuntimeError:
            return False

    def device_count(self):
        return cupy.cuda.runtime.getDeviceCount() if self.is_available() else 0
