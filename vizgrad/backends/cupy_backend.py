"""CuPy behind device "cuda". Imported only when CuPy (and array_api_compat) are installed."""

import math

import array_api_compat.cupy
import cupy
import cupyx
import cupyx.scipy.special
import numpy as np

from .. import dtypes
from ..errors import DTypeError
from . import linalg_kernels
from .base import Backend, namespace

_BFLOAT16 = dtypes.bfloat16.numpy


def index_add(x, axis, index, values):
    out = x.copy()
    cupy.add.at(out, (slice(None),) * axis + (index,), values)
    return out


# Gathering and scattering along an axis where the index has the array's shape but for that
# axis (the usual case: a class per row), as one kernel each. Element i of the index sits at
# (o, ·, r) of an (outer, k, inner) view; its target is row o, position index, column r of x.
_ALONG_AXIS = "long long o = i / (k * inner), r = i % inner, j = index < 0 ? index + size : index;"
_GATHER = cupy.ElementwiseKernel("I index, raw T x, int64 k, int64 inner, int64 size", "T out",
                                 _ALONG_AXIS + "out = x[(o * size + j) * inner + r];", "vizgrad_take_along_axis")
_SCATTER_ADD = cupy.ElementwiseKernel("I index, T src, int64 k, int64 inner, int64 size", "raw T out",
                                      _ALONG_AXIS + "atomicAdd(&out[(o * size + j) * inner + r], src);",
                                      "vizgrad_scatter_add")


def _along_axis(x, index, axis):
    """``(k, inner, size)`` for the kernels above when ``index`` matches x but along ``axis``, else None."""
    if index.ndim != x.ndim or index.shape[:axis] + index.shape[axis + 1:] != x.shape[:axis] + x.shape[axis + 1:]:
        return None
    return index.shape[axis], math.prod(x.shape[axis + 1:]), x.shape[axis]


def take_along_axis(x, indices, /, *, axis=-1):
    axis %= x.ndim
    found = _along_axis(x, indices, axis) if indices.dtype.kind in "iu" and indices.size else None
    if found is None:
        return cupy.take_along_axis(x, indices, axis)
    return _GATHER(indices, cupy.ascontiguousarray(x), *found)


def scatter_add(x, axis, index, src):
    out = x.copy()
    src = src[tuple(slice(0, n) for n in index.shape)]
    found = (_along_axis(x, index, axis) if x.dtype in (cupy.float32, cupy.float64) and src.dtype == x.dtype
             and index.size else None)
    if found is not None:
        _SCATTER_ADD(index, src, *found, out)
        return out
    key = [cupy.arange(n).reshape((1,) * i + (n,) + (1,) * (index.ndim - i - 1)) for i, n in enumerate(index.shape)]
    key[axis] = index
    cupy.add.at(out, tuple(key), src)
    return out


def put_add(x, key, values):
    out = x.copy()
    cupy.add.at(out, key, values)
    return out


def pad(x, widths, value):
    return cupy.pad(x, widths, constant_values=value)


def keep_where(mask, values):
    """``values`` where ``mask`` holds, +0 elsewhere, inf and NaN included (a GPU's where does
    not branch per element)."""
    return cupy.where(mask, values, values.dtype.type(0))


def sliding_windows(x, window, axes):
    """NumPy's sliding_window_view (window dims appended in ``axes``' order), built directly
    with as_strided: CuPy's own checks cost more than the view."""
    shape = list(x.shape)
    for axis, size in zip(axes, window):
        shape[axis] -= size - 1
    strides = x.strides + tuple(x.strides[axis] for axis in axes)
    return cupy.lib.stride_tricks.as_strided(x, tuple(shape) + tuple(window), strides)


def mean(x, /, *, axis=None, keepdims=False):
    """The standard's mean as CuPy's sum divided in place: cupy.mean's own dispatch costs about
    twice the sum's, which on small arrays is most of the time."""
    if x.dtype not in (cupy.float32, cupy.float64):
        return cupy.mean(x, axis=axis, keepdims=keepdims)
    axes = range(x.ndim) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    total = cupy.sum(x, axis=axis, keepdims=keepdims)
    total /= math.prod(x.shape[a] for a in axes)
    return total


def matmul(a, b, /):
    """The standard's matmul; a product with a matrix on the right goes straight to cuBLAS
    through cupy.dot, without cupy.matmul's generalized-ufunc dispatch (tens of microseconds
    a call, the larger part of a small product's time)."""
    if b.ndim == 2 and a.ndim >= 2 and a.dtype == b.dtype:
        if a.ndim == 2:
            return cupy.dot(a, b)
        if a.flags.c_contiguous:
            return cupy.dot(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[1],))
    return cupy.matmul(a, b)


