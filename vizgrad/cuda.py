"""``vizgrad.cuda``: is a GPU usable here, which one, and waiting for it (PyTorch's names)."""

from .backends import base


def is_available():
    """True when CuPy is installed and sees at least one CUDA device."""
    backend = base._by_device_type.get("cuda")
    return bool(backend is not None and backend.is_available())


def device_count():
    """How many CUDA devices CuPy sees (0 without CuPy)."""
    backend = base._by_device_type.get("cuda")
    return backend.device_count() if backend is not None and backend.is_available() else 0


def _gpu(device):
    """The CUDA backend and the device index that ``device`` (None, an int, "cuda:1", a device) names."""
    from .device import device as Device
    if device is None or isinstance(device, int):
        device = Device("cuda", device)
    device = Device(device)
    if device.type != "cuda":
        from .errors import DeviceError
        raise DeviceError(f"vizgrad.cuda works with CUDA devices, not {str(device)!r}")
    return device.backend, device.index or 0


def synchronize(device=None):
    """Wait until every kernel queued on ``device`` (default: the first GPU) has finished.

    GPU work runs asynchronously: time GPU code only after synchronizing. Example::

        y = x @ x; vizgrad.cuda.synchronize()
    """
    backend, index = _gpu(device)
    backend.synchronize(index)


def get_device_name(device=None):
    """The GPU's name as its driver reports it, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    backend, index = _gpu(device)
    return backend.device_name(index)


def manual_seed(seed):
    """PyTorch's seed for the CUDA generators. vizgrad draws the random numbers of GPU tensors
    from the one generator :func:`vizgrad.manual_seed` seeds, so this checks ``seed`` and
    changes nothing, as PyTorch ignores it on a machine without a GPU."""
    from .errors import check_size
    check_size("cuda.manual_seed", "seed", seed)


def manual_seed_all(seed):
    """As :func:`manual_seed`, for every GPU."""
    from .errors import check_size
    check_size("cuda.manual_seed_all", "seed", seed)
