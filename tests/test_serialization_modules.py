"""Whole modules and arbitrary objects through vizgrad.save / vizgrad.load, as PyTorch 2.6+:
``save(model)`` pickles, ``load`` refuses pickles unless ``weights_only=False`` (and runs no
code before refusing), and what comes back is what PyTorch brings back: parameters, buffers,
submodule order, the training flag and picklable module hooks, without tensors' hooks or
gradients. Optimizer state dicts round-trip with the safe default."""

import dataclasses
import io
import os
import pickle
import sys
import types

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import serialization
from vizgrad.serialization import CheckpointError, WeightsOnlyError

nn = vg.nn
UNPICKLED = []


class Tripwire:
    """Counts how often it is unpickled: a refused load must not unpickle anything."""

    def __reduce__(self):
        return _tripped, ()


def _tripped():
    UNPICKLED.append(1)
    return Tripwire()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.norm = nn.BatchNorm2d(2)
        self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.scales = nn.ParameterDict({"a": nn.Parameter(vg.ones(8))})
        self.head = nn.Linear(8, 3)
        self.tied = self.head                       # one module under two names
        self.register_buffer("steps", vg.tensor(0))
        self.note = "plain attribute"

    def forward(self, x):
        h = self.norm(self.conv(x)).flatten(1)[:, :8]
        for block in self.blocks:
            h = block(h).relu() * self.scales["a"]
        return self.head(h)


def _double(module, inputs, output):
    return output * 2


def _trained_net():
    vg.manual_seed(0)
    net = Net()
    out = net(vg.randn(4, 1, 6, 6))
    out.sum().backward()
    net.steps += 1
    return net


def _round_trip(obj, **load_options):
    buffer = io.BytesIO()
    vg.save(obj, buffer)
    buffer.seek(0)
    return vg.load(buffer, weights_only=False, **load_options)


# --- the default refuses, before unpickling anything ----------------------------------------
def test_loading_a_whole_module_is_refused_by_default_naming_what_it_would_import(tmp_path):
    path = tmp_path / "model.vzg"
    vg.save({"model": _trained_net(), "trap": Tripwire()}, path)
    UNPICKLED.clear()
    for weights_only in (None, True):
        with pytest.raises(WeightsOnlyError) as info:
            vg.load(path, **({} if weights_only is None else {"weights_only": weights_only}))
        message = str(info.value)
        assert isinstance(info.value, pickle.UnpicklingError) and isinstance(info.value, CheckpointError)
        assert "test_serialization_modules.Net" in message and "vizgrad.nn.linear.Linear" in message
        assert "Tripwire" in message and "weights_only=False" in message and "trust" in message
    assert UNPICKLED == []                          # nothing was unpickled
    back = vg.load(path, weights_only=False)
    assert UNPICKLED == [1] and isinstance(back["trap"], Tripwire)


def test_state_dicts_still_load_with_the_default():
    net = _trained_net()
    buffer = io.BytesIO()
    vg.save({"model": net.state_dict(), "epoch": 3}, buffer)
    buffer.seek(0)
    state = vg.load(buffer)
    fresh = Net()
    fresh.load_state_dict(state["model"])
    assert state["epoch"] == 3 and fresh.steps.item() == 1


# --- what comes back ----------------------------------------------------------------------------
def test_a_module_comes_back_whole():
    net = _trained_net()
    net.eval()
    net.head.register_forward_hook(_double)
    net.head.weight.register_hook(lambda grad: grad * 0)       # tensors' hooks are not saved
    back = _round_trip(net)
    assert type(back) is Net and back.note == "plain attribute" and not back.training
    assert [name for name, _ in back.named_modules()] == [name for name, _ in net.named_modules()]
    assert [name for name, _ in back.named_parameters()] == [name for name, _ in net.named_parameters()]
    for (name, mine), (_, theirs) in zip(back.state_dict(keep_vars=True).items(), net.state_dict(keep_vars=True).items()):
        assert type(mine) is type(theirs) and mine.dtype is theirs.dtype, name
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy(), err_msg=name)
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.grad is None for p in back.parameters())
    assert not back.norm.running_mean.requires_grad and back.steps.item() == 1
    assert back.tied is back.head                               # shared modules stay shared
    assert list(back.head._forward_hooks.values()) == [_double]
    x = vg.randn(2, 1, 6, 6)
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    back.head(vg.ones(8)).sum().backward()
    assert back.head.weight.grad.abs().sum().item() > 0        # the zeroing tensor hook is gone


