"""What every backend provides, and how arrays find their backend."""

import math
import types

import numpy as np

from .. import dtypes
from ..errors import DeviceError, DTypeError
from .sparse_kernels import CooArray

# The portable Array API functions that ops and their backwards may call through ``xp``.
STANDARD_NAMES = (
    "abs", "acos", "acosh", "all", "any", "arange", "argmax", "argmin", "argsort", "asarray",
    "asin", "asinh", "astype", "atan", "atan2", "atanh", "broadcast_arrays", "broadcast_to",
    "ceil", "clip", "concat", "cos", "cosh", "cumulative_sum", "empty", "equal", "exp", "expm1",
    "expand_dims", "eye", "flip", "floor", "full", "full_like", "greater", "greater_equal",
    "isfinite", "isinf", "isnan", "less", "less_equal", "linspace", "log", "log1p", "log2", "log10", "logical_and",
    "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose", "max", "maximum",
    "mean", "min", "minimum", "moveaxis", "multiply", "negative", "nonzero", "not_equal",
    "ones", "ones_like", "permute_dims", "pow", "prod", "repeat", "reshape", "round", "sign",
    "sin", "sinh", "sort", "sqrt", "square", "squeeze", "stack", "std", "subtract", "sum",
    "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "tril", "triu", "trunc",
    "var", "vecdot", "where", "zeros", "zeros_like", "add", "divide", "floor_divide",
    "remainder", "cumulative_prod", "unstack", "copysign", "signbit", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "nextafter", "searchsorted", "linalg", "bool",
    "float32", "float64",
    "int32", "int64", "pi", "e", "inf", "nan",
)

# Kernels outside the standard; every backend implements each once:
#   erf(x)                                  the error function, elementwise
#   erfc(x)                                 1 - erf(x), to relative accuracy where it is tiny
#   lgamma(x), digamma(x), polygamma(n, x)  log |Γ(x)| and its derivatives (n ≥ 0, a Python int)
#   index_add(x, axis, index, values)       copy of x with values added at index along axis
#   scatter_add(x, axis, index, src)        copy of x with src added at x[..index..] (torch.scatter_add)
#   put_add(x, key, values)                 copy of x with values added at x[key]; repeated indices accumulate
#   pad(x, widths, value)                   constant padding, widths a tuple of (before, after) per axis
#   einsum(subscripts, *operands)
#   sliding_windows(x, window, axes)        read-only view of windows over the given axes (for im2col)
#   keep_where(mask, values)                values where mask holds, +0 elsewhere even where values are
#                                           inf or NaN (a masked gradient: relu, max pooling, shrinks)
# and the linear algebra the standard's linalg extension lacks (batched over leading dims; see
# backends/linalg_kernels.py, written once for NumPy and CuPy):
#   solve_triangular(a, b, upper, unitriangular=False)
#                                           X with T X = B, T the upper or lower triangle of a (unit
#                                           diagonal if asked), batch dims broadcast; inf/NaN if singular
#   cholesky_ex(a)                          (L, info): lower Cholesky factor from a's lower triangle;
#                                           info (int32) 0, or the order of the first leading minor
#                                           that is not positive-definite
#   inv_ex(a), solve_ex(a, b)               (inverse or X, info): info 0, or the 1-based index of the
#                                           first zero pivot of LU with partial pivoting (singular A)
#   matrix_exp(a)                           e^A
EXTRAS = ("erf", "erfc", "lgamma", "digamma", "polygamma", "index_add", "scatter_add", "put_add", "pad", "einsum",
          "sliding_windows", "keep_where", "solve_triangular", "cholesky_ex", "inv_ex", "solve_ex", "lu_det", "matrix_exp")

_by_array_type = {}
_by_device_type = {}
unusable = {}   # device type -> the ImportError that kept its installed library's backend out


