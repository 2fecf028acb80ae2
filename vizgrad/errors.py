"""The exceptions vizgrad raises for user mistakes, and the argument checks that raise them.

One rule: every mistake a user can make in a call to a public vizgrad function raises a
:class:`VizgradError` whose message starts with the name of the function that was called
and names the offending argument with its value, shape, dtype or device. Each class also
derives from the built-in exception a Python (or PyTorch) user would reach for, so
``except ValueError`` keeps working around shape mistakes and ``except VizgradError``
catches them all. An error that rewords a backend (NumPy, CuPy) error is raised
``from None``: the backend's traceback is noise to the user.

How the rule is kept:

* Public functions check their arguments at their entry with the checks below, which take
  the caller's name (``check_dim("softmax", dim, x.ndim)``).
* Ops leave what only the backend can see (a value out of range, an unsupported dtype
  pair) to the backend; :meth:`vizgrad.autograd.function.Op.apply` rewords what the
  backend raises, on the failure path only, naming the public function found on the call
  stack (:func:`public_caller`): the success path costs nothing.
* ``tests/test_errors_structure.py`` fails on any ``raise ValueError(...)`` (or another
  bare builtin) in the public modules, and ``tests/test_errors_fuzz.py`` calls every
  registered op and constructor with wrong arguments.
"""

import inspect
import math
import operator
import os
import sys


class VizgradError(Exception):
    """Base class of every error vizgrad raises on purpose.

    A message starts with the public function it is about (``"softmax: dim 2 is out of
    range ..."``). When that function ran beneath another public function the user called
    (``log_softmax`` inside ``cross_entropy``), the message is attributed to the outer one:
    the user reads the name they wrote; a message without a name (a dtype helper's) gets
    the caller's put first. This happens here, once, when the error is made."""

    def __init__(self, *args):
        if args and isinstance(args[0], str):
            head, separator, rest = args[0].partition(": ")
            if separator and head in PUBLIC_NAMES:
                caller = public_caller(head)
                if caller != head:
                    args = (f"{caller}: {rest}",) + args[1:]
            elif not (separator and head.replace(".", "").replace("_", "").isalnum()):
                caller = public_caller(None)     # a message without a name: the caller's is put first
                if caller is not None:
                    args = (f"{caller}: {args[0]}",) + args[1:]
        super().__init__(*args)


class ShapeError(VizgradError, ValueError):
    """Shapes that do not fit together (broadcasting, matmul, reshape, ...)."""


class DTypeError(VizgradError, TypeError):
    """A dtype an op cannot work with (e.g. gradients of integer tensors)."""


class DTypeNotImplementedError(DTypeError, NotImplementedError):
    """A dtype (or a mix of dtypes) an op has no kernel for, which PyTorch refuses with a
    ``RuntimeError`` ("bmm" not implemented for 'Bool', a ``NotImplementedError``; "expected m1
    and m2 to have the same dtype"): a :class:`DTypeError` (so a ``TypeError``, as vizgrad's
    dtype errors are) and a ``NotImplementedError`` (so a ``RuntimeError``, as PyTorch's)."""


class DeviceError(VizgradError, RuntimeError):
    """Tensors on different devices, or a device that is not available."""


class BackwardError(VizgradError, RuntimeError):
    """A mistake found while differentiating: freed graphs, in-place changes,
    wrong gradients returned by a custom Function, NaN under anomaly mode."""


class IndexingError(VizgradError, IndexError):
    """A dim or an index out of range, or an index vizgrad cannot use."""


class ArgumentError(VizgradError, ValueError):
    """An argument whose value is out of its range: a stride of 0, a negative size, a
    learning rate below 0, a probability above 1, an unknown option."""


class ArgumentTypeError(VizgradError, TypeError):
    """An argument of the wrong type: a string where a number belongs, a float where an
    integer belongs, a list where a Tensor belongs."""


class NonFiniteError(VizgradError, RuntimeError):
    """A NaN or an infinity where a finite number is required (e.g. the total gradient norm
    ``clip_grad_norm_`` is asked to clip with ``error_if_nonfinite=True``)."""


