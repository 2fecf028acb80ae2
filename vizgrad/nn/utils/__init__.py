"""Gradient clipping and flat parameter vectors, as ``torch.nn.utils``; sequence padding and
packing for the recurrent layers in :mod:`vizgrad.nn.utils.rnn`.

Example::

    loss.backward()
    total = vizgrad.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
"""

import math

from ...autograd.grad_mode import no_grad
from ...errors import ShapeError, format_shape, ArgumentError, ArgumentTypeError, DeviceError, NonFiniteError
from ...tensor import Tensor
from . import rnn  # noqa: F401  (nn.utils.rnn, as in PyTorch)


def _as_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grads(parameters):
    return [p.grad for p in _as_list(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one vector
    (the norm of their norms). Returns a 0-d tensor (on the first tensor's device).

    Example::

        nn.utils.get_total_norm([vizgrad.tensor([3.0]), vizgrad.tensor([4.0])])   # tensor(5.)
    """
    from ...ops.reduce import norm
    from ...ops.joins import stack
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        from ...creation import tensor
        return tensor(0.0)
    with no_grad():
        device = tensors[0].device
        norms = [norm(t.detach(), p=norm_type).to(device=device) for t in tensors]
        total = norm(stack(norms), p=norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise NonFiniteError(f"clip_grad_norm_: the total norm of order {norm_type} for gradients from `parameters` "
                             "is non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                             "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coefficient = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for grad in grads:
            grad.mul_(coefficient.to(device=grad.device, dtype=grad.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    (all gradients as one vector) is at most ``max_norm``: each gradient is multiplied by
    min(1, max_norm / (total + 1e-6)). Returns the total norm before clipping.

    Example::

        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    parameters = _as_list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value], in place.

    Example::

        nn.utils.clip_grad_value_(model.parameters(), 0.5)
    """
    clip_value = float(clip_value)
    with no_grad():
        for grad in _grads(parameters):
            grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one vector (differentiable).

    Example::

        vec = nn.utils.parameters_to_vector(model.parameters())
        vec.shape          # (number of parameters,)
    """
    from ...ops.joins import cat
    from ...ops.shape import reshape
    parameters = _as_list(parameters)
    if not parameters:
        raise ArgumentError("parameters_to_vector: no parameters given")
    device = parameters[0].device
    for param in parameters:
        if param.device != device:
            raise DeviceError(f"parameters_to_vector: found parameters on {device} and {param.device}; "
                               "they must all be on one device")
    return cat([reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (the inverse of
    :func:`parameters_to_vector`), in place.

    Example::

        nn.utils.vector_to_parameters(vec * 0, model.parameters())   # zero every weight
    """
    if not isinstance(vec, Tensor):
        raise ArgumentTypeError(f"expected vec to be a Tensor, but got: {type(vec).__name__}")
    parameters = _as_list(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.shape[0] != total:
        raise ShapeError(f"vector_to_parameters: vec of shape {format_shape(vec.shape)} does not hold the "
                         f"{total} values of the parameters")
    offset = 0
    with no_grad():
        for param in parameters:
            count = param.numel()
            piece = vec.detach()[offset:offset + count].reshape(param.shape)
            param._array[...] = piece.to(device=param.device, dtype=param.dtype)._array
            param._bump_version()
            offset += count
