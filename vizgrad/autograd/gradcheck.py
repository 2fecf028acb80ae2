"""Check analytical gradients against central finite differences, in float64.

``gradcheck`` compares the Jacobian that backward computes with
``(f(x + eps) - f(x - eps)) / 2 eps``, one input element at a time;
``gradgradcheck`` does the same for the gradient function itself (second order).
A mismatch raises :class:`GradcheckError` naming the input, the element, the output
and both values.
"""

import numpy as np

from ..errors import BackwardError, format_shape, ArgumentError
from .grad_mode import enable_grad, no_grad


class GradcheckError(BackwardError):
    """Analytical and numerical gradients disagree."""


def _float64_inputs(inputs):
    from ..tensor import Tensor
    prepared = []
    for value in inputs:
        if isinstance(value, Tensor) and value.is_floating_point():
            copy = value.detach().to("float64").clone() if value.dtype.name != "float64" else value
            if copy is not value:
                copy.requires_grad_(value.requires_grad)
            prepared.append(copy)
        else:
            prepared.append(value)
    return tuple(prepared)


def _outputs(fn, inputs):
    from ..tensor import Tensor
    out = fn(*inputs)
    outputs = (out,) if isinstance(out, Tensor) else tuple(out)
    return outputs


def _host(tensor):
    return np.array(tensor._backend().to_numpy(tensor._array), dtype=np.float64)


def _numerical_columns(fn, inputs, position, eps, output_mask):
    """For each element of ``inputs[position]``, the central difference of every output."""
    tensor = inputs[position]
    backend = tensor._backend()
    original = _host(tensor)
    columns = []
    with no_grad():
        for flat_index in range(original.size):
            values = []
            for delta in (eps, -eps):
                perturbed = original.copy()
                perturbed.reshape(-1)[flat_index] += delta
                tensor._array = backend.asarray(perturbed, None, backend.device_index(tensor._array))
                values.append([_host(o).reshape(-1) for o, used in zip(_outputs(fn, inputs), output_mask) if used])
            columns.append([(plus - minus) / (2 * eps) for plus, minus in zip(*values)])
        tensor._array = backend.asarray(original, None, backend.device_index(tensor._array))
    return columns


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, fast_mode=False):
    """Whether the gradients of ``fn`` at ``inputs`` match finite differences.

    ``inputs`` is a tuple of arguments; the floating tensors among them that require
    grad are checked (cast to float64 first). Returns True, or raises
    :class:`GradcheckError` (False with ``raise_exception=False``).

    The full check builds the whole Jacobian: one backward per output element and two
    forwards per input element. ``fast_mode=True`` (as in PyTorch) compares only
    ``v·J·u`` for random unit vectors ``u`` and ``v``: one backward and two forwards per
    input, whatever the sizes; a failure then names the input but not the element.

    Example::

        x = vizgrad.randn(3, dtype=vizgrad.float64, requires_grad=True)
        vizgrad.autograd.gradcheck(vizgrad.tanh, (x,))    # True
    """
    from .api import grad as autograd_grad
    from ..tensor import Tensor
    inputs = _float64_inputs(inputs if isinstance(inputs, tuple) else (inputs,)
                             if isinstance(inputs, Tensor) else tuple(inputs))
    checked = [i for i, v in enumerate(inputs) if isinstance(v, Tensor) and v.requires_grad]
    if not checked:
        raise ArgumentError("gradcheck: no input requires grad, so there is nothing to check")
    outputs = _outputs(fn, inputs)
    output_mask = [isinstance(o, Tensor) and o.requires_grad for o in outputs]
    differentiable = [o for o, used in zip(outputs, output_mask) if used]
    if fast_mode:
        return _fast_check(fn, inputs, checked, output_mask, differentiable, eps, atol, rtol,
                           raise_exception)

    # analytical Jacobian rows: one vector-Jacobian product per output element
    analytical = {position: [] for position in checked}
    for output in differentiable:
        host = _host(output)
        for flat_index in range(host.size):
            seed = np.zeros(host.size)
            seed[flat_index] = 1.0
            seed_tensor = Tensor(seed.reshape(host.shape), dtype=output.dtype, device=output.device)
            grads = autograd_grad(output, [inputs[p] for p in checked], seed_tensor,
                                  retain_graph=True, allow_unused=True)
            for position, value in zip(checked, grads):
                row = np.zeros(inputs[position].numel()) if value is None else _host(value).reshape(-1)
                analytical[position].append(row)

    for position in checked:
        columns = _numerical_columns(fn, inputs, position, eps, output_mask)
        row = 0
        for output_index, output in enumerate(differentiable):
            size = output.numel()
            for out_element in range(size):
                computed = analytical[position][row + out_element]
                for in_element, column in enumerate(columns):
                    numerical = column[output_index][out_element]
                    exact = computed[in_element]
                    if not abs(exact - numerical) <= atol + rtol * abs(numerical) or np.isnan(exact) != np.isnan(numerical):
                        shape = inputs[position].shape
                        element = np.unravel_index(in_element, shape) if shape else ()
                        out_at = np.unravel_index(out_element, output.shape) if output.shape else ()
                        message = (
                            f"gradcheck: the gradient of output {output_index} element {tuple(int(i) for i in out_at)} "
                            f"with respect to input {position} (shape {format_shape(shape)}) element "
                            f"{tuple(int(i) for i in element)} is {float(exact)!r} analytically but {float(numerical)!r} "
                            f"numerically (atol={atol}, rtol={rtol}).")
                        if raise_exception:
                            raise GradcheckError(message)
                        return False
            row += size
    return True


