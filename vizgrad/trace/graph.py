"""The graph model: what a trace recorded, as plain data with a versioned JSON form.

A :class:`Graph` is a value graph: every node is a tensor (a leaf, a parameter, a
constant, an op result or an output), an op-result node names the op that made it,
and edges run from an op's inputs to its result, in input order. ``groups`` are the
hierarchy drawn around the nodes: the modules whose forward made them (their
parameters and buffers included) and the composite functions (``cross_entropy``,
``batch_norm``...) made of several primitive ops. ``backward_order`` lists the nodes
in the order backward visited them, and ``backward`` says where that order came from
(a recorded pass, or the graph after an unrecorded ``loss.backward()``); ``steps``
holds the history of optimizer steps and marks. A graph made inside a forward-AD dual level
also has each node's ``tangent`` and ``forward_order`` (the nodes carrying tangents, in the
order forward mode computed them).

``Graph.to_json()`` is the contract with every front end (widgets, HTML report,
JupyterLab renderer); ``vizgrad/trace/graph.schema.json`` documents it. Node ids
(``"n0"``, ``"n1"``, ...) follow first appearance, so the same program gives the
same JSON every run.
"""

import contextlib
import gc
import json
import os
from dataclasses import dataclass, field
from typing import Optional

try:                       # vizgrad[widgets] brings orjson: Jupyter's messages use it too
    import orjson
except ImportError:
    orjson = None

