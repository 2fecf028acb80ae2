"""vizgrad's dtypes (``vizgrad.float32`` and friends) and PyTorch's type promotion.

A :class:`dtype` is a small named object; backends map it to their own dtype
objects. Every op that combines operands of different dtypes follows the rules
written once here (:func:`result_type`), which are PyTorch's:

* categories are ordered bool < integer < floating; within one, the wider dtype wins
  (int32 + int64 is int64, float16 + float32 is float32); float16 and bfloat16, neither of
  which holds the other's values, meet in float32;
* tensors with dimensions decide the dtype within their category; zero-dim tensors
  and Python numbers only lift the result to a higher category: a float32 tensor
  times a float64 0-d tensor is float32, an int64 tensor times a float64 0-d tensor is
  float64, an int32 tensor plus 1 is int32;
* a Python float (with integer or bool tensors) gives the default float dtype
  (:func:`get_default_dtype`, float32 unless :func:`set_default_dtype` says), a Python
  int with a bool tensor gives int64;
* some ops turn integer results into the default float dtype: true division
  (``int / int``), ``exp``, ``sqrt`` and the other transcendental functions.

In-place ops store their result only where :func:`can_cast` allows it (no floating
result into an integer tensor, nothing but bool into a bool tensor), as in PyTorch.
"""

import ml_dtypes
import numpy as np

from .errors import DTypeError


class dtype:
    """A tensor element type, e.g. ``vizgrad.float32``."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize", "category", "rank", "torch_name")

    def __init__(self, name, rank, torch_name, numpy=None):
        self.name = name
        self.numpy = np.dtype(name if numpy is None else numpy)   # its host (NumPy) dtype
        self.category = {"b": 0, "i": 1, "f": 2}[self.numpy.kind if numpy is None else "f"]   # bool < int < float
        self.is_floating_point = self.category == 2
        self.itemsize = self.numpy.itemsize
        self.rank = rank                # order of promotion: the higher rank of two dtypes wins
        self.torch_name = torch_name    # PyTorch's scalar type name, as its error messages spell it

    def __repr__(self):
        return f"vizgrad.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


bool_ = dtype("bool", 0, "Bool")
int32 = dtype("int32", 1, "Int")
int64 = dtype("int64", 2, "Long")
float16 = dtype("float16", 3, "Half")
# Google Brain's 16-bit float (float32's exponent, 8 bits of precision): on the host, the
# ml_dtypes package's NumPy dtype (the one JAX uses). Its rank equals float16's: the two meet
# in float32 (see _wider). Each op rounds its result once, as PyTorch's CPU kernels do, and sums
# and matrix products accumulate in float32 (backends/numpy_backend.py). One difference is
# left: a Python float meeting a float16 or bfloat16 tensor is rounded to that dtype before the
# op (NumPy's rule), where PyTorch computes with it in float32 (x * 0.1 may differ by one step).
bfloat16 = dtype("bfloat16", 3, "BFloat16", numpy=ml_dtypes.bfloat16)
float32 = dtype("float32", 4, "Float")
float64 = dtype("float64", 5, "Double")

ALL = (float16, bfloat16, float32, float64, int32, int64, bool_)
FLOATING = (float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "int": int32,
                 "long": int64, "bool_": bool_})
_BY_NUMPY = {d.numpy: d for d in ALL}

default_float = float32
# Promotion results are cached by the operands' dtypes and kinds (see ``autograd.function``);
# changing the default dtype changes the rules, so it empties the cache.
promotion_cache = {}


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


# --- the default float dtype --------------------------------------------------------------
def set_default_dtype(d):
    """Make ``d`` (float32, float64, float16 or bfloat16) the dtype of new float tensors: of
    ``tensor([1.5])``, ``zeros(3)``, ``randn``, ``linspace``, of Python floats combined
    with integer tensors, and of integer true division.

    Example::

        vizgrad.set_default_dtype(vizgrad.float64)
        vizgrad.tensor([1.5]).dtype        # vizgrad.float64
    """
    global default_float
    d = as_dtype(d)
    if not d.is_floating_point:
        raise DTypeError(f"set_default_dtype: only floating-point types are supported as the default type, "
                         f"got {d.name}")
    default_float = d
    promotion_cache.clear()


def get_default_dtype():
    """The dtype of new float tensors (float32 unless :func:`set_default_dtype` changed it)."""
    return default_float


# --- machine limits -----------------------------------------------------------------------------
class finfo:
    """The machine limits of a floating dtype (the default one when none is given), as
    ``torch.finfo``: ``bits``, ``eps`` (the gap between 1 and the next number), ``max``,
    ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name).

    Example::

        vizgrad.finfo(vizgrad.float32).eps      # 1.1920928955078125e-07
    """

    def __init__(self, type=None):
        found = default_float if type is None else as_dtype(type)
        if not found.is_floating_point:
            raise DTypeError(f"finfo: {found.name} is not a floating point dtype (use iinfo for integers)")
        limits = np.finfo(found.numpy)
        self.dtype, self.bits = found.name, int(limits.bits)
        self.eps, self.max, self.min = float(limits.eps), float(limits.max), float(limits.min)
        self.tiny = self.smallest_normal = float(limits.smallest_normal)
        self.resolution = 10.0 ** -limits.precision

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` and
    ``dtype`` (its name).

    Example::

        vizgrad.iinfo(vizgrad.int32).max        # 2147483647
    """

    def __init__(self, type):
        found = as_dtype(type)
        if found.is_floating_point or found is bool_:
            raise DTypeError(f"iinfo: {found.name} is not an integer dtype (use finfo for floating point)")
        limits = np.iinfo(found.numpy)
        self.dtype, self.bits, self.max, self.min = found.name, int(limits.bits), int(limits.max), int(limits.min)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# --- promotion --------------------------------------------------------------------------------