def test_what_comes_back_matches_pytorch():
    torch = pytest.importorskip("torch")
    found = {}
    for lib in (vg, torch):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
        model(lib.ones(5, 3)).sum().backward()
        model[2].register_forward_hook(_double)
        model.eval()
        buffer = io.BytesIO()
        lib.save(model, buffer)
        buffer.seek(0)
        try:
            lib.load(buffer)
            refused = False
        except pickle.UnpicklingError:
            refused = True
        buffer.seek(0)
        back = lib.load(buffer, weights_only=False)
        found[lib] = (refused, back.training, [type(p).__name__ for p in back.parameters()],
                      [p.grad is None for p in back.parameters()], len(back[2]._forward_hooks),
                      [name for name, _ in back.named_buffers()], type(back[1]).__name__)
    assert found[vg] == found[torch]


def test_modules_whose_hooks_cannot_be_pickled_are_refused_keeping_the_old_file(tmp_path):
    path = tmp_path / "model.vzg"
    vg.save({"previous": True}, path)
    net = nn.Linear(2, 2)
    net.register_forward_hook(lambda module, inputs, output: output)
    with pytest.raises(CheckpointError, match="cannot be pickled"):
        vg.save(net, path)
    assert vg.load(path) == {"previous": True} and os.listdir(tmp_path) == ["model.vzg"]


def test_pickled_saves_keep_atomic_writes_and_symlinks(tmp_path):
    target = tmp_path / "real.vzg"
    link = tmp_path / "link.vzg"
    vg.save({"v": 1}, target)
    link.symlink_to(target)
    vg.save(nn.Linear(2, 3), link)
    assert link.is_symlink() and sorted(os.listdir(tmp_path)) == ["link.vzg", "real.vzg"]
    assert vg.load(target, weights_only=False).weight.shape == (3, 2)


@pytest.mark.parametrize("build", [
    lambda: nn.LSTM(4, 3, num_layers=2), lambda: nn.GRU(3, 2), lambda: nn.MultiheadAttention(4, 2),
    lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2), lambda: nn.Embedding(10, 4),
    lambda: nn.Sequential(nn.Conv1d(2, 3, 3), nn.GroupNorm(1, 3), nn.Dropout(0.5), nn.Flatten()),
])
def test_library_modules_round_trip(build):
    vg.manual_seed(1)
    module = build()
    back = _round_trip(module)
    assert type(back) is type(module)
    mine, theirs = back.state_dict(), module.state_dict()
    assert list(mine) == list(theirs)
    for name in theirs:
        np.testing.assert_array_equal(mine[name].numpy(), theirs[name].numpy(), err_msg=name)


def test_a_lazy_module_before_its_first_forward():
    back = _round_trip(nn.LazyLinear(3))
    assert type(back.weight).__name__ == "UninitializedParameter"
    assert back(vg.ones(2, 5)).shape == (2, 3) and back.weight.shape == (3, 5)


# --- optimizers ---------------------------------------------------------------------------------
def _steps(model, optimizer, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        optimizer.zero_grad()
        x = vg.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        model(x).pow(2).mean().backward()
        optimizer.step()


@pytest.mark.parametrize("name, options", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}),
                                           ("AdamW", {"lr": 0.01, "amsgrad": True}), ("RMSprop", {"lr": 0.01})])
def test_optimizer_state_dicts_round_trip_and_training_resumes_exactly(name, options):
    def build():
        vg.manual_seed(2)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        return model, getattr(vg.optim, name)(model.parameters(), **options)
    model, optimizer = build()
    _steps(model, optimizer, 3, seed=0)
    buffer = io.BytesIO()
    vg.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    state = vg.load(buffer)                                    # the safe default
    resumed, resumed_optimizer = build()
    resumed.load_state_dict(state["model"])
    resumed_optimizer.load_state_dict(state["optimizer"])
    _steps(model, optimizer, 2, seed=1)
    _steps(resumed, resumed_optimizer, 2, seed=1)
    for mine, theirs in zip(resumed.parameters(), model.parameters()):
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


