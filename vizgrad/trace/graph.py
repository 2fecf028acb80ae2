"""The graph model: what a trace recorded, as plain data with a versioned JSON form.

A :class:`Graph` is a value graph: every node is a tensor (a leaf, a parameter, an op
result or an output), an op-result node names the op that made it, and edges run
from an op's inputs to its result, in input order. ``backward_order`` lists the
nodes in the order backward visited them; ``steps`` holds the history of optimizer
steps and marks.

``Graph.to_json()`` is the contract with every front end (widgets, HTML report,
JupyterLab renderer); ``vizgrad/trace/graph.schema.json`` documents it. Node ids
(``"n0"``, ``"n1"``, ...) follow first appearance, so the same program gives the
same JSON every run.
"""

import json
import os
from dataclasses import dataclass, field, fields
from typing import Optional

SCHEMA_VERSION = 1
SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "graph.schema.json")
NODE_KINDS = ("leaf", "parameter", "op", "output")


@dataclass
class GraphNode:
    """One tensor of the graph. ``value`` and ``grad`` are :class:`vizgrad.events.TensorStats`
    dictionaries (or None when not recorded)."""

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

    # --- queries ------------------------------------------------------------
    def node(self, node_id):
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"no node {node_id!r} in this graph")

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
    def to_dict(self):
        return {"schema": "vizgrad.graph", "version": SCHEMA_VERSION,
                "nodes": [_fields_of(n) for n in self.nodes], "edges": [_fields_of(e) for e in self.edges],
                "backward_order": list(self.backward_order), "steps": list(self.steps),
                "truncated": self.truncated}

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
                   truncated=bool(data.get("truncated", False)))

    @classmethod
    def from_json(cls, text):
        """Read what :meth:`to_json` wrote."""
        return cls.from_dict(json.loads(text))

    @staticmethod
    def schema():
        """The JSON Schema (a dict) that :meth:`to_json` follows."""
        return schema()

    # --- rendering (vizgrad.render does the work) -------------------------------
    def to_dot(self, **options):
        """Graphviz DOT source (see :func:`vizgrad.render.dot.to_dot` for the options)."""
        from ..render.dot import to_dot
        return to_dot(self, **options)

    def to_svg(self, **options):
        """An SVG picture laid out by Graphviz (needs pygraphviz or the graphviz package)."""
        from ..render.svg import to_svg
        return to_svg(self, **options)

    def to_html(self, path=None, **options):
        """A self-contained HTML page (no server, no network); written to ``path`` if given."""
        from ..render.html import to_html
        return to_html(self, path, **options)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The notebook output (see :mod:`vizgrad.render.notebook`): interactive in
        JupyterLab with vizgrad's extension, kernel or not; a picture elsewhere."""
        from ..render.notebook import mimebundle
        return mimebundle(self)

    def _repr_svg_(self):
        """An SVG picture laid out by Graphviz; None where Graphviz's layout is missing."""
        from ..render.svg import LayoutUnavailable
        try:
            return self.to_svg()
        except LayoutUnavailable:
            return None

    def _repr_html_(self):
        """The interactive page in a sandboxed frame, only where no SVG picture can be
        drawn (no Graphviz): elsewhere the notebook output keeps one light picture."""
        from ..render.html import to_html_fragment
        from ..render.svg import layout_available
        return None if layout_available() else to_html_fragment(self)


def _fields_of(item):
    """A node's or edge's fields as a dict (what ``dataclasses.asdict`` gives, without its deep
    copy of every statistic: a live view converts its graph many times a second)."""
    names = _FIELD_NAMES.get(type(item))
    if names is None:
        names = _FIELD_NAMES[type(item)] = tuple(f.name for f in fields(item))
    return {name: getattr(item, name) for name in names}


_FIELD_NAMES = {}


def _finite(value):
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def schema():
    """The JSON Schema of :meth:`Graph.to_json`."""
    with open(SCHEMA_PATH) as handle:
        return json.load(handle)
