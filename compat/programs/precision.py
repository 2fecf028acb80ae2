"""Programs about how numbers are kept: a bfloat16 model trained as the mixed-precision recipes
do (bfloat16 weights, bfloat16 autocast on the CPU), and whole-module checkpoints in the style
of the "Saving and loading models" tutorial (``torch.save(model)``, ``weights_only``).

The bfloat16 program compares number by number (2e-4), closer than bfloat16's own rounding
(2^-8), so it keeps to what both libraries round exactly once: products without a bias, and
Python numbers bfloat16 holds exactly (vizgrad rounds a Python float to bfloat16 before
multiplying, PyTorch multiplies by it in float32: the two can differ by one bfloat16 step)."""

import dataclasses
import io
import pickle

import numpy as np

from ..suite import program


def _expect_bfloat16(r):
    assert [name.rpartition(".")[2] for name in r["dtypes"].split()] == ["bfloat16"] * 3 + ["float32"]
    assert np.isfinite(r["losses"]).all() and r["losses"][-1] < r["losses"][0]


@program("Mixed precision on the CPU: a bfloat16 MLP trained by gradient descent, bfloat16 autocast, "
         "promotion and printing", expect=_expect_bfloat16)
def bfloat16_training(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    x = torch.tensor(rng.standard_normal((16, 6)).astype(np.float32))
    y = torch.tensor(rng.standard_normal((16, 2)).astype(np.float32))
    # no biases: PyTorch adds a bias inside its bfloat16 matrix product, rounding once, where
    # vizgrad rounds the product and the sum; either is within bfloat16's rounding, not 2e-4
    model = nn.Sequential(nn.Linear(6, 8, bias=False), nn.ReLU(), nn.Linear(8, 2, bias=False))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.4))
    reference = nn.Sequential(nn.Linear(6, 8, bias=False), nn.ReLU(), nn.Linear(8, 2, bias=False))
    reference.load_state_dict(model.state_dict())
    model = model.to(torch.bfloat16)
    losses = []
    for _ in range(6):
        loss = ((model(x.bfloat16()) - y.bfloat16()) ** 2).mean()
        loss.backward()
        weight = model[0].weight
        grad = weight.grad.clone()
        with torch.no_grad():      # by hand, with a step bfloat16 holds exactly (see the docstring)
            for parameter in model.parameters():
                parameter -= 0.125 * parameter.grad
                parameter.grad = None
        losses.append(loss.float().item())
    # the same float32 model under CPU autocast: its linear layers compute in bfloat16
    with torch.autocast("cpu"):
        mixed = reference(x)
        mixed_loss = F.mse_loss(mixed, y)
    mixed_loss.backward()
    a = torch.tensor([1.0, 2.5, 1 / 3, 1000.125], dtype=torch.bfloat16)
    print(a[:3])
    print(a[:3] * 3 + 1)
    print(torch.tensor([1e-3, 2e5], dtype=torch.bfloat16))
    info = torch.finfo(torch.bfloat16)
    promoted = [torch.promote_types(torch.bfloat16, other) for other in (torch.float16, torch.int64, torch.float64)]
    return {"losses": losses, "weight": weight.float(), "grad": grad.float(),
            "dtypes": " ".join(str(d) for d in (weight.dtype, grad.dtype, mixed.dtype, mixed_loss.dtype)),
            "autocast_dtype": str(torch.get_autocast_dtype("cpu")), "mixed": mixed.float(),
            "reference_grad": reference[0].weight.grad, "promoted": " ".join(map(str, promoted)),
            "finfo": [info.eps, info.max, info.tiny, info.resolution, info.bits],
            "element_size": a.element_size(), "is_floating": a.is_floating_point(),
            "sum": (a * a).sum().float(), "matmul": (x.bfloat16() @ x.bfloat16().T).float(),
            "bfloat16_plus_half": str((a + a.half()).dtype), "int_times_bfloat16": str((torch.arange(3) * a[:3]).dtype)}


def _hook(module, inputs, output):
    """A module-level forward hook: pickled by reference with the module, as in PyTorch."""
    return output * 2


@dataclasses.dataclass
class RunConfig:
    """The run's settings, saved beside the weights (loadable once allowed: safe_globals)."""
    lr: float
    epochs: int


def _expect_checkpoints(r):
    assert r["refused"] and r["config_refused"] and r["same_output"] and not r["training"] and r["grad_dropped"]


@program("Saving and loading models: torch.save(model), weights_only refusal and opt-in, optimizer "
         "state dicts, safe_globals", expect=_expect_checkpoints)
def whole_module_checkpoints(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    x = torch.tensor(rng.standard_normal((8, 5)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 3, 8))

    def build():
        # (no bias before the batch norm: its gradient is rounding noise, which Adam would amplify)
        model = nn.Sequential(nn.Linear(5, 6, bias=False), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 3))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.5))
        return model

    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model[3].register_forward_hook(_hook)
    model.eval()
    whole = io.BytesIO()
    torch.save(model, whole)
    whole.seek(0)
    try:
        torch.load(whole)                              # weights_only=True by default since PyTorch 2.6
        refused = False
    except pickle.UnpicklingError:
        refused = True
    whole.seek(0)
    loaded = torch.load(whole, weights_only=False)     # the opt-in, for a file we wrote ourselves
    loaded_output = loaded(x)
    same_output = bool((loaded_output == model(x)).all())
    # the usual checkpoint: state dicts and the run's settings, loaded with the safe default once the
    # settings' class is allowed, and training resumed
    checkpoint = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3,
                "config": RunConfig(0.05, 3)}, checkpoint)
    checkpoint.seek(0)
    try:
        torch.load(checkpoint)
        config_refused = False
    except pickle.UnpicklingError:
        config_refused = True
    checkpoint.seek(0)
    with torch.serialization.safe_globals([RunConfig]):
        state = torch.load(checkpoint)
    resumed = build()
    resumed.load_state_dict(state["model"])
    resumed_optimizer = torch.optim.Adam(resumed.parameters(), lr=0.05)
    resumed_optimizer.load_state_dict(state["optimizer"])
    resumed.train()
    model.train()
    for net, opt in ((resumed, resumed_optimizer), (model, optimizer)):
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    buffers = {f"buffer {name}": buffer for name, buffer in loaded.named_buffers()}
    return {**buffers, "losses": losses, "refused": refused, "type": type(loaded).__name__,
            "modules": " ".join(f"{name or '.'}:{type(module).__name__}" for name, module in loaded.named_modules()),
            "parameters": " ".join(name for name, _ in loaded.named_parameters()),
            "are_parameters": all(isinstance(p, nn.Parameter) and p.requires_grad for p in loaded.parameters()),
            "training": loaded.training, "grad_dropped": loaded[0].weight.grad is None,
            "hooks": len(loaded[3]._forward_hooks), "loaded_output": loaded_output,
            "same_output": same_output, "epoch": state["epoch"], "config_refused": config_refused,
            "config": [state["config"].lr, state["config"].epochs],
            "optimizer_steps": [entry["step"] for entry in resumed_optimizer.state_dict()["state"].values()],
            "resumed_weight": resumed[0].weight}
