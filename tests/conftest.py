"""Shared test setup: the devices every backend-aware test runs on, and turning
NumPy sample arguments into vizgrad tensors.

Devices:
    ``cpu``     NumPy, always.
    ``strict``  array_api_strict: a CPU stand-in that fails on anything outside the
                portable Array API, so a test passing there proves an op is portable.
                Skipped when array_api_strict is not installed.
    ``cuda``    CuPy, marked ``gpu``; skipped, with the reason, when CuPy is missing or
                sees no CUDA device. ``pytest -m "not gpu"`` deselects it outright.

A test takes the ``backend`` fixture (the device name) to run on each of them.
"""

import numpy as np
import pytest

import vizgrad
from vizgrad.backends import base


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: runs on the CUDA device (CuPy); skipped when no GPU is usable")


def _cuda_unavailable_reason():
    """Why the cuda device cannot be tested here, or None when it can."""
    if vizgrad.cuda.is_available():
        return None
    if "cuda" not in base._by_device_type:
        return "no GPU backend: CuPy is not installed (pip install 'vizgrad[cuda12]')"
    return "CuPy is installed but sees no CUDA device"


def _strict_unavailable_reason():
    if "strict" in base._by_device_type:
        return None
    return "array_api_strict is not installed, so the portability backend is absent"


def _device_params():
    strict_reason = _strict_unavailable_reason()
    cuda_reason = _cuda_unavailable_reason()
    return [
        pytest.param("cpu", id="cpu"),
        pytest.param("strict", id="strict", marks=[pytest.mark.skip(reason=strict_reason)] if strict_reason else []),
        pytest.param("cuda", id="cuda",
                     marks=[pytest.mark.gpu] + ([pytest.mark.skip(reason=cuda_reason)] if cuda_reason else [])),
    ]


DEVICES = _device_params()


@pytest.fixture(params=DEVICES)
def backend(request):
    """The device name ("cpu", "strict" or "cuda") a test runs on."""
    return request.param


def to_tensors(value, device, float_dtype="float64", leaves=None):
    """``value`` with every NumPy array replaced by a vizgrad tensor on ``device``.

    Arrays may sit inside lists, tuples and dicts (the structure is kept); Python
    scalars and everything else pass through. Floating arrays become ``float_dtype``
    tensors that require grad; integer and bool arrays become tensors that do not.
    Each new tensor is also appended to ``leaves`` when a list is given, in the order
    a depth-first walk meets them.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            tensor = vizgrad.tensor(value.astype(float_dtype), device=device, requires_grad=True)
        else:
            tensor = vizgrad.tensor(value, device=device)
        if leaves is not None:
            leaves.append(tensor)
        return tensor
    if isinstance(value, dict):
        return {key: to_tensors(item, device, float_dtype, leaves) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return _same_sequence(value, [to_tensors(item, device, float_dtype, leaves) for item in value])
    return value


def _same_sequence(original, items):
    if isinstance(original, tuple) and hasattr(original, "_fields"):  # a namedtuple
        return type(original)(*items)
    return type(original)(items)


@pytest.fixture
def as_tensors():
    """:func:`to_tensors`, the sample-arguments-to-tensors conversion, as a fixture."""
    return to_tensors


@pytest.fixture
def no_listener_leaks():
    """Fails the test if it left an event listener attached to the engine."""
    from vizgrad.autograd import observers
    yield
    assert observers.active == [], "a test left an event listener attached"


@pytest.fixture
def closing():
    """Widgets (or anything with close()) made by a test; closed afterwards even when it fails."""
    made = []
    yield made
    for item in made:
        item.close()
