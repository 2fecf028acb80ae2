"""``autocast`` and ``GradScaler`` against PyTorch's CPU semantics."""

import numpy as np
import pytest

import vizgrad as vg

torch = pytest.importorskip("torch")


def _linear_pair(rng):
    theirs = torch.nn.Linear(3, 4)
    ours = vg.nn.Linear(3, 4)
    ours.weight.data = vg.tensor(theirs.weight.detach().numpy())
    ours.bias.data = vg.tensor(theirs.bias.detach().numpy())
    return ours, theirs


def test_autocast_float16_casts_linear_and_matmul_up_casts_losses():
    rng = np.random.default_rng(0)
    ours, theirs = _linear_pair(rng)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    with vg.autocast("cpu", dtype=vg.float16):
        assert vg.is_autocast_enabled("cpu") and vg.get_autocast_dtype("cpu") is vg.float16
        y = ours(vg.tensor(x))
        product = vg.tensor(x) @ vg.tensor(x).T
        loss = vg.nn.functional.mse_loss(y, vg.zeros(5, 4, dtype=vg.float16))
        double = vg.tensor(x, dtype=vg.float64) @ vg.tensor(x, dtype=vg.float64).T
    with torch.autocast("cpu", dtype=torch.float16):
        ty = theirs(torch.tensor(x))
        their_product = torch.tensor(x) @ torch.tensor(x).T
        their_loss = torch.nn.functional.mse_loss(ty, torch.zeros(5, 4, dtype=torch.float16))
    assert not vg.is_autocast_enabled("cpu")
    assert y.dtype is vg.float16 and product.dtype is vg.float16 and loss.dtype is vg.float32
    assert double.dtype is vg.float64                          # float64 is left alone, as PyTorch
    assert ty.dtype == torch.float16 and their_loss.dtype == torch.float32
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(product.numpy(), their_product.numpy(), rtol=2e-3, atol=2e-2)
    loss.backward()
    their_loss.backward()
    assert ours.weight.grad.dtype is vg.float32
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-2, atol=1e-2)


def test_autocast_nesting_decorator_and_refusals():
    a = vg.randn(2, 2)

    @vg.autocast("cpu", dtype=vg.float16)
    def product(x):
        with vg.autocast("cpu", enabled=False):
            inner = x @ x
        return x @ x, inner

    outer, inner = product(a)
    assert outer.dtype is vg.float16 and inner.dtype is vg.float32
    assert (a @ a).dtype is vg.float32
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of vizgrad.bfloat16, vizgrad.float16"):
        region = vg.autocast("cpu", dtype=vg.float64)
    with region:
        assert (a @ a).dtype is vg.float32 and not vg.is_autocast_enabled("cpu")
    with pytest.raises(ValueError, match="unsupported autocast device_type 'tpu'"):
        vg.autocast("tpu")
    if not vg.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
            region = vg.autocast("cuda")
        with region:
            assert (a @ a).dtype is vg.float32 and not vg.is_autocast_enabled("cuda")
        with pytest.warns(UserWarning, match="CUDA is not available"):
            vg.cuda.amp.autocast()


def test_cuda_grad_scaler_disables_itself_without_a_gpu():
    if vg.cuda.is_available():
        pytest.skip("a GPU is present")
    from vizgrad.cuda.amp import GradScaler
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = GradScaler()
    loss = vg.tensor(2.0, requires_grad=True)
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    optimizer = vg.optim.SGD([loss], lr=0.5)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    assert loss.item() == 1.5


