"""Assembling the Graph JSON model of a recording: a :class:`~.graph.Graph` of a recorded
structure with one iteration's statistics, groups and step history.

The :class:`~vizgrad.trace.recorder.Recorder` records structure (nodes, edges) and keeps
references to the arrays of an iteration in a :class:`~.statistics._Frame`; when a graph is
asked for, :func:`assemble_graph` copies the nodes and edges that frame changes (values,
gradients, backward order), shares the others, and writes the groups. :func:`step_list`
turns the optimizer steps and marks kept into JSON-ready dicts, each once.
"""

import math

from .graph import Graph, shallow_copy
from .names import _number_text
from .statistics import SUMMARY_KEYS


def assemble_graph(structure, frame, hierarchy, consumers, steps):
    """A :class:`Graph` of ``structure`` with the statistics of ``frame``'s arrays and the
    groups of ``hierarchy`` (None: the structure's own). ``consumers``: graph node id -> how
    many gradient edges leave it; ``steps``: the JSON-ready step history."""
    # a node or edge this frame changes is copied; the others are shared with the structure
    # when no hierarchy writes into them (a tensor's history, as recorded: no copies at all)
    nodes, shared = [], hierarchy is None
    for node in structure.nodes:
        array, number, grad = frame.values.get(node.id), frame.numbers.get(node.id), frame.grads.get(node.id)
        index = frame.order.get(node.id) if frame.order or node.backward_index is not None else None
        output = node.kind == "op" and node.id in frame.roots
        if (shared and array is None and number is None and grad is None and index == node.backward_index
                and node.label is not None and not output):
            nodes.append(node)
            continue
        node = shallow_copy(node)
        if array is not None:
            node.value = frame.statistics(array, "full")
        if number is not None:
            node.value = frame.number_statistics(number)
        if node.label is None:           # a scalar constant: labelled with this iteration's value
            if number is None and array is not None:
                number = array.item()
            node.label = "" if number is None else _number_text(number)
        if grad is not None:
            node.grad = frame.statistics(grad, "full")
            if node.id in frame.earlier:
                node.grad_note = (f"{node.label}.grad also holds the gradients of earlier backward passes "
                                  "(.grad accumulates until it is zeroed: optimizer.zero_grad())")
        node.backward_index = index
        if output:
            node.kind = "output"
        nodes.append(node)
    edges = []
    for edge in structure.edges:
        grad = frame.edge_grads.get(id(edge))
        if grad is None and shared:
            edges.append(edge)
            continue
        edge = shallow_copy(edge)
        if grad is not None:
            if consumers.get(edge.source) == 1 or frame.grads.get(edge.source) is grad:
                stats = frame.statistics(grad, "full")
                edge.grad = {key: stats[key] for key in SUMMARY_KEYS}
            else:
                edge.grad = frame.statistics(grad, "summary")
        edges.append(edge)
    graph = Graph(nodes=nodes, edges=edges, backward_order=list(frame.order), steps=steps,
                  truncated=structure.truncated, forward_order=list(structure.forward_order))
    if hierarchy is None:
        graph.groups = list(structure.groups)
        graph.backward = dict(structure.backward)
    else:
        hierarchy.apply(graph)
        graph.backward = {"source": "recorded" if frame.order else None, "note": None}
    return graph


def step_list(steps):
    """The step history ``steps`` (``[event, its JSON form or None]`` entries) as JSON-ready
    dicts, each converted once (the form is kept in its entry)."""
    result = []
    for entry in steps:
        if entry[1] is None:
            event = entry[0]
            if event.kind == "optimizer_step":
                entry[1] = {"kind": "optimizer_step", "optimizer": event.optimizer, "step": event.step,
                            "params": [_param_step(p) for p in event.params]}
                if not event.summarised:
                    entry[1]["summarised"] = False
            else:
                entry[1] = {"kind": "mark", "name": event.name,
                            "values": {k: _json_number(v) for k, v in event.values.items()}}
        result.append(entry[1])
    return result


def _json_number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def _param_step(step):
    return {"name": step.name, "lr": step.lr, "grad_norm": _json_number(step.grad_norm),
            "update_norm": _json_number(step.update_norm), "param_norm": _json_number(step.param_norm),
            "update_ratio": _json_number(step.update_ratio),
            "state": {k: _json_number(v) for k, v in step.state.items()}}
