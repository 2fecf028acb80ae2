"""The graph model at real model sizes: groups (modules with their types and shape
signatures, composite functions, repeated blocks), shared parameters, constants, custom
Functions, source lines, the backward pass of a graph drawn after ``loss.backward()``,
and what ``vg.show`` and ``vg.graph`` make of a tensor."""

import json
import os

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.autograd import observers
from vizgrad.render import dot as dot_module
from vizgrad.trace import Graph
from vizgrad.trace.call_sites import _role


@pytest.fixture(autouse=True)
def no_listener_leaks():
    yield
    assert observers.active == []


def validate(graph):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates the Graph JSON against its schema")
    data = json.loads(graph.to_json())
    jsonschema.Draft202012Validator(Graph.schema()).validate(data)
    assert Graph.from_json(graph.to_json()).to_json() == graph.to_json()
    return data


def groups_by_name(graph):
    return {group.name: group for group in graph.groups}


def members(graph, group):
    return [node for node in graph.nodes if node.group == group.id]


# --- models -------------------------------------------------------------------------------
class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2))
        self.flatten = nn.Flatten()
        self.classifier = nn.Linear(16, 3)

    def forward(self, x):
        return self.classifier(self.flatten(self.features(x)))


class RNN(nn.Module):
    """An unrolled Elman RNN: one cell, its weights shared by every step."""

    def __init__(self, inputs=3, hidden=4):
        super().__init__()
        self.cell = nn.Linear(inputs + hidden, hidden)
        self.hidden = hidden

    def forward(self, xs):
        h = vg.zeros(xs.shape[1], self.hidden)
        for x in xs:
            h = self.cell(vg.cat([x, h], dim=1)).tanh()
        return h


class Block(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)

    def forward(self, x):
        return x + self.down(self.up(self.norm(x)).relu())


class TinyTransformer(nn.Module):
    def __init__(self, width=8, blocks=4):
        super().__init__()
        self.embed = nn.Linear(5, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(blocks)])
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


# --- modules ---------------------------------------------------------------------------------
def test_a_cnn_is_grouped_by_module_with_types_and_shape_signatures():
    vg.manual_seed(0)
    model = SmallCNN()
    x = vg.randn(2, 1, 4, 4)
    before = model.features[1].running_mean.numpy().copy()
    with vg.trace() as tr:
        loss = F.cross_entropy(model(x), vg.tensor([0, 2]))
        loss.backward()
    graph = tr.graph
    groups = groups_by_name(graph)
    assert {name: group.label for name, group in groups.items() if group.kind == "module"} == {
        "features": "Sequential", "features.0": "Conv2d(1→4, 3×3)", "features.1": "BatchNorm2d(4)",
        "features.2": "ReLU", "features.3": "MaxPool2d", "flatten": "Flatten", "classifier": "Linear(16→3)"}
    assert groups["features.1"].type == "BatchNorm2d" and groups["features.1"].parent == groups["features"].id
    ids = [group.id for group in graph.groups]
    assert all(ids.index(group.parent) < ids.index(group.id) for group in graph.groups if group.parent)
    # a BatchNorm is one op with its parameters inside; its running statistics moved, unseen
    inside = members(graph, groups["features.1"])
    assert sorted((node.kind, node.op or node.name) for node in inside) == [
        ("op", "Normalize"), ("parameter", "features.1.bias"), ("parameter", "features.1.weight")]
    assert not np.allclose(model.features[1].running_mean.numpy(), before)
    conv = members(graph, groups["features.0"])
    assert {node.name for node in conv if node.kind == "parameter"} == {"features.0.weight", "features.0.bias"}
    validate(graph)


def test_a_batch_norm_in_evaluation_keeps_its_buffers_in_its_box():
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    model.eval()
    with vg.trace() as tr:
        model(vg.randn(4, 3)).sum().backward()
    graph = tr.graph
    bn = groups_by_name(graph)["1"]
    inside = members(graph, bn)
    assert {node.name or node.label for node in inside if node.kind == "constant"} == {
        "1.running_mean", "1.running_var"}                           # the buffers
    assert all(node.op is None or node.group == bn.id for node in inside)
    # in evaluation batch norm is one op (as PyTorch's NativeBatchNormBackward0), drawn in BatchNorm1d's box
    assert [node.op for node in inside if node.op] == ["NormalizeWithStatistics"]
    assert [g.kind for g in graph.groups] == ["module", "module"]


