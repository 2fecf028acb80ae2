"""The same models, training steps and checkpoints on every other device give the CPU's
numbers: a model moved with ``.to(device)`` computes what it computed on the CPU, its
gradients and optimizer state live on the device, and checkpoints move between devices.

Runs on ``strict`` (array_api_strict: the portable API alone) and on ``cuda`` (CuPy; skipped
without a GPU), each against NumPy on the CPU.
"""

import copy

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import nn
from conftest import DEVICES

OTHER_DEVICES = [param for param in DEVICES if param.id != "cpu"]


@pytest.fixture(params=OTHER_DEVICES)
def device(request):
    return request.param


def _close(got, want, tolerance=2e-4):
    got, want = got.detach().cpu().numpy(), want.detach().cpu().numpy()
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * scale)


class TinyTransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.attention = nn.MultiheadAttention(16, 4, batch_first=True)
        self.norm = nn.LayerNorm(16)
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(approximate="tanh"), nn.Linear(32, 20))

    def forward(self, tokens):
        x = self.embed(tokens)
        T = tokens.shape[1]
        mask = vg.triu(vg.ones(T, T, dtype=vg.bool, device=tokens.device), diagonal=1)
        attended, _ = self.attention(x, x, x, attn_mask=mask)
        return self.mlp(self.norm(x + attended))


class RecurrentTagger(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(6, 8, num_layers=2, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Dropout(0.0), nn.Linear(8, 3))


MODELS = {
    "mlp": (lambda: nn.MLP([5, 16, 16, 3]), lambda g: vg.tensor(g.standard_normal((7, 5)), dtype=vg.float32)),
    "cnn-batchnorm": (_cnn, lambda g: vg.tensor(g.standard_normal((4, 1, 9, 9)), dtype=vg.float32)),
    "lstm": (lambda: RecurrentTagger(nn.LSTM), lambda g: vg.tensor(g.standard_normal((3, 5, 6)), dtype=vg.float32)),
    "gru": (lambda: RecurrentTagger(nn.GRU), lambda g: vg.tensor(g.standard_normal((3, 5, 6)), dtype=vg.float32)),
    "transformer-block": (TinyTransformerBlock, lambda g: vg.tensor(g.integers(0, 20, (2, 6)))),
}


@pytest.mark.parametrize("name", MODELS)
def test_a_model_moved_to_a_device_computes_what_it_computed_on_the_cpu(name, device):
    make_model, make_input = MODELS[name]
    vg.manual_seed(0)
    on_cpu = make_model()
    moved = copy.deepcopy(on_cpu).to(device)
    x = make_input(np.random.default_rng(1))
    assert all(p.device == device for p in moved.parameters())

    outputs = []
    for model, inputs in ((on_cpu, x), (moved, x.to(device))):
        out = model(inputs)
        (out.square().mean() + out.sum()).backward()
        outputs.append(out)
    assert outputs[1].device == device
    _close(outputs[1], outputs[0])
    for (label, p_cpu), p_dev in zip(on_cpu.named_parameters(), moved.parameters()):
        assert p_dev.grad is not None and p_dev.grad.device == device, label
        _close(p_dev.grad, p_cpu.grad)
    for (label, b_cpu), b_dev in zip(on_cpu.named_buffers(), moved.buffers()):   # BatchNorm's running stats
        assert b_dev.device == device, label
        _close(b_dev, b_cpu)


OPTIMIZERS = {
    "sgd-nesterov": lambda params: vg.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adam-amsgrad": lambda params: vg.optim.Adam(params, lr=1e-2, amsgrad=True),
    "adam-maximize-l2": lambda params: vg.optim.Adam(params, lr=1e-2, weight_decay=0.1, maximize=True),
    "adamw": lambda params: vg.optim.AdamW(params, lr=1e-2),
    "rmsprop": lambda params: vg.optim.RMSprop(params, lr=1e-2, momentum=0.5, centered=True),
    "adagrad": lambda params: vg.optim.Adagrad(params, lr=1e-1),
}


def _classifier_and_its_copy(device, classes):
    """An MLP on the CPU, the same MLP moved to ``device``, and 16 points with labels."""
    vg.manual_seed(0)
    on_cpu = nn.MLP([4, 8, classes])
    g = np.random.default_rng(classes)
    x, y = vg.tensor(g.standard_normal((16, 4)), dtype=vg.float32), vg.tensor(g.integers(0, classes, 16))
    return on_cpu, copy.deepcopy(on_cpu).to(device), x, y


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_training_steps_on_a_device_follow_the_cpu(name, device):
    on_cpu, moved, x, y = _classifier_and_its_copy(device, classes=2)
    runs = []
    for model, dev in ((on_cpu, "cpu"), (moved, device)):
        optimizer = OPTIMIZERS[name](model.parameters())
        losses = []
        for _ in range(4):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        runs.append((losses, optimizer))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-4)
    for p_cpu, p_dev in zip(on_cpu.parameters(), moved.parameters()):
        assert p_dev.device == device
        _close(p_dev, p_cpu)
    for state in runs[1][1].state_dict()["state"].values():
        for value in state.values():
            if isinstance(value, vg.Tensor) and value.dim() > 0:
                assert value.device == device


