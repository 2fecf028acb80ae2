"""Replaying an iteration that repeats the previous one: the log entry of each op
(:class:`_OpEntry`, what it must match; :class:`_Op`, what it saw this time) and the
structures that bind a log to the previous iteration's graph when a graph is read
(:class:`_Replay`, :class:`_Unsettled`). The binding itself is the Recorder's.
"""

from typing import NamedTuple

from ..tensor import Tensor


class _OpEntry(NamedTuple):
    """What one op of an iteration bound: enough to recognise the same op in the next one
    (and everything the structure it made depends on: its group is its module's or its
    composite call's, so the call site is compared where the op was part of a composite)."""

    op: str
    module: str
    layout: tuple        # per argument: its kind (_argument_kind)
    inputs: tuple        # per argument: the node id a tensor was known as (None for the others)
    constants: tuple     # the node id of each Python number among the arguments
    leaves: dict         # id of each leaf node this op met first -> its tensor's spec (_leaf_spec)
    outputs: tuple       # (node id, shape, backend dtype, label) of each output
    node_count: int      # nodes of the graph after this op
    edge_count: int      # edges after this op
    rereads: tuple       # argument positions of the tensors that held a private copy of their node's value
    call: object         # the composite call site (_call_key) when the op was applied inside one, else None


class _Op(NamedTuple):
    """An op as it was applied: its tensors as the op saw them (an in-place op later gives a
    tensor another history and value)."""

    op: str
    node_id: object      # the autograd node's id, None when nothing was recorded
    arguments: tuple     # every positional argument (numbers too)
    seen: list           # per argument: a tensor's (tensor, grad_fn, output number, array), else None
    outputs: tuple
    arrays: list         # the outputs' arrays
    module: str


def _seen(arguments):
    """Each tensor argument's history and value as an op sees them (see :class:`_Op`)."""
    return [(value, value.grad_fn, value._output_nr, value._array) if isinstance(value, Tensor) else None
            for value in arguments]


def _leaf_spec(tensor, array):
    """What makes a leaf tensor's node (its class says whether it is a parameter; a scalar
    constant's label is its value, taken each iteration), ``array`` being its value: two
    leaves with equal specs record equal nodes."""
    return type(tensor), tensor.name, array.shape, array.dtype, tensor.requires_grad


def _arrays_like(outputs, expected, op):
    """The arrays of an op's results when they have the shapes, dtypes and labels of an
    entry's ``expected`` results, else None."""
    if len(outputs) != len(expected):
        return None
    arrays = []
    for tensor, (_, shape, dtype, label) in zip(outputs, expected):
        array = tensor._array
        if array.shape != shape or array.dtype != dtype or (tensor.name or op) != label:
            return None
        arrays.append(array)
    return arrays


class _Replay:
    """The ops of an iteration whose structure the next iteration is expected to repeat:
    while it does, ops are only matched and bound to the existing nodes (no nodes, edges,
    groups or source lines built again)."""

    __slots__ = ("graph", "entries", "position", "inputs")

    def __init__(self, graph, entries, inputs):
        self.graph = graph
        self.entries = entries
        self.position = 0
        self.inputs = inputs     # node id -> its incoming gradient edges (unchanged while replaying)

    def gradient_edges(self):
        """The ids of the structure's edges that carry a gradient (asked for only when diverging)."""
        return {id(edge) for edges in self.inputs.values() for edge in edges}

    def counts(self, position):
        """Nodes and edges of the structure after its first ``position`` ops."""
        if not position:
            return 0, 0
        entry = self.entries[position - 1]
        return entry.node_count, entry.edge_count


class _Unsettled:
    """A finished iteration that replayed the structure before it and was never read: its
    log is bound, in a scratch recorder, when :attr:`Recorder.last_graph` asks for it."""

    __slots__ = ("replay", "hierarchy", "consumers", "frame", "log")

    def __init__(self, replay, hierarchy, consumers, frame, log):
        self.replay, self.hierarchy, self.consumers, self.frame, self.log = replay, hierarchy, consumers, frame, log

    def settle(self, recorder):
        """``(structure, frame, hierarchy)`` of the iteration, its log bound."""
        scratch = type(recorder)(recorder.values, recorder.grads, recorder.source, max_nodes=recorder.max_nodes)
        replay = self.replay
        scratch.graph, scratch._hierarchy = replay.graph, self.hierarchy
        scratch._inputs, scratch._consumers = replay.inputs, self.consumers
        scratch._replay = _Replay(replay.graph, replay.entries, replay.inputs)
        scratch._entries = list(replay.entries)
        scratch._frame, scratch._log = self.frame, self.log
        scratch._observation = recorder._observation       # how results are known (see _bind_replayed)
        scratch._settle()
        return scratch.graph, self.frame, scratch._hierarchy