def test_an_unrolled_rnn_draws_its_shared_weights_once():
    vg.manual_seed(0)
    model = RNN()
    xs = vg.randn(5, 2, 3)
    with vg.trace() as tr:
        loss = model(xs).pow(2).sum()
        loss.backward()
    graph = tr.graph
    weights = [node for node in graph.nodes if node.name == "cell.weight"]
    assert len(weights) == 1 and weights[0].uses == 5 and weights[0].kind == "parameter"
    cell = groups_by_name(graph)["cell"]
    assert cell.label == "Linear(7→4)" and weights[0].group == cell.id
    assert [node.op for node in members(graph, cell) if node.op] == ["Linear"] * 5
    assert all(node.uses == (0 if node.kind == "output" else node.uses) for node in graph.nodes)
    edges_out = {}
    for edge in graph.edges:
        edges_out[edge.source] = edges_out.get(edge.source, 0) + 1
    assert all(node.uses == edges_out.get(node.id, 0) for node in graph.nodes)
    # drawn once, with its count
    attrs = dot_module.to_dot(graph, collapse=False)
    assert attrs.count("cell.weight\\n") == 1 and "used 5×" in attrs
    validate(graph)


def test_a_transformer_like_model_folds_its_identical_blocks():
    vg.manual_seed(0)
    model = TinyTransformer()
    with vg.trace() as tr:
        model(vg.randn(2, 5)).pow(2).mean().backward()
    graph = tr.graph
    blocks = [group for group in graph.groups if group.type == "Block"]
    assert [group.name for group in blocks] == [f"blocks.{i}" for i in range(4)]
    assert [group.repeat for group in blocks] == [{"count": 4, "index": i} for i in range(4)]
    assert len({group.signature for group in blocks}) == 1
    assert groups_by_name(graph)["embed"].signature != groups_by_name(graph)["head"].signature   # 5→8 vs 8→3
    labels = {group.label for group in graph.groups if group.parent == blocks[0].id}
    assert labels == {"LayerNorm(8)", "Linear(8→16)", "Linear(16→8)"}
    assert len(graph.nodes) > dot_module.COLLAPSE_ABOVE
    # big enough to start collapsed, at the deepest level that fits: each layer one box
    default = graph.to_dot()
    assert default.count("shape=box3d") == 12 and "Linear(8→16)\\nblocks.0.up" in default
    assert not any(f'"{node.id}" [' in default for node in graph.nodes if node.group in dot_module.collapsed_groups(graph))
    source = graph.to_dot(collapse_above=20)      # a smaller budget: four blocks, one box
    assert source.count("Block ×4") == 1 and "blocks.0 … blocks.3" in source and source.count("shape=box3d") == 1
    expanded = graph.to_dot(collapse=False)
    assert "×4" not in expanded and expanded.count("LayerNorm(8)") == 4
    validate(graph)


def test_composite_functions_are_groups_of_their_primitive_ops():
    logits = vg.randn(4, 3, requires_grad=True)
    target = vg.tensor([0, 1, 2, 1])
    with vg.trace() as tr:
        loss = F.cross_entropy(logits, target) + F.mse_loss(logits, vg.zeros(4, 3)) + F.softmax(logits, dim=1).sum()
    graph = tr.graph
    ops_of = {}
    for node in graph.nodes:
        if node.op:
            ops_of.setdefault(node.group, []).append(node.op)
    functions = [group for group in graph.groups if group.kind == "function"]
    assert all(len(ops_of[group.id]) >= 2 for group in functions)      # a single op is no group
    names = {group.name: ops_of[group.id] for group in functions}
    # cross_entropy and mse_loss are composites today; a loss made one op draws as that op
    for name in ("cross_entropy", "mse_loss"):
        if name in names:
            assert len(names[name]) >= 2
    assert names.get("cross_entropy", ["LogSoftmax", "NllLoss"]) == ["LogSoftmax", "NllLoss"]
    assert "softmax" not in names and ops_of[None].count("Softmax") == 1
    assert graph.to_dot(collapse=["cross_entropy"]).count("shape=box3d") == (1 if "cross_entropy" in names else 0)


