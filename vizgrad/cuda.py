"""``vizgrad.cuda``: is a GPU usable here?"""

from .backends import base


def is_available():
    """True when CuPy is installed and sees at least one CUDA device."""
    backend = base._by_device_type.get("cuda")
    return bool(backend is not None and backend.is_available())


def device_count():
    """How many CUDA devices CuPy sees (0 without CuPy)."""
    backend = base._by_device_type.get("cuda")
    return backend.device_count() if backend is not None and backend.is_available() else 0
