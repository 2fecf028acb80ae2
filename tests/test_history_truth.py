"""Issue 27: a graph drawn from a tensor's history (no vizgrad.trace()) is that tensor's,
grouped by the module calls that made it, and shows only the gradients of a backward
pass that ran through it."""

import json

import jsonschema
import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn
from vizgrad.trace.graph import SCHEMA_PATH
from vizgrad.widgets import GraphView

import graph_models


def _valid(graph):
    with open(SCHEMA_PATH) as handle:
        jsonschema.validate(json.loads(graph.to_json()), json.load(handle))
    return graph


# --- truth: gradients and replays belong to the graph's own backward pass -------------------

def test_a_graph_never_backpropagated_shows_its_forward_only_and_not_another_pass_gradient():
    # lesson 00: y.backward() ran; z shares the leaf x but was never backpropagated
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    z = (x * 3).sum()
    graph = _valid(vg.graph(z, names=locals()))
    assert graph.backward_order == []
    assert graph.backward["source"] is None
    assert "No backward pass ran through this graph" in graph.backward["note"]
    leaf = next(node for node in graph.nodes if node.label == "x")
    assert leaf.grad is None                                   # [2, 4, 6] is y's, not z's
    assert leaf.grad_note == "x.grad came from another backward pass, not this graph's: it is not shown here"
    assert all(node.backward_index is None for node in graph.nodes)


def test_the_pass_that_ran_through_the_graph_is_shown_and_named_after_the_users_variable():
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    total = (x * x).sum()
    total.backward()
    graph = _valid(vg.graph(total, names=locals()))
    assert graph.backward["source"] == "graph"
    assert graph.backward["note"].startswith("total.backward() ran outside vizgrad.trace()")
    assert "loss" not in graph.backward["note"]
    leaf = next(node for node in graph.nodes if node.label == "x")
    assert leaf.grad["mean"] == pytest.approx(4.0) and leaf.grad_note is None
    assert len(graph.backward_order) == 3


def test_a_second_backward_over_shared_leaves_moves_the_gradient_to_the_second_graph():
    w = vg.tensor([1.0, -2.0], requires_grad=True)
    first = (w * 2).sum()
    second = (w ** 2).sum()
    first.backward()
    second.backward()
    theirs = vg.graph(first, names=locals())
    mine = vg.graph(second, names=locals())
    # first's graph had its pass, but w.grad has moved on: it is not first's any more
    assert next(n for n in theirs.nodes if n.label == "w").grad is None
    assert theirs.backward["source"] == "graph"
    shown = next(n for n in mine.nodes if n.label == "w")
    assert shown.grad["mean"] == pytest.approx(1.0)     # w.grad = 2 + 2w = [4, -2], summed over both passes
    assert shown.grad_note.startswith("w.grad is the sum of 2 backward passes")
    w.grad = None
    again = (w ** 2).sum()
    again.backward()
    fresh = next(n for n in vg.graph(again, names=locals()).nodes if n.label == "w")
    assert fresh.grad_note is None and fresh.grad["mean"] == pytest.approx((2 - 4) / 2)


def test_autograd_grad_is_named_as_what_ran_and_keeps_no_leaf_gradient():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    energy = (x ** 2).sum()
    (gradient,) = vg.autograd.grad(energy, x)
    graph = vg.graph(energy, names=locals())
    assert graph.backward["note"].startswith("autograd.grad(energy, ...) ran outside vizgrad.trace()")
    assert "backward()" not in graph.backward["note"]
    assert next(n for n in graph.nodes if n.label == "x").grad is None
    assert gradient.tolist() == [2.0, 4.0]


def test_a_backward_from_a_later_tensor_says_it_came_through_this_graph():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    hidden = (x * 3).sum()
    loss = hidden * 2
    loss.backward()
    graph = vg.graph(hidden, names=locals())
    assert graph.backward["note"].startswith("loss.backward() ran outside vizgrad.trace() from loss, through this graph")


def test_a_retained_gradient_of_another_pass_is_not_shown():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    a = h.sum()
    b = (h * h).sum()
    a.backward(retain_graph=True)
    graph = vg.graph(b, names=locals())          # b never ran backward: h.grad is a's
    assert all(node.grad is None for node in graph.nodes if node.kind == "op")


