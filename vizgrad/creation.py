"""Tensor factories: ``tensor``, ``zeros``, ``randn``, ... and the random seed.

Random numbers come from one NumPy generator seeded by :func:`manual_seed` and are
then moved to the requested device, so a seed gives the same values on every device.
"""

import warnings

import numpy as np

from . import dtypes
from .backends import backend_of
from .backends.base import is_array
from .device import as_device
from .autograd.grad_mode import state
from .errors import (ArgumentError, ArgumentTypeError, BackwardError, DTypeError, ShapeError, as_int, as_number,
                     check_size, public_functions_of)
from .autograd.function import Op
from .tensor import Tensor

_PYTHON_SCALARS = (bool, int, float)


class Generator:
    """A source of random numbers, as ``torch.Generator``: pass it as ``generator=`` to
    ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``multinomial`` and the data
    loaders to draw from it instead of the global seed.

    Example::

        g = vizgrad.Generator().manual_seed(0)     # or vizgrad.Generator(0)
        vizgrad.randn(3, generator=g)
    """

    def __init__(self, device="cpu", seed=None):
        if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
            device, seed = "cpu", device     # vizgrad's shorthand: Generator(seed)
        self.device = as_device(device)
        self._initial_seed = int(np.random.SeedSequence().entropy % 2 ** 63) if seed is None else seed
        self._rng = np.random.default_rng(self._initial_seed)

    def manual_seed(self, seed):
        self._initial_seed = check_size("manual_seed", "seed", seed)
        self._rng = np.random.default_rng(self._initial_seed)
        return self

    def seed(self):
        """Reseed from fresh entropy and return the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % 2 ** 63))
        return self._initial_seed

    def initial_seed(self):
        """The seed last given to :meth:`manual_seed` (before any, the one drawn from fresh entropy)."""
        return self._initial_seed

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

    Python floats become the default dtype (``float32`` unless :func:`vizgrad.set_default_dtype`
    says), ints ``int64``, bools ``bool``; arrays keep their dtype.

    Example::

        x = vizgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, name="x")
    """
    result = Tensor._make(_to_array(data, dtype, device))
    if name is not None:
        result.name = name
    if requires_grad:
        result.requires_grad_(True)
    return result


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, without a copy when it already is one of the right dtype and device."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtypes.as_dtype(dtype)) \
            and (device is None or data.device == as_device(device)):
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A CPU tensor sharing memory with the NumPy ``array``."""
    if not isinstance(array, np.ndarray):
        raise ArgumentTypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    dtypes.from_numpy_dtype(array.dtype)
    if not array.flags.writeable:       # a read-only np.memmap, np.broadcast_to: PyTorch warns, and shares
        warnings.warn("from_numpy: the given NumPy array is not writable, and vizgrad does not support "
                      "non-writable tensors: writes into this tensor fail. Copy the array (or make it writable) "
                      "before converting it to write into it", UserWarning, stacklevel=2)
    return Tensor._make(np.asarray(array))    # a subclass (np.memmap) as a plain view of its memory


def _shape(size, op, keyword=None):
    """The shape from ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if keyword is not None:
        if size:
            raise ArgumentTypeError(f"{op}: pass the size either positionally or as size=, not both")
        size = (keyword,)
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


def _filled(size, value, dtype, device, requires_grad, op, keyword=None):
    shape = _shape(size, op, keyword)
    if not isinstance(value, _PYTHON_SCALARS):
        value = as_number(op, "fill_value", value)
    if dtype is None:
        dtype = dtypes.as_dtype(type(value)) if isinstance(value, _PYTHON_SCALARS) else dtypes.default_float
    dtype = dtypes.as_dtype(dtype)
    target = as_device(device)
    return _finish(target.backend.full(shape, value, dtype, target.index or 0), requires_grad)