def test_a_model_and_its_optimizer_pickled_together_stay_connected():
    model = nn.Linear(3, 2)
    optimizer = vg.optim.Adam(model.parameters(), lr=0.1)
    _steps(model, optimizer, 1, seed=0)
    back = _round_trip({"model": model, "optimizer": optimizer})
    assert back["optimizer"].param_groups[0]["params"][0] is back["model"].weight
    before = back["model"].weight.detach().clone()
    _steps(back["model"], back["optimizer"], 1, seed=1)
    assert not np.array_equal(before.numpy(), back["model"].weight.detach().numpy())


# --- arbitrary objects, transforms, map_location, damage --------------------------------------
@dataclasses.dataclass
class Config:
    name: str
    sizes: tuple
    weights: object


def test_arbitrary_objects_with_shared_tensors():
    w = vg.arange(6.0).reshape(2, 3)
    cycle = [1]
    cycle.append(cycle)
    back = _round_trip({"w": w, "config": Config("run", (1, 2), w[1]), "array": np.arange(3),
                        ("tuple", "key"): 1, "cycle": cycle})
    assert back["config"].name == "run" and back["config"].sizes == (1, 2)
    back["w"][1, 0] = 30.0                                      # one storage, as saved
    assert back["config"].weights.tolist() == [30.0, 4.0, 5.0]
    np.testing.assert_array_equal(back["array"], np.arange(3))
    assert back[("tuple", "key")] == 1 and back["cycle"][1] is back["cycle"]


def test_transforms_and_map_location_reach_pickled_tensors():
    seen = []
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    buffer = io.BytesIO()
    vg.save(model, buffer, transform=lambda path, tensor: (seen.append(path), tensor)[1])
    assert seen == ["0.weight", "0.bias", "1.weight", "1.bias"]
    buffer.seek(0)
    back = vg.load(buffer, weights_only=False, map_location="cpu",
                   transform=serialization.cast_floating(vg.bfloat16))
    assert all(p.dtype is vg.bfloat16 and isinstance(p, nn.Parameter) for p in back.parameters())


def test_damaged_or_unloadable_pickles_raise_checkpoint_error(tmp_path):
    module = types.ModuleType("vizgrad_test_transient")
    exec("class Gone:\n    pass", module.__dict__)
    module.Gone.__module__ = module.__name__
    sys.modules[module.__name__] = module
    path = tmp_path / "gone.vzg"
    try:
        vg.save({"x": module.Gone()}, path)
    finally:
        del sys.modules[module.__name__]
    with pytest.raises(CheckpointError, match="importable"):
        vg.load(path, weights_only=False)
    import zipfile
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data[: len(data) // 2] if name.endswith(".pkl") else data)
    with pytest.raises(CheckpointError):
        vg.load(path, weights_only=False)


@dataclasses.dataclass
class RunArgs:
    lr: float
    name: str


def test_allowed_globals_load_with_the_default_as_in_pytorch(tmp_path):
    path = tmp_path / "run.vzg"
    vg.save({"args": RunArgs(0.1, "run"), "w": vg.ones(2), "z": complex(1, 2)}, path)
    with pytest.raises(WeightsOnlyError, match=r"RunArgs.*add_safe_globals\(\[test_serialization_modules.RunArgs\]\)"):
        vg.load(path)
    with serialization.safe_globals([RunArgs]):
        back = vg.load(path)
        assert RunArgs in serialization.get_safe_globals()
    assert back["args"] == RunArgs(0.1, "run") and back["w"].tolist() == [1.0, 1.0] and back["z"] == 1 + 2j
    assert RunArgs not in serialization.get_safe_globals()
    serialization.add_safe_globals([(RunArgs, "test_serialization_modules.RunArgs")])
    try:
        assert vg.load(path)["args"].name == "run"
    finally:
        serialization.clear_safe_globals()


def test_a_manifest_that_hides_a_global_is_still_refused_by_the_unpickler(tmp_path):
    import json
    import zipfile
    path = tmp_path / "lies.vzg"
    vg.save({"trap": Tripwire()}, path)
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(entries["vizgrad.json"])
    manifest["root"]["classes"] = []                       # a manifest claiming nothing is pickled
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, json.dumps(manifest) if name == "vizgrad.json" else data)
    UNPICKLED.clear()
    with pytest.raises(WeightsOnlyError, match="_tripped"):
        vg.load(path)
    assert UNPICKLED == []