def test_modules_in_a_module_called_twice_stay_one_group():
    layer = nn.Linear(2, 2)
    model = nn.Sequential(layer, nn.Tanh(), layer)     # tied: the same module twice
    with vg.trace() as tr:
        model(vg.ones(1, 2)).sum().backward()
    linear, tanh = tr.graph.groups                    # (the module is named after its last place: "2")
    assert (linear.label, tanh.label) == ("Linear(2→2)", "Tanh")
    assert [node.op for node in members(tr.graph, linear) if node.op] == ["Linear", "Linear"]
    assert next(node for node in tr.graph.nodes if node.name == f"{linear.name}.weight").uses == 2


# --- constants, custom functions, labels, source lines -------------------------------------------
def test_constants_are_nodes_with_their_values():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    data = vg.tensor([3.0, 4.0])
    with vg.trace() as tr:
        y = (x * 2 + data).sum() - 0.5
    graph = tr.graph
    constants = [node for node in graph.nodes if node.kind == "constant"]
    assert [(node.label, node.shape, node.value["sample"]) for node in constants] == [
        ("2", [], [2.0]), ("data", [2], [3.0, 4.0]), ("0.5", [], [0.5])]
    mul = next(node for node in graph.nodes if node.op == "Mul")
    assert [(e.source, e.index) for e in graph.edges if e.target == mul.id] == [("n0", 0), (constants[0].id, 1)]
    root = graph.nodes[-1]
    assert root.label == "y" and root.value["sample"] == [12.5]      # a scalar shows its value
    assert "= 12.5" in graph.to_dot()
    validate(graph)


