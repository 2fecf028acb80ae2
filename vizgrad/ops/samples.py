"""Sample inputs for the op tests, shared by the op families.

Shapes cover 0-d tensors, broadcasting pairs and non-contiguous inputs. Values
are float64 and kept away from kinks (|x| >= 0.1) and singularities so that
finite differences are meaningful.
"""

import numpy as np

from .registry import Sample

UNARY_SHAPES = ((), (5,), (3, 4), (2, 3, 4))
BROADCAST_PAIRS = (((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((4, 1), ()),
                   ((1, 3), (2, 1)))


def values(rng, shape, low=-2.0, high=2.0, away_from=None):
    """Uniform values in [low, high]; with ``away_from``, none within 0.1 of that point."""
    array = rng.uniform(low, high, size=shape)
    if away_from is not None:
        side = np.where(array >= away_from, 1.0, -1.0)
        array = np.where(np.abs(array - away_from) < 0.1, array + 0.2 * side, array)
    return np.asarray(array, dtype=np.float64)


def booleans(rng, shape, p_true=0.5):
    """A bool array of ``shape``; always an array, even 0-d (a comparison of a 0-d
    array would give a NumPy scalar, which the tests pass through as a number)."""
    return np.asarray(rng.uniform(size=shape) < p_true)


def non_contiguous(array):
    """The same values laid out transposed in memory."""
    return np.ascontiguousarray(array.T).T if array.ndim >= 2 else array


def unary(low=-2.0, high=2.0, away_from=None):
    """Samples for an elementwise op of one tensor."""
    def samples(rng):
        for shape in UNARY_SHAPES:
            yield Sample((values(rng, shape, low, high, away_from),), name=f"shape{shape}")
        yield Sample((non_contiguous(values(rng, (3, 4), low, high, away_from)),), name="non-contiguous")
    return samples


def binary(low=-2.0, high=2.0, other_low=None, other_high=None, scalar=1.5, away_from=None):
    """Samples for an elementwise op of two tensors: broadcasting pairs and a Python scalar."""
    other_low = low if other_low is None else other_low
    other_high = high if other_high is None else other_high

    def samples(rng):
        for left, right in BROADCAST_PAIRS:
            yield Sample((values(rng, left, low, high, away_from),
                          values(rng, right, other_low, other_high, away_from)), name=f"{left}x{right}")
        yield Sample((non_contiguous(values(rng, (3, 4), low, high, away_from)),
                      values(rng, (3, 4), other_low, other_high, away_from)), name="non-contiguous")
        if scalar is not None:
            yield Sample((values(rng, (3, 4), low, high, away_from), scalar), name="scalar")
    return samples


def reduction(dims=(None, 0, -1, (0, 1)), keepdim=True, low=-2.0, high=2.0, shape=(3, 4, 2), **extra):
    """Samples for a reduction: each ``dim`` with and without keepdim, plus a 0-d input."""
    def samples(rng):
        yield Sample((values(rng, (), low, high),), dict(extra), name="0-d")
        for dim in dims:
            for keep in ((False, True) if keepdim else (False,)):
                kwargs = dict(extra)
                if dim is not None:
                    kwargs["dim"] = dim
                    if keepdim:
                        kwargs["keepdim"] = keep
                yield Sample((values(rng, shape, low, high),), kwargs, name=f"dim={dim} keepdim={keep}")
        yield Sample((non_contiguous(values(rng, (4, 3), low, high)),), dict(extra, **({"dim": 0} if dims != (None,) else {})), name="non-contiguous")
    return samples
