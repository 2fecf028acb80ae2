"""``nn.RNN``/``LSTM``/``GRU`` and their cells: PyTorch's parameter names, shapes and init,
values and gradients against PyTorch with copied weights (when torch is importable), a
float64 gradcheck that needs no torch, unbatched inputs, errors, and the unrolled graph."""

import math

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.autograd.gradcheck import gradcheck
from vizgrad.errors import ShapeError

RNG = np.random.default_rng(14)

LAYERS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bias": False}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "batch_first": True}),
    ("GRU", {"bidirectional": True, "batch_first": True}),
    ("GRU", {"num_layers": 3}),
]


def names_and_shapes(module):
    return [(name, tuple(p.shape)) for name, p in module.named_parameters()]


def copy_from_torch(torch_module, module):
    params = dict(module.named_parameters())
    with vg.no_grad():
        for name, p in torch_module.named_parameters():
            params[name].copy_(vg.tensor(p.detach().numpy()))


def total(output, state):
    """A scalar that depends on every output, with unequal weights (so sums of wrong pieces differ)."""
    states = state if isinstance(state, tuple) else (state,)
    return (output * output).sum() + sum((s * (k + 2)).sum() for k, s in enumerate(states))


@pytest.mark.parametrize("kind, kwargs", LAYERS, ids=lambda v: str(v))
def test_parameter_names_shapes_and_outputs_match_pytorch(kind, kwargs):
    torch = pytest.importorskip("torch")
    torch_module = getattr(torch.nn, kind)(3, 4, **kwargs).double()
    module = getattr(nn, kind)(3, 4, dtype=vg.float64, **kwargs)
    assert names_and_shapes(module) == [(n, tuple(p.shape)) for n, p in torch_module.named_parameters()]
    assert repr(module) == repr(torch_module)
    copy_from_torch(torch_module, module)
    x = RNG.standard_normal((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    directions = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    h0 = RNG.standard_normal((layers * directions, 2, kwargs.get("proj_size") or 4))
    torch_x, x_ = torch.tensor(x, requires_grad=True), vg.tensor(x, requires_grad=True)
    torch_h, h_ = torch.tensor(h0, requires_grad=True), vg.tensor(h0, requires_grad=True)
    if kind == "LSTM":
        c0 = RNG.standard_normal((layers * directions, 2, 4))
        torch_state, state = (torch_h, torch.tensor(c0)), (h_, vg.tensor(c0))
    else:
        torch_state, state = torch_h, h_
    torch_out, torch_final = torch_module(torch_x, torch_state)
    out, final = module(x_, state)
    np.testing.assert_allclose(out.detach().numpy(), torch_out.detach().numpy(), atol=1e-12)
    torch_finals = torch_final if kind == "LSTM" else (torch_final,)
    finals = final if kind == "LSTM" else (final,)
    for ours, theirs in zip(finals, torch_finals):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    total(torch_out, torch_final).backward()
    total(out, final).backward()
    np.testing.assert_allclose(x_.grad.numpy(), torch_x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(h_.grad.numpy(), torch_h.grad.numpy(), atol=1e-10)
    params = dict(module.named_parameters())
    for name, p in torch_module.named_parameters():
        np.testing.assert_allclose(params[name].grad.numpy(), p.grad.numpy(), atol=1e-10, err_msg=name)


@pytest.mark.parametrize("kind, kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                          ("LSTMCell", {}), ("GRUCell", {"bias": False})], ids=str)
def test_cells_match_pytorch_batched_and_unbatched(kind, kwargs):
    torch = pytest.importorskip("torch")
    torch_cell = getattr(torch.nn, kind)(3, 4, **kwargs).double()
    cell = getattr(nn, kind)(3, 4, dtype=vg.float64, **kwargs)
    assert names_and_shapes(cell) == [(n, tuple(p.shape)) for n, p in torch_cell.named_parameters()]
    assert repr(cell) == repr(torch_cell)
    copy_from_torch(torch_cell, cell)
    for shape in ((2, 3), (3,)):
        x = RNG.standard_normal(shape)
        torch_x, x_ = torch.tensor(x, requires_grad=True), vg.tensor(x, requires_grad=True)
        theirs, ours = torch_cell(torch_x), cell(x_)
        if kind == "LSTMCell":      # feed the state back: a second step from a given hx
            theirs, ours = torch_cell(torch_x, theirs), cell(x_, ours)
        total(theirs[0], theirs[1]).backward() if kind == "LSTMCell" else total(theirs, ()).backward()
        total(ours[0], ours[1]).backward() if kind == "LSTMCell" else total(ours, ()).backward()
        for a, b in zip(ours if kind == "LSTMCell" else (ours,), theirs if kind == "LSTMCell" else (theirs,)):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(x_.grad.numpy(), torch_x.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("kind, kwargs", LAYERS, ids=lambda v: str(v))
def test_gradcheck_in_float64_without_torch(kind, kwargs):
    module = getattr(nn, kind)(2, 3, dtype=vg.float64, **kwargs)
    x = vg.tensor(RNG.standard_normal((3, 1, 2)), requires_grad=True)
    # gradcheck perturbs its inputs in place, so the module's own parameters are passed in
    assert gradcheck(lambda x, *weights: total(*module(x)), (x, *module.parameters()))


def test_unbatched_input_and_batch_first_agree_with_the_batched_sequence():
    lstm = nn.LSTM(3, 4, num_layers=2, dtype=vg.float64)
    x = vg.tensor(RNG.standard_normal((5, 3)))
    out, (h, c) = lstm(x)
    assert tuple(out.shape) == (5, 4) and tuple(h.shape) == (2, 4) and tuple(c.shape) == (2, 4)
    batched, (hb, cb) = lstm(x.unsqueeze(1))
    np.testing.assert_allclose(out.detach().numpy(), batched[:, 0].detach().numpy(), atol=1e-15)
    np.testing.assert_allclose(c.detach().numpy(), cb[:, 0].detach().numpy(), atol=1e-15)
    lstm.batch_first = True
    first, _ = lstm(x.unsqueeze(0))
    np.testing.assert_allclose(first[0].detach().numpy(), out.detach().numpy(), atol=1e-15)


def test_init_is_uniform_within_one_over_sqrt_hidden():
    gru = nn.GRU(8, 25, num_layers=2)
    bound = 1 / math.sqrt(25)
    values = np.concatenate([p.detach().numpy().ravel() for p in gru.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound     # spread over the whole range
    assert len(gru.all_weights) == 2 and len(gru.all_weights[0]) == 4


def test_dropout_between_layers_only_in_training():
    vg.manual_seed(0)
    rnn = nn.RNN(3, 4, num_layers=2, dropout=0.5, dtype=vg.float64)
    x = vg.tensor(RNG.standard_normal((4, 2, 3)))
    a, _ = rnn(x)
    b, _ = rnn(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    rnn.eval()
    np.testing.assert_array_equal(rnn(x)[0].detach().numpy(), rnn(x)[0].detach().numpy())
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


def test_errors_name_the_argument_and_the_shapes():
    rnn = nn.RNN(3, 4)
    with pytest.raises(ShapeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"):
        rnn(vg.randn(2, 1, 5))
    with pytest.raises(ShapeError, match=r"expected input to be 2D or 3D, got 4D"):
        rnn(vg.randn(2, 1, 1, 3))
    with pytest.raises(ShapeError, match=r"expected hx of shape \(1, 2, 4\), got \(1, 3, 4\)"):
        rnn(vg.randn(5, 2, 3), vg.zeros(1, 3, 4))
    with pytest.raises(ShapeError, match="unbatched 2-D input, hx should be 2-D but got 3-D"):
        rnn(vg.randn(5, 3), vg.zeros(1, 1, 4))
    with pytest.raises(ValueError, match="unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match=r"dropout should be a number in range \[0, 1\]"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(TypeError, match="hx must be a tuple"):
        nn.LSTM(3, 4)(vg.randn(2, 1, 3), vg.zeros(1, 1, 4))
    with pytest.raises(ShapeError, match=r"expected c_0 of shape \(1, 1, 4\)"):
        nn.LSTM(3, 4)(vg.randn(2, 1, 3), (vg.zeros(1, 1, 4), vg.zeros(1, 1, 5)))
    with pytest.raises(ShapeError, match="LSTMCell: input.size"):
        nn.LSTMCell(3, 4)(vg.randn(2, 2))


def test_graph_unrolls_every_time_step_under_the_module():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(3, 4)

        def forward(self, x):
            return self.gru(x)[0].sum()

    model = Model()
    with vg.trace() as tr:
        model(vg.randn(6, 2, 3)).backward()
    nodes = tr.graph.nodes
    under_gru = [n for n in nodes if n.kind == "op" and n.module == "gru"]
    tanh_steps = [n for n in under_gru if n.label == "Tanh"]
    assert len(tanh_steps) == 6            # one candidate state per time step
    assert sum(n.label == "Sigmoid" for n in under_gru) == 12      # r and z per step
    assert {n.name for n in nodes if n.kind == "parameter"} == {"gru.weight_ih_l0", "gru.weight_hh_l0",
                                                                "gru.bias_ih_l0", "gru.bias_hh_l0"}
    graph = tr.graph
    assert set(graph.backward_order) >= {n.id for n in tanh_steps}     # each step's backward is replayed
    assert type(graph).from_json(graph.to_json()).to_dict() == graph.to_dict()
    dot = graph.to_dot(collapse=[])          # every node drawn (by default, past 40 nodes, the module is one box)
    assert "gru" in dot and dot.count("Tanh") >= 6
    assert graph.to_dot().count("Tanh") == 0 and "GRU(3→4)" in graph.to_dot()


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_runs_on_every_backend_with_the_cpu_values(kind, backend):
    module = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True, dtype=vg.float64)
    x = RNG.standard_normal((4, 2, 3))
    cpu_x = vg.tensor(x, requires_grad=True)
    cpu_total = total(*module(cpu_x))
    cpu_total.backward()
    module.to(backend)
    device_x = vg.tensor(x, device=backend, requires_grad=True)
    device_total = total(*module(device_x))
    device_total.backward()
    np.testing.assert_allclose(device_total.item(), cpu_total.item(), rtol=1e-10)
    np.testing.assert_allclose(device_x.grad.cpu().numpy(), cpu_x.grad.numpy(), rtol=1e-8, atol=1e-12)