def test_grad_scaler_on_the_cpu_matches_pytorch_step_by_step():
    rng = np.random.default_rng(1)
    ours, theirs = _linear_pair(rng)
    scaler = vg.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    their_scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    optimizer = vg.optim.SGD(ours.parameters(), lr=0.1)
    their_optimizer = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for step in range(6):
        x = rng.normal(size=(4, 3)).astype(np.float32)
        if step == 3:
            x[0, 0] = np.inf                       # this step's gradients overflow: skipped, scale halved
        for model, opt, s, lib in ((ours, optimizer, scaler, vg), (theirs, their_optimizer, their_scaler, torch)):
            opt.zero_grad()
            loss = model(lib.tensor(x)).pow(2).mean()
            s.scale(loss).backward()
            s.unscale_(opt) if step == 1 else None
            s.step(opt)
            s.update()
        assert scaler.get_scale() == their_scaler.get_scale()
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-5)
    state = scaler.state_dict()
    their_state = their_scaler.state_dict()
    assert state == their_state
    restored = vg.amp.GradScaler("cpu")
    restored.load_state_dict(state)
    assert restored.get_scale() == scaler.get_scale() and restored.state_dict() == state


def test_grad_scaler_order_mistakes():
    scaler = vg.amp.GradScaler("cpu")
    weight = vg.nn.Parameter(vg.ones(2))
    optimizer = vg.optim.SGD([weight], lr=0.1)
    scaler.scale(weight.sum()).backward()
    scaler.unscale_(optimizer)
    with pytest.raises(ValueError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    with pytest.raises(ValueError, match="step\\(\\) has already been called"):
        scaler.step(optimizer)
    scaler.update()
    with pytest.raises(ValueError, match="empty"):
        scaler.load_state_dict({})


def test_cpu_autocast_defaults_to_bfloat16_as_pytorch():
    rng = np.random.default_rng(2)
    ours, theirs = _linear_pair(rng)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    half = rng.normal(size=(3, 3)).astype(np.float16)
    assert vg.get_autocast_dtype("cpu") is vg.bfloat16 and torch.get_autocast_dtype("cpu") == torch.bfloat16
    results = {}
    for lib, model in ((vg, ours), (torch, theirs)):
        with lib.autocast("cpu"):
            y = model(lib.tensor(x))
            from_half = lib.tensor(half) @ lib.tensor(half)            # float16 inputs are cast to bfloat16 too
            loss = lib.nn.functional.mse_loss(y, lib.zeros(5, 4, dtype=lib.bfloat16))
            product = lib.tensor(x).bfloat16().prod()
        loss.backward()
        results[lib] = y, from_half, loss, product, model.weight.grad
    for ours_value, their_value in zip(results[vg], results[torch]):
        assert str(ours_value.dtype).rpartition(".")[2] == str(their_value.dtype).rpartition(".")[2]
        np.testing.assert_allclose(ours_value.detach().float().numpy(), their_value.detach().float().numpy(),
                                   rtol=2e-2, atol=2e-2)
    assert results[vg][0].dtype is vg.bfloat16 and results[vg][2].dtype is vg.float32
    assert results[vg][4].dtype is vg.float32                  # the float32 weight's gradient stays float32


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_runs_layers_whose_input_it_already_cast(dtype):
    """A second layer gets the first one's bfloat16 output and its own float32 weight: autocast
    casts them before linear's and conv2d's dtype checks, as PyTorch does."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 1, 6, 6)).astype(np.float32)
    shapes = [(2, 1, 3, 3), (2,), (2, 2, 3, 3), (2,), (4, 8), (4,), (2, 4), (2,)]
    weights = [rng.normal(size=shape).astype(np.float32) * 0.5 for shape in shapes]
    results = []
    for lib in (vg, torch):
        model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.Conv2d(2, 2, 3), lib.nn.Flatten(),
                                  lib.nn.Linear(8, 4), lib.nn.Linear(4, 2))
        with lib.no_grad():
            for parameter, values in zip(model.parameters(), weights):
                parameter.copy_(lib.tensor(values))
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            results.append(model(lib.tensor(x)))
    assert results[0].dtype.name == dtype and str(results[1].dtype) == f"torch.{dtype}"
    np.testing.assert_allclose(results[0].float().detach().numpy(), results[1].float().detach().numpy(),
                               rtol=5e-2, atol=5e-2)
    with pytest.raises(vg.errors.DTypeError, match="linear: input is float64 but weight is float32"):
        with vg.autocast("cpu"):
            vg.nn.Linear(2, 2)(vg.ones(2, dtype=vg.float64))    # float64 is not autocast's to cast