def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` can be converted to without losing
    their category: ``promote_types(int32, float16)`` is float16, as in PyTorch."""
    return _wider(as_dtype(type1), as_dtype(type2))


def _wider(type1, type2):
    """The higher-ranked of two dtypes (``type1`` may be None); float16 and bfloat16, of one
    rank, give float32, as in PyTorch."""
    if type1 is None or type2.rank > type1.rank:
        return type2
    if type2.rank < type1.rank or type1 is type2:
        return type1
    return float32


def _python_scalar_dtype(value):
    """The dtype PyTorch gives a Python (or NumPy) number taking part in promotion."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return default_float
    raise DTypeError(f"expected a tensor or a number, got {type(value).__name__} {value!r:.40}")


def _combine(higher, lower):
    """PyTorch's rule for a result of a higher priority class (dimensioned over zero-dim over
    numbers) meeting one of a lower class: the lower one counts only when it is of a
    higher category (or the higher is bool)."""
    if higher is None:
        return lower
    if lower is None or higher.category == 2:
        return higher
    if higher.category == 0 or lower.category == 2:
        return _wider(higher, lower)
    return higher


def result_type_of(operands):
    """The result dtype of ``operands``, each given as ``(dtype, is_zero_dim)`` for a tensor
    or as a Python number: the rules of the module docstring."""
    dimensioned = zero_dim = number = None
    for operand in operands:
        if type(operand) is tuple:
            d, is_zero_dim = operand
            if is_zero_dim:
                zero_dim = _wider(zero_dim, d)
            else:
                dimensioned = _wider(dimensioned, d)
        else:
            number = _wider(number, _python_scalar_dtype(operand))
    return _combine(dimensioned, _combine(zero_dim, number))


def result_type(tensor1, tensor2):
    """The dtype an elementwise op of ``tensor1`` and ``tensor2`` (tensors or numbers)
    computes in, by PyTorch's rules.

    Example::

        vizgrad.result_type(vizgrad.arange(3), 0.5)     # vizgrad.float32
    """
    operands = []
    for value in (tensor1, tensor2):
        d = getattr(value, "dtype", None)
        operands.append((d, value.ndim == 0) if isinstance(d, dtype) else value)
    return result_type_of(operands)


def can_cast(from_, to):
    """Whether an in-place op may store a ``from_`` result into a ``to`` tensor: not a
    floating value into an integer or bool tensor, not an integer into a bool tensor."""
    from_, to = as_dtype(from_), as_dtype(to)
    return from_.category <= to.category
