"""The backward engine: iterative, deterministic, and the same code for every order.

1. Discover the graph below the roots with an explicit stack, counting for each
   node how many edges point at it (no recursion: a chain of 100,000 ops is fine).
2. Run nodes whose count reached zero, latest-created first (a heap on the node
   id); a leaf's AccumulateGrad as soon as its count reaches zero, in the order of
   the edges that reach it, as PyTorch does (an accumulator lives as long as some
   graph holds it, so its id says nothing about the program). The order therefore
   depends only on the program, never on addresses or lifetimes: the visual layers
   replay it.
3. Each node's gradients go through, in this order: the tensor hooks of its
   outputs (``register_hook``, in registration order), ``retain_grad``, node
   pre-hooks, the op's backward, the one broadcasting helper and shape/dtype
   checks, node post-hooks; then into the buffers of the nodes below.
   At a leaf: its tensor hooks, then accumulation into ``.grad``, then its
   post-accumulate-grad hooks.

Gradients are arrays; under ``create_graph=True`` they are Tensors and every
backward runs with recording on, which is what makes gradients of gradients work.
"""

import itertools
import time
import weakref
from collections import deque
from heapq import heappop, heappush

from ..backends.base import _by_array_type as _ARRAY_TYPES, backend_for_device
from ..backends.sparse_kernels import CooArray
from ..errors import BackwardError, format_shape, ArgumentTypeError
from . import observers
from .names import pin_name
from . import function as _function
from .function import AccumulateGrad, _edge
from .grad_mode import state


class ReadyNodes:
    """The nodes whose count reached zero, in the order they run (see step 2 above): a
    leaf's AccumulateGrad first, in the order they became ready, then the latest created."""

    def __init__(self, nodes=()):
        self._heap = []
        self._accumulators = deque()
        for node in nodes:
            self.push(node)

    def push(self, node):
        if type(node) is AccumulateGrad:
            self._accumulators.append(node)
        else:
            heappush(self._heap, (-node.id, node))

    def pop(self):
        """The next node to run, or None when none is ready."""
        if self._accumulators:
            return self._accumulators.popleft()
        return heappop(self._heap)[1] if self._heap else None


class BackwardPass:
    """One run of the engine, as the graph views need to know it: ``number`` (counting
    from 1), ``call`` (``"backward"``, or ``"autograd.grad"`` when nothing is written
    into ``.grad``), weak references to its root tensors and the gradients it started from
    (``root_grads``: one array per root, None for one of more than ``ROOT_GRAD_KEPT``
    elements, which is not kept alive for a drawing). Every node the pass ran keeps it as
    ``node.last_pass``, so that a graph can tell its own pass from another's."""

    __slots__ = ("number", "call", "roots", "root_grads")
    _numbers = itertools.count(1)
    ROOT_GRAD_KEPT = 4096

    def __init__(self, call, roots, root_grads=()):
        self.number = next(self._numbers)
        self.call = call
        self.roots = tuple(weakref.ref(root) for root in roots)
        arrays = (getattr(grad, "_array", grad) for grad in root_grads)
        self.root_grads = tuple(array if getattr(array, "size", 1) <= self.ROOT_GRAD_KEPT else None
                                for array in arrays)

    def __repr__(self):
        return f"<BackwardPass {self.number}: {self.call}>"


