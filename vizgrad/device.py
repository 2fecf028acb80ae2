"""Devices: ``vizgrad.device("cpu")``, ``"cuda"``, ``"cuda:1"``."""

from .backends import backend_for_device
from .errors import DeviceError


class device:
    """Where a tensor's memory lives. Compares equal to its string form.

    Example::

        vizgrad.device("cuda:1").index      # 1
        x.device == "cpu"                   # True for a CPU tensor
    """

    __slots__ = ("type", "index")

    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index if index is None else index
        if not isinstance(spec, str):
            raise DeviceError(f"a device is written like 'cpu', 'cuda' or 'cuda:1', not {spec!r}")
        kind, _, number = spec.partition(":")
        if number:
            if not number.isdigit():
                raise DeviceError(f"invalid device {spec!r}: the index after ':' must be a number")
            index = int(number)
        self.type = kind
        self.index = index

    @property
    def backend(self):
        """The backend that holds this device's arrays; an error if it cannot be used here."""
        backend = backend_for_device(self.type)
        if not backend.is_available():
            raise DeviceError(f"device '{self}' was requested but no GPU was found: CuPy is installed "
                              "and sees no CUDA device. Use device='cpu'.")
        if self.index is not None and self.index >= backend.device_count():
            raise DeviceError(f"device '{self}' does not exist: {backend.device_count()} "
                              f"{self.type} device(s) found")
        return backend

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))


_default_device = device("cpu")


def set_default_device(spec):
    """Where factories (``zeros``, ``randn``, ``tensor``, ...) put tensors when no device is
    given, as ``torch.set_default_device``; ``None`` means the CPU again."""
    global _default_device
    chosen = device("cpu") if spec is None else as_device(spec)
    chosen.backend  # an error now for a device that cannot be used
    _default_device = chosen


def get_default_device():
    """The device factories use when none is given (the CPU unless :func:`set_default_device` changed it)."""
    return _default_device


def as_device(value):
    """``None`` means the default device (the CPU unless changed); strings and devices are parsed."""
    if value is None:
        return _default_device
    return value if isinstance(value, device) else device(value)