# Adam's update as one kernel per parameter instead of a dozen elementwise launches (see
# Backend.fused_adam); the AMSGrad variant also keeps the running maximum of v.
_ADAM_UPDATE = """
    T grad = sign * g + decay_g * p;
    m = beta1 * m + (1 - beta1) * grad;
    v = beta2 * v + (1 - beta2) * grad * grad;
    %s
    step = step_size * m / (sqrt(%s) * root_correction + eps) + decay_p * p;
"""
_ADAM_INPUTS = "T g, T p, T sign, T beta1, T beta2, T eps, T step_size, T root_correction, T decay_g, T decay_p"
_ADAM = cupy.ElementwiseKernel(_ADAM_INPUTS, "T m, T v, T step", _ADAM_UPDATE % ("", "v"), "vizgrad_adam")
_AMSGRAD = cupy.ElementwiseKernel(_ADAM_INPUTS, "T m, T v, T v_max, T step",
                                  _ADAM_UPDATE % ("v_max = max(v_max, v);", "v_max"), "vizgrad_amsgrad")


# Layer normalization, one thread per row (a training step's rows are short: launching is
# the cost to save); statistics accumulated in double precision.
_LAYER_NORM = r"""
extern "C" __global__ void layer_norm_forward(const T* x, const T* weight, const T* bias, T* out, T* mean,
        T* inv_std, const long long rows, const long long size, const double eps, const int affine) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const T* xr = x + row * size;
    T* yr = out + row * size;
    double total = 0, squares = 0;
    for (long long c = 0; c < size; ++c) total += (double)xr[c];
    const double m = total / size;
    for (long long c = 0; c < size; ++c) { const double d = (double)xr[c] - m; squares += d * d; }
    const double s = rsqrt(squares / size + eps);
    mean[row] = (T)m;
    inv_std[row] = (T)s;
    for (long long c = 0; c < size; ++c) {
        double y = ((double)xr[c] - m) * s;
        if (affine & 1) y *= (double)weight[c];
        if (affine & 2) y += (double)bias[c];
        yr[c] = (T)y;
    }
}

extern "C" __global__ void layer_norm_backward(const T* grad, const T* x, const T* weight, const T* mean,
        const T* inv_std, T* grad_x, T* normalized, const long long rows, const long long size, const int affine) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const T* gr = grad + row * size;
    const T* xr = x + row * size;
    const double m = (double)mean[row], s = (double)inv_std[row];
    double sum_g = 0, sum_gx = 0;
    for (long long c = 0; c < size; ++c) {
        const double xh = ((double)xr[c] - m) * s;
        const double g = (double)gr[c] * ((affine & 1) ? (double)weight[c] : 1.0);
        sum_g += g;
        sum_gx += g * xh;
        normalized[row * size + c] = (T)xh;
    }
    const double a = sum_g / size, b = sum_gx / size;
    for (long long c = 0; c < size; ++c) {
        const double xh = ((double)xr[c] - m) * s;
        const double g = (double)gr[c] * ((affine & 1) ? (double)weight[c] : 1.0);
        grad_x[row * size + c] = (T)((g - a - xh * b) * s);
    }
}
"""
_LAYER_NORM_MODULES = {}
_ROWS_PER_BLOCK = 128


def _layer_norm_kernel(dtype, name):
    module = _LAYER_NORM_MODULES.get(dtype)
    if module is None:
        source = _LAYER_NORM.replace("T*", f"{dtype}*").replace("(T)", f"({dtype})")
        module = _LAYER_NORM_MODULES[dtype] = cupy.RawModule(code=source)
    return module.get_function(name)


def _rows(x, dims):
    return math.prod(x.shape[:x.ndim - dims]), math.prod(x.shape[x.ndim - dims:])


def polygamma(n, x):
    """ψ⁽ⁿ⁾(x) with n a Python int (cupyx's polygamma takes n as an array)."""
    return cupyx.scipy.special.polygamma(cupy.asarray(n, dtype=x.dtype), x)