def execute(roots, root_grads, retain_graph, create_graph, targets=None, accumulate=True):
    """Backpropagate ``root_grads`` from ``roots``.

    ``targets``: tensors to restrict the pass to (``backward(inputs=...)``,
    ``autograd.grad``). With ``accumulate=False`` nothing is written into any
    ``.grad``; the gradients reaching the targets are returned (None if unused).
    """
    started = time.perf_counter() if observers.active else 0.0
    if observers.active:
        observers.backward_started(roots)
    root_edges = [_edge(root) for root in roots]
    starts = []
    for node, _ in root_edges:
        if node not in starts:
            starts.append(node)
    dependencies = _discover(starts)

    captures = {}
    needed = None
    if targets is not None:
        for index, target in enumerate(targets):
            key = _edge(target) if target.grad_fn is not None or target._accumulator is not None else None
            if key is not None and key[0] in dependencies:
                captures.setdefault(key, []).append(index)
        needed = _needed_nodes(dependencies, {key[0] for key in captures})

    buffers = {}
    summed = None if create_graph else set()   # the buffer slots holding a sum this pass allocated
    owners = set()
    for root, (node, output_nr), grad in zip(roots, root_edges, root_grads):
        _add_to_buffer(buffers, node, output_nr, grad, summed)
        if not create_graph:
            owners.add(root._backend().memory_owner(grad))
    ready = ReadyNodes(node for node in starts if not dependencies[node])
    captured = [None] * len(targets) if targets is not None else None
    tensor_xp = tensor_namespace() if create_graph else None
    node_count = 0
    this_pass = BackwardPass("backward" if accumulate else "autograd.grad", roots, root_grads)
    previous_mode = state.grad_enabled
    state.grad_enabled = create_graph
    try:
        while (node := ready.pop()) is not None:
            grads = buffers.pop(node, None)
            node_count += 1
            results = None    # the gradients for the node's inputs, once it ran
            if grads is not None:
                if node.tensor_pre_hooks is not None:
                    grads = _run_tensor_hooks(node, grads, create_graph)
                if node.retained_grads is not None:
                    _retain_grads(node, grads, create_graph, owners)
                if captures:
                    for output_nr, grad in enumerate(grads):
                        for index in captures.get((node, output_nr), ()):
                            captured[index] = grad if create_graph or grad is None else _as_tensor(grad)
                if needed is None or (node in needed and (
                        any(edge is not None and edge[0] in needed for edge in node.next_edges)
                        or (accumulate and type(node) is AccumulateGrad))):
                    if type(node) is AccumulateGrad:
                        if accumulate:
                            node.last_pass = this_pass
                            _accumulate_leaf(node, grads[0], create_graph, owners, this_pass)
                    else:
                        node.last_pass = this_pass
                        results = _run_node(node, grads, create_graph, retain_graph, tensor_xp)
            for position, edge in enumerate(node.next_edges):
                if edge is not None:
                    child = edge[0]
                    if results is not None and results[position] is not None:
                        if child.output_meta is None and child not in buffers:   # (the commonest: a first gradient)
                            buffers[child] = [results[position]]
                        else:
                            _add_to_buffer(buffers, child, edge[1], results[position], summed)
                    left = dependencies[child] - 1
                    dependencies[child] = left
                    if left == 0 and (needed is None or child in needed):
                        ready.push(child)
    finally:
        state.grad_enabled = previous_mode
    if observers.active:
        observers.backward_finished(roots, node_count, time.perf_counter() - started)
    return captured


def _discover(starts):
    """Count, for every node reachable from ``starts``, the edges that point at it: the keys
    of the result are the reachable nodes."""
    dependencies = dict.fromkeys(starts, 0)
    stack = list(starts)
    while stack:
        for edge in stack.pop().next_edges:
            if edge is not None:
                child = edge[0]
                count = dependencies.get(child)
                if count is None:
                    dependencies[child] = 1
                    stack.append(child)
                else:
                    dependencies[child] = count + 1
    return dependencies


def run_order(roots, dependencies=None):
    """The nodes below ``roots`` in the order a full backward from them runs them (what a graph
    drawn after backward replays); ``dependencies`` is :func:`_discover`'s count, if known."""
    remaining = _discover(roots) if dependencies is None else dict(dependencies)
    ready, order = ReadyNodes(node for node in roots if not remaining[node]), []
    while (node := ready.pop()) is not None:
        order.append(node)
        for edge in node.next_edges:
            if edge is not None:
                remaining[edge[0]] -= 1
                if remaining[edge[0]] == 0:
                    ready.push(edge[0])
    return order


def _needed_nodes(dependencies, target_nodes):
    """The nodes on some path from a root to a target (found in reverse topological order)."""
    order = run_order([node for node, count in dependencies.items() if not count], dependencies)
    needed = set()
    for node in reversed(order):
        if node in target_nodes or any(edge is not None and edge[0] in needed for edge in node.next_edges):
            needed.add(node)
    return needed


