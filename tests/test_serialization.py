"""vizgrad.save / vizgrad.load and Module state dicts: round trips, transforms, atomic
writes, and damaged or hostile files (which must raise CheckpointError, never run code)."""

import fractions
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.serialization import CheckpointError, cast_floating

DTYPES = [vg.float16, vg.bfloat16, vg.float32, vg.float64, vg.int32, vg.int64, vg.bool]


def host(tensor):
    return tensor.detach().cpu().numpy() if hasattr(tensor, "cpu") else tensor.detach().numpy()


def sample(dtype, shape=(2, 3), seed=0):
    values = np.random.default_rng(seed).standard_normal(shape) * 10
    if dtype == vg.bool:
        return vg.tensor(values > 0)
    return vg.tensor(values).to(dtype)


def assert_same(a, b):
    assert isinstance(b, vg.Tensor), type(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(host(a), host(b))


# --- round trips -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0, 3), (4,), (2, 3, 1)], ids=str)
def test_every_dtype_and_shape_round_trips(tmp_path, dtype, shape):
    t = sample(dtype, shape)
    vg.save(t, tmp_path / "t.vzg")
    assert_same(t, vg.load(tmp_path / "t.vzg"))


def test_nested_structures_round_trip(tmp_path):
    obj = {
        "tensors": [sample(d, seed=i) for i, d in enumerate(DTYPES)],
        "tuple": (1, 2.5, "text", None, True, False),
        "nested": {"deeper": {"list": [[], (), {}], "t": vg.arange(4)}},
        3: "an int key",
        -1: vg.tensor(7.0),
        "numpy scalar": np.float32(1.5),
        "dtype": vg.float16,
        "unicode ☃": "é\n\"quoted\"",
    }
    vg.save(obj, tmp_path / "c.vzg")
    back = vg.load(tmp_path / "c.vzg")
    assert set(back) == set(obj)
    for a, b in zip(obj["tensors"], back["tensors"]):
        assert_same(a, b)
    assert back["tuple"] == (1, 2.5, "text", None, True, False)
    assert isinstance(back["tuple"], tuple) and type(back["tuple"][4]) is bool and type(back["tuple"][0]) is int
    assert back["nested"]["deeper"]["list"] == [[], (), {}]
    assert isinstance(back["nested"]["deeper"]["list"][1], tuple)
    assert_same(obj["nested"]["deeper"]["t"], back["nested"]["deeper"]["t"])
    assert back[3] == "an int key" and back[-1].item() == 7.0
    assert back["numpy scalar"] == 1.5
    assert back["dtype"] == vg.float16
    assert back["unicode ☃"] == "é\n\"quoted\""
    assert list(back) == list(obj)                       # key order kept


def test_file_like_objects_as_in_torch(tmp_path):
    """torch.save(obj, buffer) / torch.load(buffer): a BytesIO and a file opened in binary mode."""
    state = {"weight": sample("float32", (3, 2)), "step": 4}
    buffer = io.BytesIO()
    vg.save(state, buffer)
    buffer.seek(0)
    back = vg.load(buffer, weights_only=True)
    assert_same(state["weight"], back["weight"])
    assert back["step"] == 4
    with open(tmp_path / "c.vzg", "wb") as handle:
        vg.save(state, handle)
    with open(tmp_path / "c.vzg", "rb") as handle:
        assert_same(state["weight"], vg.load(handle)["weight"])
    assert_same(state["weight"], vg.load(tmp_path / "c.vzg")["weight"])      # the same file format
    with open(tmp_path / "t.txt", "w") as handle, pytest.raises(vg.ArgumentTypeError, match="binary mode"):
        vg.save(state, handle)
    with pytest.raises(CheckpointError, match="load: '<BytesIO>' is not a vizgrad checkpoint"):
        vg.load(io.BytesIO(b"not a zip"))


def test_views_and_non_contiguous_tensors_save_their_values(tmp_path):
    base = vg.arange(12).reshape(3, 4)
    vg.save({"t": base.T, "s": base[:, ::2]}, tmp_path / "v.vzg")
    back = vg.load(tmp_path / "v.vzg")
    np.testing.assert_array_equal(back["t"].numpy(), np.arange(12).reshape(3, 4).T)
    np.testing.assert_array_equal(back["s"].numpy(), np.arange(12).reshape(3, 4)[:, ::2])


def test_requires_grad_is_preserved_and_loaded_tensors_are_leaves(tmp_path):
    w = vg.randn(3, requires_grad=True)
    derived = w * 2
    vg.save({"w": w, "derived": derived, "plain": vg.randn(3)}, tmp_path / "g.vzg")
    back = vg.load(tmp_path / "g.vzg")
    assert back["w"].requires_grad and back["w"].is_leaf
    assert back["derived"].requires_grad and back["derived"].grad_fn is None
    assert not back["plain"].requires_grad
    (back["w"] * 3).sum().backward()
    np.testing.assert_array_equal(back["w"].grad.numpy(), np.full(3, 3.0, np.float32))


def test_map_location(tmp_path, backend):
    t = vg.tensor([1.0, 2.0, 3.0], device=backend)
    vg.save({"t": t}, tmp_path / "m.vzg")
    kept = vg.load(tmp_path / "m.vzg")["t"]            # as torch.load: back where it was saved
    assert kept.device == t.device
    on_cpu = vg.load(tmp_path / "m.vzg", map_location="cpu")["t"]
    assert on_cpu.device.type == "cpu"
    np.testing.assert_array_equal(on_cpu.numpy(), [1.0, 2.0, 3.0])
    moved = vg.load(on_cpu_path(tmp_path), map_location=backend)["t"]
    assert moved.device == t.device
    np.testing.assert_array_equal(host(moved), [1.0, 2.0, 3.0])
    also = vg.load(on_cpu_path(tmp_path), map_location=vg.device(backend))["t"]
    assert also.device == t.device
    mapped = vg.load(tmp_path / "m.vzg", map_location={str(t.device): "cpu"})["t"]
    assert mapped.device.type == "cpu"
    seen = []
    relocated = vg.load(tmp_path / "m.vzg", map_location=lambda tensor, where: seen.append((tensor.device, where)))
    assert seen == [(vg.device("cpu"), str(t.device))] and relocated["t"].device == t.device


def on_cpu_path(tmp_path):
    vg.save({"t": vg.tensor([1.0, 2.0, 3.0])}, tmp_path / "cpu.vzg")
    return tmp_path / "cpu.vzg"


@pytest.mark.skipif(vg.cuda.is_available(), reason="a GPU is usable here")
def test_a_gpu_checkpoint_without_a_gpu_says_to_pass_map_location(tmp_path):
    vg.save({"w": vg.tensor([1.0, 2.0])}, tmp_path / "cpu.vzg")
    with zipfile.ZipFile(tmp_path / "cpu.vzg") as source, zipfile.ZipFile(tmp_path / "gpu.vzg", "w") as target:
        for item in source.infolist():     # the same checkpoint, as if saved from a GPU
            data = source.read(item)
            if item.filename.endswith(".json"):
                data = data.replace(b'"device": "cpu"', b'"device": "cuda:0"')
            target.writestr(item, data)
    with pytest.raises(vg.DeviceError, match="saved on 'cuda:0'.*map_location='cpu'"):
        vg.load(tmp_path / "gpu.vzg")
    w = vg.load(tmp_path / "gpu.vzg", map_location="cpu")["w"]
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


# --- transforms -----------------------------------------------------------------------
def stored_dtypes(path):
    with zipfile.ZipFile(path) as archive:
        return {name: np.lib.format.read_array(io.BytesIO(archive.read(name))).dtype
                for name in archive.namelist() if name.endswith(".npy")}


def test_cast_floating_on_save_and_load(tmp_path):
    obj = {"w": vg.randn(2, 2, dtype=vg.float64), "steps": vg.tensor([1, 2]), "flag": vg.tensor([True])}
    path = tmp_path / "half.vzg"
    vg.save(obj, path, transform=cast_floating(vg.float16))
    assert sorted(str(d) for d in stored_dtypes(path).values()) == ["bool", "float16", "int64"]
    back = vg.load(path, transform=cast_floating(vg.float32))
    assert back["w"].dtype == vg.float32
    assert back["steps"].dtype == vg.int64 and back["flag"].dtype == vg.bool
    np.testing.assert_allclose(back["w"].numpy(), host(obj["w"]), rtol=1e-3)
    # without a transform on load, the stored dtype comes back
    assert vg.load(path)["w"].dtype == vg.float16


def test_transform_receives_dotted_paths(tmp_path):
    obj = {"model": {"layer": {"weight": vg.ones(2)}}, "list": [vg.zeros(1), (vg.ones(1),)], 5: vg.ones(3)}
    seen_save, seen_load = [], []

    def on_save(path, tensor):
        seen_save.append(path)
        return tensor * 2

    def on_load(path, tensor):
        seen_load.append(path)
        return tensor + 1

    vg.save(obj, tmp_path / "p.vzg", transform=on_save)
    back = vg.load(tmp_path / "p.vzg", transform=on_load)
    assert seen_save == ["model.layer.weight", "list.0", "list.1.0", "5"]
    assert seen_load == seen_save
    np.testing.assert_array_equal(back["model"]["layer"]["weight"].numpy(), [3.0, 3.0])
    assert back[5].tolist() == [3.0, 3.0, 3.0]
    np.testing.assert_array_equal(obj["model"]["layer"]["weight"].numpy(), [1.0, 1.0])   # input untouched


# --- atomic writes ---------------------------------------------------------------------
@pytest.mark.parametrize("crash", [RuntimeError("disk on fire"), KeyboardInterrupt()], ids=["error", "interrupt"])
def test_a_crash_mid_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch, crash):
    path = tmp_path / "ckpt.vzg"
    vg.save({"epoch": 1, "w": vg.arange(3)}, path)
    before = path.read_bytes()
    opened = []

    def failing_write_array(fp, array, *args, **kwargs):
        opened.extend(os.listdir(tmp_path))   # the temporary file exists by now
        raise crash

    monkeypatch.setattr(np.lib.format, "write_array", failing_write_array)
    with pytest.raises(type(crash)):
        vg.save({"epoch": 2, "w": vg.arange(5)}, path)
    assert len(opened) == 2 and any(name.startswith(".vizgrad-save-ckpt.vzg.") for name in opened)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt.vzg"]                     # no temporary file left
    assert path.read_bytes() == before
    back = vg.load(path)
    assert back["epoch"] == 1 and back["w"].tolist() == [0, 1, 2]


