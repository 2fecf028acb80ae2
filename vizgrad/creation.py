"""Tensor factories: ``tensor``, ``zeros``, ``randn``, ... and the random seed.

Random numbers come from one NumPy generator seeded by :func:`manual_seed` and are
then moved to the requested device, so a seed gives the same values on every device.
"""

import numpy as np

from . import dtypes
from .backends import backend_of
from .backends.base import is_array
from .device import as_device
from .errors import DTypeError, ShapeError, ArgumentError, ArgumentTypeError, as_number, check_size, public_functions_of
from .tensor import Tensor

_PYTHON_SCALARS = (bool, int, float)


class Generator:
    """A source of random numbers; ``vizgrad.Generator().manual_seed(0)``."""

    def __init__(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def manual_seed(self, seed):
        self._rng = np.random.default_rng(check_size("manual_seed", "seed", seed))
        return self

    def get_state(self):
        return self._rng.bit_generator.state

    def set_state(self, value):
        self._rng.bit_generator.state = value


default_generator = Generator()


def manual_seed(seed):
    """Seed vizgrad's random numbers (factories, dropout, shuffling) for reproducible runs."""
    default_generator.manual_seed(seed)
    return default_generator


def _to_array(data, dtype, device):
    """A fresh array of the device's backend holding ``data``."""
    target = as_device(device)
    backend = target.backend
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(data, Tensor):
        data = data._array
    from_python = not hasattr(data, "dtype")
    if isinstance(data, (np.ndarray, np.generic)):
        host = np.asarray(data)
    elif is_array(data):
        host = backend_of(data).to_numpy(data)
    else:
        host = _from_python(data) if from_python else np.from_dlpack(data)
    if from_python and dtype is None and host.dtype == np.float64:
        dtype = dtypes.default_float
    if host.dtype == object:
        too_large = _int_out_of_range(data)
        if too_large is not None:
            raise ArgumentError(f"tensor: overflow: the integer {too_large} does not fit in int64 "
                                f"(range {-2**63} to {2**63 - 1}); pass it as a float (e.g. {float(too_large):.3g})")
        raise ShapeError(f"tensor: the nested sequences have uneven lengths or hold non-numbers: {data!r:.80}")
    if dtype is None:
        dtypes.from_numpy_dtype(host.dtype)  # an error naming unsupported dtypes
    return backend.asarray(np.array(host, copy=True), dtype, target.index or 0)


def _int_out_of_range(data):
    """The first Python int in nested ``data`` that int64 cannot hold, else None (the failure path)."""
    if isinstance(data, int) and not isinstance(data, bool):
        return data if not -2**63 <= data < 2**63 else None
    if isinstance(data, (list, tuple)):
        for item in data:
            found = _int_out_of_range(item)
            if found is not None:
                return found
    return None


def _from_python(data):
    """``np.asarray(data)``; ragged nested lists become an object array (NumPy 2 refuses
    them with its own message), which the caller reports as a ShapeError."""
    try:
        return np.asarray(data)
    except (ValueError, OverflowError):
        return np.empty(0, dtype=object)


def tensor(data, dtype=None, device=None, requires_grad=False, name=None):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays or a tensor).

    Python floats become ``float32``, ints ``int64``, bools ``bool``; arrays keep their dtype.

    Example::

        x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, name="x")
    """
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad, name=name)


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, without a copy when it already is one of the right dtype and device."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtypes.as_dtype(dtype)) \
            and (device is None or data.device == as_device(device)):
        return data
    return Tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A CPU tensor sharing memory with the NumPy ``array``."""
    if not isinstance(array, np.ndarray):
        raise ArgumentTypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _shape(size, op):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise ArgumentTypeError(f"{op}: sizes must be integers, got {tuple(size)!r}")
        if n < 0:
            raise ShapeError(f"{op}: sizes must be non-negative integers, got {tuple(size)}")
    return tuple(int(n) for n in size)


