"""bfloat16 (ml_dtypes' NumPy dtype on the CPU) against PyTorch: the dtype and its limits,
promotion, printing, every registered op (forward and backward stay bfloat16), sums and
products accumulated in float32 as PyTorch's CPU kernels accumulate, nn modules and optimizers,
and checkpoints."""

import io
import json
import zipfile

import ml_dtypes
import numpy as np
import pytest

import test_ops as registry
import vizgrad as vg
from vizgrad.serialization import CheckpointError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:chain_matmul is deprecated")

BF16_EPS = 2.0 ** -7


def _close(ours, theirs, steps=2):
    """Within ``steps`` bfloat16 rounding steps of PyTorch's values (relative to their scale)."""
    ours, theirs = ours.detach().float().numpy(), theirs.detach().float().numpy()
    scale = max(1.0, float(np.abs(theirs).max())) if theirs.size else 1.0
    np.testing.assert_allclose(ours, theirs, rtol=steps * BF16_EPS, atol=steps * BF16_EPS * scale)


def _name(dtype):
    return str(dtype).rpartition(".")[2]


# --- the dtype ---------------------------------------------------------------------------------
def test_the_dtype_its_names_and_limits_are_pytorchs():
    x = vg.tensor([1.5, 2.3, 100.25], dtype=vg.bfloat16)
    assert repr(vg.bfloat16) == "vizgrad.bfloat16" and x.dtype is vg.bfloat16
    assert x.dtype.is_floating_point and x.is_floating_point()
    assert (x.element_size(), x.itemsize, x.nbytes) == (2, 2, 6)
    assert x._array.dtype == np.dtype(ml_dtypes.bfloat16)
    for spelling in ("bfloat16", ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16)):
        assert vg.tensor([1.0]).to(spelling).dtype is vg.bfloat16
    assert vg.ones(2).bfloat16().dtype is vg.bfloat16 and isinstance(x, vg.BFloat16Tensor)
    assert x.type() == "vizgrad.BFloat16Tensor"
    ours, theirs = vg.finfo(vg.bfloat16), torch.finfo(torch.bfloat16)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)
    assert x.tolist() == [1.5, 2.296875, 100.0] and type(x[0].item()) is float


@pytest.mark.parametrize("make", [
    "L.zeros(2, 3, dtype=L.bfloat16)", "L.ones(4, dtype=L.bfloat16)", "L.full((2,), 3.3, dtype=L.bfloat16)",
    "L.arange(5, dtype=L.bfloat16)", "L.linspace(0, 1, 5, dtype=L.bfloat16)", "L.eye(2, dtype=L.bfloat16)",
    "L.tensor([[1, 2], [3, 4]], dtype=L.bfloat16)", "L.zeros_like(L.ones(3), dtype=L.bfloat16)",
    "L.ones(3).new_full((2,), 7, dtype=L.bfloat16)", "L.empty(2, dtype=L.bfloat16).fill_(0.1)",
    "L.randint(0, 5, (3,), dtype=L.bfloat16).dtype", "L.randn(3, dtype=L.bfloat16).dtype",
    "L.rand(3, dtype=L.bfloat16).dtype", "L.randperm(4, dtype=L.bfloat16).sort().values",
])
def test_creation_takes_dtype_bfloat16(make):
    ours, theirs = eval(make, {"L": vg}), eval(make, {"L": torch})
    assert repr(ours).replace("vizgrad.", "torch.") == repr(theirs)


def test_random_fills_reach_the_integers_bfloat16_holds():
    vg.manual_seed(0)
    assert vg.empty(4000, dtype=vg.bfloat16).random_().max().item() == 2.0 ** 8   # 8 digits, as PyTorch
    for fill in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_"):
        assert getattr(vg.empty(3, dtype=vg.bfloat16), fill)().dtype is vg.bfloat16