def test_saving_replaces_an_existing_checkpoint(tmp_path):
    path = tmp_path / "ckpt.vzg"
    vg.save({"v": 1}, path)
    vg.save({"v": 2}, str(path))
    assert vg.load(str(path)) == {"v": 2}
    assert os.listdir(tmp_path) == ["ckpt.vzg"]


@pytest.mark.parametrize("obj, where, what", [
    ({"model": {"layers": [vg.ones(1), lambda: 0]}}, "model.layers.1", "function"),
    (lambda: 0, "top level", "function"),
])
def test_objects_that_cannot_be_pickled_are_refused_naming_the_location(tmp_path, obj, where, what):
    path = tmp_path / "bad.vzg"
    vg.save({"previous": True}, path)
    with pytest.raises(CheckpointError) as info:
        vg.save(obj, path)
    assert where in str(info.value) and what in str(info.value) and "cannot be pickled" in str(info.value)
    assert vg.load(path) == {"previous": True}
    assert os.listdir(tmp_path) == ["bad.vzg"]


@pytest.mark.parametrize("obj, what", [
    ({"model": {"layers": [vg.ones(1), fractions.Fraction(1, 3)]}}, "fractions.Fraction"),
    ({"a": np.arange(3.0)}, "numpy.ndarray"),
])
def test_other_objects_are_pickled_and_load_only_with_weights_only_false(tmp_path, obj, what):
    path = tmp_path / "pickled.vzg"
    vg.save(obj, path)
    with pytest.raises(vg.serialization.WeightsOnlyError, match="weights_only=False") as info:
        vg.load(path)
    assert what in str(info.value)
    with pytest.raises(pickle.UnpicklingError):      # the class PyTorch raises there
        vg.load(path, weights_only=True)
    back = vg.load(path, weights_only=False)
    assert repr(back) == repr(obj)