def _finish(array, requires_grad, name=None):
    tensor = Tensor._make(array)
    tensor.name = name
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _filled(size, value, dtype, device, requires_grad, op):
    shape = _shape(size, op)
    if not isinstance(value, _PYTHON_SCALARS):
        value = as_number(op, "fill_value", value)
    if dtype is None:
        dtype = dtypes.as_dtype(type(value)) if isinstance(value, _PYTHON_SCALARS) else dtypes.default_float
    dtype = dtypes.as_dtype(dtype)
    target = as_device(device)
    backend = target.backend
    array = backend.asarray(np.full(shape, value, dtype=dtype.numpy), None, target.index or 0)
    return _finish(array, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``; float32 unless ``dtype`` says."""
    return _filled(size, 0.0, dtype or dtypes.default_float, device, requires_grad, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones; float32 unless ``dtype`` says."""
    return _filled(size, 1.0, dtype or dtypes.default_float, device, requires_grad, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of the given shape (vizgrad fills it with zeros, so it is never garbage)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value."""
    if not isinstance(size, (int, tuple, list)) and not hasattr(size, "__index__"):
        raise ArgumentTypeError(f"full: size must be an int or a sequence of ints, got {size!r:.40}")
    return _filled((size,) if not isinstance(size, (tuple, list)) else tuple(size), fill_value, dtype, device,
                   requires_grad, "full")


def _like(input, dtype, device):
    return (input.dtype if dtype is None else dtype), (input.device if device is None else device)


def zeros_like(input, dtype=None, device=None, requires_grad=False):
    """Zeros with the shape (and, by default, dtype and device) of ``input``."""
    dtype, device = _like(input, dtype, device)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False):
    """Ones with the shape (and, by default, dtype and device) of ``input``."""
    dtype, device = _like(input, dtype, device)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    """``fill_value`` everywhere, with the shape (and, by default, dtype and device) of ``input``."""
    dtype, device = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` (default 0) up to, not including, ``end``, ``step`` apart.
    int64 when all three are integers, else float32.

    Example::

        vizgrad.arange(5)            # tensor([0, 1, 2, 3, 4])
        vizgrad.arange(0, 1, 0.25)   # tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        as_number("arange", name, value)
    if step == 0:
        raise ArgumentError("arange: step must be nonzero, got step=0")
    if (end - start) * step < 0:
        raise ArgumentError(f"arange: upper bound and larger bound inconsistent with step sign: start={start}, "
                            f"end={end}, step={step}")
    if dtype is None:
        integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.default_float
    dtype = dtypes.as_dtype(dtype)
    target = as_device(device)
    host = np.arange(start, end, step, dtype=np.float64 if dtype.is_floating_point else None).astype(dtype.numpy)
    return _finish(target.backend.asarray(host, None, target.index or 0), requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (float32 by default)."""
    as_number("linspace", "start", start)
    as_number("linspace", "end", end)
    steps = check_size("linspace", "steps", steps)
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    host = np.linspace(start, end, steps).astype(dtype.numpy)
    return _finish(target.backend.asarray(host, None, target.index or 0), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The n×m identity matrix (ones on the diagonal)."""
    n = check_size("eye", "n", n)
    m = None if m is None else check_size("eye", "m", m)
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    host = np.eye(n, m, dtype=dtype.numpy)
    return _finish(target.backend.asarray(host, None, target.index or 0), requires_grad)


def _random(host, dtype, device, requires_grad):
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    if not dtype.is_floating_point:
        raise DTypeError(f"random floats cannot have dtype {dtype.name}: use randint for integers")
    array = target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0)
    return _finish(array, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform random values in [0, 1)."""
    rng = (generator or default_generator)._rng
    return _random(rng.random(_shape(size, "rand")), dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal random values (mean 0, variance 1)."""
    rng = (generator or default_generator)._rng
    return _random(rng.standard_normal(_shape(size, "randn")), dtype, device, requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return rand(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return randn(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None):
    """Random integers in [low, high): ``randint(10, (3,))`` or ``randint(5, 10, (3,))``."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise ArgumentTypeError("randint needs a size: randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    low, high = as_number("randint", "low", low), as_number("randint", "high", high)
    if high <= low:
        raise ArgumentError(f"randint: high ({high}) must be greater than low ({low})")
    dtype = dtypes.as_dtype(dtype or dtypes.int64)
    rng = (generator or default_generator)._rng
    host = rng.integers(low, high, size=_shape((size,), "randint")).astype(dtype.numpy)
    target = as_device(device)
    return _finish(target.backend.asarray(host, None, target.index or 0), False)


def randperm(n, *, generator=None, dtype=None, device=None):
    """A random permutation of 0..n-1."""
    n = check_size("randperm", "n", n)
    rng = (generator or default_generator)._rng
    dtype = dtypes.as_dtype(dtype or dtypes.int64)
    target = as_device(device)
    return _finish(target.backend.asarray(rng.permutation(n).astype(dtype.numpy), None, target.index or 0), False)


public_functions_of(globals())   # errors beneath these functions name them
