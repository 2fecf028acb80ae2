"""Parameter initialization, as ``torch.nn.init``.

Every function fills its tensor in place (without recording a gradient) with numbers
from vizgrad's generator (``vizgrad.manual_seed`` makes them reproducible), and
returns the tensor. For a weight of shape (out, in, *kernel):
fan_in = in · prod(kernel), fan_out = out · prod(kernel).

Example::

    w = vizgrad.empty(64, 32)
    vizgrad.nn.init.kaiming_uniform_(w, nonlinearity="relu")   # U(-b, b), b = √2·√(3/32)
"""

import math
import warnings

import numpy as np

from ..errors import ShapeError, format_shape, ArgumentError


def _rng(generator):
    from ..creation import default_generator
    return (generator or default_generator)._rng


def _write(tensor, host):
    """Copy the NumPy array ``host`` into ``tensor``'s memory, in its dtype and on its device."""
    backend = tensor._backend()
    array = backend.asarray(np.asarray(host, dtype=tensor.dtype.numpy).reshape(tensor.shape), None,
                            tensor.device.index or 0)
    tensor._array[...] = array
    tensor._bump_version()
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: the factor by which it shrinks the
    standard deviation of its inputs (1 for linear and sigmoid, 5/3 for tanh, √2 for
    ReLU, √(2/(1 + slope²)) for leaky ReLU, 3/4 for SELU).

    Example::

        nn.init.calculate_gain("leaky_relu", 0.2)    # 1.3867...
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ArgumentError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    shape = tensor.shape           # (an uninitialized lazy parameter says so here)
    if len(shape) < 2:
        raise ShapeError(f"Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
                         f"(shape {format_shape(shape)})")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ArgumentError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with values drawn from U(a, b)."""
    return _write(tensor, _rng(generator).uniform(a, b, size=tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with values drawn from N(mean, std²)."""
    return _write(tensor, _rng(generator).normal(mean, std, size=tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with values from N(mean, std²) restricted to [a, b] (redrawing those outside).

    Example::

        nn.init.trunc_normal_(w, std=0.02)     # values in [-2, 2] (absolute bounds, as PyTorch)
    """
    if not a < b:
        raise ArgumentError(f"trunc_normal_: the lower bound a ({a}) must be below the upper bound b ({b})")
    rng = _rng(generator)
    values = rng.normal(mean, std, size=tensor.shape)
    outside = (values < a) | (values > b)
    for _ in range(1000):
        if not outside.any():
            break
        values[outside] = rng.normal(mean, std, size=int(outside.sum()))
        outside = (values < a) | (values > b)
    if outside.any():   # [a, b] is far in a tail: fall back to the nearest bound
        values = np.clip(values, a, b)
    return _write(tensor, values)


def constant_(tensor, val):
    """Fill with the constant ``val``."""
    return _write(tensor, np.full(tensor.shape, val))


def ones_(tensor):
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal)."""
    if len(tensor.shape) != 2:
        raise ShapeError(f"eye_: only 2-D tensors are supported, got shape {format_shape(tensor.shape)}")
    return _write(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot initialization: U(-a, a) with a = gain·√(6 / (fan_in + fan_out)).

    Example::

        nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh"))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot initialization: N(0, std²) with std = gain·√(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: U(-b, b) with b = gain·√(3 / fan), ``fan`` fan_in or fan_out
    (``mode``) and the gain of ``nonlinearity`` (with negative slope ``a`` for leaky_relu).

    Example::

        nn.init.kaiming_uniform_(w, a=math.sqrt(5))    # nn.Linear's default
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: N(0, std²) with std = gain / √fan (see :func:`kaiming_uniform_`)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1.0, generator=None):
    """Fill with a (semi-)orthogonal matrix: the Q of the QR decomposition of a standard
    normal matrix, with column signs fixed so that the distribution is uniform (Haar).
    Dims after the first are flattened; rows (or columns, whichever are fewer) are orthonormal.

    Example::

        w = nn.init.orthogonal_(vizgrad.empty(3, 5))
        w @ w.T            # the 3×3 identity
    """
    if len(tensor.shape) < 2:
        raise ShapeError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{format_shape(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    columns = tensor.numel() // rows
    flat = _rng(generator).standard_normal((rows, columns))
    if rows < columns:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))          # makes the decomposition unique, so Q is Haar-distributed
    if rows < columns:
        q = q.T
    return _write(tensor, gain * q)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor column by column with N(0, std²) values, zeroing a fraction
    ``sparsity`` of each column's entries."""
    if len(tensor.shape) != 2:
        raise ShapeError(f"sparse_: only 2-D tensors are supported, got shape {format_shape(tensor.shape)}")
    rng = _rng(generator)
    rows, columns = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    values = rng.normal(0.0, std, size=(rows, columns))
    for column in range(columns):
        values[rng.permutation(rows)[:zeros], column] = 0.0
    return _write(tensor, values)
