"""What the autograd graph knows about the tensors the tutor checks: each tensor's place in
the backward order, the gradient every use of it sends back (one backward pass, observed),
and the op that consumes it. Pure reading: nothing here changes a tensor's ``.grad``."""

from dataclasses import dataclass, field

import numpy as np

from ..autograd import engine, observers
from ..autograd.function import AccumulateGrad
from ..errors import BackwardError
from .numeric import as_numpy


def edge_of(tensor):
    """``(autograd node, output number)`` through which ``tensor``'s gradient arrives, or None
    for a tensor in no graph."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn, tensor._output_nr
    accumulator = tensor._accumulator() if tensor._accumulator is not None else None
    return (accumulator, 0) if accumulator is not None else None


def run_order(root):
    """The autograd nodes below ``root`` (a tensor) in the order its backward runs them."""
    return engine.run_order([root.grad_fn]) if root.grad_fn is not None else []


def freed(order):
    """Whether a backward pass without ``retain_graph`` already freed these nodes' saved values."""
    return any(node.saved is None for node in order if type(node) is not AccumulateGrad)


@dataclass
class Use:
    """One use of a tensor in the forward pass: the op (autograd node) that consumed it, at
    which input, what that op's output received (``upstream``) and sent back (``sent``)."""

    node: object
    position: int
    upstream: list = field(default_factory=list)
    sent: np.ndarray = None

    @property
    def op(self):
        return self.node.op.__name__


class _Flows(observers.Observer):
    """Keeps what each node received and returned during one backward pass."""

    def __init__(self):
        self.received, self.returned = {}, {}

    def wants(self, kind):
        return kind == "node_backward"

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        self.received[node] = list(grad_outputs)
        self.returned[node] = list(grad_inputs)


def host(value):
    """A backend array, a NumPy scalar (what a NumPy reduction to 0-d gives) or a Tensor, as
    float64 NumPy; None stays None."""
    from ..backends import backend_of
    from ..tensor import Tensor
    if value is None or isinstance(value, Tensor):
        return None if value is None else as_numpy(value)
    try:
        backend_of(value)
    except TypeError:          # a NumPy scalar: no backend's array type
        return np.asarray(value, dtype=np.float64)
    return as_numpy(Tensor._make(value))


def gradients(loss, tensors, observer=None):
    """``autograd.grad(loss, tensors)`` for the tutor: the graph kept, nothing written into
    ``.grad``, each node's ``last_pass`` left as the user's passes set it, ``observer`` (an
    :class:`vizgrad.autograd.observers.Observer`) told of the pass."""
    from ..autograd import grad
    passes = [(node, node.last_pass) for node in run_order(loss)]
    detach = observers.attach(observer) if observer is not None else None
    try:
        return grad(loss, tensors, retain_graph=True, allow_unused=True)
    finally:
        if detach is not None:
            detach()
        for node, last in passes:
            node.last_pass = last


def reference(loss, tensors, who):
    """The right gradients of ``loss`` for ``tensors`` and the :class:`Use` list of each.

    Runs one backward pass that writes nothing into ``.grad`` (``autograd.grad`` with
    ``retain_graph=True``) and leaves each node's ``last_pass`` as it was. When a ``backward()`` already freed the graph, the gradients kept
    in ``.grad`` (leaves, ``retain_grad()``) are used instead, and the uses carry no
    gradients; ``who`` names the caller in errors."""
    order = run_order(loss)
    if not freed(order):
        flows = _Flows()
        wanted = [t for t in tensors if edge_of(t) is not None and t.requires_grad]
        found = gradients(loss, wanted, flows) if wanted else ()
        by_tensor = dict(zip(map(id, wanted), found))
        expected = [host(by_tensor.get(id(t))) for t in tensors]
        return expected, [_uses(t, order, flows) for t in tensors]
    expected = []
    for tensor in tensors:
        if tensor.grad is None:
            raise BackwardError(
                f"{who}: `loss.backward()` already freed the graph and this tensor (shape "
                f"{tuple(tensor.shape)}) kept no .grad to compare with: call {who} before backward(), run "
                "backward(retain_graph=True), or call retain_grad() on the intermediate tensors first")
        expected.append(as_numpy(tensor.grad))
    return expected, [_uses(t, order, None) for t in tensors]


def _uses(tensor, order, flows):
    edge = edge_of(tensor)
    uses = []
    if edge is None:
        return uses
    for node in order:
        for position, next_edge in enumerate(node.next_edges):
            if next_edge is not None and next_edge[0] is edge[0] and next_edge[1] == edge[1]:
                use = Use(node, position)
                if flows is not None and node in flows.returned:
                    use.upstream = [host(g) for g in flows.received[node]]
                    use.sent = host(flows.returned[node][position])
                uses.append(use)
    return uses


def positions(loss, tensors):
    """Each tensor's step in ``loss``'s backward order (when its gradient is complete), None
    for a tensor outside the graph."""
    steps = {node: index for index, node in enumerate(run_order(loss))}
    result = []
    for tensor in tensors:
        edge = edge_of(tensor)
        result.append(steps.get(edge[0]) if edge is not None else None)
    return result


def sizes(loss):
    """Every dimension of every shape in ``loss``'s graph."""
    found = set(loss.shape)
    for node in run_order(loss):
        for meta in getattr(node, "input_meta", None) or ():
            if meta is not None:
                found.update(meta[0])
    return found
