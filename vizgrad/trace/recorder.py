"""Recording events into the graph model: ``vizgrad.trace()`` and ``vizgrad.graph(tensor)``.

The :class:`Recorder` subscribes to the event bus and builds a :class:`Graph` of the
ops it sees. In a training loop each iteration (forward, backward, step) becomes
one graph: when ops arrive after a finished backward, the graph starts afresh and
the finished one stays available as ``last_graph``. Optimizer steps and marks go
into a history of at most ``max_steps`` entries. The recorder keeps statistics,
never tensors: releasing your tensors frees their memory.
"""

import functools
import math
import os
import sys
from collections import deque

import numpy as np

from .. import events
from .graph import Graph, GraphEdge, GraphNode, shape_text
from .groups import Hierarchy

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXAMPLE_FILES = frozenset({"cli.py"})     # vizgrad's own programs (the demo): their lines are the user's code
_FUNCTIONAL = os.path.join("nn", "functional.py")
_METHOD_FILES = frozenset({"_tensor_methods.py", "tensor.py"})
BACKWARD_NOTE = ("loss.backward() ran outside vizgrad.trace(): the order is the one the engine follows, and only "
                 "the gradients that were kept are shown (leaves' .grad, tensors that called retain_grad()). "
                 "Run the forward and backward inside `with vizgrad.trace() as tr:` to record every gradient.")


SAMPLE_SIZE = 6      # values kept of every tensor (the first ones, flattened)
SUMMARY_KEYS = ("shape", "mean", "norm", "min", "max", "nan_count", "inf_count", "sample")   # of summary_dict
MATRIX_SIZE = 16     # a 2-D tensor keeps at most this many of its rows and columns


def stats_dict(tensor, bins=16, detail=True):
    """:func:`vizgrad.events.tensor_stats` as JSON-ready data (non-finite numbers become None).

    With ``detail``, also ``sample`` (the first :data:`SAMPLE_SIZE` values, flattened) and,
    for 2-D tensors, ``matrix``: at most :data:`MATRIX_SIZE` evenly spaced rows and columns
    of the values (``matrix_rows`` / ``matrix_cols`` say which), for heatmaps.
    """
    host = events.host_values(tensor)
    data = events.tensor_stats(host, bins).to_dict()
    for key in ("mean", "std", "min", "max", "norm"):
        if not math.isfinite(data[key]):
            data[key] = None
    if detail:
        data["sample"] = _finite_list(host.flat[:SAMPLE_SIZE])
        if host.ndim == 2 and host.size:
            rows, cols = _spaced(host.shape[0]), _spaced(host.shape[1])
            data["matrix"] = _heatmap(host.take(rows, axis=0).take(cols, axis=1))
            data["matrix_rows"], data["matrix_cols"] = rows.tolist(), cols.tolist()
    return data


def summary_dict(tensor):
    """Cheap statistics of a gradient (what an edge of the graph records): shape, mean, norm,
    min, max, NaN/inf counts and ``sample``; no histogram, and vectorised sums instead of
    a float64 copy when every value is finite. Non-finite statistics become None."""
    values = events.host_values(tensor)
    flat = events.float_values(values)
    with np.errstate(over="ignore", invalid="ignore"):   # overflow is handled below
        total, squares = events.block_sums(flat)
    nan_count = inf_count = 0
    finite = flat
    if not math.isfinite(squares):
        finite, nan_count, inf_count = events.split_finite(flat)
        finite = finite.astype(np.float64)           # float64: finite values whose squares overflowed float32
        total, squares = events.block_sums(finite)
    if finite.size:
        summary = [total / finite.size, math.sqrt(squares), float(finite.min()), float(finite.max())]
    else:
        summary = [math.nan] * 4
    mean, norm, low, high = (value if math.isfinite(value) else None for value in summary)
    return {"shape": list(values.shape), "mean": mean, "norm": norm, "min": low, "max": high,
            "nan_count": nan_count, "inf_count": inf_count, "sample": _finite_list(flat[:SAMPLE_SIZE])}