# --- promotion -----------------------------------------------------------------------------------
def _operands(lib):
    found = {}
    for name in ("bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"):
        dtype = getattr(lib, name)
        found[f"tensor {name}"] = lib.tensor([True, True] if name == "bool" else [3, 1], dtype=dtype)
        found[f"0-d {name}"] = lib.tensor(True if name == "bool" else 2, dtype=dtype)
    found.update({"python bool": True, "python int": 2, "python float": 2.5})
    return found


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "where"])
def test_promotion_with_bfloat16_is_pytorchs(op):
    ours, theirs = _operands(vg), _operands(torch)

    def apply(lib, a, b):
        if op == "where":
            return lib.where(lib.tensor(True), a, b)
        if op == "maximum":
            return lib.maximum(a, b) if not isinstance(a, (bool, int, float)) else None
        return {"add": lambda: a + b, "mul": lambda: a * b, "div": lambda: a / b}[op]()
    wrong = []
    for left in ours:
        for right in ours:
            if "bfloat16" not in left + right or (left.startswith("python") and right.startswith("python")):
                continue
            if op == "maximum" and right.startswith("python"):
                continue
            expected = apply(torch, theirs[left], theirs[right])
            if expected is None:
                continue
            got = apply(vg, ours[left], ours[right])
            if _name(got.dtype) != _name(expected.dtype):
                wrong.append(f"{left} {op} {right}: {got.dtype}, PyTorch {expected.dtype}")
            elif got.dtype.is_floating_point:
                _close(got, expected, steps=1)
    assert not wrong, "\n".join(wrong)


def test_promote_types_and_result_type():
    for other in ("bool", "int32", "int64", "float16", "float32", "float64"):
        assert _name(vg.promote_types(vg.bfloat16, getattr(vg, other))) == \
            _name(torch.promote_types(torch.bfloat16, getattr(torch, other)))
    assert vg.promote_types(vg.float16, vg.bfloat16) is vg.float32       # neither holds the other
    assert vg.result_type(vg.ones(2, dtype=vg.bfloat16), 2.5) is vg.bfloat16
    assert vg.can_cast(vg.bfloat16, vg.float16) and not vg.can_cast(vg.bfloat16, vg.int64)


# --- printing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [
    [1.5, 2.3, 100.25], [1e-6, 1.0, 1e6], [3e38, -3e38, 1e-38], [float("nan"), float("inf"), -1.0],
    [[0.1, 0.2], [0.3, 0.4]], 2.5, [], list(np.arange(2000.0)), [[1e-3, 2e-3]] * 3,
])
def test_bfloat16_tensors_print_as_pytorch_prints_them(values):
    ours, theirs = vg.tensor(values, dtype=vg.bfloat16), torch.tensor(values, dtype=torch.bfloat16)
    assert repr(ours).replace("vizgrad.", "torch.") == repr(theirs)
    ours, theirs = vg.nn.Parameter(ours), torch.nn.Parameter(theirs)
    assert repr(ours).replace("vizgrad.", "torch.") == repr(theirs)


# --- every registered op ---------------------------------------------------------------------
# PyTorch's CPU kernels take no bfloat16 (nor float16) for these: vizgrad refuses it too
REFUSED = {"det", "inverse", "logdet", "slogdet", "matrix_power", "linalg.matrix_power", "quantile", "nanquantile",
           "linalg.cholesky", "linalg.cholesky_ex", "linalg.cond", "linalg.eigh", "linalg.eigvalsh", "linalg.inv_ex",
           "linalg.lstsq", "linalg.matrix_rank", "linalg.pinv", "linalg.qr", "linalg.solve_ex",
           "linalg.solve_triangular", "linalg.svd", "linalg.svdvals", "linalg.tensorinv", "linalg.tensorsolve"}
# where the sample points move: coordinates rounded to bfloat16 cross pixels (as in PyTorch)
VALUES_UNCHECKED = {"grid_sample"}


@pytest.mark.parametrize("case", [case for case in registry.ALL
                                  if case.values[0].sample is not None
                                  and registry._floating_arrays(case.values[0].sample)])
