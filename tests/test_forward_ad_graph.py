"""Forward-mode AD in the graph views: a graph made inside ``forward_ad.dual_level()`` carries
each node's tangent (the same statistics as its value and gradient) and ``forward_order``;
GraphView replays it (the ``flow`` trait, "forward step 3 of 9: ...")."""

import json

import jsonschema
import numpy as np
import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.autograd import forward_ad
from vizgrad.trace import Graph
from vizgrad.trace.history import _history
from vizgrad.trace.statistics import stats_dict


def mlp_under_make_dual(x_requires_grad=True):
    """A two-layer MLP applied to a dual input, its tensors kept, and the graph of its loss
    (made inside the level): ``(graph, ids, tensors by name, tangent of the loss)``."""
    vg.manual_seed(0)
    first, second = nn.Linear(3, 4), nn.Linear(4, 2)
    x0 = vg.randn(5, 3, requires_grad=x_requires_grad)
    direction = vg.randn(5, 3)
    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, direction)
        h = first(x)
        a = h.tanh()
        out = second(a)
        square = out * out
        loss = square.mean()
        tensors = {"x": x, "h": h, "a": a, "out": out, "square": square, "loss": loss}
        graph, ids, _ = _history(loss, True, names=locals())
        tangents = {name: forward_ad.unpack_dual(tensor).tangent for name, tensor in tensors.items()}
    return graph, ids, tensors, tangents


