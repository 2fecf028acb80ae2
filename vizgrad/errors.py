"""The exceptions vizgrad raises for user mistakes.

Every error names the op and the shapes, dtypes or devices involved. Each class
also derives from the built-in exception a Python user would reach for, so
``except ValueError`` keeps working around shape mistakes.
"""


class VizgradError(Exception):
    """Base class of every error vizgrad raises on purpose."""


class ShapeError(VizgradError, ValueError):
    """Shapes that do not fit together (broadcasting, matmul, reshape, ...)."""


class DTypeError(VizgradError, TypeError):
    """A dtype an op cannot work with (e.g. gradients of integer tensors)."""


class DeviceError(VizgradError, RuntimeError):
    """Tensors on different devices, or a device that is not available."""


class BackwardError(VizgradError, RuntimeError):
    """A mistake found while differentiating: freed graphs, in-place changes,
    wrong gradients returned by a custom Function, NaN under anomaly mode."""


def format_shape(shape):
    """``(3, 4)`` for a shape tuple, ``()`` for a scalar: the way errors print shapes."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class DivisionByZeroError(VizgradError, RuntimeError, ZeroDivisionError):
    """Integer division (``//``, ``%``, rounded ``div``) by zero, which PyTorch refuses
    (floating-point division gives inf or nan instead)."""
