"""vizgrad's dtypes: ``vizgrad.float32`` and friends.

A :class:`dtype` is a small named object; backends map it to their own dtype
objects. Type promotion is NumPy 2's (NEP 50): Python scalars are weak, so a
float32 tensor times 2.5 stays float32.
"""

import numpy as np

from .errors import DTypeError


class dtype:
    """A tensor element type, e.g. ``vizgrad.float32``."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize")

    def __init__(self, name):
        self.name = name
        self.numpy = np.dtype(name)
        self.is_floating_point = self.numpy.kind == "f"
        self.itemsize = self.numpy.itemsize

    def __repr__(self):
        return f"vizgrad.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = dtype("float16")
float32 = dtype("float32")
float64 = dtype("float64")
int32 = dtype("int32")
int64 = dtype("int64")
bool_ = dtype("bool")

ALL = (float16, float32, float64, int32, int64, bool_)
FLOATING = (float16, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "int": int32,
                 "long": int64, "bool_": bool_})
_BY_NUMPY = {d.numpy: d for d in ALL}

default_float = float32


def as_dtype(value):
    """Turn ``vizgrad.float32``, ``"float32"``, ``numpy.float32`` or a Python type into a dtype."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
    else:
        if value is float:
            return default_float
        if value is int:
            return int64
        if value is bool:
            return bool_
        try:
            found = _BY_NUMPY.get(np.dtype(value))
        except TypeError:
            found = None
        if found is not None:
            return found
    names = ", ".join(d.name for d in ALL)
    raise DTypeError(f"unsupported dtype {value!r}: vizgrad supports {names}")


def from_numpy_dtype(np_dtype):
    """The vizgrad dtype of a NumPy dtype, with an error that names the dtype."""
    found = _BY_NUMPY.get(np_dtype)
    if found is None:
        names = ", ".join(d.name for d in ALL)
        raise DTypeError(f"arrays of dtype {np_dtype} are not supported: vizgrad supports {names}")
    return found
