"""How tensors print: values like NumPy, then what autograd knows about them."""

import numpy as np

from . import dtypes

_DEFAULT_DTYPES = (dtypes.float32, dtypes.int64, dtypes.bool_)


def tensor_repr(tensor):
    """``tensor([1., 2.], requires_grad=True)`` or ``tensor(3., grad_fn=<MulBackward>)``."""
    values = tensor._backend().to_numpy(tensor._array)
    body = np.array2string(np.asarray(values), precision=4, separator=", ", prefix="tensor(",
                           threshold=1000, edgeitems=3)
    extras = []
    device = tensor.device
    if device.type != "cpu":
        extras.append(f"device='{device}'")
    dtype = tensor.dtype
    if dtype not in _DEFAULT_DTYPES or tensor.numel() == 0:
        extras.append(f"dtype={dtype!r}")
    if tensor.grad_fn is not None:
        extras.append(f"grad_fn=<{tensor.grad_fn.name()}>")
    elif tensor.requires_grad:
        extras.append("requires_grad=True")
    if tensor.name:
        extras.append(f"name={tensor.name!r}")
    return "tensor(" + body + "".join(", " + extra for extra in extras) + ")"