SCHEMA_VERSION = 4     # 2: groups, node group and uses, constants, backward; 3: no bin_edges, flat matrices;
                       # 4: node tangent, forward_order (1 to 3 read)
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "graph.schema.json")
NODE_KINDS = ("leaf", "parameter", "constant", "op", "output")


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a graph is built or converted (also a
    decorator). A graph of thousands of nodes makes tens of thousands of small dicts and
    lists, none of them in a reference cycle, and each batch of them would set off a
    collection that walks every object alive: paused, building takes about half the time."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def shape_text(shape):
    """A shape as Python prints a tuple: ``()``, ``(3,)``, ``(2, 3)``."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


@dataclass
class GraphNode:
    """One tensor of the graph. ``value``, ``grad`` and ``tangent`` (forward AD's) are
    :class:`vizgrad.events.TensorStats` dictionaries (or None when not recorded). A graph's
    nodes, edges and statistics of one shape may share one ``shape`` list (thousands of them, in
    a big graph): read it, never change it."""

    id: str
    kind: str
    label: str
    shape: list
    dtype: str
    device: str = "cpu"
    op: Optional[str] = None
    name: Optional[str] = None
    module: str = ""
    source: Optional[dict] = None
    requires_grad: bool = False
    value: Optional[dict] = None
    grad: Optional[dict] = None
    backward_index: Optional[int] = None
    group: Optional[str] = None
    uses: int = 0
    grad_note: Optional[str] = None
    tangent: Optional[dict] = None


def shallow_copy(item):
    """A copy of a node or an edge that shares its field values: what ``copy.copy`` makes,
    several times faster (a graph of thousands of nodes is copied on every read)."""
    copied = object.__new__(type(item))
    copied.__dict__.update(item.__dict__)
    return copied


@dataclass
class GraphGroup:
    """A box drawn around nodes: a module (``kind="module"``, ``name`` its qualified name,
    ``type`` its class) or a composite function's call (``kind="function"``). ``signature``
    is equal for structurally identical modules; ``repeat`` (``{"count", "index"}``) marks
    runs of consecutive identical siblings, which front ends may fold into one box."""

    id: str
    kind: str
    name: str
    type: str
    label: str
    parent: Optional[str] = None
    signature: str = ""
    repeat: Optional[dict] = None


@dataclass
class GraphEdge:
    """Data flows from ``source`` into input ``index`` of the op that made ``target``.
    After backward, ``grad`` holds the statistics of the gradient that flowed back along
    this edge (the target op's contribution to the source's gradient), when recorded."""

    source: str
    target: str
    index: int
    shape: list
    grad: Optional[dict] = None


@dataclass
class Graph:
    """A recorded computation graph (see the module docstring)."""

    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    backward_order: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    truncated: bool = False
    groups: list = field(default_factory=list)
    backward: dict = field(default_factory=lambda: {"source": None, "note": None})
    forward_order: list = field(default_factory=list)

    # --- queries ------------------------------------------------------------
    def node(self, node_id):
        # ids follow first appearance: node "n7" is usually self.nodes[7] (a subset is searched)
        digits = node_id[1:] if isinstance(node_id, str) and node_id.startswith("n") else ""
        if digits.isdigit() and int(digits) < len(self.nodes) and self.nodes[int(digits)].id == node_id:
            return self.nodes[int(digits)]
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"no node {node_id!r} in this graph")

    def group(self, group_id):
        for group in self.groups:
            if group.id == group_id:
                return group
        raise KeyError(f"no group {group_id!r} in this graph")

    def inputs_of(self, node_id):
        """Ids of the nodes feeding ``node_id``, in input order."""
        return [edge.source for edge in sorted((e for e in self.edges if e.target == node_id),
                                               key=lambda e: e.index)]

    def __len__(self):
        return len(self.nodes)

    def __repr__(self):
        ops = sum(1 for n in self.nodes if n.kind == "op" or n.op)
        return (f"<vizgrad Graph: {len(self.nodes)} nodes ({ops} ops), {len(self.edges)} edges, "
                f"{len(self.backward_order)} backward steps>")

    # --- JSON ------------------------------------------------------------------
    @gc_paused()
    def to_dict(self):
        """The Graph JSON as Python data: one new dict per node, edge and group (a shallow
        copy: their ``value``, ``grad``, ``source`` and ``repeat`` dicts are shared, not copied,
        so that sending a graph of thousands of nodes stays cheap)."""
        return {**self._envelope(), "nodes": [_fields_of(n) for n in self.nodes],
                "edges": [_fields_of(e) for e in self.edges], "groups": [_fields_of(g) for g in self.groups]}

    def to_json_bytes(self, **fields):
        """The Graph JSON as compact UTF-8 bytes (what a widget sends), ``fields`` replacing
        top-level ones (``steps=[]``). With orjson the nodes, edges and groups are encoded
        straight from their dataclasses, with no dict made per node (see :func:`json_bytes`)."""
        if orjson is None:
            return json_bytes({**self.to_dict(), **fields})
        return orjson.dumps({**self._envelope(), "nodes": self.nodes, "edges": self.edges, "groups": self.groups,
                             **fields})

    def _envelope(self):
        """The top-level fields, in the schema's order (nodes, edges and groups as they are;
        ``forward_order`` only when there are tangents)."""
        envelope = {"schema": "vizgrad.graph", "version": SCHEMA_VERSION, "nodes": self.nodes, "edges": self.edges,
                    "backward_order": list(self.backward_order), "steps": list(self.steps),
                    "truncated": self.truncated, "groups": self.groups, "backward": dict(self.backward)}
        if self.forward_order:
            envelope["forward_order"] = list(self.forward_order)
        return envelope

    def to_json(self, indent=None):
        """The graph as JSON text, following ``graph.schema.json``."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=_finite)

    @classmethod
    def from_dict(cls, data):
        if data.get("schema") != "vizgrad.graph":
            raise ValueError("not a vizgrad graph: the 'schema' field must be 'vizgrad.graph'")
        if data.get("version", 0) > SCHEMA_VERSION:
            raise ValueError(f"this graph uses schema version {data.get('version')}; this vizgrad reads "
                             f"up to {SCHEMA_VERSION}")
        return cls(nodes=[GraphNode(**n) for n in data["nodes"]], edges=[GraphEdge(**e) for e in data["edges"]],
                   backward_order=list(data.get("backward_order", [])), steps=list(data.get("steps", [])),
                   truncated=bool(data.get("truncated", False)),
                   groups=[GraphGroup(**g) for g in data.get("groups", [])],
                   forward_order=list(data.get("forward_order", [])),
                   backward=dict(data.get("backward") or {"source": "recorded" if data.get("backward_order")
                                                            else None, "note": None}))

    @classmethod
    def from_json(cls, text):
        """Read what :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))

    @staticmethod
    def schema():
        """The JSON Schema (a dict) that :meth:`to_json` follows."""
        return schema()

    # --- rendering ----------------------------------------------------------------
    # vizgrad.render does the work and installs itself here (``Graph.renderer``) when it is
    # imported, which ``import vizgrad`` does: the graph model never imports its renderers.
    renderer = None

    def _render(self, method, *args, **options):
        return getattr(Graph.renderer, method)(self, *args, **options)

    def to_dot(self, **options):
        """Graphviz DOT source (see :func:`vizgrad.render.dot.to_dot` for the options)."""
        return self._render("to_dot", **options)

    def to_svg(self, **options):
        """An SVG picture laid out by Graphviz (needs pygraphviz or the graphviz package)."""
        return self._render("to_svg", **options)

    def to_html(self, path=None, **options):
        """A self-contained HTML page (no server, no network); written to ``path`` if given."""
        return self._render("to_html", path, **options)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The notebook output (see :mod:`vizgrad.render.notebook`): interactive in
        JupyterLab with vizgrad's extension, kernel or not; elsewhere a small interactive
        HTML output around a bounded Graphviz drawing, and that drawing as SVG."""
        return self._render("mimebundle")

    def _repr_html_(self):
        """The bundle's ``text/html`` alone, for front ends that ask only for HTML (IPython
        never calls it beside :meth:`_repr_mimebundle_`, which has it): tens of KB, no iframe."""
        return self._render("repr_html")

    def _repr_svg_(self):
        """An SVG picture laid out by Graphviz; None where Graphviz's layout is missing."""
        return self._render("repr_svg")


def _fields_of(item):
    """A node's, edge's or group's fields as a dict (what ``dataclasses.asdict`` gives, without
    its deep copy of every statistic: a live view converts its graph many times a second).
    Their ``__dict__`` holds exactly their fields, in order (orjson encodes it the same way)."""
    return item.__dict__.copy()


def json_bytes(data):
    """``data`` (what :meth:`Graph.to_dict` gives, or any JSON-ready data) as compact UTF-8
    JSON bytes: what a widget sends and a notebook output carries. orjson encodes where it is
    installed (about seven times faster than the standard library on a graph of thousands of
    nodes, whose statistics are most of its numbers), the standard library elsewhere. Graph
    data holds no NaN or inf (statistics say None), so both give the same JSON data.

    Example::

        json.loads(json_bytes(graph.to_dict())) == graph.to_dict()
    """
    if orjson is not None:
        return orjson.dumps(data)
    return json.dumps(data, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode()


def _finite(value):
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def schema():
    """The JSON Schema of :meth:`Graph.to_json`."""
    with open(SCHEMA_PATH) as handle:
        return json.load(handle)