def assert_same_stats(shown, expected):
    """The same statistics (a graph computes those of one shape together: the last bits may differ)."""
    assert shown.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert shown[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
        elif key in ("sample", "matrix"):
            assert shown[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert shown[key] == value, key


def test_every_node_shows_the_tangent_unpack_dual_reads():
    graph, ids, tensors, tangents = mlp_under_make_dual()
    with_tangent = set()
    for name, tensor in tensors.items():
        node = graph.node(ids[tensor.grad_fn])
        assert_same_stats(node.tangent, stats_dict(tangents[name]))
        assert node.tangent["shape"] == list(tensor.shape)
        first = tangents[name].numpy().reshape(-1)[:len(node.tangent["sample"])]
        np.testing.assert_allclose(node.tangent["sample"], first, rtol=1e-6)
        with_tangent.add(node.id)
    # the parameters, the primal x0 and the Mul's output-only inputs carry none
    assert {node.id for node in graph.nodes if node.tangent is not None} == with_tangent
    assert [node.kind for node in graph.nodes if node.tangent is None] == ["leaf", "parameter", "parameter",
                                                                          "parameter", "parameter"]
    # the loss's tangent is ∂loss/∂x · t, the directional derivative: against a central difference
    model, x0, direction = _replay_model(tensors), tensors["x"].detach(), tangents["x"]
    with vg.no_grad():
        ahead, behind = (float((model(x0 + step * direction) ** 2).mean()) for step in (1e-3, -1e-3))
    assert graph.node(ids[tensors["loss"].grad_fn]).tangent["mean"] == pytest.approx((ahead - behind) / 2e-3, rel=1e-3)


def _replay_model(tensors):
    """The MLP of ``tensors`` as a plain function of its input, from the graph's own modules."""
    first_node = tensors["h"].grad_fn
    second_node = tensors["out"].grad_fn
    first_w, first_b = (edge[0].variable for edge in first_node.next_edges[1:])
    second_w, second_b = (edge[0].variable for edge in second_node.next_edges[1:])
    return lambda x: (x @ first_w.T + first_b).tanh() @ second_w.T + second_b


def test_forward_order_is_a_topological_order_of_the_nodes_with_tangents():
    graph, ids, tensors, _ = mlp_under_make_dual()
    order = graph.forward_order
    assert len(order) == len(set(order)) == len(tensors)
    assert set(order) == {node.id for node in graph.nodes if node.tangent is not None}
    position = {node_id: index for index, node_id in enumerate(order)}
    checked = 0
    for edge in graph.edges:
        if edge.source in position and edge.target in position:
            assert position[edge.source] < position[edge.target], (edge.source, edge.target)
            checked += 1
    assert checked == 6          # x → h → a → out → square (twice: out * out) → loss
    assert order[0] == ids[tensors["x"].grad_fn] and order[-1] == ids[tensors["loss"].grad_fn]


def test_the_graph_json_with_tangents_follows_the_schema_and_reads_back():
    graph, *_ = mlp_under_make_dual()
    data = json.loads(graph.to_json())
    jsonschema.validate(data, Graph.schema())
    assert data["version"] == 4 and data["forward_order"] == graph.forward_order
    assert Graph.from_json(graph.to_json()).forward_order == graph.forward_order
    assert json.loads(graph.to_json_bytes()) == data
    bad = {**data, "nodes": [{**data["nodes"][0], "tangent": {"mean": 1}}] + data["nodes"][1:]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, Graph.schema())


def test_outside_a_dual_level_a_graph_has_no_tangents():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    graph = vg.graph((x * 3).sum())
    assert all(node.tangent is None for node in graph.nodes) and graph.forward_order == []
    assert "forward_order" not in json.loads(graph.to_json())
    # a graph made after the level ended shows none of its tangents either
    graph, ids, tensors, _ = mlp_under_make_dual()
    later = vg.graph(tensors["loss"])
    assert later.forward_order == [] and all(node.tangent is None for node in later.nodes)


def test_temporaries_keep_their_tangents_and_a_dual_leaf_alone_shows_its_own():
    vg.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x0, t = vg.randn(2, 3), vg.randn(2, 3)
    with forward_ad.dual_level():
        x = forward_ad.make_dual(x0, t)        # x0 needs no gradient: x is not in the history
        y = model(x).sum()
        graph = vg.graph(y)
        expected = forward_ad.unpack_dual(y).tangent
        lone = vg.graph(x)
    ops = [graph.node(node_id).op for node_id in graph.forward_order]
    assert ops == ["Linear", "Tanh", "Linear", "Sum"]
    assert_same_stats(graph.node(graph.forward_order[-1]).tangent, stats_dict(expected))
    assert len(lone.nodes) == 1 and lone.forward_order == ["n0"]
    assert_same_stats(lone.nodes[0].tangent, stats_dict(t))


def test_a_backward_pass_and_tangents_in_one_graph():
    vg.manual_seed(2)
    w = vg.randn(3, requires_grad=True)
    with forward_ad.dual_level():
        x = forward_ad.make_dual(vg.randn(3, requires_grad=True), vg.ones(3))
        y = (x * w).sum()
        y.backward()
        graph = vg.graph(y)
    assert graph.backward["source"] == "graph" and len(graph.backward_order) > 0
    assert [graph.node(node_id).op for node_id in graph.forward_order] == ["View", "Mul", "Sum"]
    # ẏ = Σ ẋ·w with ẋ = 1: the sum of w
    assert graph.node(graph.forward_order[-1]).tangent["mean"] == pytest.approx(float(w.sum()))


widgets = pytest.importorskip("vizgrad.widgets", reason="GraphView needs anywidget: pip install 'vizgrad[widgets]'")


def test_graph_view_replays_the_tangents_and_toggles_its_flow():
    GraphView = widgets.GraphView
    vg.manual_seed(3)
    a = vg.randn(4, requires_grad=True)
    with forward_ad.dual_level():
        x = forward_ad.make_dual(vg.randn(4, requires_grad=True), vg.ones(4))
        b = x * a
        y = b.tanh().sum()
        view = GraphView(y)
    try:
        assert view.flow == "forward" and view.order == view.graph["forward_order"]
        assert view.get_state()["flow"] == "forward"
        assert view.step_text == "forward step 4 of 4: y (n5)"
        view.seek(1)
        assert view.step_text == "forward step 2 of 4: b (n3)" and view.active_node == "n3"
        assert "4 forward steps" in view.status
        y.backward()
        view._updates.flush()
        assert view.flow == "backward"          # backward is the default once both are there
        assert view.step_text.startswith(f"backward step {len(view.timeline)} of {len(view.timeline)}")
        view.flow = "forward"                    # the toggle: the forward replay, every step shown
        assert view.step_index == 3 and view.step_text == "forward step 4 of 4: y (n5)"
        view.step(-10)
        assert view.step_text == "before forward (0 of 4 steps)"
        view._updates.flush()
        assert view.flow == "forward"            # chosen: a push keeps it
        view.set_state({"flow": "backward", "step_index": len(view.timeline) - 1})     # the browser's toggle
        assert view.flow == "backward" and view.active_node == view.timeline[-1]
        with pytest.raises(vg.errors.ArgumentError, match='flow must be "backward" or "forward", got \'sideways\''):
            view.flow = "sideways"
    finally:
        view.close()
    with pytest.raises(vg.errors.ArgumentError, match="GraphView: flow must be"):
        GraphView(y, flow="up")