class CupyBackend(Backend):
    name = "cupy"
    device_type = "cuda"
    array_type = cupy.ndarray
    multi_device = True
    # CuPy's own functions predate the Array API standard in places (no device= on creation
    # functions, sort without descending=, no vecdot); array_api_compat gives them its names.
    xp = namespace(array_api_compat.cupy, {
        "erf": cupyx.scipy.special.erf, "erfc": cupyx.scipy.special.erfc, "lgamma": cupyx.scipy.special.gammaln,
        "digamma": cupyx.scipy.special.digamma, "polygamma": polygamma, "index_add": index_add,
        "scatter_add": scatter_add,
        "put_add": put_add, "pad": pad, "einsum": cupy.einsum, "sliding_windows": sliding_windows,
        "keep_where": keep_where,
        "matmul": matmul, "mean": mean, "take_along_axis": take_along_axis,
        # cupy.linalg reports singular and indefinite matrices only inside this errstate
        **linalg_kernels.extras(cupy, lambda: cupyx.errstate(linalg="raise"))})

    def asarray(self, data, dtype, device_index):
        if (dtype is not None and dtype.numpy is _BFLOAT16) or getattr(data, "dtype", None) is _BFLOAT16:
            self.native_dtype(dtypes.bfloat16)
        with cupy.cuda.Device(device_index):
            return cupy.array(data, dtype=None if dtype is None else dtype.numpy, copy=None)

    def native_dtype(self, dtype):
        if dtype.numpy is _BFLOAT16:
            raise DTypeError("CuPy has no bfloat16: bfloat16 tensors live on the CPU (ml_dtypes' NumPy dtype)")
        return dtype.numpy

    def full(self, shape, value, dtype, device_index):
        fill = np.dtype(dtype.numpy).type(value)    # NumPy's conversion: the same values and errors as on the CPU
        with cupy.cuda.Device(device_index):
            return cupy.full(shape, fill, dtype=dtype.numpy)

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

    def fused_adam(self, g, p, m, v, v_max, out, *, sign, beta1, beta2, eps, step_size, root_correction,
                   decay_g, decay_p):
        if p.dtype.kind != "f" or p.dtype.itemsize < 4:     # float16: the portable update
            return None
        scalars = (sign, beta1, beta2, eps, step_size, root_correction, decay_g, decay_p)
        if v_max is None:
            _ADAM(g, p, *scalars, m, v, out)
        else:
            _AMSGRAD(g, p, *scalars, m, v, v_max, out)
        return out

    def fused_layer_norm(self, x, weight, bias, eps, dims):
        ctype = {cupy.dtype(cupy.float32): "float", cupy.dtype(cupy.float64): "double"}.get(x.dtype)
        params = [p for p in (weight, bias) if p is not None]
        if ctype is None or not x.flags.c_contiguous or x.size == 0 or any(p.dtype != x.dtype for p in params):
            return None
        weight, bias = (cupy.ascontiguousarray(p) if p is not None else x for p in (weight, bias))
        rows, size = _rows(x, dims)
        stats_shape = x.shape[:x.ndim - dims] + (1,) * dims
        out, mean, inv_std = cupy.empty_like(x), cupy.empty(stats_shape, x.dtype), cupy.empty(stats_shape, x.dtype)
        affine = (weight is not x) + 2 * (bias is not x)
        _layer_norm_kernel(ctype, "layer_norm_forward")(
            (-(-rows // _ROWS_PER_BLOCK),), (_ROWS_PER_BLOCK,),
            (x, weight, bias, out, mean, inv_std, np.int64(rows), np.int64(size), np.float64(eps), np.int32(affine)))
        return out, mean, inv_std

    def fused_layer_norm_backward(self, grad, x, weight, mean, inv_std, dims):
        ctype = "float" if x.dtype == cupy.float32 else "double"
        grad = cupy.ascontiguousarray(grad)
        weight = x if weight is None else cupy.ascontiguousarray(weight)
        rows, size = _rows(x, dims)
        grad_x, normalized = cupy.empty_like(x), cupy.empty_like(x)
        _layer_norm_kernel(ctype, "layer_norm_backward")(
            (-(-rows // _ROWS_PER_BLOCK),), (_ROWS_PER_BLOCK,),
            (grad, x, weight, mean, inv_std, grad_x, normalized, np.int64(rows), np.int64(size),
             np.int32(weight is not x)))
        return grad_x, normalized

    def synchronize(self, device_index):
        with cupy.cuda.Device(device_index):
            cupy.cuda.get_current_stream().synchronize()

    def device_name(self, device_index):
        name = cupy.cuda.runtime.getDeviceProperties(device_index)["name"]
        return name.decode() if isinstance(name, bytes) else name