def _fast_check(fn, inputs, checked, output_mask, differentiable, eps, atol, rtol, raise_exception):
    """gradcheck's fast mode: for each checked input, ``v·(J u)`` from one backward
    (``(vᵀJ)·u``) against a central difference along ``u``."""
    from .api import grad as autograd_grad
    from ..tensor import Tensor
    rng = np.random.default_rng(0)

    def unit(shape):
        vector = rng.standard_normal(shape)
        norm = np.linalg.norm(vector)
        return vector / norm if norm > 0 else vector

    projections = [unit(o.shape) for o in differentiable]
    seeds = [Tensor(v, dtype=o.dtype, device=o.device) for v, o in zip(projections, differentiable)]
    grads = autograd_grad(differentiable, [inputs[p] for p in checked], seeds, retain_graph=True,
                          allow_unused=True)
    for position, grad in zip(checked, grads):
        tensor = inputs[position]
        direction = unit(tensor.shape)
        exact = 0.0 if grad is None else float(np.sum(_host(grad) * direction))
        backend = tensor._backend()
        index = backend.device_index(tensor._array)
        original = _host(tensor)
        sides = []
        with no_grad():
            for delta in (eps, -eps):
                tensor._array = backend.asarray(original + delta * direction, None, index)
                sides.append([_host(o) for o, used in zip(_outputs(fn, inputs), output_mask) if used])
            tensor._array = backend.asarray(original, None, index)
        numerical = float(sum(np.sum(v * (plus - minus)) for v, plus, minus in zip(projections, *sides))
                          / (2 * eps))
        if not abs(exact - numerical) <= atol + rtol * abs(numerical) or np.isnan(exact) != np.isnan(numerical):
            message = (
                f"gradcheck (fast mode): along random unit vectors u and v, v·J·u for input {position} "
                f"(shape {format_shape(tensor.shape)}) is {exact!r} analytically but {numerical!r} "
                f"numerically (atol={atol}, rtol={rtol}). Run with fast_mode=False to find the "
                "elements that differ.")
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  fast_mode=False):
    """Whether second derivatives of ``fn`` match finite differences of its gradients.

    It runs :func:`gradcheck` on ``(inputs, grad_outputs) -> grad(fn(inputs), inputs,
    grad_outputs, create_graph=True)``; random ``grad_outputs`` are drawn if not given.
    ``fast_mode`` is :func:`gradcheck`'s.
    """
    from .api import grad as autograd_grad
    from ..creation import Generator  # lazy: the ops and creation build on autograd
    from ..tensor import Tensor
    inputs = _float64_inputs(inputs if isinstance(inputs, tuple) else (inputs,)
                             if isinstance(inputs, Tensor) else tuple(inputs))
    checked = [i for i, v in enumerate(inputs) if isinstance(v, Tensor) and v.requires_grad]
    outputs = [o for o in _outputs(fn, inputs) if isinstance(o, Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = Generator(0)._rng
        grad_outputs = tuple(Tensor(rng.standard_normal(o.shape), dtype="float64", device=o.device,
                                    requires_grad=True) for o in outputs)
    else:
        grad_outputs = _float64_inputs(tuple(grad_outputs))
    count = len(inputs)

    def first_derivatives(*values):
        arguments = values[:count]
        seeds = values[count:]
        # gradcheck evaluates this under no_grad for its finite differences; the first
        # derivatives still need a graph to be computed at all
        with enable_grad():
            results = [o for o in _outputs(fn, arguments) if isinstance(o, Tensor) and o.requires_grad]
            grads = autograd_grad(results, [arguments[i] for i in checked], list(seeds),
                                  create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return gradcheck(first_derivatives, tuple(inputs) + tuple(grad_outputs), eps, atol, rtol,
                     raise_exception, fast_mode)