def test_every_op_computes_and_differentiates_in_bfloat16(case, as_tensors):
    info, sample = registry._prepare(case, "cpu")
    if info.name in REFUSED:
        try:
            registry._call(info, sample, "cpu", as_tensors, "bfloat16")
        except vg.errors.DTypeError:
            return
        assert info.name.endswith("matrix_power"), f"{info.name} computed in bfloat16 (PyTorch refuses it)"
        return                                  # (matrix_power refuses negative powers only)
    result, args, kwargs = registry._call(info, sample, "cpu", as_tensors, "bfloat16")
    outputs = registry._flatten(result)
    for position, output in enumerate(outputs):
        if output.is_floating_point():
            assert output.dtype is vg.bfloat16, f"{info.name} output {position} is {output.dtype.name}"
    if info.reference is not None and info.name not in VALUES_UNCHECKED:
        rounded = registry._map((sample.args, sample.kwargs), registry._is_array,
                                lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float32) if a.dtype.kind == "f" else a)
        expected = [np.asarray(value) for value in registry._flatten(info.reference(*rounded[0], **rounded[1]))]
        actual = [registry._host(output).astype(np.float32) if output.is_floating_point() else registry._host(output)
                  for output in outputs]
        if info.gauge is not None:
            actual, expected = info.gauge(actual), info.gauge(expected)
        for position, (value, reference) in enumerate(zip(actual, expected)):
            value, reference = np.asarray(value), np.asarray(reference)
            if value.dtype.kind != "f" and reference.dtype.kind != "f":
                continue
            finite = reference[np.isfinite(reference)]
            scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
            np.testing.assert_allclose(value.astype(float), reference.astype(float), rtol=6 * BF16_EPS,
                                       atol=6 * BF16_EPS * scale, equal_nan=True,
                                       err_msg=f"{info.name} output {position}")
    leaves = [t for t in registry._leaves((args, kwargs), registry._is_tensor) if t.requires_grad]
    differentiable = [output for output in outputs if output.requires_grad]
    if info.differentiable and leaves and differentiable:
        sum(output.float().sum() for output in differentiable).backward()
        for leaf in leaves:
            assert leaf.grad is None or leaf.grad.dtype is vg.bfloat16, f"{info.name}: grad {leaf.grad.dtype}"


def test_refused_linear_algebra_is_refused_by_pytorch_too():
    a = np.eye(3, dtype=np.float32) * 2
    for name in ("inverse", "det", "linalg.cholesky", "linalg.svd", "linalg.qr"):
        with pytest.raises(vg.errors.DTypeError):
            eval(f"vg.{name}")(vg.tensor(a).bfloat16())
        with pytest.raises(RuntimeError):
            eval(f"torch.{name}")(torch.tensor(a).bfloat16())


# --- float32 accumulation ---------------------------------------------------------------------
@pytest.mark.parametrize("expression", [
    "L.full((1000,), 0.1, dtype=L.bfloat16).sum()", "L.full((1000,), 0.1, dtype=L.bfloat16).mean()",
    "L.full((1000,), 0.1, dtype=L.bfloat16).cumsum(0)[-1]", "L.full((300, 300), 0.01, dtype=L.bfloat16).sum(1)[:3]",
    "L.full((1, 512), 0.1, dtype=L.bfloat16) @ L.full((512, 2), 0.3, dtype=L.bfloat16)",
    "L.einsum('ij,jk->ik', L.full((1, 512), 0.1, dtype=L.bfloat16), L.full((512, 2), 0.3, dtype=L.bfloat16))",
    "L.full((100,), 1.01, dtype=L.bfloat16).prod()", "L.linspace(0, 1, 1000, dtype=L.bfloat16).var()",
    "L.linspace(0, 1, 1000, dtype=L.bfloat16).std()", "L.linspace(0, 1, 1000, dtype=L.bfloat16).norm()",
])
def test_sums_and_products_accumulate_in_float32_as_pytorch(expression):
    ours, theirs = eval(expression, {"L": vg}), eval(expression, {"L": torch})
    assert ours.dtype is vg.bfloat16 and theirs.dtype == torch.bfloat16
    _close(ours, theirs, steps=1)
    assert eval("L.full((1000,), 0.1, dtype=L.bfloat16).sum()", {"L": vg}).item() == pytest.approx(100.0, rel=0.01)


