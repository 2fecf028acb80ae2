"""The backend layer: the only place that knows NumPy, CuPy and array_api_strict apart.

Ops are written once against ``xp``, an array namespace that offers the portable
Array API (https://data-apis.org/array-api/) plus a handful of kernels the
standard lacks (:data:`EXTRAS`). Each backend provides one such namespace for
its arrays; :mod:`vizgrad.ops.tensor_namespace` provides the same names over
Tensors, so a backward written once also records its own graph when
``create_graph=True``.
"""

from . import base
from . import cuda, cudnn, mps    # PyTorch's flags (torch.backends.cudnn.benchmark, ...); CuPy is cupy_backend
from .base import Backend, EXTRAS, STANDARD_NAMES, backend_for_device, backend_of, register
from .host_memory import keep_freed_memory
from .numpy_backend import NumpyBackend

register(NumpyBackend())
keep_freed_memory()     # NumPy's step temporaries reuse the heap instead of fresh pages from the kernel

try:  # optional backends register themselves when their library is importable
    from .cupy_backend import CupyBackend
except ImportError as error:  # pragma: no cover - depends on the machine
    CupyBackend = None
    if error.name != "cupy":    # CuPy is there but the backend cannot load: device="cuda" says why
        base.unusable["cuda"] = error
else:  # pragma: no cover - depends on the machine
    register(CupyBackend())

try:
    from .strict_backend import StrictBackend
except ModuleNotFoundError:  # pragma: no cover - array_api_strict is a test dependency
    StrictBackend = None
else:
    register(StrictBackend())

__all__ = ["Backend", "EXTRAS", "STANDARD_NAMES", "backend_for_device", "backend_of", "register"]
