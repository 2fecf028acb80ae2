"""Property tests over random expression graphs.

Hypothesis draws a small DAG of registered smooth elementwise ops: leaves of
broadcast-compatible shapes, then unary ops from a list of ones that are safe on
their (adjusted) domain and binary ops that broadcast. Over any such graph:

1. backward agrees with central finite differences (gradcheck);
2. building and running the same graph twice gives the same backward order, and
   that order is topological (the visual layers replay it);
3. gradients of two uses of the graph accumulate: d(f + f)/dx = 2 df/dx, whether the
   two uses share one output, come from two builds, or are two backward calls.

Ops come from :data:`vizgrad.ops.registry.OPS`, so a name missing there is left out.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import vizgrad
from vizgrad.autograd import AccumulateGrad, gradcheck, observers
from vizgrad.ops.registry import OPS

# Unary ops and their domain: "real" takes any value, "positive" gets x*x + 0.5 instead of x.
UNARY_DOMAINS = {
    "neg": "real", "sin": "real", "cos": "real", "tanh": "real", "sigmoid": "real", "erf": "real",
    "exp": "real", "expm1": "real", "square": "real",
    "log": "positive", "log1p": "positive", "sqrt": "positive", "rsqrt": "positive", "reciprocal": "positive",
}
# Binary ops and which operand must be positive (None: neither).
BINARY_DOMAINS = {"add": None, "sub": None, "mul": None, "div": 1, "pow": 0}


def _usable(names):
    return sorted(name for name in names
                  if name in OPS and OPS[name].differentiable and OPS[name].smooth)


UNARY = _usable(UNARY_DOMAINS)
BINARY = _usable(BINARY_DOMAINS)
LIMIT = 100.0  # graphs whose values grow past this are skipped: finite differences lose accuracy


@dataclass(frozen=True, eq=False)
class Graph:
    """Leaves of ``leaf_shapes`` holding ``leaf_values``, then ``steps``: ``(op, i)`` or
    ``(op, i, j)`` where ``i`` and ``j`` index earlier nodes (leaves first)."""

    leaf_shapes: tuple
    steps: tuple
    leaf_values: tuple


def _broadcastable(draw, shape):
    """A shape that broadcasts to ``shape``: leading dims dropped, some dims set to 1."""
    dropped = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else n for n in shape[dropped:])


@st.composite
def graphs(draw):
    rank = draw(st.integers(0, 2))
    full = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    shapes = tuple(_broadcastable(draw, full) for _ in range(draw(st.integers(1, 3))))
    steps = []
    count = len(shapes)
    for _ in range(draw(st.integers(1, 6))):
        node = st.integers(0, count - 1)
        if BINARY and (not UNARY or draw(st.booleans())):
            steps.append((draw(st.sampled_from(BINARY)), draw(node), draw(node)))
        else:
            steps.append((draw(st.sampled_from(UNARY)), draw(node)))
        count += 1
    values = tuple(draw(hnp.arrays(np.float64, shape, elements=st.floats(-2.0, 2.0)))
                   for shape in shapes)
    return Graph(shapes, tuple(steps), values)


def _positive(x):
    return x * x + 0.5


def evaluate(graph, leaves):
    """The graph's output (every node flows into it) and all its nodes."""
    nodes = list(leaves)
    used = set()
    for name, *operands in graph.steps:
        used.update(operands)
        args = [nodes[i] for i in operands]
        if len(args) == 1 and UNARY_DOMAINS[name] == "positive":
            args = [_positive(args[0])]
        elif len(args) == 2 and BINARY_DOMAINS[name] is not None:
            position = BINARY_DOMAINS[name]
            args[position] = _positive(args[position])
        nodes.append(OPS[name].function(*args))
    output = nodes[-1]
    for index, node in enumerate(nodes[:-1]):  # nothing dangles: unused nodes join the output
        if index not in used:
            output = output + node
    return output, nodes