def _raw(value):
    """A Tensor's backend array (or the array itself)."""
    return getattr(value, "_array", value)


@functools.lru_cache(maxsize=256)
def _spaced(length):
    """At most MATRIX_SIZE evenly spaced indices of ``range(length)``, first and last included."""
    indices = np.unique(np.linspace(0, length - 1, min(length, MATRIX_SIZE)).round().astype(np.int64))
    indices.flags.writeable = False     # shared by every caller
    return indices


def _heatmap(cells):
    """``cells`` as nested lists of floats rounded to about four significant digits of the
    largest size (short JSON; a heatmap shows no more), None where not finite."""
    cells = np.asarray(cells, dtype=np.float64)
    finite = np.isfinite(cells)
    every = finite.all()
    largest = float(np.abs(cells if every else np.where(finite, cells, 0.0)).max())
    if largest > 1e-300:          # not subnormal: 10**decimals stays finite
        cells = np.round(cells, 3 - math.floor(math.log10(largest)))
    return cells.tolist() if every else np.where(finite, cells, None).tolist()


def _finite_list(values):
    """``values`` as a list of floats, None where not finite."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    return values.tolist() if finite.all() else np.where(finite, values, None).tolist()


@functools.lru_cache(maxsize=1024)
def _role(filename):
    """What a frame's file is to the recorder: ``"user"`` (the user's code, and vizgrad's
    demo), ``"op"`` (vizgrad's op functions), ``"method"`` (the Tensor methods and operators
    that call them) or ``"library"`` (the rest of vizgrad, and Python's frozen modules such
    as runpy)."""
    if filename.startswith("<frozen"):
        return "library"
    path = os.path.abspath(filename)
    if not path.startswith(_PACKAGE_DIR + os.sep):
        return "user"
    relative = path[len(_PACKAGE_DIR) + 1:]
    if relative in _EXAMPLE_FILES:
        return "user"
    if relative.startswith("ops" + os.sep) or relative == _FUNCTIONAL:
        return "op"
    return "method" if relative in _METHOD_FILES else "library"


def _call_site(frame, source):
    """Where the op being recorded comes from, walking out from ``frame``: the user's line
    (``{"file", "line", "code"}``, when ``source``), and the op functions that applied it:
    ``(outermost frame, positions, nested)``, or None. A composite function such as
    ``cross_entropy`` applies several ops from one call; ``nested`` says the op was applied
    by an op function that another one called (a composite's own work)."""
    outer, positions, functions, closed = None, [], 0, False
    while frame is not None:
        role = _role(frame.f_code.co_filename)
        if role == "user":
            break
        if role in ("op", "method") and not closed:
            outer = frame
            positions.append(frame.f_lasti)
            functions += role == "op"
        elif outer is not None:
            closed = True
        frame = frame.f_back
    line = None
    if source and frame is not None:
        import linecache
        filename = frame.f_code.co_filename
        line = {"file": filename, "line": frame.f_lineno, "code": linecache.getline(filename, frame.f_lineno).strip()}
    return line, (None if outer is None else (outer, tuple(reversed(positions)), functions > 1))


def _leaf_kind(tensor):
    """parameter, leaf (requires grad) or constant (neither)."""
    from ..nn.module import Parameter
    if isinstance(tensor, Parameter):
        return "parameter"
    return "leaf" if tensor.requires_grad else "constant"


def _leaf_label(tensor, kind):
    """A leaf's label: its name, a scalar constant's value, else "input" and its shape (data the
    graph reads, whether or not it requires grad: the node's kind says which)."""
    if tensor.name:
        return tensor.name
    if kind == "constant" and tensor.ndim == 0:
        return _number_text(tensor.item())
    return f"input {shape_text(tensor.shape)}"


def _number_text(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def tensors_by_name(namespace):
    """``(name, tensor)`` for the tensors among a namespace's values (a frame's locals),
    private names (``_``, ``_3``) left out, and the modules found there by qualified name
    (every submodule; a top-level module that owns parameters itself under its variable's
    name, as ``rnn_cell``)."""
    from ..nn.module import Module
    from ..tensor import Tensor
    tensors, modules = [], {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, Tensor):
            tensors.append((name, value))
        elif isinstance(value, Module):
            for _, module in value.named_modules():
                path = module._qualified_name or (name if module._parameters or module._buffers else "")
                if path:
                    modules.setdefault(path, module)
    return tensors, modules


class Recorder:
    """Builds graphs from events. Use :func:`vizgrad.trace` rather than creating one directly.

    Args:
        values: record value statistics of every tensor (costs a host copy per op).
        grads: record gradient statistics after backward.
        source: record the user's source line that created each op.
        max_steps: how many optimizer steps and marks to keep.
        max_nodes: a graph stops growing (and is marked ``truncated``) past this many nodes.
    """

    KINDS = frozenset({"op", "backward_start", "node_backward", "grad_accumulated", "backward_end",
                       "optimizer_step", "mark", "module_forward"})   # the events it records (no others get made for it)

    def __init__(self, values=True, grads=True, source=True, max_steps=300, max_nodes=5000):
        self.values, self.grads, self.source = values, grads, source
        self.max_nodes = max_nodes
        self.steps = deque(maxlen=max_steps)
        self.graph = Graph()
        self._last = None          # the previous iteration's graph, and its groups until they are applied
        self._ids = {}             # tensor uid -> graph node id
        self._autograd_nodes = {}  # autograd Node id -> graph node id
        self._outputs = {}         # (autograd Node id, output number) -> graph node id
        self._inputs = {}          # graph node id -> its input edges that carry a gradient, in order
        self._consumers = {}       # graph node id -> how many of those edges leave it
        # graph node id -> (gradient, its stats) that its only consumer passed on, held until
        # the node's own event (at most until backward ends)
        self._passed = {}
        self._backward_done = False
        self._subscription = None
        self._hierarchy = Hierarchy()
        self._call = None          # (key, positions, its first op's nodes, group key) of the composite call under way
        self._in_backward = False
        self.records_forward = True   # False: only the backward passes of the graph it has (see from_tensor)

    @classmethod
    def from_tensor(cls, tensor, forward=True, names=None, **options):
        """A recorder that starts from ``tensor``'s autograd history (as :func:`graph` draws
        it) and records what happens next: with ``forward=False`` only the backward passes
        of that history (what a view of one tensor follows), else every new op too. Not
        started (see :meth:`start`); ``names`` as for :func:`graph`."""
        from ..autograd.function import AccumulateGrad
        recorder = cls(**options)
        recorder.records_forward = forward
        recorder.graph, ids, recorder._hierarchy = _history(tensor, recorder.values, names)
        if tensor.grad_fn is None:                   # a lone leaf
            recorder._ids[tensor.uid] = recorder.graph.nodes[0].id
        for node, node_id in ids.items():
            if type(node) is AccumulateGrad:
                recorder._ids[node.variable.uid] = node_id
            elif not isinstance(node, tuple):
                recorder._autograd_nodes[node.id] = node_id
                recorder._outputs[(node.id, 0)] = node_id
        if tensor.grad_fn is not None:
            recorder._ids[tensor.uid] = ids[tensor.grad_fn]
        for edge in recorder.graph.edges:
            recorder._add_gradient_edge(edge)
        return recorder

    # --- lifecycle -----------------------------------------------------------
    def start(self):
        if self._subscription is None:
            self._subscription = events.subscribe(self.handle, kinds=self.KINDS)
        return self

    def close(self):
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def in_backward(self):
        """Whether a backward pass it records is under way."""
        return self._in_backward

    @property
    def graphs(self):
        """The finished graph of the previous iteration (if any) and the current one."""
        return [g for g in (self.last_graph, self.result()) if g is not None]

    @property
    def last_graph(self):
        """The finished graph of the previous iteration, or None."""
        if self._last is None:
            return None
        graph, hierarchy = self._last
        if hierarchy is not None:            # its groups are worked out when it is looked at
            self._finish(graph, hierarchy)
            self._last = (graph, None)
        return graph

    # --- events --------------------------------------------------------------
    def handle(self, event):
        """Record one event (what the subscription calls; a caller that manages its own
        subscription, such as a live widget, may feed events here instead of :meth:`start`)."""
        handler = getattr(self, "_on_" + event.kind, None)
        if handler is not None:
            handler(event)

    _on_event = handle

    def _new_iteration(self):
        self.graph.steps = list(self.steps)
        self._last = (self.graph, self._hierarchy if self.records_forward else None)
        self.graph = Graph()
        self._ids = {}
        self._autograd_nodes = {}
        self._outputs = {}
        self._inputs = {}
        self._consumers = {}
        self._passed = {}
        self._backward_done = False
        self._hierarchy = Hierarchy(self._hierarchy.described)     # modules keep their labels
        self._call = None

    def _add_gradient_edge(self, edge):
        self._inputs.setdefault(edge.target, []).append(edge)
        self._consumers[edge.source] = self._consumers.get(edge.source, 0) + 1

    def _node_for(self, tensor, kind):
        if tensor.grad_fn is not None:
            # An op result is known by its place in the autograd graph, not only by its Tensor
            # object: an in-place op hands the old value to the op as a private copy, and the
            # changed tensor takes the op's result's history.
            node_id = self._outputs.get((tensor.grad_fn.id, tensor._output_nr))
            if node_id is not None:
                return node_id
        uid = tensor.uid
        node_id = self._ids.get(uid)
        if node_id is not None:
            return node_id
        if len(self.graph.nodes) >= self.max_nodes:
            self.graph.truncated = True
            return None
        node_id = f"n{len(self.graph.nodes)}"
        self._ids[uid] = node_id
        if kind == "leaf":
            kind = _leaf_kind(tensor)
        self.graph.nodes.append(GraphNode(
            id=node_id, kind=kind, label=_leaf_label(tensor, kind) if kind != "op" else "", name=tensor.name,
            shape=list(tensor.shape), dtype=tensor.dtype.name, device=str(tensor.device),
            requires_grad=bool(tensor.requires_grad),
            value=stats_dict(tensor) if self.values or not tensor.ndim else None))
        return node_id

    def _constant_node(self, number):
        """A node for a Python number an op was given (``2`` in ``x * 2``)."""
        if len(self.graph.nodes) >= self.max_nodes:
            self.graph.truncated = True
            return None
        node_id = f"n{len(self.graph.nodes)}"
        self.graph.nodes.append(GraphNode(
            id=node_id, kind="constant", label=_number_text(number), shape=[], dtype=type(number).__name__,
            value=stats_dict(np.asarray(number, dtype=np.float64))))
        return node_id

    def _group_of_op(self, event, call, node_id, numbers):
        """The group key of the op result ``node_id`` (and of the ``numbers`` it was given):
        its composite call's, else its module's."""
        hierarchy = self._hierarchy
        module = hierarchy.modules.get(event.module) if event.module else None
        if call is None:
            self._call = None
            return module
        outer, positions, _ = call
        caller = outer.f_back
        key = (id(outer), id(caller), caller.f_lasti if caller is not None else -1)
        current = self._call
        if current is not None and current[0] == key and positions > current[1]:
            group = current[3]
            if group is None:         # the call's second op: now it is a composite, with its own group
                group = hierarchy.function_group(outer.f_code.co_name, module)
                for first in current[2]:
                    hierarchy.members[first] = group
            self._call = (key, positions, current[2], group)
            return group
        self._call = (key, positions, (node_id, *numbers), None)
        return module

    def _on_op(self, event):
        if self._in_backward or not self.records_forward:
            return      # ops a backward runs (a custom Function's backward, create_graph) are no forward history
        site, call = _call_site(sys._getframe(2), self.source)
        if call is not None and call[2] and event.node_id is None and event.dtype == "bool":
            return      # a composite's check of its arguments: its result, if used, shows as a constant
        if self._backward_done:
            self._new_iteration()
        arguments = event.arguments if event.arguments is not None else event.inputs
        inputs = []      # (argument position, its node id, its shape, whether it carries a gradient)
        numbers = []     # the nodes of the Python numbers among them
        for position, value in enumerate(arguments):
            if hasattr(value, "_array"):
                inputs.append((position, self._node_for(value, "leaf"), list(value.shape), value.requires_grad))
            elif type(value) in (int, float):
                number_id = self._constant_node(value)
                inputs.append((position, number_id, [], False))
                if number_id is not None:
                    numbers.append(number_id)
        group = None
        grouped = False
        for output_nr, output in enumerate(event.outputs):
            if output.uid in self._ids:
                continue
            node_id = self._node_for(output, "op")
            if node_id is None:
                return
            node = self.graph.nodes[-1]
            node.op = event.op
            node.label = output.name or event.op
            node.module = event.module
            node.source = site
            if not grouped:
                group, grouped = self._group_of_op(event, call, node_id, numbers), True
                if group is not None:       # the numbers the op was given are drawn beside it
                    for number_id in numbers:
                        self._hierarchy.members[number_id] = group
            if group is not None:
                self._hierarchy.members[node_id] = group
            for position, source_id, shape, carries_grad in inputs:
                if source_id is not None:
                    edge = GraphEdge(source_id, node_id, position, shape)
                    self.graph.edges.append(edge)
                    if carries_grad:
                        self._add_gradient_edge(edge)
            if event.node_id is not None:
                self._outputs[(event.node_id, output_nr)] = node_id
                if output_nr == 0:
                    self._autograd_nodes[event.node_id] = node_id

    def _on_module_forward(self, event):
        if event.phase == "enter" and event.path and event.instance is not None and self.records_forward:
            if self._backward_done:
                self._new_iteration()
            self._hierarchy.module_group(event.instance, event.path)

    def _on_backward_start(self, event):
        self._in_backward = True
        if not self.records_forward:      # a view of one tensor: only a backward of its own graph
            if not any(uid in self._ids for uid in event.root_ids):
                self._in_backward = False
                return
            self._reset_backward()
            self.graph.backward = {"source": "recorded", "note": None}
        for uid in event.root_ids:
            node_id = self._ids.get(uid)
            if node_id is not None:
                node = self.graph.node(node_id)
                if node.kind == "op":
                    node.kind = "output"

    def _on_node_backward(self, event):
        if not self._in_backward:
            return
        node_id = self._autograd_nodes.get(event.node_id)
        if node_id is None:
            return
        node = self.graph.node(node_id)
        node.backward_index = len(self.graph.backward_order)
        self.graph.backward_order.append(node_id)
        if self.grads and event.grad_outputs and event.grad_outputs[0] is not None:
            node.grad = self._grad_stats(node_id, event.grad_outputs[0])
        if self.grads and event.grads:
            # the gradient each input received from this node (the chain rule's outgoing
            # part); the non-None gradients belong, in order, to the inputs that need one
            edges = self._inputs.get(node_id, ())
            grads = [grad for grad in event.grads if grad is not None]
            if len(grads) == len(edges):
                for edge, grad in zip(edges, grads):
                    if self._consumers[edge.source] == 1:
                        # most likely this very array becomes the input's gradient: its full
                        # statistics now serve the edge here and the input later
                        stats = stats_dict(grad)
                        self._passed[edge.source] = (grad, stats)
                        edge.grad = {key: stats[key] for key in SUMMARY_KEYS}
                    else:
                        edge.grad = summary_dict(grad)

    def _grad_stats(self, node_id, grad):
        """Statistics of the gradient of node ``node_id``, reused when it is the very array (by
        identity: the engine never changes a gradient in place) its only consumer passed on."""
        passed, stats = self._passed.pop(node_id, (None, None))
        return stats if passed is not None and _raw(passed) is _raw(grad) else stats_dict(grad)

    def _on_grad_accumulated(self, event):
        if not self._in_backward:
            return
        node_id = self._ids.get(event.tensor_id)
        if node_id is None:
            return
        node = self.graph.node(node_id)
        if node.backward_index is None:
            node.backward_index = len(self.graph.backward_order)
            self.graph.backward_order.append(node_id)
        if self.grads and event.tensor is not None and event.tensor.grad is not None:
            node.grad = self._grad_stats(node_id, event.tensor.grad)

    def _on_backward_end(self, event):
        self._in_backward = False
        self._backward_done = self.records_forward
        self._passed = {}

    def _reset_backward(self):
        """Forget a previous backward pass (a view of one tensor shows its latest)."""
        self.graph.backward_order = []
        for node in self.graph.nodes:
            node.backward_index = None

    def _on_optimizer_step(self, event):
        self.steps.append({"kind": "optimizer_step", "optimizer": event.optimizer, "step": event.step,
                           "params": [_param_step(p) for p in event.params]})

    def _on_mark(self, event):
        self.steps.append({"kind": "mark", "name": event.name,
                           "values": {k: _json_number(v) for k, v in event.values.items()}})

    def result(self):
        """The graph of the current iteration, with the step history and its groups attached."""
        graph = self.graph
        graph.steps = list(self.steps)
        if self.records_forward:
            self._finish(graph, self._hierarchy)
        return graph

    @staticmethod
    def _finish(graph, hierarchy):
        hierarchy.apply(graph)
        graph.backward = {"source": "recorded" if graph.backward_order else None, "note": None}

    def name_nodes(self, namespace):
        """Label the nodes of tensors found in ``namespace`` (a frame's locals) that have no
        name of their own with the variable's name (``loss``, ``h``)."""
        tensors, _ = tensors_by_name(namespace)
        for name, tensor in tensors:
            node_id = None
            if tensor.grad_fn is not None:
                node_id = self._outputs.get((tensor.grad_fn.id, tensor._output_nr))
            if node_id is None:
                node_id = self._ids.get(tensor.uid)
            if node_id is not None:
                node = self.graph.node(node_id)
                if node.name is None and node.label in (node.op, _leaf_label(tensor, node.kind)):
                    node.label = name


def _json_number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def _param_step(step):
    return {"name": step.name, "lr": step.lr, "grad_norm": _json_number(step.grad_norm),
            "update_norm": _json_number(step.update_norm), "param_norm": _json_number(step.param_norm),
            "update_ratio": _json_number(step.update_ratio),
            "state": {k: _json_number(v) for k, v in step.state.items()}}


class trace:
    """Record the ops run inside the block into a :class:`Graph`.

    Example::

        with vizgrad.trace() as tr:
            loss = ((w * x).sum() - 1) ** 2
            loss.backward()
        tr.graph.to_html("graph.html")
    """

    def __init__(self, values=True, grads=True, source=True, max_steps=300, max_nodes=5000):
        self.recorder = Recorder(values, grads, source, max_steps, max_nodes)

    def __enter__(self):
        self.recorder.start()
        return self

    def __exit__(self, *exc):
        self.recorder.close()
        self.recorder.name_nodes(sys._getframe(1).f_locals)    # the block's variables name its nodes
        return False

    @property
    def graph(self):
        """The graph of the latest iteration (the one with a backward pass if the last
        iteration only ran forward ops)."""
        return self.recorder.result()

    @property
    def steps(self):
        return list(self.recorder.steps)


def graph(tensor, values=True, names=None):
    """The :class:`Graph` of ``tensor``'s autograd history, without a trace (as torchviz
    draws it). Inputs that do not require grad are not part of the history and do not
    appear; shapes come from what each op recorded.

    After ``tensor.backward()`` the graph carries that backward pass to replay
    (``backward["source"] == "graph"``): the order in which the engine ran it, derived from
    the graph, with the gradients that were kept (leaves' ``.grad``, retained gradients).

    Args:
        values: record value statistics of the leaves and of ``tensor``.
        names: a namespace (e.g. ``locals()``) whose tensors name the nodes they became and
            whose modules give the groups their types (``Linear(784→512)``); without one,
            groups come from the parameters' qualified names only.
    """
    return _history(tensor, values, names)[0]


def _history(tensor, values, names=None):
    """:func:`graph`, which graph node id each autograd node became, and its groups."""
    from ..autograd.function import AccumulateGrad
    result = Graph()
    ids = {}

    def add(key, **fields):
        node_id = f"n{len(result.nodes)}"
        ids[key] = node_id
        result.nodes.append(GraphNode(id=node_id, **fields))
        return node_id

    def add_leaf(key, leaf):
        kind = _leaf_kind(leaf)
        add(key, kind=kind, label=_leaf_label(leaf, kind), name=leaf.name, shape=list(leaf.shape),
            dtype=leaf.dtype.name, device=str(leaf.device), requires_grad=leaf.requires_grad,
            value=stats_dict(leaf) if values or not leaf.ndim else None,
            grad=stats_dict(leaf.grad) if leaf.grad is not None else None)

    tensors, modules = tensors_by_name(names) if names is not None else ([], {})
    if tensor.grad_fn is None:
        add_leaf(("tensor", id(tensor)), tensor)
        _name_history(result, ids, tensors)
        return result, ids, _group_history(result, [], ids, modules)
    # post-order depth-first walk with an explicit stack: inputs before the ops that use them
    order, done, stack = [], set(), [(tensor.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if expanded:
            done.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        for edge in reversed(node.next_edges):
            if edge is not None and edge[0] not in done:
                stack.append((edge[0], False))
    shapes = {}
    for node in order:
        for edge, meta in zip(node.next_edges, getattr(node, "input_meta", ()) or ()):
            if edge is not None and meta is not None:
                shapes[edge[0]] = (list(meta[0]), str(meta[1]))
    shapes[tensor.grad_fn] = (list(tensor.shape), tensor.dtype.name)
    for node in order:
        shape, dtype = shapes.get(node, ([], ""))
        if type(node) is AccumulateGrad:
            add_leaf(node, node.variable)
        else:
            is_root = node is tensor.grad_fn
            add(node, kind="output" if is_root else "op", label=(tensor.name if is_root and tensor.name else
                                                                 node.op.__name__),
                op=node.op.__name__, shape=shape, dtype=dtype.rpartition(".")[2],
                device=str(tensor.device), requires_grad=True,
                value=stats_dict(tensor) if is_root and (values or not tensor.ndim) else None,
                grad=_retained_grad(node))
    for node in order:
        for index, edge in enumerate(node.next_edges):
            if edge is not None and edge[0] in ids:
                result.edges.append(GraphEdge(ids[edge[0]], ids[node], index, shapes.get(edge[0], ([], ""))[0]))
    result.edges.sort(key=lambda e: (int(e.target[1:]), e.index))
    if _backward_ran(order):
        result.backward_order = [ids[node] for node in _engine_order(tensor.grad_fn, order)]
        for index, node_id in enumerate(result.backward_order):
            result.node(node_id).backward_index = index
        result.backward = {"source": "graph", "note": BACKWARD_NOTE}
    _name_history(result, ids, tensors)
    return result, ids, _group_history(result, order, ids, modules)


def _retained_grad(node):
    """Statistics of the gradient a tensor made by ``node`` kept with retain_grad(), or None."""
    for ref in (node.retained_grads or {}).values():
        kept = ref()
        if kept is not None and kept.grad is not None:
            return stats_dict(kept.grad)
    return None


def _backward_ran(order):
    """Whether a backward pass went through these autograd nodes: one freed what it saved,
    or a leaf holds a gradient."""
    from ..autograd.function import AccumulateGrad
    return any(node.saved is None for node in order if type(node) is not AccumulateGrad) or any(
        node.variable.grad is not None for node in order if type(node) is AccumulateGrad)


def _engine_order(root, nodes):
    """The order in which the engine runs ``nodes`` backward from ``root`` (see
    :mod:`vizgrad.autograd.engine`): a node runs once every node that feeds it a gradient
    has run, the latest created first."""
    import heapq
    pending = dict.fromkeys(nodes, 0)
    for node in nodes:
        for edge in node.next_edges:
            if edge is not None:
                pending[edge[0]] += 1
    ready, order = [(-root.id, root)], []
    while ready:
        node = heapq.heappop(ready)[1]
        order.append(node)
        for edge in node.next_edges:
            if edge is not None:
                pending[edge[0]] -= 1
                if pending[edge[0]] == 0:
                    heapq.heappush(ready, (-edge[0].id, edge[0]))
    return order


def _name_history(result, ids, tensors):
    """Label the nodes of a history graph after the variables that hold their tensors."""
    from ..autograd.function import AccumulateGrad
    for name, tensor in tensors:
        if tensor.grad_fn is not None:
            key = tensor.grad_fn if tensor._output_nr == 0 else None
        else:
            accumulator = tensor._accumulator() if tensor._accumulator is not None else None
            key = accumulator if type(accumulator) is AccumulateGrad else ("tensor", id(tensor))
        node_id = ids.get(key)
        if node_id is not None:
            node = result.node(node_id)
            if node.name is None and node.label in (node.op, _leaf_label(tensor, node.kind)):
                node.label = name


def _group_history(result, order, ids, modules):
    """Groups of a history graph (applied to it, and returned): the modules that own its
    parameters (typed where ``modules`` knows them), each op placed in the module whose
    parameters it uses."""
    from ..autograd.function import AccumulateGrad
    hierarchy = Hierarchy()
    owners = {}           # id of a parameter or buffer -> the path of the module that owns it
    for path, module in modules.items():
        for registry in (module._parameters, module._buffers):
            for tensor in registry.values():
                if tensor is not None:
                    owners.setdefault(id(tensor), path)
    paths = {}            # autograd node -> the module path owning the leaf it accumulates into
    for node in order:
        if type(node) is not AccumulateGrad:
            continue
        leaf = node.variable
        path = owners.get(id(leaf))
        if path is not None:
            for depth in range(1, path.count(".") + 2):       # parents first
                prefix = ".".join(path.split(".")[:depth])
                if prefix in modules:
                    hierarchy.module_group(modules[prefix], prefix)
            paths[node] = path
        elif leaf.name and "." in leaf.name and _leaf_kind(leaf) == "parameter":
            paths[node] = leaf.name.rpartition(".")[0]
            hierarchy.path_group(paths[node])
        if node in paths:
            hierarchy.members[ids[node]] = hierarchy.modules[paths[node]]
    for node in order:
        if type(node) is AccumulateGrad:
            continue
        used = {paths.get(edge[0]) for edge in node.next_edges if edge is not None and type(edge[0]) is AccumulateGrad
                and _leaf_kind(edge[0].variable) == "parameter"}
        if len(used) == 1 and None not in used:
            hierarchy.members[ids[node]] = hierarchy.modules[used.pop()]
    hierarchy.apply(result)
    return hierarchy