def test_an_explicit_dtype_keeps_the_float32_sum():
    ours = vg.full((1000,), 0.1, dtype=vg.bfloat16).sum(dtype=vg.float32)
    theirs = torch.full((1000,), 0.1, dtype=torch.bfloat16).sum(dtype=torch.float32)
    assert ours.dtype is vg.float32 and ours.item() == pytest.approx(theirs.item(), rel=1e-6)   # 1000 · bf16(0.1)


# --- nn, with backward ---------------------------------------------------------------------------
RNG = np.random.default_rng(0)
X, W, M = (RNG.normal(size=shape).astype(np.float32) for shape in ((4, 6), (5, 6), (4, 6)))
IMAGE, KERNEL, IMAGE_WEIGHTS = (RNG.normal(size=shape).astype(np.float32) for shape in ((2, 3, 8, 8), (4, 3, 3, 3),
                                                                                        (2, 3, 8, 8)))
FUNCTIONS = {
    "arithmetic": lambda L, x, w: (x * 2.5 + x / 3 - x ** 2).sum(),
    "matmul": lambda L, x, w: (x @ w.T).sum(),
    "linear": lambda L, x, w: L.nn.functional.linear(x, w, w[:, 0]).pow(2).mean(),
    "reductions": lambda L, x, w: x.sum(1).mean() + x.var() + x.std(0).sum() + x.amax(0).sum() + x.min(),
    "softmax": lambda L, x, w: (L.nn.functional.softmax(x, -1) * x).sum(),
    "cross_entropy": lambda L, x, w: L.nn.functional.cross_entropy(x @ w.T, L.tensor([1, 0, 4, 2])),
    "activations": lambda L, x, w: sum(f(x).sum() for f in (L.relu, L.tanh, L.sigmoid, L.nn.functional.gelu,
                                                            L.nn.functional.silu)),
    "layer_norm": lambda L, x, w: (L.nn.functional.layer_norm(x, (6,)) * L.tensor(M).bfloat16()).sum(),
    "logsumexp": lambda L, x, w: L.logsumexp(x, 1).sum(),
    "mse": lambda L, x, w: L.nn.functional.mse_loss(x @ w.T, L.zeros(4, 5, dtype=L.bfloat16)),
    "embedding": lambda L, x, w: (L.nn.functional.embedding(L.tensor([1, 0, 3]), x) * 1.5).sum(),
}
IMAGE_FUNCTIONS = {
    "conv2d": lambda L, x, k: L.nn.functional.conv2d(x, k, padding=1).pow(2).mean(),
    "pooling": lambda L, x, k: L.nn.functional.max_pool2d(x, 2).sum() + L.nn.functional.avg_pool2d(x, 2).sum(),
    "batch_norm": lambda L, x, k: (L.nn.functional.batch_norm(x, None, None, training=True)
                                   * L.tensor(IMAGE_WEIGHTS).bfloat16()).sum(),
    "group_norm": lambda L, x, k: (L.nn.functional.group_norm(x, 3) * L.tensor(IMAGE_WEIGHTS).bfloat16()).sum(),
}


@pytest.mark.parametrize("name", list(FUNCTIONS) + list(IMAGE_FUNCTIONS))
def test_functions_and_their_gradients_are_pytorchs_within_bfloat16_rounding(name):
    function, a, b = ((FUNCTIONS[name], X, W) if name in FUNCTIONS else (IMAGE_FUNCTIONS[name], IMAGE, KERNEL))
    results = []
    for lib in (vg, torch):
        x, w = (lib.tensor(v).bfloat16().requires_grad_() for v in (a, b))
        out = function(lib, x, w)
        out.backward()
        results.append((out, x.grad, w.grad))
    for ours, theirs in zip(*results):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert _name(ours.dtype) == _name(theirs.dtype) == "bfloat16"
            _close(ours, theirs, steps=4)


