"""Recording events into the graph model: ``vizgrad.trace()`` and the :class:`Recorder`.

The :class:`Recorder` takes the engine's callbacks (``_EngineTap``: ops, module calls and
backward passes, with no events made) and the event bus's optimizer steps and marks, and
builds a :class:`Graph` of what it sees. In a training loop each iteration (forward,
backward, step) becomes one graph: when ops arrive after a finished backward, the graph starts
afresh and the finished one stays available as ``last_graph``. Optimizer steps and marks go
into a history of at most ``max_steps`` entries.

What it costs: the recorder keeps no tensors, only references to the arrays of two
iterations (the one in progress and the last finished one), and computes their statistics
(:mod:`.statistics`) when a graph is asked for (:meth:`Recorder.result`, ``last_graph``),
once per array; an iteration that repeats the previous one's ops reuses its structure
(:mod:`.replay`).

This module owns op capture: the events' ops, backward passes and steps become nodes, edges
and history. The boxes of module calls are named in :mod:`.hierarchy` (the Recorder's
:class:`~.hierarchy._ModuleScopes` part), and the Graph JSON is assembled in
:mod:`.assembly` (:meth:`Recorder._materialise` caches it per iteration).
"""

import sys
import threading
from collections import deque

from .. import events
from ..tensor import Tensor
from .assembly import assemble_graph, step_list
from .call_sites import _argument_kind, _call_key, _call_key_at, _call_site
from .graph import Graph, GraphEdge, GraphNode, gc_paused, shallow_copy
from .groups import Hierarchy
from .hierarchy import _ModuleScopes
from .history import _history
from .names import _leaf_kind, _leaf_label, tensors_by_name
from .replay import _Op, _OpEntry, _Replay, _Unsettled, _arrays_like, _leaf_spec, _seen
from .statistics import _Frame, _copy_array, _raw
from .tap import _EngineTap


_LOGGED_KINDS = frozenset({"op", "backward_start", "node_backward", "grad_accumulated", "backward_end"})


class _Watch:
    """What :meth:`Recorder.watch` returns."""

    def __init__(self, recorder, callback):
        self.recorder = recorder
        self.callback = callback
        self.closed = False

    def close(self):
        if not self.closed:
            self.closed = True
            recorder = self.recorder
            recorder._watchers = tuple(w for w in recorder._watchers if w is not self)
            recorder._untold = tuple(w for w in recorder._untold if w is not self)


