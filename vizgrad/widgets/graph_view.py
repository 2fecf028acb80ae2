"""``GraphView``: the computation graph as a live widget, with its backward pass replayed.

The view shows a graph (laid out by Graphviz in the browser) and, once backward has
run, a timeline of the backward pass that can be played, paused, stepped and
scrubbed: the node being differentiated glows, the edges its gradient flows along are
highlighted, and a side panel spells out that node's chain rule (the gradient it
received, its local derivative, the gradient it passes to each input, with shapes and
a few values). Clicking a node opens an inspector (value and gradient statistics,
histograms, a heatmap of 2-D tensors, the source line). Modules collapse and expand
(click a cluster, a collapsed module or the module list); nodes are coloured by
gradient size, NaN/inf gradients flagged; large graphs are summarised.

Example::

    view = GraphView(loss)        # the graph of loss's history, and nothing else
    view                          # show it
    loss.backward()               # the view shows loss's backward pass as it happens
    view.step(-3)                 # or drive it from Python: view.step_index, view.selected
    print(view.step_text)         # "backward step 4 of 6: Tanh (n5)", as the widget says it

Predict, then reveal: ``GraphView(loss, predict=True)`` hides each node's gradient (in the
panels and in the drawing's colours) until the learner, stepping through the backward pass,
writes what they expect it to be; the view then shows it and marks the guess right or wrong
(within 1% or 0.001). ``view.predictions`` holds the guesses, ``view.score`` counts them.

Forward mode: a view made inside ``forward_ad.dual_level()`` of a tensor computed from dual
tensors also replays the tangents flowing forward (``flow="forward"``; the default when no
backward pass ran, a toggle when both did): each step lights the node whose tangent forward
AD computed and the edges the tangents came along, and the side panel spells out the
Jacobian-vector product there (the tangents in, the local derivatives, ẏ = J·ṫ)::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, t)
        y = model(x).sum()
        view = GraphView(y)       # view.step_text: "forward step 3 of 9: Mul (n4)"

A view of a tensor shows that tensor's history (named after the caller's variables) and
follows only its backward pass; made after ``loss.backward()``, it replays that pass in the
order the engine ran it, with the gradients that were kept. Following new work is for
``GraphView()`` with no argument (records everything from now on, one graph per
forward/backward iteration, the latest shown), ``GraphView(trace)`` (follows a
``vizgrad.trace()`` block or a Recorder that is still recording) and ``live=True``.
``GraphView(graph)`` shows a recorded :class:`vizgrad.Graph`. Updates reach the browser at
most ``max_rate`` times per second.
"""

import json
import sys

import traitlets

from ..render import dot as dot_module
from ..trace import Graph, Recorder
from ..trace import graph as graph_of
from ..trace.graph import gc_paused
from ..trace import trace as trace_block
from ..errors import ArgumentError, ArgumentTypeError
from . import checks
from .base import VizgradWidget

#: Event kinds that change what the view shows.
BACKWARD_EVENTS = frozenset({"backward_start", "node_backward", "grad_accumulated", "backward_end"})
GRAPH_EVENTS = BACKWARD_EVENTS | {"op", "module_forward"}