# --- modules on every path ------------------------------------------------------------------

class ResidualCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.head = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        h = F.relu(self.bn(self.stem(x)))
        h = h + self.conv(h)                               # the skip connection
        return self.head(h.flatten(1))


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(5, 8, batch_first=True)
        self.decoder = nn.GRU(5, 8, batch_first=True)
        self.out = nn.Linear(8, 5)

    def forward(self, source, target):
        _, state = self.encoder(source)
        output, _ = self.decoder(target, state)
        return self.out(output)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, vocab=11, d=8, blocks=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(blocks)])
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


def _lesson12_loss():
    model = graph_models.TinyTransformer(vocab=13, width=16, heads=4, layers=2, context=8)
    logits = model(vg.randint(0, 13, (2, 8)))
    return F.cross_entropy(logits.view(-1, 13), vg.randint(0, 13, (16,))), model


def _cnn_loss():
    model = ResidualCNN()
    return F.cross_entropy(model(vg.randn(2, 1, 6, 6)), vg.tensor([0, 2])), model


def _lstm_loss():
    lstm, head = nn.LSTM(3, 6, num_layers=2), nn.Linear(6, 1)
    output, _ = lstm(vg.randn(12, 2, 3))
    return head(output[-1]).pow(2).mean(), lstm


def _seq2seq_loss():
    model = EncoderDecoder()
    return model(vg.randn(2, 4, 5), vg.randn(2, 3, 5)).pow(2).mean(), model


def _transformer_loss():
    model = Transformer()
    logits = model(vg.randint(0, 11, (2, 5)))
    return F.cross_entropy(logits.reshape(-1, 11), vg.randint(0, 11, (10,))), model


MODELS = {"cnn": _cnn_loss, "lstm": _lstm_loss, "seq2seq": _seq2seq_loss, "transformer": _transformer_loss,
          "lesson12": _lesson12_loss}
# the ops outside every box: the loss, what the user did to the model's output, and the
# model's own forward (the outermost module called is the drawing's canvas, its path '')
OUTSIDE = {"cnn": {"LogSoftmax", "NllLoss", "Relu", "Add", "Reshape"}, "lstm": {"GetItem", "Pow", "Mean"},
           "seq2seq": {"Pow", "Mean"},
           "transformer": {"Reshape", "LogSoftmax", "NllLoss"}, "lesson12": {"Add", "View", "LogSoftmax", "NllLoss"}}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_op_made_inside_a_module_knows_it_without_a_trace(name):
    vg.manual_seed(0)
    loss, model = MODELS[name]()
    graph = _valid(vg.graph(loss))
    ops = [node for node in graph.nodes if node.kind in ("op", "output")]
    outside = {node.op for node in ops if not node.module}
    assert outside <= OUTSIDE[name]
    assert sum(bool(node.module) for node in ops) > len(ops) - 6
    for node in ops:
        if node.module:
            assert node.group is not None


def test_the_lstm_is_boxed_by_layer_and_time_step_and_its_steps_fold():
    vg.manual_seed(0)
    loss, lstm = _lstm_loss()
    graph = vg.graph(loss, names={"lstm": lstm})
    groups = {group.name: group for group in graph.groups}
    assert groups["lstm"].label == "LSTM(3→6)" and groups["lstm"].parent is None
    assert [groups[f"lstm.layer{k}"].label for k in range(2)] == ["layer 0", "layer 1"]
    steps = [group for group in graph.groups if group.kind == "step" and group.type == "step"]
    assert len(steps) == 24
    for layer in range(2):
        mine = [g for g in steps if g.parent == groups[f"lstm.layer{layer}"].id]
        assert [g.label for g in mine] == [f"t={t}" for t in range(12)]
        assert [g.repeat for g in mine] == [{"count": 12, "index": t} for t in range(12)]
    # the weights sit in the LSTM's box, found by identity (their names have no module prefix)
    weights = [node for node in graph.nodes if node.kind == "parameter" and "_l" in node.label]
    assert len(weights) == 8 and all(node.group == groups["lstm"].id for node in weights)
    assert groups["linear"].parent is None       # the head, called on its own: a box of its own
    # an op of step 3 of layer 1 is in that step's box, and knows its module
    tanh = [n for n in graph.nodes if n.op == "Tanh" and n.group == groups["lstm.layer1.t3"].id]
    assert len(tanh) == 2 and all(n.module == "lstm" for n in tanh)