def _add_to_buffer(buffers, node, output_nr, grad, summed):
    """Add ``grad`` to what ``node``'s output ``output_nr`` has received so far. The first
    gradient is kept as it came (it may be another edge's too: Add passes one array to both
    inputs); the second makes a new sum, which later ones are added into in place: nobody
    else sees that array before the node runs (``summed``: the slots holding such a sum; None
    when recording a graph of the backward, whose gradients are Tensors)."""
    slots = buffers.get(node)
    if slots is None:
        count = len(node.output_meta) if node.output_meta is not None else 1
        slots = buffers[node] = [None] * count
    previous = slots[output_nr]
    if previous is None:
        slots[output_nr] = grad
    elif summed is None:
        slots[output_nr] = previous + grad
    elif (node, output_nr) in summed and previous.shape == grad.shape and previous.dtype == grad.dtype \
            and type(grad) is type(previous):    # (not a sparse gradient into a dense sum)
        previous += grad          # (a NumPy scalar, from 0-d sums, is rebound rather than written)
        slots[output_nr] = previous
    else:
        slots[output_nr] = _sum(previous, grad)
        summed.add((node, output_nr))


def _sum(a, b):
    """``a + b``, where a sparse gradient (a CooArray) adds itself: not every array library
    hands ``dense + sparse`` over to it."""
    return b + a if type(b) is CooArray else a + b


def _run_node(node, grads, create_graph, retain_graph, tensor_xp):
    """Run one node's backward: its hooks, the op's backward, and the checks that bring each
    gradient to its input's shape and dtype. Returns one gradient (or None) per input edge."""
    op = node.op
    custom = op.takes_tensors
    # any(... is None), not `None in grads`: `in` compares arrays elementwise and raises
    if node.output_meta is not None and any(g is None for g in grads):
        grads = _materialize(node, grads, create_graph)
    if custom and not create_graph:
        grads = [_as_tensor(g) for g in grads]
    if node.pre_hooks is not None:
        grads = _run_node_pre_hooks(node, grads, create_graph)
    observed = observers.active
    started = time.perf_counter() if observed else 0.0
    if create_graph or custom:
        node._unpack_tensors = True
        if create_graph:
            node.xp = tensor_xp
        try:
            results = op.backward(node, *grads)
        finally:
            node._unpack_tensors = False
            node.xp = node.backend.xp
    else:
        results = op.backward(node, *grads)
    if type(results) is not tuple:   # a user's Function returns a tuple, or one gradient (a list is one, as in PyTorch)
        results = tuple(results) if isinstance(results, list) and not custom else (results,)
    edges = node.next_edges
    if len(results) != len(edges):
        if len(results) > len(edges) and all(extra is None for extra in results[len(edges):]):
            results = results[:len(edges)]    # trailing Nones are dropped, as PyTorch does
    if len(results) != len(edges):
        raise BackwardError(
            f"{op.__name__}.backward returned {len(results)} gradient{'s' if len(results) != 1 else ''} "
            f"but forward took {len(edges)} argument{'s' if len(edges) != 1 else ''}: return one "
            "gradient (or None) per forward argument.")
    results = list(results)
    for position, meta in enumerate(node.input_meta):
        grad = results[position]
        if grad is None:
            continue
        if meta is None:    # the input needs no gradient
            if custom and not node.tensor_inputs[position]:
                raise BackwardError(f"{op.__name__}.backward returned a gradient (not None) for input {position}, "
                                    "but that forward input was not a Tensor: return None there.")
            results[position] = None
            continue
        if custom and not create_graph:
            grad = _unwrap_custom_gradient(node, position, grad)
        shape, dtype = meta
        if grad.shape != shape or (grad._array if create_graph else grad).dtype != dtype:
            grad = _conform(node, position, grad, shape, dtype, create_graph)
        results[position] = grad
    if node.post_hooks is not None:
        results = _run_node_post_hooks(node, results, grads, create_graph)
    if state.anomaly_enabled and state.anomaly_check_nan:
        _check_finite(node, results, create_graph)
    if observed:
        observers.node_backward(node, grads, results, time.perf_counter() - started)
    if not retain_graph and node.saved:
        pin_name(node)                           # a name read from saved values outlives them
        node.saved = node.saved_sources = None   # freed: saved_tensors raises from now on
    return results


def _unwrap_custom_gradient(node, position, grad):
    if not isinstance(grad, _function.Tensor):
        raise BackwardError(
            f"{node.op.__name__}.backward returned a {type(grad).__name__} as the gradient of "
            f"input {position}; return a Tensor or None.")
    return grad._array