def test_a_checkpoint_moves_between_devices(device, tmp_path):
    vg.manual_seed(0)
    model = _cnn().to(device)
    optimizer = vg.optim.Adam(model.parameters(), lr=1e-2)
    x = vg.randn(4, 1, 9, 9, device=device)
    model(x).sum().backward()
    optimizer.step()
    path = tmp_path / "checkpoint.pt"
    vg.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

    on_cpu = vg.load(path, map_location="cpu")
    assert all(t.device == "cpu" for t in on_cpu["model"].values())
    for key, value in model.state_dict().items():
        _close(on_cpu["model"][key], value, tolerance=0)

    kept = vg.load(path)                       # no map_location: each tensor where it was saved
    assert all(t.device == device for t in kept["model"].values())

    restored = _cnn()
    restored.load_state_dict(on_cpu["model"])
    restored.to(device)
    moved_optimizer = vg.optim.Adam(restored.parameters(), lr=1e-2)
    moved_optimizer.load_state_dict(on_cpu["optimizer"])   # state follows its parameters, as in PyTorch
    for state in moved_optimizer.state_dict()["state"].values():
        assert state["exp_avg"].device == device
    restored.train(model.training)
    _close(restored(x), model(x))


def test_watching_training_on_a_device_shows_what_watching_it_on_the_cpu_shows(device):
    """The trace's statistics of every value and gradient, and the optimizer's per-step
    summaries (what the dashboard draws), are computed from the device's arrays."""
    on_cpu, moved, x, y = _classifier_and_its_copy(device, classes=3)
    seen = []
    for model, where in ((on_cpu, "cpu"), (moved, device)):
        for name, param in model.named_parameters():
            param.name = name
        optimizer = vg.optim.Adam(model.parameters(), lr=1e-2)
        summaries = []
        with vg.trace() as tracing, vg.events.subscribe(summaries.append, kinds="optimizer_step"):
            for _ in range(3):
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x.to(where)), y.to(where)).backward()
                optimizer.step()
            nodes = {f"{node.module}/{node.op}/{node.label}": node for node in tracing.graph.nodes}
        seen.append((nodes, summaries[-1].params))
    (cpu_nodes, cpu_params), (device_nodes, device_params) = seen
    assert set(cpu_nodes) <= set(device_nodes)
    assert all("ToDevice" in key for key in set(device_nodes) - set(cpu_nodes))    # x.to(device), shown
    for key, node in cpu_nodes.items():
        for kind in ("value", "grad"):
            want, got = getattr(node, kind), getattr(device_nodes[key], kind)
            assert (want is None) == (got is None), (key, kind)
            for stat in ("mean", "norm", "min", "max") if want else ():
                assert got[stat] == pytest.approx(want[stat], rel=1e-4, abs=1e-6), (key, kind, stat)
    for want, got in zip(cpu_params, device_params):
        assert got.name == want.name
        for stat in ("grad_norm", "update_norm", "param_norm"):
            assert getattr(got, stat) == pytest.approx(getattr(want, stat), rel=1e-4), (got.name, stat)