@pytest.mark.parametrize("obj", [[1, bytearray(b"23"), complex(1, 2)], {"ok": 1, (1, 2): 3}, {"x": {True: 1}}])
def test_pickles_of_builtins_only_load_with_the_default(tmp_path, obj):
    path = tmp_path / "pickled.vzg"
    vg.save(obj, path)
    assert vg.load(path) == obj


# --- damaged, truncated, foreign and hostile files ------------------------------------------
def write_zip(path, entries):
    with zipfile.ZipFile(path, "w") as archive:
        for name, payload in entries.items():
            archive.writestr(name, payload)


def npy_bytes(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def manifest(root, **extra):
    return json.dumps({"format": "vizgrad-checkpoint", "version": 1, "root": root, **extra})


TENSOR_0 = {"t": "tensor", "key": "0", "requires_grad": False}


@pytest.mark.parametrize("build, message", [
    (lambda p: p.write_bytes(np.random.default_rng(0).bytes(512)), "not a zip archive"),
    (lambda p: p.write_bytes(b""), "not a zip archive"),
    (lambda p: p.write_text("{'weights': [1, 2, 3]}"), "not a zip archive"),
    (lambda p: write_zip(p, {"data.pkl": b"\x80\x04N."}), "has no vizgrad.json"),
    (lambda p: write_zip(p, {"vizgrad.json": b"{not json"}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": json.dumps({"format": "other", "version": 1})}),
     "not a vizgrad checkpoint"),
    (lambda p: write_zip(p, {"vizgrad.json": json.dumps([1, 2])}), "not a vizgrad checkpoint"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest(None, version=99)}), "newer vizgrad"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest(None, version="1")}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest(TENSOR_0)}), "array 0"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "tensor"})}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "pickle", "data": "gASV"})}), "unknown kind 'pickle'"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "dict", "items": [["a", {"t": "eval"}]]})}),
     "unknown kind 'eval' at a"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "dict", "items": [[1]]})}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "dict", "items": 5})}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest({"t": "dtype", "name": "complex256"})}), "damaged"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest(TENSOR_0), "arrays/0.npy": b"\x93NUMPY garbage"}),
     "array 0"),
    (lambda p: write_zip(p, {"vizgrad.json": manifest(TENSOR_0), "arrays/0.npy": npy_bytes(np.array(["a"]))}),
     "damaged"),
], ids=["random bytes", "empty", "text", "zip without manifest", "manifest not json", "foreign format",
        "manifest not an object", "newer version", "version not a number", "missing array", "tensor without key",
        "unknown kind", "unknown nested kind", "short dict item", "items not a list", "unknown dtype",
        "bad npy", "string array"])