class LinAlgError(VizgradError, RuntimeError):
    """A linear-algebra operation on a singular matrix (``inverse``, ``linalg.solve``): a
    ``RuntimeError``, as ``torch.linalg.LinAlgError``; also ``vizgrad.linalg.LinAlgError``."""


class TransformError(VizgradError, RuntimeError):
    """A function transform (``vizgrad.func``: ``vmap``, ``grad``, ``vjp``, ``jvp``, ``jacrev``,
    ...) used in a way it cannot follow: a non-scalar output for ``grad``, ``.item()`` on a
    batched tensor, a random op under ``vmap(randomness="error")`` (a ``RuntimeError``, as in PyTorch)."""


class UnsupportedError(VizgradError, NotImplementedError):
    """A PyTorch feature vizgrad does not have and does not pretend to (ONNX export, distributed
    training, saving TorchScript): a ``NotImplementedError`` that says so."""


class StateDictError(VizgradError, RuntimeError):
    """``load_state_dict`` got a state dict whose keys or shapes do not match the module
    (a ``RuntimeError``, as in PyTorch). ``missing_keys`` and ``unexpected_keys`` list them."""

    def __init__(self, message, missing_keys=(), unexpected_keys=()):
        super().__init__(message)
        self.missing_keys = list(missing_keys)
        self.unexpected_keys = list(unexpected_keys)