def test_two_outermost_modules_each_get_a_box_named_after_the_variable():
    vg.manual_seed(0)
    encoder, decoder = nn.GRU(4, 5), nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 2))
    output, _ = encoder(vg.randn(3, 2, 4))
    loss = decoder(output).sum()
    graph = vg.graph(loss, names=locals())
    top = {group.name: group.label for group in graph.groups if group.parent is None}
    assert top == {"encoder": "GRU(4→5)", "decoder": "Sequential"}
    names = {group.name for group in graph.groups}
    assert {"decoder.0", "decoder.2"} <= names and "0" not in names


def test_the_transformer_folds_its_blocks_and_names_only_public_types():
    vg.manual_seed(0)
    loss, model = _transformer_loss()
    graph = vg.graph(loss, names={"model": model})
    blocks = [g for g in graph.groups if g.name.startswith("blocks.") and g.name.count(".") == 1]
    assert [g.repeat for g in blocks] == [{"count": 4, "index": i} for i in range(4)]
    types = {g.type for g in graph.groups}
    assert "NonDynamicallyQuantizableLinear" not in types and "MultiheadAttention" in types
    out_proj = next(g for g in graph.groups if g.name == "blocks.0.attn.out_proj")
    assert (out_proj.type, out_proj.label) == ("Linear", "Linear(8→8)")
    assert not any(n.op in ("Amin", "Amax") for n in graph.nodes)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_history_and_trace_draw_the_same_boxes(name):
    vg.manual_seed(0)
    loss, model = MODELS[name]()
    history = vg.graph(loss)
    vg.manual_seed(0)
    with vg.trace() as recording:
        loss, model = MODELS[name]()
        loss.backward()
    traced = recording.graph

    def boxes(graph):
        return {(g.name, g.label, g.kind, json.dumps(g.repeat)) for g in graph.groups if g.kind != "function"}

    def op_modules(graph):     # (a trace draws a node per output of a split: compare what is where)
        return {(n.module, n.op) for n in graph.nodes if n.kind == "op" and n.requires_grad}

    assert boxes(history) == boxes(traced)
    # the trace also draws ops on inputs that need no gradient (a batch_first transpose)
    assert op_modules(history) <= op_modules(traced)
    assert len(op_modules(traced) - op_modules(history)) <= 1
    assert not any(n.op in ("Amin", "Amax") for n in traced.nodes)


def test_a_module_called_inside_another_records_its_path_from_the_outermost_call():
    vg.manual_seed(0)
    model = Transformer(blocks=2)
    block = model.blocks[1]                            # called on its own: it is the outermost
    out = block(vg.randn(1, 3, 8)).sum()
    graph = vg.graph(out)
    names = {g.name for g in graph.groups}
    assert {"attn", "attn.out_proj", "mlp.0", "ln1"} <= names
    assert not any(name.startswith("blocks.") for name in names)


def test_graph_view_of_a_loss_groups_as_the_trace_does():
    pytest.importorskip("anywidget")
    vg.manual_seed(0)
    loss, lstm = _lstm_loss()
    loss.backward()
    view = GraphView(loss)
    names = {group["name"] for group in json.loads(view.graph_json)["groups"]}
    view.close()
    assert {"lstm", "lstm.layer0", "lstm.layer1.t11"} <= names


def _view_graph(view):
    view._updates.flush()
    return json.loads(view.graph_json)


def test_graph_view_of_a_tensor_ignores_the_backward_pass_of_another_graph_over_its_leaves():
    pytest.importorskip("anywidget")
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = (x * 3).sum()
    view = GraphView(z)
    try:
        y = (x * x).sum()
        y.backward()                                   # another graph's pass, through the shared leaf x
        shown = _view_graph(view)
        assert shown["backward_order"] == []
        assert all(node["grad"] is None for node in shown["nodes"])
        z.backward()                                   # its own pass: now replayed, x.grad labelled
        shown = _view_graph(view)
        assert shown["backward"]["source"] == "recorded" and len(shown["backward_order"]) == 3
        leaf = next(node for node in shown["nodes"] if node["label"] == "x")
        assert leaf["grad"]["mean"] == pytest.approx(7.0)       # [2, 4, 6] + [3, 3, 3]
        assert leaf["grad_note"].startswith("x.grad also holds the gradients of earlier backward passes")
    finally:
        view.close()