def test_a_custom_function_is_one_node_whatever_it_does_inside():
    class Cube(vg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            square = x * x
            return square * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = vg.tensor([1.0, 2.0], requires_grad=True)
    with vg.trace() as tr:
        cubes = Cube.apply(x)
        loss = cubes.sum()
        loss.backward()
    graph = tr.graph
    assert [(node.kind, node.op, node.label) for node in graph.nodes] == [
        ("leaf", None, "x"), ("op", "Cube", "cubes"), ("output", "Sum", "loss")]
    assert graph.backward_order == ["n2", "n1", "n0"]
    np.testing.assert_allclose(graph.node("n0").grad["sample"], [3.0, 12.0])


def test_unnamed_tensors_get_informative_labels():
    w = vg.randn(2, 3, requires_grad=True)
    with vg.trace() as tr:
        (w @ vg.ones(3, 4)).sum()
    labels = [node.label for node in tr.graph.nodes]
    assert labels[:2] == ["w", "input (3, 4)"]             # data the graph reads, not requiring grad
    leaf = vg.randn(5, requires_grad=True)
    assert vg.graph(leaf * 3).nodes[0].label == "input (5,)"


def test_source_lines_point_at_the_users_code():
    def helper(t):
        return t.exp() * 2              # the line recorded for Exp and Mul

    line = helper.__code__.co_firstlineno + 1
    x = vg.tensor([1.0], requires_grad=True)
    model = nn.Sequential(nn.Linear(1, 1))
    with vg.trace() as tr:
        F.mse_loss(model(helper(x)), vg.zeros(1))
    sources = {node.op: node.source for node in tr.graph.nodes if node.op}
    assert sources["Exp"]["line"] == line and sources["Exp"]["file"] == __file__
    assert sources["Exp"]["code"] == "return t.exp() * 2              # the line recorded for Exp and Mul"
    package = os.path.dirname(vg.__file__)
    assert all(not source["file"].startswith(package) for source in sources.values())
    assert all("frozen" not in source["file"] for source in sources.values())
    # runpy and the like are never the user's code; vizgrad's own demo is
    assert _role("<frozen runpy>") == "library" and _role(os.path.join(package, "cli.py")) == "user"
    assert _role(os.path.join(package, "nn", "linear.py")) == "library"


# --- a tensor's graph after loss.backward() ----------------------------------------------------------
def rnn_loss(seed):
    vg.manual_seed(seed)
    model = RNN()
    xs = vg.randn(4, 2, 3)
    return model, model(xs).pow(2).mean()


def canonical_order(graph):
    return [(graph.node(i).op or graph.node(i).name, tuple(graph.node(i).shape)) for i in graph.backward_order]


def test_a_graph_drawn_after_backward_replays_it_in_the_engines_order():
    with vg.trace() as tr:
        model_traced, traced_loss = rnn_loss(1)
        traced_loss.backward()
    model, loss = rnn_loss(1)
    assert vg.graph(loss).backward == {"source": None, "note": None} and vg.graph(loss).backward_order == []
    loss.backward()
    graph = vg.graph(loss, names={"model": model, "loss": loss})
    assert graph.backward["source"] == "graph" and "vizgrad.trace()" in graph.backward["note"]
    assert tr.graph.backward["source"] == "recorded"
    assert canonical_order(graph) == canonical_order(tr.graph)          # what the engine ran, in its order
    assert [graph.node(i).backward_index for i in graph.backward_order] == list(range(len(graph.nodes)))
    for name, parameter in model.named_parameters():
        node = next(n for n in graph.nodes if n.name == parameter.name)
        np.testing.assert_allclose(node.grad["sample"], parameter.grad.numpy().ravel()[:6], rtol=1e-6)
        assert node.grad["norm"] == pytest.approx(float(np.linalg.norm(parameter.grad.numpy())), rel=1e-5)
    # the gradients that were not kept are not made up; the output shows the one backward started from
    assert all(node.grad is None for node in graph.nodes if node.op and node.kind != "output")
    assert graph.nodes[-1].grad["mean"] == 1.0 and graph.nodes[-1].grad["shape"] == []
    # the model in the namespace types the groups; the variable names the loss
    assert groups_by_name(graph)["cell"].label == "Linear(7→4)" and graph.nodes[-1].label == "loss"
    weight = next(n for n in graph.nodes if n.name == "cell.weight")
    assert weight.uses == 4 and weight.group == groups_by_name(graph)["cell"].id
    validate(graph)


def test_retained_gradients_are_shown_in_a_graph_drawn_after_backward():
    x = vg.tensor([1.0, -2.0], requires_grad=True)
    hidden = x.tanh()
    hidden.retain_grad()
    loss = (hidden * 3).sum()
    loss.backward()
    graph = vg.graph(loss, names=locals())
    node = next(n for n in graph.nodes if n.label == "hidden")
    np.testing.assert_allclose(node.grad["sample"], hidden.grad.numpy())
    assert next(n for n in graph.nodes if n.op == "Mul").grad is None


def test_graph_arguments_values_and_names():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    out = (w * w).sum()
    plain = vg.graph(out, values=False)
    assert plain.nodes[0].value is None and plain.nodes[-1].value["sample"] == [5.0]   # the scalar keeps its value
    assert [n.label for n in plain.nodes] == ["input (2,)", "Mul", "Sum"]
    named = vg.graph(out, names={"w": w, "out": out, "_hidden": w})
    assert [n.label for n in named.nodes] == ["w", "Mul", "out"]
    assert named.nodes[0].value["sample"] == [1.0, 2.0]


def test_show_draws_the_tensors_history_with_its_backward_and_the_callers_names(monkeypatch):
    pytest.importorskip("IPython")
    from vizgrad.render import notebook
    shown = []
    monkeypatch.setattr(notebook, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda data, metadata=None, raw=False: shown.append((data, metadata)))
    weights = vg.tensor([0.5, -1.0], requires_grad=True)
    prediction = (weights * 3).tanh()
    loss = prediction.sum()
    vg.ones(3) * 4                                        # unrelated work: not part of loss's history
    loss.backward()
    vg.show(loss, collapse=False, max_nodes=50, show_grads=False, rankdir="LR", title="my loss", collapse_above=10)
    data, metadata = shown[-1]
    graph = data[notebook.MIME_TYPE]
    assert [node["label"] for node in graph["nodes"]] == ["weights", "Mul", "prediction", "loss"]
    assert graph["backward"]["source"] == "graph" and len(graph["backward_order"]) == 4
    dot = metadata[notebook.MIME_TYPE]["dot"]
    assert "rankdir=LR" in dot and 'label="my loss"' in dot and "penwidth=3" not in dot


@pytest.mark.parametrize("collapse", [None, False, [], 1, "cell", ["cell"]])
def test_to_dot_takes_every_form_of_collapse(collapse):
    model, loss = rnn_loss(0)
    loss.backward()
    graph = vg.graph(loss, names={"model": model})
    source = graph.to_dot(collapse=collapse)
    boxes = source.count("shape=box3d")
    assert boxes == (1 if collapse in (1, "cell", ["cell"]) else 0)
    dot_module.to_dot(graph, collapse=collapse, max_nodes=5)       # and within a node budget