def zeros(*sizes, size=None, out=None, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``; the
    default float dtype unless ``dtype`` says."""
    return _into(out, _filled(sizes, 0.0, dtype or dtypes.default_float, device, requires_grad, "zeros", size))


def ones(*sizes, size=None, out=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones; the default float dtype unless ``dtype`` says."""
    return _into(out, _filled(sizes, 1.0, dtype or dtypes.default_float, device, requires_grad, "ones", size))


def empty(*sizes, size=None, out=None, dtype=None, device=None, requires_grad=False):
    """A tensor of the given shape (vizgrad fills it with zeros, so it is never garbage)."""
    return zeros(*sizes, size=size, out=out, dtype=dtype, device=device, requires_grad=requires_grad)


def _into(out, result):
    """PyTorch's ``out=``: write ``result`` into the tensor ``out`` (which takes the result's
    shape if it differs, as PyTorch resizes it) and return ``out``; without it, ``result``.
    Like PyTorch, refuses when autograd would be involved and when a float result would go
    into an integer tensor."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise ArgumentTypeError(f"out must be a Tensor, got {type(out).__name__}")
    if result.requires_grad or (out.requires_grad and state.grad_enabled):
        raise BackwardError("out=... arguments don't support automatic differentiation, but one of the "
                            "arguments requires grad: call the function without out= instead")
    if result.is_floating_point() and not out.is_floating_point():
        raise DTypeError(f"result type {result.dtype.name} can't be cast to the desired output type "
                         f"{out.dtype.name}")
    xp = result._backend().xp
    array = result._array if result._array.dtype == out._array.dtype else xp.astype(result._array, out._array.dtype)
    if tuple(out.shape) == tuple(result.shape):
        out._array[...] = array
    else:
        out._array = xp.asarray(array, copy=True)
    out._bump_version()
    return out


def accepts_out(function):
    """``function`` with PyTorch's ``out=`` keyword (see :func:`_into`): how ``vizgrad.add``,
    ``vizgrad.matmul``, ``vizgrad.cat``, ... take ``out=`` (the Tensor methods do not, as in PyTorch)."""
    import functools

    @functools.wraps(function)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        if not isinstance(out, Tensor):   # named here: function has returned in _into
            raise ArgumentTypeError(f"{function.__name__}: out must be a Tensor, got {type(out).__name__}")
        return _into(out, function(*args, **kwargs))
    return with_out


def full(size, fill_value, *, out=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value."""
    if not isinstance(size, (int, tuple, list)) and not hasattr(size, "__index__"):
        raise ArgumentTypeError(f"full: size must be an int or a sequence of ints, got {size!r:.40}")
    return _into(out, _filled((size,) if not isinstance(size, (tuple, list)) else tuple(size), fill_value, dtype,
                              device, requires_grad, "full"))


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
    int64 when all three are integers, else the default dtype (float32).

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
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (in the default
    dtype, float32, unless ``dtype`` says)."""
    as_number("linspace", "start", start)
    as_number("linspace", "end", end)
    steps = check_size("linspace", "steps", steps)
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    host = np.linspace(start, end, steps).astype(dtype.numpy)
    return _finish(target.backend.asarray(host, None, target.index or 0), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end`` inclusive, evenly spaced
    in the exponent (the default float dtype unless ``dtype`` says).

    Example::

        vizgrad.logspace(0, 2, 3)      # tensor([  1.,  10., 100.])
    """
    as_number("logspace", "start", start)
    as_number("logspace", "end", end)
    as_number("logspace", "base", base)
    steps = check_size("logspace", "steps", steps)
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    host = np.power(float(base), np.linspace(start, end, steps))
    if not dtype.is_floating_point:
        host = np.trunc(host)
    return _finish(target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0), requires_grad)


