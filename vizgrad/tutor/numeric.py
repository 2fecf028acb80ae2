"""The arithmetic behind the tutor: arrays in float64, closeness, undoing broadcasting and
gradients by central differences. No vizgrad graph is built here beyond what
:func:`numerical_vjp`'s forward evaluations need."""

import numpy as np

RTOL, ATOL = 1e-4, 1e-6


def as_numpy(value):
    """A float64 NumPy copy of a tensor, array or number."""
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        return np.array(value.detach().cpu().numpy(), dtype=np.float64)
    return np.array(value, dtype=np.float64)


def close(a, b, rtol=RTOL, atol=ATOL):
    """Same shape and equal within ``rtol`` and ``atol`` (elementwise, as ``numpy.allclose``)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def broadcast_axes(big, small):
    """The axes of shape ``big`` along which an input of shape ``small`` was broadcast, or
    None when ``small`` does not broadcast to ``big``."""
    lead = len(big) - len(small)
    if lead < 0 or any(s != 1 and s != b for s, b in zip(small, big[lead:])):
        return None
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(small) if s == 1 and big[lead + i] != 1)


def sum_to(array, shape):
    """Sum ``array`` down to ``shape`` (undo broadcasting)."""
    axes = broadcast_axes(array.shape, tuple(shape))
    summed = array.sum(axis=axes) if axes else array
    return summed.reshape(shape)


def preview(array):
    """A short one-line print of an array (its corners when big)."""
    array = np.asarray(array, dtype=np.float64)
    text = np.array2string(array, precision=4, suppress_small=True, separator=", ", threshold=12, edgeitems=2)
    return " ".join(text.split())


def numerical_vjp(forward, args, wrt, v, eps=1e-6):
    """For each position in ``wrt``: the gradient of ``sum(v * forward(*args))`` with respect
    to ``args[position]`` by central differences (``args`` are arrays or constants)."""
    from ..autograd import no_grad
    from ..creation import tensor
    from ..tensor import Tensor
    args = [np.array(as_numpy(a)) if isinstance(a, (np.ndarray, Tensor)) else a for a in args]
    v = np.asarray(v, dtype=np.float64)

    def value(values):
        with no_grad():
            out = forward(*[tensor(a) if isinstance(a, np.ndarray) else a for a in values])
        return float(np.sum(v * as_numpy(out)))

    results = []
    for position in wrt:
        base = args[position]
        gradient = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            sides = []
            for delta in (eps, -eps):
                moved = base.copy()
                moved[index] += delta
                sides.append(value(args[:position] + [moved] + args[position + 1:]))
            gradient[index] = (sides[0] - sides[1]) / (2 * eps)
        results.append(gradient)
    return results