class Recorder(_ModuleScopes):
    """Builds graphs from events. Use :func:`vizgrad.trace` rather than creating one directly.

    Recording is cheap. A training loop that repeats the same graph reuses its structure
    (nodes, edges, groups, source lines) instead of building it again every step: a
    repeated op is compared with the op it repeats (name, module, call site, results'
    shapes) and logged with the tensors it saw; the log is bound to the structure when a
    graph is asked for (:meth:`result`, :attr:`last_graph`), so the steps nobody looks at
    cost no binding. Statistics (values, gradients) are computed then too, from references
    to the newest iterations' arrays, exactly for that iteration.

    Args:
        values: record value statistics of every tensor (scalars always show their value).
        grads: record gradient statistics after backward.
        source: record the user's source line that created each op.
        max_steps: how many optimizer steps and marks to keep.
        max_nodes: a graph stops growing (and is marked ``truncated``) past this many nodes.
        summary_rate: the per-parameter numbers of optimizer steps (norms of gradients,
            updates and parameters) are taken at most this many times per second (after a
            first second's worth: see :class:`vizgrad.events.SummaryBudget`); the other
            steps are kept with ``"summarised": false`` and no ``params``. None: every step.
    """

    KINDS = frozenset({"op", "backward_start", "node_backward", "grad_accumulated", "backward_end",
                       "optimizer_step", "mark", "module_forward"})   # the events it records (no others get made for it)
    STEP_KINDS = frozenset({"optimizer_step", "mark"})   # those it takes from the bus once started

    def __init__(self, values=True, grads=True, source=True, max_steps=300, max_nodes=5000, summary_rate=20.0):
        self.values, self.grads, self.source = values, grads, source
        self.max_nodes = max_nodes
        self.summary_rate = summary_rate
        self._steps = deque(maxlen=max_steps)   # [event, its JSON form once asked for]
        self._step_count = 0
        self.graph = Graph()       # the structure being recorded (statistics live in the frame)
        self.lock = threading.RLock()   # held while recording an event and while materialising
        self._frame = _Frame()
        self._finished = None      # (structure, frame, hierarchy) of the last finished iteration
        self._replay = None
        self._entries = []         # what each op of this iteration bound, for the next one's replay
        self._materialised = {}    # id(frame) -> (revision, structure, Graph)
        self._ids = {}             # tensor uid -> graph node id
        self._autograd_nodes = {}  # autograd Node id -> graph node id
        self._outputs = {}         # (autograd Node id, output number) -> graph node id
        self._inputs = {}          # graph node id -> its input edges that carry a gradient, in order
        self._consumers = {}       # graph node id -> how many of those edges leave it
        self._backward_done = False
        self._log = []             # (bind, arguments) of the replayed work not bound yet (see _settle)
        self._replaced = None      # (structure, group members) the logged ops replay, once found to differ
        self._subscription = self._observation = None
        self._watchers = ()
        self._untold = ()          # the watchers not told of a change since a graph was last read
        self._hierarchy = Hierarchy()   # the groups of the structure (shared while it is replayed)
        self._scope_names = {}          # scope -> the name of its box (this iteration's module calls)
        self._step_modules = {}         # a recurrent step's box name -> its module's
        self._call = None          # (key, positions, its first op's nodes, group key) of the composite call under way
        self._in_backward = False
        self.records_forward = True   # False: only the backward passes of the graph it has (see from_tensor)

    @classmethod
    @gc_paused()
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
        # the history's statistics and backward pass were computed with it: they stay on its nodes
        recorder._frame.order = {node_id: index for index, node_id in enumerate(recorder.graph.backward_order)}
        recorder._entries = None                     # a history is no iteration to replay
        return recorder

    # --- lifecycle -----------------------------------------------------------
    def start(self):
        """Record from now on: ops, module calls and backward passes straight from the engine
        (no events are made for them), optimizer steps and marks from the event bus."""
        if self._subscription is None:
            self._subscription = events.subscribe(self.handle, kinds=self.STEP_KINDS, summary_rate=self.summary_rate)
            self._observation = events.observe(_EngineTap(self))
        return self

    def close(self):
        if self._subscription is not None:
            self._subscription.close()
            self._observation.close()
            self._subscription = self._observation = None

    def watch(self, callback):
        """Call ``callback()`` when a recorded op or the end of a backward pass changes what
        the recorder holds (what a live view of this recorder redraws after: it asks
        :meth:`result` for the graph at its own rate). Once told, a watcher is not told
        again until a graph is read (:meth:`result`, :attr:`last_graph`): a read after
        the call sees every change until then, so a training loop pays for one call per
        read, not one per op. Returns a handle whose ``close()`` stops it."""
        handle = _Watch(self, callback)
        self._watchers = self._watchers + (handle,)
        self._untold = self._untold + (handle,)
        return handle

    def _changed(self):
        untold, self._untold = self._untold, ()
        for watch in untold:
            watch.callback()

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
        """The finished graph of the previous iteration (None before one finished)."""
        with self.lock:
            if self._finished is None:
                return None
            if isinstance(self._finished, _Unsettled):
                self._finished = self._finished.settle(self)
            return self._materialise(*self._finished)

    # --- events --------------------------------------------------------------
    def handle(self, event):
        """Record one event (what the subscription calls; a caller that manages its own
        subscription, such as a live widget, may feed events here instead of :meth:`start`)."""
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            with self.lock:
                handler(self, event)
                if event.kind in _LOGGED_KINDS:
                    self._settle()        # an event's tensors are the listener's during delivery only
            if self._untold and event.kind in ("op", "backward_end"):
                self._changed()

    _on_event = handle

    def _new_iteration(self):
        if self._replay is not None and self._replay.position < len(self._replay.entries):
            self._diverge()                           # the iteration was shorter than the one it repeated
        hierarchy = self._hierarchy if self.records_forward else None
        if self._log:      # a replayed iteration nobody read: bound only if last_graph asks for it
            self._finished = _Unsettled(self._replay, hierarchy, self._consumers, self._frame, self._log)
            self._log = []
        else:
            self._finished = (self.graph, self._frame, hierarchy)
        self._materialised = {key: value for key, value in self._materialised.items() if key == id(self._frame)}
        self._frame = _Frame()
        entries, self._entries = self._entries, []
        if entries is not None and not self.graph.truncated:
            # expect the same structure again: keep it, its groups, and the gradient edges that belong to it
            self._replay = _Replay(self.graph, entries, self._inputs)
        else:
            self.graph = Graph()
            self._inputs = {}
            self._consumers = {}
            self._hierarchy = Hierarchy(self._hierarchy.described)     # modules keep their labels
        self._ids = {}
        self._autograd_nodes = {}
        self._outputs = {}
        self._backward_done = False
        self._call = None
        self._scope_names = {}

    def _add_gradient_edge(self, edge):
        self._inputs.setdefault(edge.target, []).append(edge)
        self._consumers[edge.source] = self._consumers.get(edge.source, 0) + 1

    def _resolve(self, tensor):
        """The node a tensor is known as now, or None (see :meth:`_known`)."""
        return self._known((tensor, tensor.grad_fn, tensor._output_nr, None))

    def _known(self, seen):
        """The node of a tensor as an op saw it (see :func:`_seen`), or None. An op result is
        known by its place in the autograd graph, not only by its Tensor object: an in-place
        op hands the old value to the op as a private copy, and the changed tensor takes the
        op's result's history."""
        tensor, grad_fn, output_nr, _ = seen
        if grad_fn is not None:
            node_id = self._outputs.get((grad_fn.id, output_nr))
            if node_id is not None:
                return node_id
        return self._ids.get(tensor.uid)

    def _node_for(self, seen, kind):
        """The node of a tensor as an op saw it, made (with ``kind``) if it has none yet."""
        node_id = self._known(seen)
        if node_id is not None:
            return node_id
        if len(self.graph.nodes) >= self.max_nodes:
            self.graph.truncated = True
            return None
        tensor, _, _, array = seen
        node_id = f"n{len(self.graph.nodes)}"
        self._ids[tensor.uid] = node_id
        if kind == "leaf":
            kind = _leaf_kind(tensor)
        if kind == "op":
            label = ""
        elif kind == "constant" and not tensor.name and not array.ndim:
            label = None              # its value, which may change each iteration (see _materialise)
        else:
            label = _leaf_label(tensor, kind)
        self.graph.nodes.append(GraphNode(
            id=node_id, kind=kind, label=label, name=tensor.name,
            shape=list(array.shape), dtype=tensor.dtype.name, device=str(tensor.device),
            requires_grad=bool(tensor.requires_grad)))
        self._keep_value(node_id, array, kind != "op")
        return node_id

    def _keep_value(self, node_id, array, mutable):
        """Keep a reference to ``array``, a node's value, for the statistics (a scalar's
        always: its value is drawn)."""
        if self.values or not array.ndim:
            self._frame.values[node_id] = array
            if mutable or getattr(array, "base", None) is not None:   # a leaf, or a view: may change in place
                self._frame.mutable.append(node_id)
            self._frame.revision += 1

    def _constant_node(self, number):
        """A node for a Python number an op was given (``2`` in ``x * 2``); its value is the
        frame's (it may change each iteration)."""
        if len(self.graph.nodes) >= self.max_nodes:
            self.graph.truncated = True
            return None
        node_id = f"n{len(self.graph.nodes)}"
        self.graph.nodes.append(GraphNode(id=node_id, kind="constant", label=None, shape=[],
                                          dtype=type(number).__name__))
        self._frame.numbers[node_id] = number
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
        # events bring no frame: the walk to the call site starts from here
        self._record_op(event.op, event.node_id, event.arguments if event.arguments is not None else event.inputs,
                        event.outputs, event.module, sys._getframe(1))

    def _record_op(self, op, node_id, arguments, outputs, module, caller):
        """Record one op. Where it repeats the previous iteration's op at this place (the
        same op, module, call site and results' shapes), only what it saw is logged, to be
        bound to that op's nodes when a graph is asked for (:meth:`_settle`): a training
        loop nobody looks at pays for no binding. Else its nodes, edges, group and source
        line are built."""
        if self._in_backward or not self.records_forward:
            return      # ops a backward runs (a custom Function's backward, create_graph) are no forward history
        if node_id is None and outputs[0].dtype.name == "bool":
            _, call = _call_site(caller, False)
            if call is not None and call[2]:
                return  # a composite's check of its arguments: its result, if used, shows as a constant
        if self._backward_done:
            self._new_iteration()
        if type(module) is not str:     # the engine's scope (events bring its path)
            module = self._scope_name(module)
        replay = self._replay
        if replay is not None:
            position = replay.position
            if position < len(replay.entries):
                entry = replay.entries[position]
                arrays = _arrays_like(outputs, entry.outputs, op) \
                    if op == entry.op and module == entry.module and len(arguments) == len(entry.layout) else None
                if arrays is not None and _call_key_at(caller) == entry.call:
                    self._log.append((Recorder._bind_op, (position, entry, _Op(
                        op, node_id, arguments, _seen(arguments), outputs, arrays, module))))
                    replay.position = position + 1
                    self._entries.append(entry)
                    return
            self._diverge()     # another op, or applied from elsewhere (its group and source line may differ)
        site, call = _call_site(caller, self.source)
        self._build(_Op(op, node_id, arguments, _seen(arguments), outputs, [o._array for o in outputs], module),
                    site, call, None, _call_key(call))

    def _build(self, applied, site, call, group, call_key):
        """Build an op's nodes, edges and group (``group``: given, else found from ``call``),
        and note what it bound for the next iteration's replay."""
        nodes_before = len(self.graph.nodes)
        rereads, constants = self._build_op(applied, site, call, group)
        if self._entries is not None:
            nodes = self.graph.nodes
            created = {node.id for node in nodes[nodes_before:] if node.op is None}
            inputs = tuple(self._known(seen) if seen is not None else None for seen in applied.seen)
            leaves = {node_id: _leaf_spec(seen[0], seen[3])
                      for seen, node_id in zip(applied.seen, inputs) if node_id in created}
            self._entries.append(_OpEntry(
                applied.op, applied.module, tuple(_argument_kind(value) for value in applied.arguments), inputs,
                constants, leaves,
                tuple((self._output_node(applied, output_nr, output), array.shape, array.dtype, output.name or applied.op)
                      for output_nr, (output, array) in enumerate(zip(applied.outputs, applied.arrays))),
                len(nodes), len(self.graph.edges), rereads, call_key))

    def _output_node(self, applied, output_nr, output):
        node_id = self._outputs.get((applied.node_id, output_nr)) if applied.node_id is not None else None
        return node_id if node_id is not None else self._ids.get(output.uid)

    def _build_op(self, applied, site, call, group):
        """Add the op's nodes, edges and group; returns :meth:`_note_read`'s positions and
        the constant nodes of the Python numbers it was given."""
        inputs = []      # (argument position, its node id, its shape, whether it carries a gradient)
        numbers = []     # the nodes of the Python numbers among them
        read = []        # (argument position, the array the op read, its node id)
        for position, (value, seen) in enumerate(zip(applied.arguments, applied.seen)):
            if seen is not None:
                node_id = self._node_for(seen, "leaf")
                inputs.append((position, node_id, list(seen[3].shape), value.requires_grad))
                read.append((position, seen[3], node_id))
            elif type(value) in (int, float):
                number_id = self._constant_node(value)
                inputs.append((position, number_id, [], False))
                if number_id is not None:
                    numbers.append(number_id)
        rereads = self._note_read(read)
        grouped = False
        for output_nr, (output, array) in enumerate(zip(applied.outputs, applied.arrays)):
            if output.uid in self._ids:
                continue
            node_id = self._node_for((output, None, output_nr, array), "op")
            if node_id is None:
                break
            node = self.graph.nodes[-1]
            node.op = applied.op
            node.label = output.name or applied.op
            node.module = self._step_modules.get(applied.module, applied.module)   # a step's: its layer's module
            node.source = site
            if not grouped:
                grouped = True
                if group is None:
                    group = self._group_of_op(applied, call, node_id, numbers)
                else:
                    self._call = None
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
            if applied.node_id is not None:
                self._outputs[(applied.node_id, output_nr)] = node_id
                if output_nr == 0:
                    self._autograd_nodes[applied.node_id] = node_id
        return rereads, tuple(numbers)

    # --- the replayed work, bound when a graph is asked for ------------------------------
    def _settle(self):
        """Bind the work logged since the last time (see :meth:`_record_op`), in order: each
        replayed op to its nodes (or, where it turns out to differ, the structure built afresh
        from there), then the backward pass's roots, gradients and order."""
        log = self._log
        if log:
            self._log = []
            for bind, arguments in log:
                bind(self, *arguments)
            self._replaced = None

    def _bind_op(self, position, entry, applied):
        """Bind a replayed op (the ``position``-th of its iteration) to the nodes of ``entry``;
        where its tensors differ from those the entry bound, the structure is the repeated
        one up to ``position`` and is built afresh from this op, each op's source line and
        group being those of the op it replaced (its call site and module were the same)."""
        if self._replay is not None:
            if self._bind_replayed(entry, applied):
                return
            self._diverge(position)
        structure, members = self._replaced
        replaced = structure.node(entry.outputs[0][0])
        self._build(applied, replaced.source, None, members.get(replaced.id), entry.call)

    def _bind_replayed(self, entry, applied):
        """Bind ``applied``'s tensors to the nodes ``entry`` made in the repeated iteration;
        False (nothing bound) when they are not the same tensors. Look-ups and comparisons only."""
        _, _, layout, expected_inputs, constants, leaves, expected_outputs, _, _, rereads, _ = entry
        ids, known_outputs = self._ids, self._outputs
        fresh = None     # (tensor, leaf node id) of the tensors this op is the first to use, bound on trial
        for value, seen, kind, expected in zip(applied.arguments, applied.seen, layout, expected_inputs):
            if kind:
                if seen is not None or _argument_kind(value) != kind:
                    return self._unbind(fresh)
                continue
            if seen is None:
                return self._unbind(fresh)
            tensor, grad_fn, output_nr, array = seen
            node_id = known_outputs.get((grad_fn.id, output_nr)) if grad_fn is not None else None
            if node_id is None:
                uid = tensor.uid
                node_id = ids.get(uid)
                if node_id is None:
                    # first seen here: it must be like the leaf this op met first last time
                    if leaves.get(expected) != _leaf_spec(tensor, array) or (
                            fresh is not None and any(leaf == expected for _, leaf, _ in fresh)):
                        return self._unbind(fresh)
                    ids[uid] = expected
                    fresh = [(tensor, expected, array)] if fresh is None else [*fresh, (tensor, expected, array)]
                    continue
            if node_id != expected:
                return self._unbind(fresh)
        for tensor in applied.outputs:
            if tensor.grad_fn is None and tensor.uid in ids:
                return self._unbind(fresh)
        frame = self._frame
        values = frame.values
        keep_all = self.values
        frozen = frame.frozen
        if fresh is not None:
            for _, node_id, array in fresh:
                if keep_all or not array.ndim:
                    values[node_id] = frozen[id(array)][1] if id(array) in frozen else array
                    frame.mutable.append(node_id)
        if rereads and keep_all:
            for position in rereads:                    # see _note_read
                values[expected_inputs[position]] = applied.seen[position][3]
        if constants:
            numbers = [value for value, kind in zip(applied.arguments, layout) if kind == 1 or kind == 2]
            frame.numbers.update(zip(constants, numbers))
        # a result with a history is found by it (see _known); by its uid only where
        # backward roots are named by uid (recording from events)
        by_uid = self._observation is None
        node = applied.node_id
        for output_nr, (tensor, array, (node_id, _, _, _)) in enumerate(
                zip(applied.outputs, applied.arrays, expected_outputs)):
            if by_uid or tensor.grad_fn is None:
                ids[tensor.uid] = node_id
            if keep_all or not array.ndim:
                if getattr(array, "base", None) is not None:
                    if id(array) in frozen:
                        array = frozen[id(array)][1]
                    frame.mutable.append(node_id)
                values[node_id] = array
            if node is not None:
                known_outputs[(node, output_nr)] = node_id
        if node is not None:
            self._autograd_nodes[node] = expected_outputs[0][0]
        frame.revision += 1
        return True

    def _unbind(self, fresh):
        """Undo the trial bindings of a replay that failed; False."""
        for tensor, _, _ in fresh or ():
            del self._ids[tensor.uid]
        return False

    def _freeze_log(self):
        """Copy the values that logged ops read and the program may change in place before
        they are bound (leaves that an optimizer updates, views): the frame's ``frozen``
        copies are what gets bound (see :meth:`_Frame.freeze_values`)."""
        frozen = self._frame.frozen
        keep_all = self.values
        for bind, arguments in self._log:
            if bind is Recorder._bind_op:
                applied = arguments[2]
                for seen in applied.seen:
                    if seen is not None and seen[1] is None:
                        array = seen[3]
                        if (keep_all or not array.ndim) and id(array) not in frozen:
                            frozen[id(array)] = (array, _copy_array(array))
                for array in applied.arrays:
                    if getattr(array, "base", None) is not None and (keep_all or not array.ndim) \
                            and id(array) not in frozen:
                        frozen[id(array)] = (array, _copy_array(array))

    def _note_read(self, read):
        """What an op read is its input nodes' value: an in-place op reads a private copy of
        the value that it then overwrites, and the node keeps that copy. ``read``: (argument
        position, array read, node id) of each tensor argument; returns the argument positions
        of those that held such a copy."""
        values = self._frame.values
        rereads = []
        for position, array, node_id in read:
            if node_id is not None and node_id in values and values[node_id] is not array:
                values[node_id] = array
                rereads.append(position)
        return tuple(rereads)

    def _diverge(self, position=None):
        """The iteration stopped repeating the previous one: its structure (and groups) is
        that iteration's up to where they agreed (copied), and grows afresh from there.
        ``position``: while the log is bound, the op found to differ (the ops logged after
        it are built afresh too); else at the op being recorded, once the log is bound."""
        if position is None:
            self._settle()
            if self._replay is None:              # the log itself diverged
                return
            position = self._replay.position
        else:
            self._entries = self._entries[:position]
            self._replaced = (self._replay.graph, self._hierarchy.members)   # what the logged ops after it replaced
        replay, self._replay = self._replay, None
        node_count, edge_count = replay.counts(position)
        structure = Graph(nodes=[shallow_copy(node) for node in replay.graph.nodes[:node_count]],
                          edges=[shallow_copy(edge) for edge in replay.graph.edges[:edge_count]])
        self.graph = structure
        self._inputs = {}
        self._consumers = {}
        gradient_edges = replay.gradient_edges()
        for original, edge in zip(replay.graph.edges, structure.edges):
            if id(original) in gradient_edges:
                self._add_gradient_edge(edge)
        shared = self._hierarchy
        hierarchy = self._hierarchy = Hierarchy(shared.described)
        hierarchy.groups = list(shared.groups)
        hierarchy.modules = dict(shared.modules)
        hierarchy.instances = dict(shared.instances)
        kept = {node.id for node in structure.nodes}
        hierarchy.members = {node_id: key for node_id, key in shared.members.items() if node_id in kept}
        self._call = None

    def _on_backward_start(self, event):
        roots = getattr(event, "roots", None)         # the tensors, from the engine; events name them
        if roots is None or not self.records_forward:
            self._settle()
            node_ids = [self._resolve(root) for root in roots] if roots is not None else \
                [self._ids.get(uid) for uid in event.root_ids]
            if not self.records_forward:      # a view of one tensor: only a backward of its own graph
                if all(node_id is None for node_id in node_ids):
                    return
                self._frame.forget_backward()
                self.graph.backward = {"source": "recorded", "note": None}
            seen = [(None, node_id) for node_id in node_ids]
        else:
            seen = [(root, (root, root.grad_fn, root._output_nr, None)) for root in roots]
        if self._replay is not None and self._replay.position < len(self._replay.entries):
            self._diverge()                           # backward came before the repeated ops ended
        self._in_backward = True
        if self._log:
            self._log.append((Recorder._bind_roots, (seen,)))
        else:
            self._bind_roots(seen)

    def _bind_roots(self, roots):
        """The backward pass's roots: (tensor, as seen) pairs, or (None, node id)."""
        for tensor, seen in roots:
            node_id = seen if tensor is None else self._known(seen)
            if node_id is not None:
                self._frame.roots.add(node_id)

    def _place_in_backward(self, node_id):
        order = self._frame.order
        if node_id not in order:
            order[node_id] = len(order)

    def _on_node_backward(self, event):
        self._backward_ran([(Recorder._bind_node_backward, (event.node_id, event.grad_outputs, event.grads))])

    def _on_grad_accumulated(self, event):
        grad = event.tensor.grad if event.tensor is not None else None
        self._backward_ran([(Recorder._bind_grad, (event.tensor_id, grad._array if grad is not None else None,
                                                   not event.first))])

    def _backward_ran(self, gradients):
        """Node and leaf gradients of the backward pass under way, ``(bind, arguments)`` in
        the engine's order: bound now, or after the logged work (see :meth:`_settle`)."""
        if not self._in_backward:
            return
        if self._log:
            self._log.extend(gradients)
        else:
            for bind, arguments in gradients:
                bind(self, *arguments)

    def _bind_node_backward(self, autograd_id, grad_outputs, grads):
        """Autograd node ``autograd_id`` ran its backward: received ``grad_outputs`` and
        gave its inputs ``grads``."""
        node_id = self._autograd_nodes.get(autograd_id)
        if node_id is None:
            return
        self._place_in_backward(node_id)
        frame = self._frame
        frame.revision += 1
        if not self.grads:
            return
        if grad_outputs:
            grad = grad_outputs[0]
            if grad is not None:
                frame.grads[node_id] = _raw(grad)
        edges = self._inputs.get(node_id)
        if edges and grads:
            # the gradient each input received from this node (the chain rule's outgoing
            # part); the non-None gradients belong, in order, to the inputs that need one
            grads = [grad for grad in grads if grad is not None]
            if len(grads) == len(edges):
                edge_grads = frame.edge_grads
                for edge, grad in zip(edges, grads):
                    edge_grads[id(edge)] = _raw(grad)

    def _bind_grad(self, tensor_id, grad, earlier=False):
        """The leaf with uid ``tensor_id`` accumulated a gradient (``grad``, its array, or None)
        into a ``.grad`` that held one already (``earlier``: another pass's)."""
        node_id = self._ids.get(tensor_id)
        if node_id is None:
            return
        self._place_in_backward(node_id)
        self._frame.revision += 1
        if self.grads and grad is not None:
            self._frame.grads[node_id] = grad
            if earlier:
                self._frame.earlier.add(node_id)

    def _on_backward_end(self, event):
        if not self._in_backward:
            return
        self._in_backward = False
        self._backward_done = self.records_forward
        # an optimizer step comes next and changes the parameters in place
        self._freeze_log()
        self._frame.freeze_values(_copy_array)
        self._frame.revision += 1

    def _on_optimizer_step(self, event):
        self._steps.append([event, None])
        self._step_count += 1

    _on_mark = _on_optimizer_step

    def result(self):
        """The graph of the current iteration, with its statistics, groups and the step history."""
        with self.lock:
            self._settle()
            structure = self.graph
            replay = self._replay
            if replay is not None and replay.position < len(replay.entries):
                # repeating the previous structure, part-way: as far as it got
                node_count, edge_count = replay.counts(replay.position)
                structure = Graph(nodes=structure.nodes[:node_count], edges=structure.edges[:edge_count])
            return self._materialise(structure, self._frame, self._hierarchy if self.records_forward else None)

    @property
    def steps(self):
        """The optimizer steps and marks kept (at most ``max_steps``), as JSON-ready dicts."""
        with self.lock:
            return self._step_list()

    def name_nodes(self, namespace):
        """Label the nodes of tensors found in ``namespace`` (a frame's locals) that have no
        name of their own with the variable's name (``loss``, ``h``)."""
        tensors, _ = tensors_by_name(namespace)
        with self.lock:
            self._settle()
            for name, tensor in tensors:
                node_id = self._resolve(tensor)
                if node_id is not None:
                    node = self.graph.node(node_id)
                    if node.name is None and node.label in (node.op, None, _leaf_label(tensor, node.kind)):
                        node.label = name
            self._frame.revision += 1

    # --- materialising -------------------------------------------------------------
    @gc_paused()
    def _materialise(self, structure, frame, hierarchy):
        """A :class:`Graph` of ``structure`` with the statistics of ``frame``'s arrays and the
        groups of ``hierarchy`` (None: the structure's own), reused until the frame changes
        (assembled by :func:`.assembly.assemble_graph`)."""
        self._untold = self._watchers
        key = id(frame)
        cached = self._materialised.get(key)
        revision = (frame.revision, self._step_count)
        if cached is not None and cached[0] == revision and cached[1] is structure:
            return cached[2]
        graph = assemble_graph(structure, frame, hierarchy, self._consumers, self._step_list())
        self._materialised[key] = (revision, structure, graph)
        return graph

    def _step_list(self):
        return step_list(self._steps)