class Backend:
    """One array library behind one device type.

    Subclasses set ``name``, ``device_type``, ``array_type`` and build ``xp``:
    a namespace holding :data:`STANDARD_NAMES` and :data:`EXTRAS`.
    """

    name = ""
    device_type = ""
    array_type = None
    xp = None
    multi_device = False  # whether arrays of one type can live on different devices
    floating_dtypes = frozenset()  # its dtype objects of vizgrad's floating dtypes (set by register)
    # Whether indexing with integer arrays raises IndexError for an index out of range and
    # accepts negative ones (NumPy does; CuPy wraps silently). Index ops skip their own range
    # check where it does, and reword the backend's error in their own terms.
    checks_index_bounds = False

    def asarray(self, data, dtype, device_index):
        """An array of this backend from nested lists, scalars or another backend's array."""
        raise NotImplementedError

    def to_numpy(self, array):
        """A NumPy copy (or view) of ``array``, on the host."""
        raise NotImplementedError

    def full(self, shape, value, dtype, device_index):
        """An array of ``shape`` filled with ``value`` (a vizgrad dtype); made on the host and
        moved unless the backend fills it where it lives."""
        return self.asarray(np.full(shape, value, dtype=dtype.numpy), None, device_index)

    def native_dtype(self, dtype):
        """This backend's dtype object for a vizgrad dtype."""
        return dtype.numpy

    def dtype_name(self, array):
        """The dtype name of ``array``, as vizgrad spells it (``"float32"``)."""
        return str(array.dtype)

    def device_index(self, array):
        return 0

    def is_floating(self, array):
        """Whether ``array`` holds floating-point numbers (only those carry gradients)."""
        return self.dtype_name(array) in ("float16", "bfloat16", "float32", "float64")

    def memory_owner(self, array):
        """A key that is equal for arrays sharing one buffer (used to avoid aliasing grads)."""
        base = array.base
        return id(array if base is None else base)

    def device_count(self):
        return 1

    def memory_layout(self, array):
        """``(address of the first element, strides in bytes, itemsize)`` of ``array``."""
        return array.__array_interface__["data"][0], array.strides, array.itemsize

    def view_positions(self, base, view):
        """For each element of ``view``, the row-major index of the element of ``base`` whose
        memory it shares: a NumPy int64 array of ``view``'s shape. None when ``view`` does not
        lie in ``base``'s memory (the backend copied). Used to record in-place writes into
        views on their base (reads only the arrays' layouts, never their values)."""
        base_address, base_strides, itemsize = self.memory_layout(base)
        view_address, view_strides, view_itemsize = self.memory_layout(view)
        if itemsize != view_itemsize:
            return None
        view_offsets = view_address - base_address + _offsets(view.shape, view_strides)
        size = math.prod(base.shape)
        if base_strides == _row_major_strides(base.shape, itemsize):
            positions, remainder = np.divmod(view_offsets, itemsize)
            if view_offsets.size and (remainder.any() or positions.min() < 0 or positions.max() >= size):
                return None
            return positions
        base_offsets = _offsets(base.shape, base_strides).reshape(-1)
        order = np.argsort(base_offsets, kind="stable")
        ordered = base_offsets[order]
        found = np.minimum(np.searchsorted(ordered, view_offsets), max(size - 1, 0))
        if view_offsets.size and (size == 0 or not np.array_equal(ordered[found], view_offsets)):
            return None
        return order[found]

    def is_contiguous(self, array):
        """Whether ``array`` is laid out in row-major order without gaps."""
        return True

    def owns_memory(self, array):
        """Whether ``array`` owns its buffer (is no view of another array)."""
        return False

    def is_available(self):
        return True

    # Fused kernels, where a backend has them (None where it has none: the ops then run their
    # portable code). fused_adam(g, p, m, v, v_max, out, *, sign, beta1, beta2, eps, step_size,
    # root_correction, decay_g, decay_p): one Adam update in one kernel, m ← β₁m + (1-β₁)ĝ and
    # v ← β₂v + (1-β₂)ĝ² in place with ĝ = sign·g + decay_g·p, v_max ← max(v_max, v) (AMSGrad;
    # None otherwise), out ← step_size·m / (√v̂·root_correction + eps) + decay_p·p, the step to
    # subtract; returns out, or None for a dtype it has no kernel for.
    # fused_layer_norm(x, weight, bias, eps, dims): layer normalization over the last ``dims``
    # dims, ``(out, mean, inv_std)`` with size-1 normalized dims in the statistics, or None;
    # fused_layer_norm_backward(grad, x, weight, mean, inv_std, dims): ``(grad_x, x̂)``.
    fused_adam = None
    fused_layer_norm = None
    fused_layer_norm_backward = None