def _conform(node, position, grad, shape, dtype, create_graph):
    """Bring one returned gradient to its input's shape and dtype, or say what is wrong."""
    xp = tensor_namespace() if create_graph else node.xp
    if grad.shape != shape:
        if not node.op.broadcasts:
            raise BackwardError(
                f"{node.op.__name__}.backward returned a gradient of shape {format_shape(grad.shape)} "
                f"for input {position}, whose shape is {format_shape(shape)}.")
        grad = sum_to_shape(grad, shape, xp, node)
    raw = grad._array if create_graph else grad
    if raw.dtype != dtype:
        grad = xp.astype(grad, dtype)
    return grad


def sum_to_shape(grad, shape, xp, node=None):
    """Undo broadcasting: sum ``grad`` over the axes along which an input of ``shape`` was
    broadcast (the leading axes it lacked, and its size-1 axes). This is the only place that
    does it."""
    lead = len(grad.shape) - len(shape)
    if lead < 0 or grad.shape[lead:] != shape:   # not only leading axes added (as for a bias)
        ones = []    # the input's size-1 axes along which the gradient was broadcast
        for axis, n in enumerate(shape, start=lead):
            if lead < 0 or n != 1 and n != grad.shape[axis]:
                where = f"{node.op.__name__}.backward" if node is not None else "a backward"
                raise BackwardError(f"{where} returned a gradient of shape {format_shape(grad.shape)} that "
                                    f"cannot be summed to its input's shape {format_shape(shape)}.")
            if n == 1 and grad.shape[axis] != 1:
                ones.append(axis)
        grad = xp.sum(grad, axis=tuple(ones), keepdims=True)
    if lead:
        grad = xp.sum(grad, axis=tuple(range(lead)))
    return grad


def tensor_namespace():
    """The Array API names over Tensors, used by backwards under ``create_graph=True``."""
    from ..ops import tensor_namespace as namespace  # lazy: the ops and creation build on autograd
    return namespace


def _accumulate_leaf(node, grad, create_graph, owners, this_pass):
    leaf = node.variable
    if leaf._hooks:
        grad = _run_hooks(leaf._hooks, grad, create_graph, leaf.name or f"leaf {leaf.uid}")
    before = leaf._grad
    _store_grad(leaf, grad, create_graph, owners)
    _record_grad(leaf, before, this_pass)


def _record_grad(leaf, before, this_pass):
    """Note on ``leaf`` which pass wrote its ``.grad`` and how many passes it sums: one more
    than before when the pass added to the ``.grad`` the previous pass left, untouched since
    (the graph views label a gradient that is not one pass's alone)."""
    record = leaf._grad_record
    summed = before is not None and record is not None and record[2] is before and before._version == record[3]
    grad = leaf._grad
    leaf._grad_record = (this_pass, record[1] + 1 if summed else 1, grad, grad._version)
    if leaf._post_accumulate_hooks:
        for hook in list(leaf._post_accumulate_hooks.values()):
            hook(leaf)


def _store_grad(tensor, grad, create_graph, owners):
    """Add ``grad`` into ``tensor.grad``; the first gradient is stored without a copy when
    no other tensor can see its buffer."""
    first = tensor._grad is None
    if create_graph:
        tensor._grad = grad if first else tensor._grad + grad
    elif first:
        backend = tensor._backend()
        # (a sparse gradient, sparse.mm's, is kept: a CooArray is never written in place)
        if type(grad) is not CooArray and (
                type(grad) is not backend.array_type or not backend.owns_memory(grad) or id(grad) in owners):
            grad = backend.xp.asarray(grad, copy=True)   # a NumPy scalar, a view, or seen by another tensor
        owners.add(id(grad))     # (an array that owns its memory is its own memory owner)
        tensor._grad = _function.Tensor._make(grad)
    else:
        tensor._grad = _as_tensor(_sum(tensor._grad._array, grad))
    if observers.active:
        observers.grad_accumulated(tensor, first)


def _retain_grads(node, grads, create_graph, owners):
    for output_nr, ref in list(node.retained_grads.items()):
        tensor = ref()
        if tensor is not None and grads[output_nr] is not None:
            _store_grad(tensor, grads[output_nr], create_graph, owners)


