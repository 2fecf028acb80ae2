"""A computation graph you build by hand, one number at a time (lesson 01).

A :class:`Scalar` holds a value, the :class:`Scalar` objects it was computed from
(``inputs``) and, for each of them, the *local derivative* of this value with respect
to it (``local_grads``). That is all the backward pass needs: the chain rule multiplies
local derivatives along each path from the output, and adds the paths up where they
meet. ``grad`` starts at 0 and is yours to fill in.

Example::

    from vizgrad.lessons.handgraph import Scalar
    x, y = Scalar(2.0, "x"), Scalar(-3.0, "y")
    z = x * y + x          # z.inputs == (x * y, x), z.local_grads == (1.0, 1.0)
    z                      # in a notebook: the graph, each edge labelled with its local derivative
"""

import math

from ..trace import Graph, GraphEdge, GraphNode
from .figures import GraphFigure
from ..render.dot import quote


class Scalar:
    """One number of a hand-built graph (see the module docstring).

    Attributes:
        value: the number.
        grad: d(output)/d(this number), once a backward pass has filled it in (starts at 0).
        label: a name for pictures ("x"); set it on intermediate results too.
        op: the operation that made this number ("*", "tanh", ...); "" for inputs.
        inputs: the Scalars it was computed from, in order (the same one may appear twice).
        local_grads: d(this)/d(input) for each input, in the same order.
    """

    __slots__ = ("value", "grad", "label", "op", "inputs", "local_grads")

    def __init__(self, value, label="", op="", inputs=(), local_grads=()):
        self.value = float(value)
        self.grad = 0.0
        self.label = label
        self.op = op
        self.inputs = tuple(inputs)
        self.local_grads = tuple(float(g) for g in local_grads)

    # --- operations: each records its inputs and local derivatives -------------------
    def __add__(self, other):
        other = _lift(other)
        return Scalar(self.value + other.value, op="+", inputs=(self, other), local_grads=(1.0, 1.0))

    def __mul__(self, other):
        other = _lift(other)
        return Scalar(self.value * other.value, op="*", inputs=(self, other),
                      local_grads=(other.value, self.value))

    def __neg__(self):
        return Scalar(-self.value, op="neg", inputs=(self,), local_grads=(-1.0,))

    def __sub__(self, other):
        other = _lift(other)
        return Scalar(self.value - other.value, op="-", inputs=(self, other), local_grads=(1.0, -1.0))

    def __truediv__(self, other):
        other = _lift(other)
        return Scalar(self.value / other.value, op="/", inputs=(self, other),
                      local_grads=(1.0 / other.value, -self.value / other.value ** 2))

    def __pow__(self, exponent):
        if isinstance(exponent, Scalar):
            raise TypeError("Scalar ** Scalar is not supported; use a plain number as the exponent")
        return Scalar(self.value ** exponent, op=f"**{exponent:g}", inputs=(self,),
                      local_grads=(exponent * self.value ** (exponent - 1),))

    def __radd__(self, other):
        return _lift(other) + self

    def __rmul__(self, other):
        return _lift(other) * self

    def __rsub__(self, other):
        return _lift(other) - self

    def __rtruediv__(self, other):
        return _lift(other) / self

    def tanh(self):
        t = math.tanh(self.value)
        return Scalar(t, op="tanh", inputs=(self,), local_grads=(1.0 - t * t,))

    def exp(self):
        e = math.exp(self.value)
        return Scalar(e, op="exp", inputs=(self,), local_grads=(e,))

    def log(self):
        return Scalar(math.log(self.value), op="log", inputs=(self,), local_grads=(1.0 / self.value,))

    def sin(self):
        return Scalar(math.sin(self.value), op="sin", inputs=(self,), local_grads=(math.cos(self.value),))

    def cos(self):
        return Scalar(math.cos(self.value), op="cos", inputs=(self,), local_grads=(-math.sin(self.value),))

    def relu(self):
        return Scalar(max(self.value, 0.0), op="relu", inputs=(self,), local_grads=(float(self.value > 0),))

    # --- the graph ----------------------------------------------------------------------
    def topological_order(self):
        """Every Scalar this one depends on, each once, inputs before the Scalars that use
        them; ``self`` is last. (An iterative depth-first walk: deep graphs are fine.)"""
        order, done, stack = [], set(), [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in done:
                continue
            if expanded:
                done.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            for source in reversed(node.inputs):
                if id(source) not in done:
                    stack.append((source, False))
        return order

    def graph(self):
        """This Scalar's graph as a :class:`vizgrad.Graph` (ids ``n0``, ``n1``... in
        topological order)."""
        return to_graph(self)[0]

    def draw(self, highlight=(), note=None, show_grads=None):
        """A :class:`GraphFigure`: values, gradients and, on each edge, the local derivative.
        ``highlight`` takes Scalars; ``show_grads`` defaults to "once any grad is set"."""
        graph, ids = to_graph(self)
        if show_grads is None:
            show_grads = any(s.grad != 0.0 for s in self.topological_order())
        marked = [ids[id(s)] for s in ([highlight] if isinstance(highlight, Scalar) else highlight)]
        return GraphFigure(graph, marked, note=note, base_dot=_dot(self, ids, show_grads))

    def _repr_html_(self):
        return self.draw()._repr_html_()

    def __repr__(self):
        name = f"{self.label}, " if self.label else ""
        made = f", op={self.op!r}" if self.op else ""
        return f"Scalar({name}value={self.value:.6g}, grad={self.grad:.6g}{made})"


def _lift(value):
    if isinstance(value, Scalar):
        return value
    if isinstance(value, (int, float)):
        return Scalar(value, label=f"{value:g}")
    raise TypeError(f"a Scalar combines with Scalars and numbers, not {type(value).__name__}")


def to_graph(output):
    """(:class:`vizgrad.Graph`, ``{id(scalar): node id}``) for the graph that made ``output``."""
    order = output.topological_order()
    ids = {id(s): f"n{i}" for i, s in enumerate(order)}
    graph = Graph()
    for scalar in order:
        kind = "output" if scalar is output else ("op" if scalar.inputs else "leaf")
        graph.nodes.append(GraphNode(id=ids[id(scalar)], kind=kind, label=scalar.label or scalar.op, shape=[],
                                     dtype="float64", op=scalar.op or None, requires_grad=True))
        for index, source in enumerate(scalar.inputs):
            graph.edges.append(GraphEdge(ids[id(source)], ids[id(scalar)], index, []))
    return graph, ids


def _dot(output, ids, show_grads):
    shapes = {"leaf": 'shape=ellipse, style=filled, fillcolor="#eef3fb"',
              "op": 'shape=box, style="rounded,filled", fillcolor="#f4f4f4"',
              "output": 'shape=doubleoctagon, style=filled, fillcolor="#e8f5e9"'}
    lines = ["digraph handgraph {", "  graph [rankdir=LR, fontname=Helvetica, fontsize=11];",
             "  node [fontname=Helvetica, fontsize=10, penwidth=1.2];",
             '  edge [fontname=Helvetica, fontsize=9, color="#666666", arrowsize=0.7, fontcolor="#1565c0"];']
    for scalar in output.topological_order():
        kind = "output" if scalar is output else ("op" if scalar.inputs else "leaf")
        text = [f"{scalar.label} = {scalar.value:.4g}" if scalar.label else f"{scalar.value:.4g}"]
        if scalar.inputs:
            text.insert(0, scalar.op)
        if show_grads:
            text.append(f"grad {scalar.grad:.4g}")
        lines.append(f"  {quote(ids[id(scalar)])} [label={quote(chr(10).join(text))}, {shapes[kind]}];")
    for scalar in output.topological_order():
        for source, local in zip(scalar.inputs, scalar.local_grads):
            lines.append(f"  {quote(ids[id(source)])} -> {quote(ids[id(scalar)])} "
                         f"[label={quote(f'local {local:.4g}')}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