def _offsets(shape, strides):
    """The byte offset of every element of an array of ``shape`` and ``strides``."""
    offsets = np.zeros(shape, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(shape, strides)):
        offsets += (np.arange(size, dtype=np.int64) * stride).reshape((size,) + (1,) * (len(shape) - axis - 1))
    return offsets


def _row_major_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def namespace(module, extras, names=STANDARD_NAMES):
    """A flat namespace of ``module``'s standard functions plus this backend's extras (which
    may also replace standard functions with faster ones)."""
    found = {name: getattr(module, name) for name in names if hasattr(module, name)}
    missing = [name for name in names if name not in found]
    if missing:
        raise ImportError(f"{module.__name__} lacks the Array API functions {missing}")
    missing = [name for name in EXTRAS if name not in extras]
    if missing:
        raise ImportError(f"backend for {module.__name__} lacks the kernels {missing}")
    found.update(extras)
    found.setdefault("sqrt_pi", math.sqrt(math.pi))
    return types.SimpleNamespace(**found)


class NoGradContext:
    """The ctx an op sees when nothing needs a gradient: saving is a no-op. Each backend
    holds one (``backend.no_grad_context``); attributes an op sets on it are never read back."""

    needs_input_grad = ()

    def __init__(self, backend):
        self.backend = backend
        self.xp = backend.xp

    def save_for_backward(self, *values):
        pass

    def mark_non_differentiable(self, *outputs):
        pass


def register(backend):
    """Make ``backend`` the owner of its array type and device type."""
    backend.no_grad_context = NoGradContext(backend)
    backend.floating_dtypes = frozenset(_native_dtypes(backend, dtypes.FLOATING))
    _by_array_type[backend.array_type] = backend
    _by_device_type[backend.device_type] = backend


def _native_dtypes(backend, wanted):
    """The backend's dtype objects for the vizgrad dtypes in ``wanted`` that it has."""
    for d in wanted:
        try:
            yield backend.native_dtype(d)
        except DTypeError:
            continue


def backend_of(array):
    """The backend that owns ``array``."""
    try:
        return _by_array_type[type(array)]
    except KeyError:
        if type(array) is CooArray:      # a sparse COO array: its values' backend
            return array.backend
        raise TypeError(f"vizgrad cannot work with arrays of type {type(array).__name__}") from None


def is_array(value):
    """Whether ``value`` is an array of a registered backend."""
    return type(value) in _by_array_type


def backend_for_device(device_type):
    """The backend for a device type such as ``"cpu"`` or ``"cuda"``."""
    backend = _by_device_type.get(device_type)
    if backend is not None:
        return backend
    if device_type in unusable:
        raise DeviceError(f"device {device_type!r}: CuPy is installed but vizgrad's CuPy backend could not be "
                          f"loaded ({unusable[device_type]}); pip install 'vizgrad[cuda12]' (CUDA 12) or "
                          "'vizgrad[cuda13]' (CUDA 13) installs what it needs")
    if device_type == "cuda":
        raise DeviceError(
            "device 'cuda' needs CuPy, which is not installed: "
            "pip install 'vizgrad[cuda12]' (CUDA 12) or 'vizgrad[cuda13]' (CUDA 13)")
    known = ", ".join(sorted(_by_device_type))
    raise DeviceError(f"unknown device type {device_type!r}: available device types are {known}")


def registered_backends():
    """Every registered backend, CPU first."""
    return list(_by_device_type.values())
