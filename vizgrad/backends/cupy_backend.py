"""CuPy behind device "cuda". Imported only when CuPy (and array_api_compat) are installed."""

import array_api_compat.cupy
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
    key = [cupy.arange(n).reshape((1,) * i + (n,) + (1,) * (index.ndim - i - 1)) for i, n in enumerate(index.shape)]
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


class CupyBackend(Backend):
    name = "cupy"
    device_type = "cuda"
    array_type = cupy.ndarray
    multi_device = True
    # CuPy's own functions predate the Array API standard in places (no device= on creation
    # functions, sort without descending=, no vecdot); array_api_compat gives them its names.
    xp = namespace(array_api_compat.cupy, {
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

    def synchronize(self, device_index):
        with cupy.cuda.Device(device_index):
            cupy.cuda.get_current_stream().synchronize()

    def device_name(self, device_index):
        name = cupy.cuda.runtime.getDeviceProperties(device_index)["name"]
        return name.decode() if isinstance(name, bytes) else name