def _pair(build):
    torch.manual_seed(0)                 # the same start every run: bfloat16's rounding is tested, not luck
    ours, theirs = build(vg), build(torch)
    for mine, reference in zip(ours.parameters(), theirs.parameters()):
        mine.data = vg.tensor(reference.detach().numpy())
    return ours.bfloat16(), theirs.bfloat16()


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_a_bfloat16_model_trains_as_pytorchs(optimizer):
    ours, theirs = _pair(lambda L: L.nn.Sequential(L.nn.Linear(6, 8), L.nn.ReLU(), L.nn.Linear(8, 3)))
    options = {"lr": 1e-2, **({"momentum": 0.9} if optimizer == "SGD" else {})}
    steps = [(model, getattr(lib.optim, optimizer)(model.parameters(), **options), lib)
             for model, lib in ((ours, vg), (theirs, torch))]
    for _ in range(5):
        losses = []
        for model, opt, lib in steps:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(X).bfloat16()), lib.tensor([0, 1, 2, 0]))
            loss.backward()
            opt.step()
            losses.append(loss)
        _close(*losses, steps=2)
    for mine, reference in zip(ours.parameters(), theirs.parameters()):
        assert mine.dtype is vg.bfloat16 and mine.grad.dtype is vg.bfloat16
        _close(mine, reference, steps=4)
    for key, value in steps[0][1].state_dict()["state"][0].items():
        if isinstance(value, vg.Tensor) and value.ndim:
            assert value.dtype is vg.bfloat16, key


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers_in_bfloat16(kind):
    ours, theirs = _pair(lambda L: getattr(L.nn, kind)(6, 5, batch_first=True))
    sequence = X[None]
    outputs = []
    for model, lib in ((ours, vg), (theirs, torch)):
        x = lib.tensor(sequence).bfloat16().requires_grad_()
        out, _ = model(x)
        out.sum().backward()
        outputs.append((out, x.grad))
    for mine, reference in zip(*outputs):
        assert mine.dtype is vg.bfloat16
        _close(mine, reference, steps=4)


# --- NumPy interop and checkpoints --------------------------------------------------------------
def test_ml_dtypes_arrays_come_and_go_without_copies():
    array = np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16)
    tensor = vg.from_numpy(array)
    assert tensor.dtype is vg.bfloat16 and np.shares_memory(tensor.numpy(), array)


def test_bfloat16_checkpoints_round_trip_with_views_and_state_dicts(tmp_path):
    model = vg.nn.Linear(3, 2).bfloat16()
    w = vg.randn(4, 3).bfloat16()
    path = tmp_path / "half.vzg"
    vg.save({"w": w, "row": w[1], "model": model.state_dict(), "float": vg.ones(2)}, path)
    back = vg.load(path)
    assert back["w"].dtype is vg.bfloat16 and back["w"].tolist() == w.tolist()
    assert back["row"]._base is back["w"] and back["row"].tolist() == w[1].tolist()
    assert back["float"].dtype is vg.float32
    restored = vg.nn.Linear(3, 2).bfloat16()
    restored.load_state_dict(back["model"])
    assert restored.weight.dtype is vg.bfloat16 and restored.weight.tolist() == model.weight.tolist()
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("vizgrad.json"))
        stored = np.lib.format.read_array(io.BytesIO(archive.read(f"arrays/{manifest['dtypes'].popitem()[0]}.npy")))
    assert manifest["version"] == 3 and stored.dtype == np.uint16      # the bits: .npy cannot name bfloat16
    vg.save({"float": vg.ones(2)}, path)
    with zipfile.ZipFile(path) as archive:
        assert json.loads(archive.read("vizgrad.json"))["version"] == 2   # older vizgrads still read it


def test_a_damaged_bfloat16_storage_is_refused(tmp_path):
    path = tmp_path / "half.vzg"
    vg.save({"w": vg.ones(3).bfloat16()}, path)
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    for dtypes_entry, message in (({"0": "bfloat17"}, "unknown dtype"), ({"0": "float32"}, "do not fit")):
        manifest = json.loads(entries["vizgrad.json"])
        manifest["dtypes"] = dtypes_entry
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in entries.items():
                archive.writestr(name, json.dumps(manifest) if name == "vizgrad.json" else data)
        with pytest.raises(CheckpointError, match=message):
            vg.load(path)