class GraphView(VizgradWidget):
    """An interactive computation graph with its backward replay (see the module docstring).

    Args:
        source: a Tensor (its history), a ``vizgrad.trace`` block or :class:`Recorder`, a
            :class:`Graph`, or None (record from now on).
        live: None (the default): a tensor's view follows the tensor's own backward pass,
            None and a recording trace or Recorder follow everything. True: also a tensor's
            view records every new op. False: show what there is now, never listen.
            Ignored for a finished :class:`Graph`.
        max_nodes: node budget of the drawing; past it only the nodes nearest the output
            are drawn (see :func:`vizgrad.render.dot.to_dot`).
        max_rate: updates per second at most while live.
        collapse: the modules to draw collapsed at first (names, or group ids); [] draws
            every node. By default graphs of more than 40 nodes start collapsed at the
            deepest module level that fits, and the browser collapses further, a level at a
            time, while the fitted drawing's labels would be under 11 px (``auto_collapse``).
        predict: prediction mode: each gradient stays hidden until the learner has written a
            prediction of it in the stepper (see the module docstring).
        flow: "backward" or "forward", the replay shown; by default the backward pass, or
            the tangents when the graph has those and no backward pass.

    Synced traits: ``graph_json`` (the Graph JSON as one buffer of UTF-8 JSON text: the browser
    lays it out; :attr:`graph` reads it back as Python data), ``timeline`` (node ids
    in backward order), ``step_index`` (the position in ``timeline`` of the backward step
    shown, -1 before the first: the widget and :attr:`step_text` say "backward step
    ``step_index + 1`` of ``len(timeline)``"), ``playing``, ``selected`` (a node id or
    None), ``collapsed`` and ``modules`` (module names), ``auto_collapse`` (True while the
    view picks what is collapsed: the browser then collapses further until the graph opens
    legible; False once the user chose), ``show_minimap`` (the overview button),
    ``revision`` (counts graph updates), ``live``, ``status``, ``predict`` (prediction
    mode) and ``predictions`` (node id → ``{"guess", "correct", "expected", "message"}``,
    written by the browser as the learner reveals each gradient), ``flow`` ("backward" or
    "forward": the replay shown; ``step_index`` then counts steps of the graph's
    ``forward_order``: :attr:`order`). ``dot`` is the graph's DOT source as drawn with the
    current ``collapsed`` (for export; worked out when read, never while displaying).
    """

    _bundle = "graph-widget"

    graph_json = traitlets.Bytes(b"{}").tag(sync=True)
    timeline = traitlets.List().tag(sync=True)      # node ids (str): set by Python only, so not checked one by one
    step_index = traitlets.Int(-1).tag(sync=True)
    playing = traitlets.Bool(False).tag(sync=True)
    steps_per_second = traitlets.Float(2.0).tag(sync=True)
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)
    auto_collapse = traitlets.Bool(True).tag(sync=True)
    show_minimap = traitlets.Bool(True).tag(sync=True)
    modules = traitlets.List().tag(sync=True)       # module names (str): set by Python only, as timeline
    revision = traitlets.Int(0).tag(sync=True)
    live = traitlets.Bool(False).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    predict = traitlets.Bool(False).tag(sync=True)
    predictions = traitlets.Dict().tag(sync=True)
    flow = traitlets.Unicode("backward").tag(sync=True)

    def __init__(self, source=None, live=None, max_nodes=300, max_rate=20, collapse=None, predict=False, flow=None,
                 **kwargs):
        # everything is checked before the widget opens its comm: a refused view leaves nothing behind
        if not (source is None or isinstance(source, (Graph, Recorder, trace_block)) or hasattr(source, "grad_fn")):
            raise ArgumentTypeError(f"GraphView: source must be a Tensor, a vizgrad.trace, a Recorder, a Graph or None, "
                                    f"got {checks.describe(source)}")
        if not isinstance(predict, bool):
            raise ArgumentTypeError(f"GraphView: predict must be True or False, got {type(predict).__name__} {predict!r}")
        if live is not None:
            checks.check_bool("GraphView", "live", live)
        max_nodes = checks.check_count("GraphView", "max_nodes", max_nodes)
        checks.check_rate("GraphView", "max_rate", max_rate)
        if collapse is not None and not isinstance(collapse, str) and not (
                isinstance(collapse, (list, tuple, set)) and all(isinstance(name, str) for name in collapse)):
            raise ArgumentTypeError(f"GraphView: collapse must be a module name, a list of them or None, "
                                    f"got {checks.describe(collapse)}")
        checks.check_widget_options("GraphView", type(self), kwargs)
        if flow is not None:
            _check_flow(flow)
        self._flow_chosen = flow is not None     # else the view picks (backward when it has one)
        self._forward_order = []
        self._pushing = True               # the constructor's traits are set, not chosen by a click
        super().__init__(predict=predict, **({"flow": flow} if flow is not None else {}), **kwargs)
        self.max_nodes = max_nodes
        self._recorder = None
        self._static = None
        self._parsed = (None, {})        # (graph_json, the data it holds): graph reads it once
        self._pushing = False
        self._updates = self._coalescer(max_rate)

        if isinstance(source, trace_block):
            source = source.recorder
        if isinstance(source, Graph):
            self._static = source
        elif isinstance(source, Recorder):
            self._recorder = source
            if live is not False and source._subscription is not None:
                # someone else's recorder, still recording: redraw (at most max_rate times a
                # second) after its ops and backward passes; it computes what is drawn then
                self._subscriptions.append(source.watch(self._on_followed_change))
        elif source is None:
            self._recorder = Recorder()
            if live is not False:
                self._subscribe(self._on_event, kinds=GRAPH_EVENTS)
        elif hasattr(source, "grad_fn"):
            names = sys._getframe(1).f_locals         # the caller's variables name the nodes
            if live is False:
                self._static = graph_of(source, names=names)
            else:
                self._recorder = Recorder.from_tensor(source, forward=bool(live), names=names)
                if live:
                    self._subscribe(self._on_event, kinds=GRAPH_EVENTS)
                else:
                    self._subscribe(self._on_own_backward, kinds=BACKWARD_EVENTS)
        if collapse is not None:
            self.auto_collapse = False
            self._pushing = True          # the first push below draws it
            try:
                self.collapsed = [collapse] if isinstance(collapse, str) else list(collapse)
            finally:
                self._pushing = False
        self.live = self.listening
        with self.hold_sync():          # the first graph goes in one message
            self._push()

    # --- the graph ------------------------------------------------------------------
    @property
    def current_graph(self):
        """The :class:`Graph` shown now."""
        if self._static is not None:
            return self._static
        with self._updates.lock:
            return self._recorder.result()

    @property
    def graph(self):
        """The Graph JSON shown (``graph_json`` as Python data, parsed when first read)."""
        text, data = self._parsed
        if text is not self.graph_json:
            data = json.loads(self.graph_json)
            self._parsed = (self.graph_json, data)
        return data

    def node(self, node_id):
        """The shown graph's node ``node_id`` (a :class:`vizgrad.trace.GraphNode`)."""
        return self.current_graph.node(node_id)

    def close(self):
        """Close the view and let go of its graph at once (a closed view shows an empty graph):
        a widget's traits and callbacks form reference cycles, so what it holds would otherwise
        wait for a full garbage collection, walked object by object."""
        super().close()
        self._recorder, self._static, self._parsed = None, Graph(), (None, {})
        self.graph_json = b"{}"

    def stop(self):
        """Stop listening to the engine: the view keeps what it shows."""
        self._updates.flush()
        self._stop_listening()
        self.live = False
        self._set_status(self.current_graph)

    # --- replay and selection ---------------------------------------------------------
    @property
    def order(self):
        """The node ids of the replay shown: ``timeline`` (backward), or the graph's
        ``forward_order`` when ``flow`` is "forward"."""
        return self._forward_order if self.flow == "forward" else self.timeline

    def step(self, delta=1):
        """Move the replay ``delta`` steps (clamped); stops playback."""
        self.playing = False
        self.step_index = max(-1, min(len(self.order) - 1, self.step_index + int(delta)))
        return self.step_index

    def seek(self, index):
        """Show step ``index`` of the replay (-1: before the first; negative counts from the
        end below -1 are not accepted)."""
        self.playing = False
        self.step_index = max(-1, min(len(self.order) - 1, int(index)))
        return self.step_index

    def play(self):
        """Play the replay in the browser (from the start if at the end)."""
        if self.order:
            if self.step_index >= len(self.order) - 1:
                self.step_index = -1
            self.playing = True

    def pause(self):
        self.playing = False

    @property
    def step_text(self):
        """The step shown, as the widget words it: "backward step 3 of 9: Linear (n7)",
        "before backward (0 of 9 steps)", "no backward pass recorded"; in forward mode
        "forward step 3 of 9: Mul (n4)", "before forward (0 of 9 steps)"."""
        order, flow = self.order, self.flow
        total = len(order)
        if total == 0:
            return "no backward pass recorded" if flow == "backward" else "no tangents recorded"
        if self.step_index < 0:
            return f"before {flow} (0 of {total} steps)"
        node_id = order[self.step_index]
        node = next((node for node in self.graph.get("nodes", ()) if node["id"] == node_id), None)
        name = (node.get("name") or node.get("label") or node.get("op") or node["kind"]) if node else node_id
        return f"{flow} step {self.step_index + 1} of {total}: {name} ({node_id})"

    @property
    def score(self):
        """Prediction mode's tally: ``(right, answered)`` over the gradients revealed so far."""
        return sum(1 for entry in self.predictions.values() if entry.get("correct")), len(self.predictions)

    @property
    def active_node(self):
        """The id of the node at the current step of the replay shown, or None."""
        if 0 <= self.step_index < len(self.order):
            return self.order[self.step_index]
        return None

    def select(self, node_id):
        """Open the inspector on ``node_id`` (None closes it)."""
        if node_id is not None and node_id not in {node.id for node in self.current_graph.nodes}:
            raise KeyError(f"no node {node_id!r} in the shown graph")
        self.selected = node_id

    def collapse(self, *modules):
        """Draw ``modules`` as single nodes."""
        self.auto_collapse = False
        self.collapsed = sorted(set(self.collapsed) | set(modules))

    def expand(self, *modules):
        """Draw ``modules`` (all when none are named) with their nodes."""
        self.auto_collapse = False
        self.collapsed = [] if not modules else [m for m in self.collapsed if m not in modules]

    @traitlets.validate("step_index")
    def _valid_step(self, proposal):
        return max(-1, min(len(self.order) - 1, proposal["value"]))

    @traitlets.validate("flow")
    def _valid_flow(self, proposal):
        return _check_flow(proposal["value"])

    @traitlets.observe("flow")
    def _flow_changed(self, change):
        if self._pushing:
            return
        self._flow_chosen = True          # the user (Python or the toggle) chose
        self.playing = False
        self.step_index = len(self.order) - 1      # the new flow opens with every step shown

    @traitlets.observe("collapsed")
    def _collapsed_changed(self, change):
        if self._pushing:
            return
        self.auto_collapse = False       # the user (Python or a click) chose
        self._updates.request(self._push, key="graph")

    # --- events -------------------------------------------------------------------------
    def _on_event(self, event):
        with self._updates.lock:     # a delivery in the timer's thread never sees a half-recorded event
            self._recorder.handle(event)
        self._updates.request(self._push, key="graph")

    def _on_own_backward(self, event):
        with self._updates.lock:
            following = self._recorder.in_backward
            self._recorder.handle(event)
            following = following or self._recorder.in_backward
        if following:                # a backward pass of this graph, not of another
            self._updates.request(self._push, key="graph")

    def _on_followed_change(self):
        self._updates.request(self._push, key="graph")

    @gc_paused()
    def _push(self):
        """Send the current graph (runs at most ``max_rate`` times per second)."""
        with self._updates.lock:
            graph = self.current_graph
            data = graph.to_json_bytes(steps=[])   # the optimizer/mark history belongs to other views
            timeline = list(graph.backward_order)
            forward = list(graph.forward_order)
        collapse = effective_collapse(graph, None if self.auto_collapse else self.collapsed)
        following = self.step_index >= len(self.order) - 1     # at the end: stay at the end
        self._pushing = True
        try:
            self.graph_json = data
            self.modules = module_names(graph)
            if self.auto_collapse:
                self.collapsed = collapse
            new_iteration = timeline[:len(self.timeline)] != self.timeline
            self._forward_order = forward
            self.timeline = timeline
            shown = self.flow
            if not self._flow_chosen:
                self.flow = "forward" if forward and not timeline else "backward"
            if following or self.flow != shown or (new_iteration and self.flow == "backward"):
                self.step_index = len(self.order) - 1
            if self.selected is not None and self.selected not in {node.id for node in graph.nodes}:
                self.selected = None
            self.revision += 1
            self._set_status(graph)
        finally:
            self._pushing = False

    @property
    def dot(self):
        """The graph's DOT source, drawn as the view's ``collapsed`` says (see
        :func:`vizgrad.render.dot.to_dot`); the browser never needs it."""
        return dot_module.to_dot(self.current_graph, collapse=self.collapsed, max_nodes=self.max_nodes)

    def _set_status(self, graph):
        ops = sum(1 for node in graph.nodes if node.op)
        parts = [f"{len(graph.nodes)} nodes, {ops} ops"]
        if graph.backward_order:
            parts.append(f"{len(graph.backward_order)} backward steps")
        if graph.forward_order:
            parts.append(f"{len(graph.forward_order)} forward steps")
        if graph.truncated:
            parts.append("truncated at the recorder's node budget")
        bad = [node.id for node in graph.nodes if node.grad and (node.grad["nan_count"] or node.grad["inf_count"])]
        if bad:
            parts.append(f"NaN/inf gradient in {len(bad)} node{'s' if len(bad) > 1 else ''}")
        if self.listening:
            parts.append("live" if self._recorder is None or self._recorder.records_forward else "follows its backward")
        self.status = " · ".join(parts)

    # --- static fallback --------------------------------------------------------------------
    def _fallback_text(self):
        graph = self.current_graph
        return f"<GraphView: {graph!r}; {self.step_text}>"

    def _fallback_svg(self):
        """The graph drawn as the view collapses it, bounded (:mod:`vizgrad.render.inline`)."""
        return self._static_outputs()["image/svg+xml"]

    def _fallback_html(self):
        """The same drawing, panned, zoomed and inspected by a small inline script."""
        outputs = self._static_outputs()
        return outputs.get("text/html") or outputs["image/svg+xml"]

    def _static_outputs(self):
        """vg.show's outputs for front ends without widgets, for the graph and ``collapsed``
        shown (one layout for both fallbacks: kept until either changes)."""
        from ..render.notebook import static_outputs
        from ..trace.graph import shallow_copy
        hidden = bool(getattr(self, "predict", False))         # prediction mode gives no gradient away
        key = (self.revision, tuple(self.collapsed), self.auto_collapse, hidden)
        cached = getattr(self, "_static_cache", None)
        if cached is None or cached[0] != key:
            graph = self.current_graph
            if hidden:
                nodes = [shallow_copy(node) for node in graph.nodes]
                for node in nodes:
                    node.grad = None
                graph = Graph(nodes=nodes, edges=graph.edges, groups=graph.groups)
            collapse = None if self.auto_collapse else (self.collapsed or False)
            cached = (key, static_outputs(graph, title="GraphView", collapse=collapse, show_grads=not hidden))
            self._static_cache = cached
        return cached[1]


def _check_flow(flow):
    if flow not in ("backward", "forward"):
        raise ArgumentError(f'GraphView: flow must be "backward" or "forward", got {flow!r}')
    return flow


def module_names(graph):
    """Every module of ``graph`` (parents before children, in order of first appearance)."""
    groups, _ = dot_module.hierarchy_of(graph)
    return [group.name for group in groups if group.kind == "module"]


def effective_collapse(graph, collapsed, collapse_above=dot_module.COLLAPSE_ABOVE):
    """The groups drawn collapsed: ``collapsed`` when the user chose, else what
    :func:`vizgrad.render.dot.collapsed_groups` picks (graphs of more than ``collapse_above``
    nodes: the deepest level that fits), as a sorted list of module names (a composite
    function's group by its id: its name is not unique), [] when nothing is collapsed."""
    if collapsed is not None:
        return sorted(collapsed)
    groups, _ = dot_module.hierarchy_of(graph)
    chosen = dot_module.collapsed_groups(graph, None, collapse_above)
    return sorted(group.name if group.kind == "module" else group.id for group in groups if group.id in chosen)
