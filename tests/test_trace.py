"""vizgrad.trace(), vizgrad.graph(tensor) and the Graph JSON contract."""

import gc
import inspect
import json
import weakref

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import observers
from vizgrad.trace import Graph, Recorder

@pytest.fixture(autouse=True)
def no_listener_leaks():
    yield
    assert observers.active == []


def validate(graph):
    """The graph's JSON, checked against the published schema (when jsonschema is installed)."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates the Graph JSON against its schema")
    data = json.loads(graph.to_json())
    jsonschema.Draft202012Validator(Graph.schema()).validate(data)
    return data


def here():
    """The line number of the caller's line."""
    return inspect.currentframe().f_back.f_lineno


class Affine(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = vg.nn.Parameter(vg.tensor([[1.0, 2.0], [3.0, 4.0]]))
        self.bias = vg.nn.Parameter(vg.tensor([0.5, -0.5]))

    def forward(self, x):
        return x @ self.weight + self.bias


class Net(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = Affine()

    def forward(self, x):
        return self.fc(x).tanh()


def traced_program():
    """A fixed little training step, traced; returns the trace and the line numbers of its ops."""
    net = Net()
    x = vg.tensor([[1.0, -1.0]])
    x.name = "x"
    with vg.trace() as tr:
        y = net(x)
        line_loss = here() + 1
        loss = (y * y).sum()
        loss.backward()
    return tr, line_loss, net


def test_trace_records_nodes_with_kinds_labels_shapes_modules_and_sources():
    tr, line_loss, net = traced_program()
    graph = tr.graph
    kinds = [(n.id, n.kind, n.label, n.shape, n.module) for n in graph.nodes]
    assert kinds == [
        ("n0", "constant", "x", [1, 2], ""),            # data: neither requiring grad nor a parameter
        ("n1", "parameter", "fc.weight", [2, 2], ""),
        ("n2", "op", "MatMul", [1, 2], "fc"),
        ("n3", "parameter", "fc.bias", [2], ""),
        ("n4", "op", "Add", [1, 2], "fc"),
        ("n5", "op", "y", [1, 2], graph.nodes[5].module),       # named after the block's variables
        ("n6", "op", "Mul", [1, 2], ""),
        ("n7", "output", "loss", [], ""),
    ]
    by_id = {n.id: n for n in graph.nodes}
    assert by_id["n2"].op == "MatMul" and by_id["n0"].op is None and by_id["n1"].name == "fc.weight"
    assert by_id["n0"].requires_grad is False and by_id["n1"].requires_grad is True
    assert all(n.dtype == "float32" and n.device == "cpu" for n in graph.nodes)
    # op nodes point at the user's line, not at vizgrad's internals
    assert by_id["n6"].source == {"file": __file__, "line": line_loss, "code": "loss = (y * y).sum()"}
    assert by_id["n7"].source["line"] == line_loss
    forward_line = inspect.getsourcelines(Affine.forward)[1] + 1
    assert by_id["n2"].source == {"file": __file__, "line": forward_line,
                                  "code": "return x @ self.weight + self.bias"}
    assert by_id["n0"].source is None                       # leaves are not made by an op
    # value statistics
    assert by_id["n2"].value["mean"] == pytest.approx(-2.0)    # [1, -1] @ W = [-2, -2]
    assert by_id["n7"].value["shape"] == []


def test_trace_edges_follow_data_flow_with_input_indices_and_shapes():
    graph = traced_program()[0].graph
    edges = [(e.source, e.target, e.index, e.shape) for e in graph.edges]
    assert edges == [
        ("n0", "n2", 0, [1, 2]), ("n1", "n2", 1, [2, 2]),
        ("n2", "n4", 0, [1, 2]), ("n3", "n4", 1, [2]),
        ("n4", "n5", 0, [1, 2]),
        ("n5", "n6", 0, [1, 2]), ("n5", "n6", 1, [1, 2]),
        ("n6", "n7", 0, [1, 2]),
    ]
    assert graph.inputs_of("n4") == ["n2", "n3"]
    assert graph.inputs_of("n0") == []


def test_trace_backward_order_and_grad_statistics():
    tr, _, net = traced_program()
    graph = tr.graph
    # ops newest first, then each parameter as its gradient lands; x needs no gradient
    assert graph.backward_order == ["n7", "n6", "n5", "n4", "n3", "n2", "n1"]
    assert [graph.node(i).backward_index for i in graph.backward_order] == list(range(7))
    assert graph.node("n0").backward_index is None and graph.node("n0").grad is None
    # gradient statistics: the loss gets 1; a parameter's is its .grad
    assert graph.node("n7").grad["mean"] == 1.0
    weight_grad = net.fc.weight.grad.numpy()
    stats = graph.node("n1").grad
    assert stats["shape"] == [2, 2]
    assert stats["norm"] == pytest.approx(float(np.linalg.norm(weight_grad)))
    assert stats["min"] == pytest.approx(float(weight_grad.min()))
    # an op node's grad is the gradient with respect to its output: y = tanh(-2 + b), dL/dy = 2y
    y = np.tanh(np.array([-1.5, -2.5]))
    assert graph.node("n5").grad["mean"] == pytest.approx(float(np.mean(2 * y)), rel=1e-6)
    assert "8 nodes" in repr(graph)


def test_in_place_ops_keep_the_data_flow():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    with vg.trace() as tr:
        b = a * 2
        b.add_(1)
        b.relu_()
        loss = b.sum()
        loss.backward()
    graph = tr.graph
    assert [(n.kind, n.op, n.label) for n in graph.nodes] == [
        ("leaf", None, "a"), ("constant", None, "2"), ("op", "Mul", "Mul"), ("constant", None, "1"), ("op", "Add", "Add"),
        ("op", "Relu", "b"), ("output", "Sum", "loss")]       # b is, in the end, the ReLU's result
    assert [(e.source, e.target, e.index) for e in graph.edges] == [
        ("n0", "n2", 0), ("n1", "n2", 1), ("n2", "n4", 0), ("n3", "n4", 1), ("n4", "n5", 0), ("n5", "n6", 0)]
    assert graph.backward_order == ["n6", "n5", "n4", "n2", "n0"]


def test_json_validates_and_round_trips_losslessly():
    tr, _, _ = traced_program()
    graph = tr.graph
    data = validate(graph)
    assert data["schema"] == "vizgrad.graph" and data["version"] == 4
    text = graph.to_json()
    again = Graph.from_json(text)
    assert again.to_json() == text
    assert again.to_dict() == graph.to_dict()
    assert Graph.from_json(graph.to_json(indent=2)).to_json() == text


def test_two_runs_of_the_same_program_give_identical_json():
    assert traced_program()[0].graph.to_json() == traced_program()[0].graph.to_json()


def test_from_json_refuses_foreign_or_newer_data():
    with pytest.raises(ValueError, match="not a vizgrad graph"):
        Graph.from_dict({"schema": "other", "nodes": [], "edges": []})
    with pytest.raises(ValueError, match="schema version 5"):
        Graph.from_dict({"schema": "vizgrad.graph", "version": 5, "nodes": [], "edges": []})


def test_version_2_graphs_with_bin_edges_still_read_and_validate():
    """Version 3 stopped writing the statistics' bin_edges (they follow from min, max and the
    number of bins) and writes heatmaps flat; saved version 2 graphs still validate and read."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates the Graph JSON against its schema")
    data = validate(traced_program()[0].graph)
    position, stats = next((i, node["value"]) for i, node in enumerate(data["nodes"]) if node["value"])
    assert "bin_edges" not in stats
    low, high, bins = stats["min"], stats["max"], len(stats["histogram"])
    edges = [low + (high - low) * i / bins for i in range(bins + 1)]
    data["version"], data["nodes"][position]["value"] = 2, {**stats, "bin_edges": edges, "matrix": [[0.5, 1.0]]}
    jsonschema.Draft202012Validator(Graph.schema()).validate(data)          # (version 2's matrix: its rows)
    assert Graph.from_dict(data).nodes[position].value["bin_edges"] == edges


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_json_with_nan_gradients_steps_and_marks_validates():
    w = vg.tensor([1.0, -1.0], requires_grad=True)
    opt = vg.optim.SGD([w], lr=0.1, momentum=0.9)
    with vg.trace() as tr:
        loss = (w.sqrt() * 0).sum()          # sqrt(-1) = NaN: NaN values and gradients
        loss.backward()
        opt.step()
        vg.events.mark("epoch", epoch=1, loss=float("nan"), tag="first")
    graph = tr.graph
    data = validate(graph)
    sqrt = next(n for n in data["nodes"] if n["op"] == "Sqrt")
    assert sqrt["value"]["nan_count"] == 1 and sqrt["value"]["mean"] == 1.0
    param = data["nodes"][0]
    assert param["grad"]["nan_count"] == 1
    assert [s["kind"] for s in data["steps"]] == ["optimizer_step", "mark"]
    step, mark = data["steps"]
    assert step["optimizer"] == "SGD" and step["params"][0]["name"] == "param0"
    assert step["params"][0]["grad_norm"] is None                 # NaN becomes null
    assert mark == {"kind": "mark", "name": "epoch", "values": {"epoch": 1, "loss": None, "tag": "first"}}
    assert Graph.from_json(graph.to_json()).to_json() == graph.to_json()


def canonical(graph):
    """Nodes and edges named by what they compute, so two graphs can be compared whatever
    their id order."""
    keys = {}
    for node in graph.nodes:                          # inputs always come before their users
        if node.op is None:
            keys[node.id] = node.name
        else:
            keys[node.id] = (node.op, tuple(keys[s] for s in graph.inputs_of(node.id)))
    nodes = sorted((n.kind.replace("output", "op"), repr(keys[n.id]), tuple(n.shape)) for n in graph.nodes)
    edges = sorted((repr(keys[e.source]), repr(keys[e.target]), e.index, tuple(e.shape)) for e in graph.edges)
    return nodes, edges


def test_graph_of_a_tensor_matches_a_trace_of_the_same_expression():
    a = vg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    b = vg.tensor([3.0, -1.0, 0.25], requires_grad=True)
    a.name, b.name = "a", "b"
    with vg.trace() as tr:
        e = a.exp()                       # evaluated before the product it is added to
        loss = (a * b + e).sum()
    traced = tr.graph
    drawn = vg.graph(loss)
    assert canonical(drawn) == canonical(traced)
    assert len(drawn.nodes) == 6 and len(drawn.edges) == 6
    assert drawn.nodes[-1].kind == "output" and traced.nodes[-1].kind == "op"   # no backward in the trace
    validate(drawn)
    assert Graph.from_json(drawn.to_json()).to_json() == drawn.to_json()
    # a leaf alone is a one-node graph
    single = vg.graph(a)
    assert [(n.kind, n.label) for n in single.nodes] == [("leaf", "a")] and single.edges == []


def test_graph_of_a_tensor_leaves_out_inputs_without_grad():
    w = vg.nn.Parameter(vg.ones(3))
    w.name = "w"
    x = vg.tensor([1.0, 2.0, 3.0])
    out = (w * x).sum()
    graph = vg.graph(out)
    assert [(n.kind, n.op or n.label) for n in graph.nodes] == [("parameter", "w"), ("op", "Mul"), ("output", "Sum")]
    assert [(e.source, e.target, e.index) for e in graph.edges] == [("n0", "n1", 0), ("n1", "n2", 0)]
    assert graph.nodes[1].shape == [3]


# --- bounded memory -----------------------------------------------------------------------
def test_recorder_on_a_long_loop_keeps_bounded_history_and_fresh_graphs():
    w = vg.tensor([0.5, -0.5], requires_grad=True)
    x = vg.tensor([1.0, 2.0])
    opt = vg.optim.SGD([w], lr=0.01)
    sizes = set()
    with vg.trace(max_steps=8, values=False) as tr:
        for i in range(1000):
            loss = ((w * x).sum() - 1) ** 2
            loss.backward()
            opt.step()
            opt.zero_grad()
            vg.events.mark("iteration", i=i)
            sizes.add(len(tr.recorder.graph.nodes))
    recorder = tr.recorder
    assert sizes == {8}                                    # w, x, Mul, Sum, 1, Sub, 2, Pow: never growing
    assert len(tr.steps) == 8
    assert [s["values"]["i"] for s in tr.steps if s["kind"] == "mark"] == [996, 997, 998, 999]
    assert [s["kind"] for s in tr.steps] == ["optimizer_step", "mark"] * 4
    graph = tr.graph
    assert len(graph.nodes) == 8 and len(graph.backward_order) == 5 and len(graph.steps) == 8
    assert recorder.last_graph is not None and recorder.last_graph is not graph
    assert [n.id for n in recorder.last_graph.nodes] == [n.id for n in graph.nodes]
    assert len(recorder.graphs) == 2


def test_recorder_never_keeps_tensors_alive():
    w = vg.tensor(np.ones(10_000, np.float32), requires_grad=True)
    recorder = Recorder().start()
    try:
        intermediate = w * 3
        probe = weakref.ref(intermediate)
        loss = intermediate.sum()
        loss.backward()
        del intermediate, loss
        gc.collect()
        assert probe() is None
        assert [n.kind for n in recorder.result().nodes] == ["leaf", "constant", "op", "output"]   # w, 3, Mul, Sum
    finally:
        recorder.close()
    assert observers.active == []


def test_node_budget_truncates_the_graph():
    a = vg.tensor([1.0], requires_grad=True)
    with vg.trace(max_nodes=5) as tr:
        value = a
        for _ in range(10):
            value = value * 2
        value.sum().backward()
    graph = tr.graph
    assert len(graph.nodes) == 5 and graph.truncated
    ids = {n.id for n in graph.nodes}
    assert all(e.source in ids and e.target in ids for e in graph.edges)
    assert set(graph.backward_order) <= ids
    assert validate(graph)["truncated"] is True


def test_trace_options_turn_recording_off():
    a = vg.tensor([1.0, 4.0], requires_grad=True)
    with vg.trace(values=False, grads=False, source=False) as tr:
        a.sqrt().sum().backward()
    graph = tr.graph
    assert all(n.grad is None and n.source is None for n in graph.nodes)
    # values are left out, except the value of a scalar, which is what the node shows
    assert [n.value["sample"] if n.value else None for n in graph.nodes] == [None, None, [3.0]]
    assert graph.backward_order == ["n2", "n1", "n0"]
    validate(graph)


def test_version_1_graphs_still_read_and_validate():
    data = json.loads(traced_program()[0].graph.to_json())
    data["version"] = 1
    for key in ("groups", "backward"):
        del data[key]
    for node in data["nodes"]:
        del node["group"], node["uses"]
        node["kind"] = "leaf" if node["kind"] == "constant" else node["kind"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(Graph.schema()).validate(data)
    graph = Graph.from_dict(data)
    assert graph.groups == [] and graph.backward == {"source": "recorded", "note": None}   # it has a backward order
    assert all(node.group is None and node.uses == 0 for node in graph.nodes)
    assert "cluster_g0" in graph.to_dot()              # groups made from the module names it has


def test_the_graph_model_never_imports_its_renderers():
    import ast
    import pathlib
    package = pathlib.Path(vg.__file__).parent / "trace"
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "render" not in (node.module or ""), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any("render" in alias.name for alias in node.names), path.name
    graph = traced_program()[0].graph
    assert graph.to_dot().startswith("digraph vizgrad")          # drawing still works: render installed itself