def _run_tensor_hooks(node, grads, create_graph):
    grads = list(grads)
    for output_nr, hooks in node.tensor_pre_hooks.items():
        if hooks and grads[output_nr] is not None:
            grads[output_nr] = _run_hooks(hooks, grads[output_nr], create_graph, f"{node.name()} output {output_nr}")
    return grads


def _run_hooks(hooks, grad, create_graph, label):
    """Call tensor hooks in registration order; a hook may return a replacement gradient."""
    Tensor = _function.Tensor
    value = grad if create_graph else _as_tensor(grad)
    for hook in list(hooks.values()):
        result = hook(value)
        if observers.active:
            observers.notify("hook_ran", "tensor", label)
        if result is not None:
            if not isinstance(result, Tensor):
                raise ArgumentTypeError(f"a tensor hook returned a {type(result).__name__}; "
                                        "it must return a Tensor or None")
            if result.shape != value.shape:
                raise BackwardError(f"a tensor hook returned a gradient of shape {format_shape(result.shape)} "
                                    f"for a tensor of shape {format_shape(value.shape)}")
            if result.dtype is not value.dtype or result.device != value.device:
                raise BackwardError(f"a tensor hook returned a gradient of dtype {result.dtype.name} on {result.device} "
                                    f"for a gradient of dtype {value.dtype.name} on {value.device}: a hook may not "
                                    "change the gradient's dtype or device")
            value = result
    return value if create_graph else value._array


def _run_node_pre_hooks(node, grads, create_graph):
    wrap = not create_graph and not node.op.takes_tensors
    values = tuple(_as_tensor(g) if wrap else g for g in grads)
    for hook in list(node.pre_hooks.values()):
        result = hook(values)
        if result is not None:
            values = _hook_result(node, "pre-hook", result, len(values))
    return [v._array if wrap and v is not None else v for v in values]


def _run_node_post_hooks(node, results, grads, create_graph):
    wrap = not create_graph
    inputs = tuple(_as_tensor(g) if wrap else g for g in results)
    outputs = tuple(_as_tensor(g) if wrap else g for g in grads)
    for hook in list(node.post_hooks.values()):
        result = hook(inputs, outputs)
        if result is not None:
            inputs = _hook_result(node, "hook", result, len(inputs))
    return [v._array if wrap and v is not None else v for v in inputs]


def _hook_result(node, kind, result, count):
    """A node hook's replacement gradients as a tuple, checked to be one per slot."""
    result = tuple(result)
    if len(result) != count:
        raise BackwardError(f"a {kind} of {node.name()} returned {len(result)} gradients; it must return "
                            f"{count} (one per {'output' if kind == 'pre-hook' else 'input'}, None allowed) or None")
    return result


def _materialize(node, grads, create_graph):
    """Zeros for outputs that received no gradient (a custom Function expects all of them)."""
    xp = node.backend.xp
    filled = []
    for grad, (shape, dtype) in zip(grads, node.output_meta):
        if grad is None:
            grad = xp.zeros(shape, dtype=dtype)
            if create_graph:
                grad = _as_tensor(grad)
        filled.append(grad)
    return filled


def _check_finite(node, results, create_graph):
    for position, grad in enumerate(results):
        if grad is None:
            continue
        raw = grad._array if create_graph else grad
        xp = node.backend.xp
        if not bool(xp.all(xp.isfinite(raw))):
            kind = "nan" if bool(xp.any(xp.isnan(raw))) else "inf"
            message = (f"{node.name()} returned {kind} values in its gradient for input {position} "
                       f"(shape {format_shape(raw.shape)}).")
            if node.created_at:
                from .anomaly import format_creation
                message += " " + format_creation(node)
            raise BackwardError(message)


def _as_tensor(array):
    if array is None or isinstance(array, _function.Tensor):
        return array
    if type(array) not in _ARRAY_TYPES:
        # NumPy returns NumPy scalars, not 0-d arrays, from arithmetic on 0-d arrays (so a
        # backward may too); a Tensor must hold an array. Only NumPy, the cpu backend, does this.
        array = backend_for_device("cpu").xp.asarray(array)
    return _function.Tensor._make(array)