def test_damaged_or_foreign_files_raise_checkpoint_error(tmp_path, build, message):
    path = tmp_path / "x.vzg"
    build(path)
    with pytest.raises(CheckpointError, match=message) as info:
        vg.load(path)
    assert str(path) in str(info.value)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        vg.load(tmp_path / "nope.vzg")


def test_every_truncation_of_a_valid_file_raises_checkpoint_error(tmp_path):
    good = tmp_path / "good.vzg"
    vg.save({"w": vg.randn(4, 4), "b": [vg.arange(3), "x"]}, good)
    raw = good.read_bytes()
    cut = tmp_path / "cut.vzg"
    for length in range(0, len(raw), 7):
        cut.write_bytes(raw[:length])
        with pytest.raises(CheckpointError):
            vg.load(cut)


def test_random_damage_never_escapes_as_another_exception(tmp_path):
    good = tmp_path / "good.vzg"
    vg.save({"w": vg.randn(3, 3), "n": [vg.arange(2), (1, "s")]}, good)
    raw = good.read_bytes()
    rng = np.random.default_rng(2024)
    damaged = tmp_path / "damaged.vzg"
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        data = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(len(data)))] ^= 1 << int(rng.integers(8))
        damaged.write_bytes(bytes(data))
        try:
            vg.load(damaged)
            outcomes["loaded"] += 1
        except CheckpointError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100


class Payload:
    """Unpickling this would call ``_unpickled``: a stand-in for a malicious checkpoint."""

    def __reduce__(self):
        return (_unpickled, ())


UNPICKLED = []


def _unpickled():
    UNPICKLED.append(True)
    return "pwned"