def test_graph_view_opened_after_another_pass_does_not_present_its_gradient():
    pytest.importorskip("anywidget")
    x = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    z = (x * 3).sum()
    view = GraphView(z)
    try:
        shown = _view_graph(view)
        leaf = next(node for node in shown["nodes"] if node["label"] == "x")
        assert leaf["grad"] is None and "another backward pass" in leaf["grad_note"]
        assert shown["backward_order"] == [] and "No backward pass ran" in shown["backward"]["note"]
    finally:
        view.close()


def test_gradients_piling_up_over_a_loop_without_zero_grad_are_labelled_as_a_sum():
    x = vg.randn(4, 3)
    w = vg.randn(3, 1, requires_grad=True)
    for _ in range(3):                  # each step's graph is freed: the leaf's accumulator dies each time
        loss = (x @ w).sum()
        loss.backward()
    leaf = next(n for n in vg.graph(loss, names=locals()).nodes if n.label == "w")
    assert leaf.grad_note.startswith("w.grad is the sum of 3 backward passes")
    w.grad.zero_()                      # zero_grad(set_to_none=False): the sum is gone
    assert "changed after this graph's backward pass" in \
        next(n for n in vg.graph(loss, names=locals()).nodes if n.label == "w").grad_note
    loss = (x @ w).sum()
    loss.backward()                     # onto a zeroed .grad: this pass's alone
    leaf = next(n for n in vg.graph(loss, names=locals()).nodes if n.label == "w")
    assert leaf.grad_note is None and leaf.grad is not None


@pytest.mark.parametrize("options, kind, words", [
    ({"max_nodes": -1}, vg.errors.ArgumentError, "show: max_nodes must be at least 1, got -1"),
    ({"max_nodes": 2.5}, vg.errors.ArgumentTypeError, "show: max_nodes must be an int, got float"),
    ({"rankdir": "bogus"}, vg.errors.ArgumentError, "show: rankdir must be one of 'TB', 'LR', 'BT', 'RL', got 'bogus'"),
    ({"collapse": 0}, vg.errors.ArgumentError, "show: collapse as a depth must be at least 1"),
    ({"collapse": 3.0}, vg.errors.ArgumentTypeError, "show: collapse must be None, False, a depth"),
    ({"colapse": 1}, vg.errors.ArgumentTypeError, "show: unexpected option 'colapse'"),
])
def test_show_refuses_options_it_cannot_honour_in_its_own_words(options, kind, words):
    x = vg.tensor([1.0], requires_grad=True)
    with pytest.raises(kind) as caught:
        vg.show(x * 2, **options)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError if kind is vg.errors.ArgumentError else TypeError)


def test_show_refuses_what_is_not_a_graph():
    with pytest.raises(vg.errors.ArgumentTypeError, match="show: draws a Graph, a Tensor"):
        vg.show([1, 2])


def test_an_op_with_a_numpy_scalar_operand_saves_it_as_a_constant():
    t = vg.tensor([3.0, 6.0], requires_grad=True)
    (t / np.float64(3)).sum().backward()
    assert t.grad.tolist() == pytest.approx([1 / 3, 1 / 3])


def test_the_output_shows_the_gradient_its_own_backward_pass_started_from():
    x = vg.randn(3, requires_grad=True)
    loss = (x * 2).sum()
    loss.backward()
    (output,) = [node for node in vg.graph(loss).nodes if node.kind == "output"]
    assert output.grad["mean"] == 1.0 and output.grad["shape"] == []
    y = x * 3
    y.backward(vg.full((3,), 0.5))
    (output,) = [node for node in vg.graph(y).nodes if node.kind == "output"]
    assert output.grad["mean"] == 0.5 and output.grad["shape"] == [3]
    # an intermediate result the pass went through, not from: its gradient was not kept
    h = x * 4
    (h.sum()).backward()
    (output,) = [node for node in vg.graph(h).nodes if node.kind == "output"]
    assert output.grad is None
    # a result no pass started from shows none either
    (output,) = [node for node in vg.graph((x * 5).sum()).nodes if node.kind == "output"]
    assert output.grad is None