def _window(op, window_length, periodic, dtype, device, requires_grad, shape):
    """A window of ``window_length`` samples: ``shape(t)`` at t = n / (N - 1), n = 0..N-1, where
    N is one more than the length when ``periodic`` (the last sample dropped: one period of a
    repeating window), computed in float64 and cast."""
    length = check_size(op, "window_length", window_length)
    if not isinstance(periodic, (bool, np.bool_)):
        raise ArgumentTypeError(f"{op}: periodic must be a bool, got {type(periodic).__name__}")
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    if not dtype.is_floating_point:
        raise DTypeError(f"{op} expects floating point dtypes, got: {dtype.name}")
    target = as_device(device)
    if length <= 1:
        host = np.ones(length)
    else:
        count = length + 1 if periodic else length
        host = shape(np.arange(count) / (count - 1))[:length]
    return _finish(target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: ½ - ½ cos(2πt), t = n / (N - 1) (see :func:`_window` for ``periodic``).

    Example::

        vizgrad.hann_window(4)      # tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda t: 0.5 - 0.5 * np.cos(2 * np.pi * t))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The Hamming window: α - β cos(2πt), t = n / (N - 1).

    Example::

        vizgrad.hamming_window(3, periodic=False)      # tensor([0.0800, 1.0000, 0.0800])
    """
    alpha, beta = as_number("hamming_window", "alpha", alpha), as_number("hamming_window", "beta", beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda t: alpha - beta * np.cos(2 * np.pi * t))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window: 1 - |2t - 1|, t = n / (N - 1).

    Example::

        vizgrad.bartlett_window(5, periodic=False)     # tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda t: 1 - np.abs(2 * t - 1))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: 0.42 - ½ cos(2πt) + 0.08 cos(4πt), t = n / (N - 1).

    Example::

        vizgrad.blackman_window(3, periodic=False)     # tensor([0., 1., 0.]) (to rounding)
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda t: 0.42 - 0.5 * np.cos(2 * np.pi * t) + 0.08 * np.cos(4 * np.pi * t))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """The Kaiser window: I₀(β √(1 - (2t - 1)²)) / I₀(β), t = n / (N - 1), with I₀ the modified
    Bessel function of order 0.

    Example::

        vizgrad.kaiser_window(3, periodic=False, beta=0.0)     # tensor([1., 1., 1.])
    """
    beta = as_number("kaiser_window", "beta", beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda t: np.i0(beta * np.sqrt(np.clip(1 - (2 * t - 1) ** 2, 0, None))) / np.i0(beta))


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The n×m identity matrix (ones on the diagonal)."""
    n = check_size("eye", "n", n)
    m = None if m is None else check_size("eye", "m", m)
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    host = np.eye(n, m, dtype=dtype.numpy)
    return _finish(target.backend.asarray(host, None, target.index or 0), requires_grad)


def _triangle_indices(op, select, row, col, offset, dtype, device):
    row, col = check_size(op, "row", row), check_size(op, "col", col)
    offset = as_int(op, "offset", offset)
    dtype = dtypes.as_dtype(dtype or dtypes.int64)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise DTypeError(f"{op}: dtype must be int32 or int64 (indices), got {dtype.name}")
    target = as_device(device)
    host = np.stack(select(row, offset, col)).astype(dtype.numpy).reshape(2, -1)
    return _finish(target.backend.asarray(host, None, target.index or 0), False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """The (row, column) indices of a row×col matrix's lower triangle, on and below diagonal
    ``offset`` (above the main one where positive), as a 2×N tensor in row-major order.

    Example::

        vizgrad.tril_indices(3, 3)      # tensor([[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]])
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """The (row, column) indices of a row×col matrix's upper triangle, on and above diagonal
    ``offset``, as a 2×N tensor in row-major order.

    Example::

        vizgrad.triu_indices(2, 3, 1)   # tensor([[0, 0, 1], [1, 2, 2]])
    """
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


#: Set by vizgrad.func while a vmap runs (``func.batched.random_draws``): the random draws below
#: ask it how to draw for the batch's samples. None outside vmap.
vmap_random = None


def _draw(name, draw, shape):
    """``draw(shape)`` on the host, and what makes the tensor of it: inside a vmap whose
    randomness is "different", one draw per sample (the batch sizes first, then rewrapped)."""
    plan = vmap_random(name) if vmap_random is not None else None
    if plan is None:
        return draw(shape), None
    sizes, rewrap = plan
    return draw(tuple(sizes) + tuple(shape)), rewrap


def _random(host, dtype, device, requires_grad):
    dtype = dtypes.as_dtype(dtype or dtypes.default_float)
    target = as_device(device)
    if not dtype.is_floating_point:
        raise DTypeError(f"random floats cannot have dtype {dtype.name}: use randint for integers")
    array = target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0)
    return _finish(array, requires_grad)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    """Uniform random values in [0, 1)."""
    rng = (generator or default_generator)._rng
    host, rewrap = _draw("rand", rng.random, _shape(sizes, "rand", size))
    return _rewrapped(rewrap, _into(out, _random(host, dtype, device, requires_grad)))


def randn(*sizes, size=None, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    """Standard normal random values (mean 0, variance 1)."""
    rng = (generator or default_generator)._rng
    host, rewrap = _draw("randn", rng.standard_normal, _shape(sizes, "randn", size))
    return _rewrapped(rewrap, _into(out, _random(host, dtype, device, requires_grad)))


def _rewrapped(rewrap, tensor):
    return tensor if rewrap is None else rewrap(tensor)


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
    host, rewrap = _draw("randint", lambda shape: rng.integers(low, high, size=shape), _shape((size,), "randint"))
    target = as_device(device)
    return _rewrapped(rewrap, _finish(target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0), False))


def randperm(n, *, generator=None, dtype=None, device=None):
    """A random permutation of 0..n-1."""
    n = check_size("randperm", "n", n)
    rng = (generator or default_generator)._rng
    dtype = dtypes.as_dtype(dtype or dtypes.int64)
    target = as_device(device)
    host, rewrap = _draw("randperm", lambda shape: rng.permuted(np.broadcast_to(np.arange(n), shape), axis=-1), (n,))
    return _rewrapped(rewrap, _finish(target.backend.asarray(host.astype(dtype.numpy), None, target.index or 0), False))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Draw ``num_samples`` category indices from the non-negative weights in each row of
    ``input`` (1-d: one distribution; 2-d: one per row), with or without ``replacement``.

    Without replacement every index appears at most once (PyTorch's exponential-race
    sampling: each category gets ``Exp(1) / weight`` and the smallest win).

    Example::

        g = vizgrad.Generator().manual_seed(0)
        vizgrad.multinomial(vizgrad.tensor([0.1, 0.0, 0.9]), 4, replacement=True, generator=g)
    """
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"multinomial: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise ShapeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}")
    if not input.is_floating_point():
        raise DTypeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.name}")
    num_samples = check_size("multinomial", "num_samples", num_samples, 1)
    weights = np.asarray(input._backend().to_numpy(input._array), dtype=np.float64)
    rows = weights.reshape(-1, weights.shape[-1])
    categories = rows.shape[1]
    if not replacement and num_samples > categories:
        raise ArgumentError(f"multinomial: cannot sample n_sample ({num_samples}) > prob_dist.size(-1) "
                            f"({categories}) samples without replacement")
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise ArgumentError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1)
    if np.any(totals <= 0):
        raise ArgumentError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    rng = (generator or default_generator)._rng
    if replacement:
        cumulative = np.cumsum(rows / totals[:, None], axis=1)
        draws = rng.random((rows.shape[0], num_samples))
        picked = np.stack([np.minimum(np.searchsorted(c, d, side="right"), categories - 1)
                           for c, d in zip(cumulative, draws)])
    else:
        with np.errstate(divide="ignore"):
            race = rng.exponential(size=rows.shape) / rows
        picked = np.argsort(race, axis=1, kind="stable")[:, :num_samples]
    picked = picked.reshape(weights.shape[:-1] + (num_samples,)).astype(np.int64)
    target = input.device
    return _into(out, _finish(target.backend.asarray(picked, None, target.index or 0), False))