def make_leaves(graph, backend):
    return [vizgrad.tensor(value, device=backend, requires_grad=True) for value in graph.leaf_values]


def _host(tensor):
    return np.array(tensor._backend().to_numpy(tensor._array))


def _assume_tame(graph, backend):
    """Skip graphs whose values leave [-LIMIT, LIMIT] (exp of exp, 1/small, ...)."""
    with vizgrad.no_grad():
        _, nodes = evaluate(graph, make_leaves(graph, backend))
    for node in nodes:
        values = _host(node)
        assume(np.all(np.isfinite(values)) and np.all(np.abs(values) <= LIMIT))


def _ones_like(tensor):
    return vizgrad.ones(tensor.shape, dtype=tensor.dtype, device=tensor.device)


PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])

pytestmark = pytest.mark.skipif(not UNARY or not BINARY, reason="no smooth elementwise ops registered")


@PROPERTY_SETTINGS
@given(graph=graphs())
def test_gradients_match_finite_differences(graph, backend):
    _assume_tame(graph, backend)
    assert gradcheck(lambda *leaves: evaluate(graph, leaves)[0], tuple(make_leaves(graph, backend)))


class _BackwardOrder(observers.Observer):
    """Records the nodes the engine runs backward through, in order."""

    def __init__(self):
        self.nodes = []

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        self.nodes.append(node)


def _backward_order(graph, backend):
    """(op name, creation rank) of each node in backward order; ranks replace ids,
    which differ between builds. Also checks that the order is topological."""
    output, _ = evaluate(graph, make_leaves(graph, backend))
    recorder = _BackwardOrder()
    detach = observers.attach(recorder)
    try:
        output.backward(_ones_like(output))
    finally:
        detach()
    position = {id(node): index for index, node in enumerate(recorder.nodes)}
    for index, node in enumerate(recorder.nodes):
        for edge in node.next_edges:
            if edge is not None and type(edge[0]) is not AccumulateGrad:
                assert position.get(id(edge[0]), len(position)) > index, (
                    f"{edge[0].name()} ran before {node.name()}, which feeds it its gradient")
    ranks = {node_id: rank for rank, node_id in enumerate(sorted(node.id for node in recorder.nodes))}
    return [(node.op.__name__, ranks[node.id]) for node in recorder.nodes]


@PROPERTY_SETTINGS
@given(graph=graphs())
def test_backward_order_is_deterministic(graph, backend):
    first = _backward_order(graph, backend)
    second = _backward_order(graph, backend)
    assert first == second
    assert len(first) >= len(graph.steps)


@PROPERTY_SETTINGS
@given(graph=graphs())
def test_gradients_of_two_uses_accumulate(graph, backend):
    _assume_tame(graph, backend)
    leaves = make_leaves(graph, backend)
    output, _ = evaluate(graph, leaves)
    once = [_host(g) for g in vizgrad.autograd.grad(output, leaves, _ones_like(output))]

    def check(leaves, how):
        for leaf, expected in zip(leaves, once):
            assert leaf.grad is not None, f"{how}: a leaf got no gradient"
            np.testing.assert_allclose(_host(leaf.grad), 2 * expected, rtol=1e-12, atol=1e-12, err_msg=how)

    leaves = make_leaves(graph, backend)  # one output used twice: f + f
    output, _ = evaluate(graph, leaves)
    (output + output).backward(_ones_like(output))
    check(leaves, "f + f")

    leaves = make_leaves(graph, backend)  # two builds over the same leaves
    first, _ = evaluate(graph, leaves)
    second, _ = evaluate(graph, leaves)
    (first + second).backward(_ones_like(first))
    check(leaves, "f(x) + f(x) built twice")

    leaves = make_leaves(graph, backend)  # two backward calls add into .grad
    for _ in range(2):
        output, _ = evaluate(graph, leaves)
        output.backward(_ones_like(output))
    check(leaves, "two backward calls")