def format_shape(shape):
    """``(3, 4)`` for a shape tuple, ``()`` for a scalar: the way errors print shapes."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class DivisionByZeroError(VizgradError, RuntimeError, ZeroDivisionError):
    """Integer division (``//``, ``%``, rounded ``div``) by zero, which PyTorch refuses
    (floating-point division gives inf or nan instead)."""


# --- argument checks shared by every public function ------------------------------------
# Each takes the name of the public function being called (``op``) and the argument's name,
# and returns the normalized value, so a check is one line at a function's entry.

def _is_bool(value):
    return type(value).__name__ in ("bool", "bool_")


def as_int(op, name, value):
    """``value`` as a Python int (ints, NumPy integers, 0-d integer tensors), or an
    :class:`ArgumentTypeError` naming the argument (floats and bools are refused)."""
    if type(value) is int:
        return value
    if _is_bool(value):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {_describe(value)}") from None


def as_number(op, name, value):
    """``value`` as a real Python number (int or float), or an :class:`ArgumentTypeError`."""
    if type(value) is float or type(value) is int:
        return value
    if isinstance(value, str) or value is None or not hasattr(value, "__float__") or isinstance(value, complex):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {_describe(value)}")
    if getattr(value, "shape", ()) != () and getattr(value, "numel", lambda: 1)() != 1:
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {_describe(value)}")
    return float(value)


def as_integer_scalar(op, name, value):
    """A number an op applies to an integer tensor (hardtanh's bounds, addmm's alpha) as the
    int PyTorch converts it to, truncated towards zero; an :class:`ArgumentError` where it has
    no int64 value (inf, NaN, out of range)."""
    value = as_number(op, name, value)
    if not (math.isfinite(value) and -2 ** 63 <= value < 2 ** 63):
        raise ArgumentError(f"{op}: {name}={value!r} cannot be converted to int64 without overflow, to act on an "
                            "integer tensor")
    return int(value)


def not_a_tensor(op, name, value):
    """The error for ``value`` where a Tensor belongs (the caller raises it after its own
    ``isinstance`` check, so the success path pays one check and no call)."""
    return ArgumentTypeError(f"{op}: {name} must be a Tensor, got {_describe(value)}")


def check_dim(op, dim, ndim, name="dim"):
    """``dim`` as a non-negative dim of a tensor with ``ndim`` dims (a 0-d tensor accepts
    0 and -1, as in PyTorch), or an :class:`IndexingError` naming the valid range."""
    if type(dim) is not int:
        dim = as_int(op, name, dim)
    size = ndim if ndim > 0 else 1
    if not -size <= dim < size:
        raise IndexingError(f"{op}: {name} {dim} is out of range for a tensor of {ndim} dimension"
                            f"{'s' if ndim != 1 else ''} (expected to be in range of [{-size}, {size - 1}])")
    return dim % size


def check_size(op, name, value, minimum=0):
    """An int ``value`` >= ``minimum`` (a size, a count), or an :class:`ArgumentError`."""
    value = as_int(op, name, value)
    if value < minimum:
        bound = "non-negative" if minimum == 0 else "positive" if minimum == 1 else f">= {minimum}"
        raise ArgumentError(f"{op}: {name} must be {bound}, got {value}")
    return value


def check_sizes(op, sizes, name="size"):
    """A shape given as ints: each an int >= 0, or an error naming the whole shape."""
    result = []
    for value in sizes:
        if type(value) is not int:
            if _is_bool(value) or not hasattr(value, "__index__"):
                raise ArgumentTypeError(f"{op}: {name} must be a sequence of ints, got {tuple(sizes)!r} "
                                        f"(an element is {_describe(value)})")
            value = operator.index(value)
        result.append(value)
    if any(value < 0 for value in result):
        raise ArgumentError(f"{op}: {name} must be non-negative, got {tuple(result)!r}")
    return tuple(result)


def check_range(op, name, value, low=None, high=None, *, low_open=False, high_open=False):
    """A real number ``value`` within [low, high] (``*_open`` excludes the bound); an
    :class:`ArgumentTypeError` for a non-number, an :class:`ArgumentError` outside."""
    value = as_number(op, name, value)
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high or (isinstance(value, float) and math.isnan(value)):
        if low is not None and high is not None:
            bounds = f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        elif low is not None:
            bounds = f"{'>' if low_open else '>='} {low}"
        else:
            bounds = f"{'<' if high_open else '<='} {high}"
        raise ArgumentError(f"{op}: {name} must be {bounds}, got {value!r}")
    return value


def _describe(value):
    """A short description of a value for messages: its type, and the value when short."""
    text = repr(value)
    kind = type(value).__name__
    if len(text) > 40:
        return f"a {kind}"
    return f"a {kind} ({text})" if kind not in ("NoneType",) else "None"


# --- the public name on the failure path ---------------------------------------------------
PUBLIC_CODE = {}   # code object of a public function -> its public name (filled by registration)
PUBLIC_NAMES = set()   # the names in PUBLIC_CODE
NAMING_CODE = {}   # code object of a dispatcher -> the parameter that holds the public name


def public(name=None):
    """Mark a function as public under ``name`` (default: its own name), so that errors
    reworded beneath it (:func:`public_caller`) name it. ``ops.registry.register`` does this
    for every registered op; composite functions (losses, layers) use it directly. A
    decorator's wrapper (``functools.wraps``) shares its code with every function it wraps,
    so the wrapped function's own code is marked."""
    def mark(function):
        PUBLIC_CODE[inspect.unwrap(function).__code__] = name or function.__name__
        PUBLIC_NAMES.add(name or function.__name__)
        return function
    return mark


def public_functions_of(namespace):
    """Mark every public function defined in module ``namespace`` (a ``globals()`` dict), so
    that functions added to that module later are covered without a decorator each."""
    module = namespace["__name__"]
    for name, value in list(namespace.items()):
        if not name.startswith("_") and getattr(value, "__module__", None) == module and hasattr(value, "__code__"):
            public(name)(value)


def public_name_from(parameter):
    """Mark a dispatcher that many public functions share (``apply_inplace(target, compute,
    op_name)``): errors reworded beneath it name the value of its ``parameter``."""
    def mark(function):
        NAMING_CODE[function.__code__] = parameter
        return function
    return mark


_PACKAGE_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep   # frames below it are vizgrad's


def public_caller(default, depth=1):
    """The name of the outermost public vizgrad function on the call stack above the
    caller (the one the user called; stops at the first frame outside vizgrad), else
    ``default``. Only used when an error is being reworded: it walks frames."""
    frame = sys._getframe(depth + 1)
    name = default
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_ROOT):
        code = frame.f_code
        found = PUBLIC_CODE.get(code)
        if found is not None:
            name = found
        elif code in NAMING_CODE:
            name = frame.f_locals.get(NAMING_CODE[code], name)
        frame = frame.f_back
    return name