class Normal(Op):
    """``mean + std · noise``: samples whose gradient is zero for both mean and std, as in
    PyTorch (``torch.normal`` is not reparameterised: use ``mean + std * randn_like(std)`` for that)."""

    broadcasts = True

    @staticmethod
    def forward(ctx, mean, std, noise, overload):
        ctx.overload = overload      # PyTorch's overload number: 1 (tensor, float), 2 (float, tensor), 3
        return mean + std * noise

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        needs_mean, needs_std, _ = ctx.needs_input_grad
        zero = xp.zeros_like(grad)
        return zero if needs_mean else None, zero if needs_std else None, None


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None,
           requires_grad=False):
    """Normal random values with the given ``mean`` and ``std``, in PyTorch's four forms:
    ``normal(mean_tensor, std_tensor)`` (broadcast), ``normal(mean_tensor, std=1.0)``,
    ``normal(mean=0.0, std_tensor)`` and ``normal(mean, std, size)`` for numbers.

    Example::

        vizgrad.normal(0.0, 2.0, size=(2, 3))
        vizgrad.normal(vizgrad.zeros(3), vizgrad.tensor([1.0, 2.0, 3.0]))
    """
    rng = (generator or default_generator)._rng
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise ArgumentTypeError("normal: with a number mean and std, pass size (normal(mean, std, size)); "
                                    "or pass mean and/or std as Tensors")
        if std < 0:
            raise ArgumentError(f"normal: expects std >= 0.0, but found std {std}")
        noise = _random(rng.standard_normal(_shape((size,), "normal")), dtype, device, False)
        return _into(out, _finish((noise * std + mean)._array, requires_grad))
    if size is not None:
        raise ArgumentTypeError("normal: size is only for a number mean and std; with Tensors the shape is theirs")
    if isinstance(std, Tensor):
        if std.numel() and bool((std < 0).any()):
            raise ArgumentError(f"normal: expects all elements of std >= 0.0, got {std.detach()}")
    elif std < 0:
        raise ArgumentError(f"normal: expects std >= 0.0, but found std {std}")
    overload = 3 if len(tensors) == 2 else 1 if isinstance(mean, Tensor) else 2
    like = tensors[0]
    if not like.is_floating_point():
        raise DTypeError(f"normal: mean and std must be floating point, got {like.dtype.name}")
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    noise = _finish(like._backend().asarray(rng.standard_normal(shape).astype(like.dtype.numpy), None,
                                            like.device.index or 0), False)
    mean = mean if isinstance(mean, Tensor) else tensor(mean, dtype=like.dtype, device=like.device)
    std = std if isinstance(std, Tensor) else tensor(std, dtype=like.dtype, device=like.device)
    return _into(out, Normal.apply(mean, std, noise, overload=overload))


public_functions_of(globals())   # errors beneath these functions name them