def test_object_arrays_are_never_unpickled(tmp_path):
    path = tmp_path / "evil.vzg"
    evil = npy_bytes(np.array([Payload()], dtype=object), allow_pickle=True)
    write_zip(path, {"vizgrad.json": manifest({"t": "dict", "items": [["w", TENSOR_0]]}), "arrays/0.npy": evil})
    with pytest.raises(CheckpointError, match="array 0"):
        vg.load(path)
    assert UNPICKLED == []
    # the same payload really would run if unpickled (so the test above means something)
    np.lib.format.read_array(io.BytesIO(evil), allow_pickle=True)
    assert UNPICKLED == [True]
    UNPICKLED.clear()


# --- Module state dicts -------------------------------------------------------------------------
class Block(vg.nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.weight = vg.nn.Parameter(vg.randn(n, n))
        self.register_buffer("count", vg.tensor([0, 0]))
        self.register_buffer("scratch", vg.zeros(2), persistent=False)

    def forward(self, x):
        return x @ self.weight


class Net(vg.nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.first = Block(n)
        self.second = Block(n)
        self.scale = vg.nn.Parameter(vg.ones(1))

    def forward(self, x):
        return self.second(self.first(x)) * self.scale


def test_module_state_dict_keys_and_save_load_round_trip(tmp_path):
    net = Net()
    state = net.state_dict()
    assert list(state) == ["scale", "first.weight", "first.count", "second.weight", "second.count"]
    assert all(not t.requires_grad for t in state.values())
    vg.save({"model": state}, tmp_path / "net.vzg")
    fresh = Net()
    result = fresh.load_state_dict(vg.load(tmp_path / "net.vzg")["model"])
    assert result.missing_keys == [] and result.unexpected_keys == []
    for key, value in fresh.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), state[key].numpy(), err_msg=key)
    # loading copies: changing the loaded model leaves the source alone
    with vg.no_grad():
        fresh.first.weight.mul_(0)
    assert np.abs(net.first.weight.detach().numpy()).sum() > 0


def test_missing_and_unexpected_keys_are_named():
    net = Net()
    state = net.state_dict()
    del state["second.weight"]
    state["third.weight"] = vg.ones(3, 3)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(state)
    message = str(info.value)
    assert 'Missing key(s) in state_dict: "second.weight"' in message
    assert 'Unexpected key(s) in state_dict: "third.weight"' in message


def test_strict_false_returns_the_key_lists_and_loads_the_rest():
    net, source = Net(), Net()
    state = source.state_dict()
    del state["scale"]
    state["extra"] = vg.ones(1)
    result = net.load_state_dict(state, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["extra"]
    missing, unexpected = result
    assert missing == ["scale"]
    np.testing.assert_array_equal(net.first.weight.detach().numpy(), source.first.weight.detach().numpy())


def test_shape_and_dtype_mismatches_are_named_and_nothing_is_loaded():
    net = Net()
    before = net.first.weight.detach().numpy().copy()
    state = Net().state_dict()
    state["second.weight"] = vg.ones(4, 3)
    state["scale"] = vg.tensor([1])
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(state)
    message = str(info.value)
    assert ("size mismatch for second.weight: copying a param with shape (4, 3) from checkpoint, the shape in "
            "current model is (3, 3)") in message
    assert "'scale' has dtype int64 in the state dict but float32 in the model" in message
    np.testing.assert_array_equal(net.first.weight.detach().numpy(), before)


def test_state_dict_transforms(tmp_path):
    net = Net()
    half = net.state_dict(transform=cast_floating(vg.float16))
    assert half["first.weight"].dtype == vg.float16 and half["first.count"].dtype == vg.int64
    vg.save(half, tmp_path / "half.vzg")
    names = []

    def back_to_float32(name, tensor):
        names.append(name)
        return tensor.to(vg.float32) if tensor.is_floating_point() else tensor

    fresh = Net()
    fresh.load_state_dict(vg.load(tmp_path / "half.vzg"), transform=back_to_float32)
    assert names == ["scale", "first.weight", "first.count", "second.weight", "second.count"]
    assert fresh.first.weight.dtype == vg.float32
    np.testing.assert_allclose(fresh.first.weight.detach().numpy(), net.first.weight.detach().numpy(), rtol=1e-3)
    # a float16 state dict loads into a float32 model even without a transform
    Net().load_state_dict(half)
