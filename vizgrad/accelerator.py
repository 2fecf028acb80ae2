"""``vizgrad.accelerator``: the machine's accelerator, as ``torch.accelerator``.

vizgrad's only accelerator is a CUDA GPU through CuPy; on a machine without one,
``is_available()`` is False and ``current_accelerator()`` None, as PyTorch answers on a
CPU-only machine.

Example::

    device = vizgrad.accelerator.current_accelerator() if vizgrad.accelerator.is_available() else "cpu"
"""

from . import cuda
from .device import device
from .errors import DeviceError, as_int


def is_available():
    """True when a CUDA GPU is usable (CuPy installed and a device present)."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """``device('cuda')`` when CUDA is the accelerator, else None (also with ``check_available``
    when it is not usable, as PyTorch)."""
    return device("cuda") if cuda.is_available() else None


def device_count():
    """How many accelerator devices there are (0 without one)."""
    return cuda.device_count()


def _check_index(index, op):
    index = as_int(op, "device", index.index if hasattr(index, "index") else index)
    if not 0 <= index < device_count():
        raise DeviceError(f"{op}: device index {index} is out of range: this machine has {device_count()} "
                          "accelerator device(s)")
    return index


def current_device_index():
    """The index of the accelerator device in use: 0 (vizgrad places tensors on the device named)."""
    if not is_available():
        raise DeviceError("current_device_index: no accelerator is available on this machine")
    return 0


def set_device_index(device):
    """Check ``device`` names an accelerator device; vizgrad has no current-device state (tensors
    go where ``device=`` says), so there is nothing else to set."""
    _check_index(device, "set_device_index")


def synchronize(device=None):
    """Wait until the accelerator's queued work has finished (nothing to wait for without one)."""
    if is_available():
        cuda.synchronize(None if device is None else _check_index(device, "synchronize"))
