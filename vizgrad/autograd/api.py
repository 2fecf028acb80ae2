"""The two entry points of the backward pass, :func:`backward` (also ``Tensor.backward``) and
:func:`grad`: they check the roots and their gradients, run :mod:`~vizgrad.autograd.engine`,
and store or return what it computed. Submodules of ``vizgrad.autograd`` take them from here,
not from the package."""

import warnings

from ..errors import ArgumentError, ArgumentTypeError, BackwardError, DeviceError, ShapeError, format_shape
from . import engine
from . import function as _function


def _as_list(value, what):
    Tensor = _function.Tensor
    if isinstance(value, Tensor):
        return [value]
    if value is None:
        return []
    values = list(value)
    for position, item in enumerate(values):
        if item is not None and not isinstance(item, Tensor):
            raise ArgumentTypeError(f"{what}[{position}] must be a Tensor, got {type(item).__name__}")
    return values


def _root_gradients(outputs, grad_outputs, create_graph, caller):
    """Check the roots and build the gradient each one starts with."""
    Tensor = _function.Tensor
    if len(grad_outputs) != len(outputs):
        raise ArgumentError(f"{caller}: got {len(outputs)} tensors but {len(grad_outputs)} gradients")
    values = []
    for position, (output, grad) in enumerate(zip(outputs, grad_outputs)):
        if not output.requires_grad:
            raise BackwardError(
                f"{caller}: tensor {position} does not require grad and has no grad_fn, so there is "
                "nothing to differentiate. Create the inputs with requires_grad=True, and do not "
                "compute the output under vizgrad.no_grad().")
        backend = output._backend()
        if grad is None:
            if output.numel() != 1:
                raise ShapeError(
                    f"{caller}: a gradient can be created implicitly only for a tensor with one element, "
                    f"but this tensor has shape {format_shape(output.shape)}. Reduce it first (.sum(), "
                    f".mean()) or pass gradient=... of shape {format_shape(output.shape)}.")
            array = backend.xp.ones_like(output._array)
        else:
            if not isinstance(grad, Tensor):
                grad = Tensor(grad, dtype=output.dtype, device=output.device)
            if grad.shape != output.shape:
                raise ShapeError(
                    f"{caller}: the gradient has shape {format_shape(grad.shape)} but the tensor it is "
                    f"for has shape {format_shape(output.shape)}; they must be equal.")
            if grad.device != output.device:
                raise DeviceError(f"{caller}: the gradient is on {grad.device} but the tensor is on "
                                  f"{output.device}")
            if create_graph:
                values.append(grad if grad.dtype is output.dtype else grad.to(output.dtype))
                continue
            array = grad._array
            if array.dtype != output._array.dtype:
                array = backend.xp.astype(array, output._array.dtype)
        values.append(Tensor._make(array) if create_graph else array)
    return values


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradients of ``tensors`` into the ``.grad`` of the leaves of their graph.

    See :meth:`vizgrad.Tensor.backward`; this form takes several roots at once.
    """
    outputs = _as_list(tensors, "tensors")
    grads = _as_list(grad_tensors, "grad_tensors") if grad_tensors is not None else [None] * len(outputs)
    roots = _root_gradients(outputs, grads, create_graph, "backward")
    retain = create_graph if retain_graph is None else retain_graph
    targets = None
    if inputs is not None:
        targets = _as_list(inputs, "inputs")
        if not targets:
            raise ArgumentError("backward: inputs= was given but is empty")
        for position, target in enumerate(targets):
            if not target.requires_grad:
                raise BackwardError(f"backward: inputs[{position}] does not require grad")
    captured = engine.execute(outputs, roots, retain, create_graph, targets, accumulate=True)
    if targets is not None:
        owners = set()
        for target, grad in zip(targets, captured):
            if grad is not None and target.grad_fn is not None:
                engine._store_grad(target, grad if create_graph else grad._array, create_graph, owners)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned as a tuple; no
    ``.grad`` is touched.

    Example::

        x = vizgrad.tensor(3.0, requires_grad=True)
        (dx,) = vizgrad.autograd.grad(x ** 3, x, create_graph=True)    # 27
        (dxx,) = vizgrad.autograd.grad(dx, x)                           # 18

    ``allow_unused=True`` returns None (or zeros with ``materialize_grads=True``) for
    inputs the outputs do not depend on, instead of raising. ``only_inputs`` is accepted
    and ignored, as in PyTorch (which deprecated it: only the inputs get gradients).
    """
    from ..creation import zeros_like  # lazy: the ops and creation build on autograd
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use vizgrad.autograd.backward.",
                      FutureWarning, stacklevel=2)
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True (vmap over grad_outputs) is not supported by "
                                  "vizgrad; call grad once per row of grad_outputs")
    outputs_list = _as_list(outputs, "outputs")
    inputs_list = _as_list(inputs, "inputs")
    if not inputs_list:
        raise ArgumentError("grad: inputs must not be empty")
    for position, tensor in enumerate(inputs_list):
        if not tensor.requires_grad:
            raise BackwardError(f"grad: inputs[{position}] (shape {format_shape(tensor.shape)}) does not "
                                "require grad: create it with requires_grad=True")
    grads = _as_list(grad_outputs, "grad_outputs") if grad_outputs is not None else [None] * len(outputs_list)
    roots = _root_gradients(outputs_list, grads, create_graph, "grad")
    retain = create_graph if retain_graph is None else retain_graph
    captured = engine.execute(outputs_list, roots, retain, create_graph, inputs_list, accumulate=False)
    results = []
    for position, (tensor, value) in enumerate(zip(inputs_list, captured)):
        if value is None:
            if not (allow_unused or materialize_grads):
                raise BackwardError(
                    f"grad: inputs[{position}] (shape {format_shape(tensor.shape)}) was not used to compute "
                    "the outputs, so it has no gradient. Pass allow_unused=True to get None for it.")
            value = zeros_like(tensor) if materialize_grads else None
        results.append(value)
    return tuple(results)