#: Recorder's handler of each event kind (functions, not bound methods: a recorder holding its
#: own bound methods would be a reference cycle, and its graph garbage only a full collection frees)
_HANDLERS = {kind: getattr(Recorder, "_on_" + kind) for kind in Recorder.KINDS}


class trace:
    """Record the ops run inside the block into a :class:`Graph`.

    Example::

        with vizgrad.trace() as tr:
            loss = ((w * x).sum() - 1) ** 2
            loss.backward()
        tr.graph.to_html("graph.html")

    ``vizgrad.trace(matrix)`` with a Tensor (PyTorch's ``torch.trace``) is something else: the
    sum of the matrix's main diagonal, as :meth:`Tensor.trace`; code written for PyTorch runs
    unchanged. Any other first argument opens a recording block.
    """

    def __new__(cls, values=True, *args, **kwargs):
        if "input" in kwargs and not args:      # trace(input=matrix), PyTorch's keyword
            values = kwargs.pop("input")
        if isinstance(values, Tensor):
            from ..ops.linalg import matrix_trace
            if args or kwargs:
                from ..errors import ArgumentTypeError
                raise ArgumentTypeError("trace: trace(input) takes a single tensor (the matrix whose diagonal it sums)")
            return matrix_trace(values)
        return super().__new__(cls)

    def __init__(self, values=True, grads=True, source=True, max_steps=300, max_nodes=5000, summary_rate=20.0):
        self.recorder = Recorder(values, grads, source, max_steps, max_nodes, summary_rate)

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
        return self.recorder.steps
