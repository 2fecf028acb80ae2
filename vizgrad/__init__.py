"""vizgrad: a visual autograd environment with PyTorch's names and semantics.

Example::

    import vizgrad as vg
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x ** 2).sum()
    loss.backward()
    x.grad            # tensor([2., 4., 6.])
"""

from . import dtypes
from .dtypes import bool_ as bool  # noqa: A001  (vizgrad.bool, as torch.bool)
from .dtypes import dtype, float16, float32, float64, int32, int64
from .device import device
from .tensor import Tensor
from .errors import (ArgumentError, ArgumentTypeError, BackwardError, DeviceError, DTypeError, IndexingError,
                     NonFiniteError, ShapeError, StateDictError, VizgradError)
from . import ops as _ops
from .ops.registry import OPS as _OPS
from .creation import (Generator, arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                       randperm, tensor, zeros, zeros_like)
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import cuda
from . import nn
from . import optim
from . import data
from . import serialization
from . import events
from . import trace as _trace_module
from .trace import Graph, graph, trace
from .serialization import load, save
from .render.notebook import show
from . import _tensor_methods  # noqa: F401  (operators and methods that are not registered ops)

globals().update({name: info.function for name, info in _OPS.items()})
globals().update({alias: _OPS[name].function for alias, name in _ops.registry.ALIASES.items()})

half, float, double, long = float16, float32, float64, int64  # noqa: A001  (PyTorch's aliases)
__version__ = "0.1.0"


def _jupyter_labextension_paths():
    """Where JupyterLab finds vizgrad's prebuilt extension (graph outputs drawn without a
    kernel, the graph side panel): ``jupyter labextension develop`` reads this."""
    return [{"src": "labextension", "dest": "vizgrad"}]
