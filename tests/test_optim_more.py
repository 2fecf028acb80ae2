"""NAdam, RAdam, Adamax, Rprop, ASGD and the schedules ConstantLR, PolynomialLR,
MultiplicativeLR, SequentialLR, ChainedScheduler and CyclicLR: against hand-written NumPy
references of the published rules, and against PyTorch (the oracle, where installed) for
values, state, state dicts and argument checks."""

import math
import warnings

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.errors import VizgradError
from vizgrad.optim import lr_scheduler

try:
    import torch
except ImportError:   # the references below still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

RNG = np.random.default_rng(2024)
P0 = RNG.standard_normal(6)
GRADS = [RNG.standard_normal(6) for _ in range(10)]
GRADS[3][2] = 0.0     # a zero gradient: Rprop's "neither grew nor flipped" case
STEPS = len(GRADS)


def run_vizgrad(cls, grads=GRADS, start=P0, **options):
    """The parameter after each step of ``cls`` over fixed gradients (and the optimizer)."""
    p = vg.tensor(start.copy(), requires_grad=True)
    opt = cls([p], **options)
    history = []
    for g in grads:
        p.grad = vg.tensor(g.copy())
        opt.step()
        history.append(p.detach().numpy().copy())
    return history, opt


# --- references: the published rules, written out with NumPy ---------------------------
def ref_adamax(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
    b1, b2 = betas
    p, m, u, out = P0.copy(), np.zeros(6), np.zeros(6), []
    for t, g in enumerate(GRADS, start=1):
        d = (-g if maximize else g) + weight_decay * p
        m = b1 * m + (1 - b1) * d
        u = np.maximum(b2 * u, np.abs(d) + eps)     # PyTorch keeps ε inside the max
        p = p - lr / (1 - b1 ** t) * m / u
        out.append(p)
    return out


def ref_nadam(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    p, m, v, product, out = P0.copy(), np.zeros(6), np.zeros(6), 1.0, []
    for t, g in enumerate(GRADS, start=1):
        d = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            d = d + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        product *= mu
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        nesterov = (1 - mu) / (1 - product) * d + mu_next / (1 - product * mu_next) * m
        p = p - lr * nesterov / (np.sqrt(v / (1 - b2 ** t)) + eps)
        out.append(p)
    return out


def ref_radam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
              maximize=False, rectified=None):
    """``rectified`` (a list) collects, per step, whether the variance was tractable."""
    b1, b2 = betas
    p, m, v, out = P0.copy(), np.zeros(6), np.zeros(6), []
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(GRADS, start=1):
        d = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            d = d + weight_decay * p
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        m_hat = m / (1 - b1 ** t)
        rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho > 5:     # PyTorch's threshold (the paper's is 4)
            r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            p = p - lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
        if rectified is not None:
            rectified.append(rho > 5)
        out.append(p)
    return out


def ref_rprop(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    """One weight at a time, as Riedmiller & Braun describe it (the iRprop⁻ variant)."""
    shrink, grow = etas
    low, high = step_sizes
    p, previous, size, out = P0.copy(), np.zeros(6), np.full(6, lr), []
    for g in GRADS:
        g = -g if maximize else g.copy()
        for i in range(6):
            if g[i] * previous[i] > 0:
                size[i] = size[i] * grow
            elif g[i] * previous[i] < 0:
                size[i] = size[i] * shrink
                g[i] = 0.0
            size[i] = min(max(size[i], low), high)
            p[i] -= np.sign(g[i]) * size[i]
        previous = g
        out.append(p.copy())
    return out


def ref_asgd(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False, averages=None):
    """``averages`` (a list) collects the averaged iterate after each step."""
    p, ax, eta, mu, out = P0.copy(), np.zeros(6), lr, 1.0, []
    for t, g in enumerate(GRADS, start=1):
        d = (-g if maximize else g) + weight_decay * p
        p = p * (1 - lambd * eta) - eta * d
        ax = p.copy() if mu == 1 else ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
        out.append(p)
        if averages is not None:
            averages.append(ax)
    return out


CASES = [   # (id, class name, options, reference)
    ("adamax", "Adamax", dict(lr=0.1), ref_adamax),
    ("adamax betas eps", "Adamax", dict(lr=0.05, betas=(0.5, 0.8), eps=1e-2), ref_adamax),
    ("adamax decay maximize", "Adamax", dict(lr=0.1, weight_decay=0.3, maximize=True), ref_adamax),
    ("nadam", "NAdam", dict(lr=0.1), ref_nadam),
    ("nadam momentum_decay", "NAdam", dict(lr=0.1, betas=(0.8, 0.9), momentum_decay=0.05), ref_nadam),
    ("nadam decay", "NAdam", dict(lr=0.1, weight_decay=0.2), ref_nadam),
    ("nadamw maximize", "NAdam", dict(lr=0.1, weight_decay=0.2, decoupled_weight_decay=True, maximize=True),
     ref_nadam),
    ("radam", "RAdam", dict(lr=0.1), ref_radam),
    ("radam short memory", "RAdam", dict(lr=0.1, betas=(0.8, 0.9), eps=1e-3), ref_radam),
    ("radam decay", "RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.2), ref_radam),
    ("radamw maximize", "RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.2, decoupled_weight_decay=True,
                                     maximize=True), ref_radam),
    ("rprop", "Rprop", dict(lr=0.1), ref_rprop),
    ("rprop etas clamps", "Rprop", dict(lr=0.1, etas=(0.3, 1.9), step_sizes=(0.05, 0.25)), ref_rprop),
    ("rprop maximize", "Rprop", dict(lr=0.01, maximize=True), ref_rprop),
    ("asgd", "ASGD", dict(lr=0.1), ref_asgd),
    ("asgd averaging", "ASGD", dict(lr=0.1, lambd=0.05, alpha=0.5, t0=3), ref_asgd),
    ("asgd decay maximize", "ASGD", dict(lr=0.2, lambd=0.1, t0=1, weight_decay=0.1, maximize=True), ref_asgd),
]


@pytest.mark.parametrize("name, options, reference", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_steps_match_the_published_rule(name, options, reference):
    got, _ = run_vizgrad(getattr(vg.optim, name), **options)
    expected = reference(**options)
    for step, (mine, ref) in enumerate(zip(got, expected), start=1):
        np.testing.assert_allclose(mine, ref, rtol=1e-10, atol=1e-12, err_msg=f"after step {step}")
    assert not np.allclose(got[-1], P0)


@pytest.mark.parametrize("options", [dict(lr=0.1), dict(lr=0.1, betas=(0.9, 0.9))], ids=["default", "short"])
def test_radam_runs_through_both_of_its_regimes(options):
    rectified = []
    ref_radam(**options, rectified=rectified)
    # the first steps are momentum SGD, the later ones rectified Adam: the references above cover both
    assert rectified[0] is False and rectified[-1] is True


def test_asgd_keeps_the_average_of_its_iterates():
    averages = []
    ref_asgd(lr=0.1, lambd=0.05, alpha=0.5, t0=3, averages=averages)
    p = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.ASGD([p], lr=0.1, lambd=0.05, alpha=0.5, t0=3)
    for g, average in zip(GRADS, averages):
        p.grad = vg.tensor(g)
        opt.step()
        np.testing.assert_allclose(opt.state[p]["ax"], average, rtol=1e-10, atol=1e-12)
    # after t0 steps the average differs from the iterate (μ < 1), before it they coincide
    assert opt.state[p]["mu"] == pytest.approx(1 / (STEPS - 3))
    assert not np.allclose(opt.state[p]["ax"], p.detach().numpy())


def test_rprop_step_sizes_grow_shrink_and_clamp():
    p = vg.tensor([1.0, 1.0, 1.0], dtype=vg.float64, requires_grad=True)
    opt = vg.optim.Rprop([p], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.04, 0.3))
    for g in ([1.0, 1.0, 1.0], [1.0, -1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]):
        p.grad = vg.tensor(g, dtype=vg.float64)
        opt.step()
    # weight 0 grows 0.1 -> 0.2 -> 0.3 (clamped); weight 1 flips at step 2 (0.05, no step), then
    # starts afresh (0.05, then grows to 0.1); weight 2 saw a zero (unchanged 0.1), then grows
    np.testing.assert_allclose(opt.state[p]["step_size"], [0.3, 0.1, 0.2])
    np.testing.assert_allclose(p.detach().numpy(),
                               [1 - 0.1 - 0.2 - 0.3 - 0.3, 1 - 0.1 - 0.05 - 0.1, 1 - 0.1 - 0.1 - 0.2])


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_parameter_without_grad_is_left_alone(name):
    a = vg.tensor(P0.copy(), requires_grad=True)
    b = vg.tensor(P0.copy(), requires_grad=True)
    opt = getattr(vg.optim, name)([a, b], lr=0.1)
    a.grad = vg.tensor(GRADS[0])
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), P0)
    assert b not in opt.state and opt.state[a]["step"] == 1
    assert not np.allclose(a.detach().numpy(), P0)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_the_update_is_portable_array_api(name, backend):
    options = dict(lr=0.1, weight_decay=0.1) if name != "Rprop" else dict(lr=0.1)
    expected, _ = run_vizgrad(getattr(vg.optim, name), **options)
    p = vg.tensor(P0.copy(), device=backend, requires_grad=True)
    opt = getattr(vg.optim, name)([p], **options)
    for g in GRADS:
        p.grad = vg.tensor(g, device=backend)
        opt.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), expected[-1], rtol=1e-10, atol=1e-12)


# --- against PyTorch ----------------------------------------------------------------------
TORCH_CASES = [(name, options) for _, name, options, _ in CASES] + [
    ("NAdam", dict(lr=0.05, betas=(0.95, 0.99), eps=1e-6, weight_decay=0.05, momentum_decay=0.01,
                   decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05, lambd=0.3, alpha=0.9, t0=0, weight_decay=0.2)),
]


@pytest.fixture
def torch_float64():
    """PyTorch with float64 as its default dtype, so its scalar state (NAdam's μ product, ASGD's η)
    is float64 as vizgrad's is; restored afterwards."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(previous)


def _two_groups(make_tensor, options):
    """Two parameter groups, the second with half the learning rate."""
    first = make_tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.8)
    second = make_tensor(P0.copy())
    return [first, second], [{"params": [first]}, {"params": [second], "lr": options["lr"] / 2}]


@pytest.mark.parametrize("name, options", TORCH_CASES, ids=[f"{n} {sorted(o)}" for n, o in TORCH_CASES])
def test_agrees_with_torch_step_by_step(name, options, torch_float64):
    ours, our_groups = _two_groups(lambda a: vg.tensor(a, requires_grad=True), options)
    theirs, their_groups = _two_groups(lambda a: torch.tensor(a, requires_grad=True), options)
    mine = getattr(vg.optim, name)(our_groups, **options)
    reference = getattr(torch.optim, name)(their_groups, **options)
    rng = np.random.default_rng(7)
    for step in range(1, 13):
        for p, q in zip(ours, theirs):
            g = rng.standard_normal(p.shape) * (0.0 if step == 4 else 1.0)   # one all-zero gradient
            p.grad, q.grad = vg.tensor(g), torch.tensor(g)
        mine.step()
        reference.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name} step {step}")
    for p, q in zip(ours, theirs):   # the same state, under PyTorch's names
        assert set(mine.state[p]) == set(reference.state[q])
        for key, value in reference.state[q].items():
            np.testing.assert_allclose(np.asarray(mine.state[p][key], dtype=np.float64), value.numpy(),
                                       rtol=1e-10, atol=1e-14, err_msg=f"{name} state {key}")
    for our_group, their_group in zip(mine.param_groups, reference.param_groups):
        shared = set(our_group) - {"params"}
        assert shared <= set(their_group), shared - set(their_group)
        assert {key: our_group[key] for key in shared} == {key: their_group[key] for key in shared}


@needs_torch
@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_float32_parameters_keep_float32_state_and_agree_with_torch(name):
    options = dict(lr=0.05, weight_decay=0.1) if name != "Rprop" else dict(lr=0.05)
    p = vg.tensor(P0.astype(np.float32), requires_grad=True)
    q = torch.tensor(P0.astype(np.float32), requires_grad=True)
    mine, reference = getattr(vg.optim, name)([p], **options), getattr(torch.optim, name)([q], **options)
    for g in GRADS:
        p.grad, q.grad = vg.tensor(g.astype(np.float32)), torch.tensor(g.astype(np.float32))
        mine.step()
        reference.step()
    assert p.dtype == vg.float32
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=2e-6)
    arrays = [value for value in mine.state[p].values() if hasattr(value, "dtype")]
    assert arrays and all(value.dtype == np.float32 for value in arrays)


# --- state dicts ------------------------------------------------------------------------------
ROUND_TRIPS = [
    ("Adamax", dict(lr=0.1, weight_decay=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.9))),
    ("Rprop", dict(lr=0.1, etas=(0.4, 1.5))),
    ("ASGD", dict(lr=0.1, lambd=0.05, t0=2)),
]


@pytest.mark.parametrize("name, options", ROUND_TRIPS, ids=[r[0] for r in ROUND_TRIPS])
@pytest.mark.parametrize("through_file", [False, True], ids=["in-memory", "vizgrad.save"])
def test_state_dict_mid_run_continues_exactly(name, options, through_file, tmp_path):
    cls = getattr(vg.optim, name)
    uninterrupted, _ = run_vizgrad(cls, **options)
    p = vg.tensor(P0.copy(), requires_grad=True)
    opt = cls([p], **options)
    for g in GRADS[:5]:
        p.grad = vg.tensor(g)
        opt.step()
    saved = opt.state_dict()
    if through_file:
        vg.save(saved, tmp_path / "optim.vzg")
        saved = vg.load(tmp_path / "optim.vzg")
    p.grad = vg.tensor(GRADS[5])
    opt.step()                          # the original goes on: what was saved must not change with it

    resumed_param = vg.tensor(uninterrupted[4].copy(), requires_grad=True)
    resumed = cls([resumed_param], **{**options, "lr": 123.0})    # hyperparameters come from the dict
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == options["lr"]
    for step, g in enumerate(GRADS[5:], start=6):
        resumed_param.grad = vg.tensor(g)
        resumed.step()
        np.testing.assert_array_equal(resumed_param.detach().numpy(), uninterrupted[step - 1],
                                      err_msg=f"step {step}")
    assert resumed.state[resumed_param]["step"] == STEPS


@needs_torch
@pytest.mark.parametrize("name, options", ROUND_TRIPS, ids=[r[0] for r in ROUND_TRIPS])
def test_state_dict_layout_is_pytorchs(name, options):
    _, mine = run_vizgrad(getattr(vg.optim, name), grads=GRADS[:2], **options)
    q = torch.tensor(P0.copy(), requires_grad=True)
    reference = getattr(torch.optim, name)([q], **options)
    for g in GRADS[:2]:
        q.grad = torch.tensor(g)
        reference.step()
    ours, theirs = mine.state_dict(), reference.state_dict()
    assert set(ours["state"]) == set(theirs["state"]) == {0}
    assert set(ours["state"][0]) == set(theirs["state"][0])
    assert set(ours["param_groups"][0]) <= set(theirs["param_groups"][0])


BAD_ARGUMENTS = [   # (optimizer, options, the argument, its value as the message prints it, torch refuses it too)
    ("NAdam", dict(lr=-0.1), "lr", "-0.1", True),
    ("NAdam", dict(eps=-1e-8), "eps", "-1e-08", True),
    ("NAdam", dict(betas=(0.9, 1.0)), "betas[1]", "1.0", True),
    ("NAdam", dict(weight_decay=-0.5), "weight_decay", "-0.5", True),
    ("NAdam", dict(momentum_decay=-0.004), "momentum_decay", "-0.004", True),
    ("RAdam", dict(lr=-1.0), "lr", "-1.0", True),
    ("RAdam", dict(betas=(1.5, 0.9)), "betas[0]", "1.5", True),
    ("RAdam", dict(weight_decay=-0.1), "weight_decay", "-0.1", True),
    ("RAdam", dict(betas=0.9), "betas", "0.9", True),
    ("Adamax", dict(eps=-1.0), "eps", "-1.0", True),
    ("Adamax", dict(betas=(-0.1, 0.9)), "betas[0]", "-0.1", True),
    ("Adamax", dict(lr="fast"), "lr", "'fast'", True),
    ("Rprop", dict(lr=-0.01), "lr", "-0.01", True),
    ("Rprop", dict(etas=(1.5, 1.2)), "etas", "(1.5, 1.2)", True),
    ("Rprop", dict(etas=(0.5, 0.9)), "etas", "(0.5, 0.9)", True),
    ("Rprop", dict(etas=(0.5,)), "etas", "(0.5,)", True),
    ("Rprop", dict(step_sizes=(1.0, 0.1)), "step_sizes", "(1.0, 0.1)", False),
    ("ASGD", dict(lr=-0.01), "lr", "-0.01", True),
    ("ASGD", dict(weight_decay=-1), "weight_decay", "-1", True),
    ("ASGD", dict(t0="never"), "t0", "'never'", False),
]


@pytest.mark.parametrize("name, options, argument, shown, torch_refuses", BAD_ARGUMENTS,
                         ids=[f"{b[0]} {b[2]}" for b in BAD_ARGUMENTS])
def test_bad_arguments_raise_vizgrad_errors_naming_them(name, options, argument, shown, torch_refuses):
    with pytest.raises(VizgradError) as info:
        getattr(vg.optim, name)([vg.tensor([1.0], requires_grad=True)], **options)
    message = str(info.value)
    assert message.startswith(f"{name}: "), message
    assert argument in message and shown in message, message
    assert isinstance(info.value, (ValueError, TypeError))
    if torch_refuses and torch is not None:
        with pytest.raises((ValueError, TypeError, IndexError)):
            getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], **options)


def test_new_optimizers_are_exported_with_pytorchs_names():
    for name in ("NAdam", "RAdam", "Adamax", "Rprop", "ASGD"):
        assert name in vg.optim.__all__ and issubclass(getattr(vg.optim, name), vg.optim.Optimizer)
        if torch is not None:
            assert hasattr(torch.optim, name)
    assert sorted(set(vg.optim.__all__)) == sorted(vg.optim.__all__)
    assert all(hasattr(vg.optim, name) for name in vg.optim.__all__)


# --- learning-rate schedules ----------------------------------------------------------------------
def make_optimizer(module, cls="SGD", lrs=(2.0, 0.5), **options):
    """An optimizer of ``module`` (vizgrad or torch) with one parameter group per rate."""
    groups = [{"params": [module.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return getattr(module.optim, cls)(groups, **options)


def trajectory(module, build, steps=30, cls="SGD", **options):
    """Per step: every group's lr and its momentum (or β₁), from creation to after ``steps`` steps."""
    opt = make_optimizer(module, cls, **options)
    scheduler = build(module.optim.lr_scheduler, opt)

    def now():
        return [g["lr"] for g in opt.param_groups] + [g["betas"][0] if "betas" in g else g.get("momentum", 0.0)
                                                      for g in opt.param_groups]
    rows = [now()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # PyTorch's reminders about the order of steps
        for _ in range(steps):
            opt.step()
            scheduler.step()
            rows.append(now())
            assert list(scheduler.get_last_lr()) == rows[-1][:len(opt.param_groups)]
    return np.array(rows), scheduler


def warmup_cosine(S, o):
    return S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.CosineAnnealingLR(o, T_max=20,
                                                                                                 eta_min=0.01)],
                          milestones=[5])


SCHEDULES = {   # name: build(lr_scheduler module, optimizer), for vizgrad and torch alike
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=4),
    "ConstantLR defaults": lambda S, o: S.ConstantLR(o),
    "ConstantLR long": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=12),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=10, power=2.0),
    "PolynomialLR linear": lambda S, o: S.PolynomialLR(o, total_iters=25),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.9 + 0.002 * e),
    "MultiplicativeLR per group": lambda S, o: S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.05]),
    "SequentialLR warmup+cosine": warmup_cosine,
    "SequentialLR three": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, 0.1, 3), S.ExponentialLR(o, 0.9),
                                                          S.StepLR(o, 4, 0.5)], milestones=[4, 12]),
    "SequentialLR multiplicative second": lambda S, o: S.SequentialLR(
        o, [S.StepLR(o, 2, 0.5), S.MultiplicativeLR(o, lambda e: 0.9)], milestones=[6]),
    "SequentialLR cyclic second": lambda S, o: S.SequentialLR(
        o, [S.ExponentialLR(o, 0.8), S.CyclicLR(o, 0.01, 0.1, step_size_up=3)], milestones=[5]),
    "ChainedScheduler constant*exponential": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=2), S.ExponentialLR(o, gamma=0.9)]),
    "ChainedScheduler warmup*cosine*multistep": lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, 0.1, 1.0, 5), S.CosineAnnealingLR(o, 10), S.MultiStepLR(o, [3, 7, 7], 0.5)]),
    "ChainedScheduler poly*multiplicative*step": lambda S, o: S.ChainedScheduler(
        [S.PolynomialLR(o, 8, 1.5), S.MultiplicativeLR(o, lambda e: 0.97), S.StepLR(o, 3, 0.8)], o),
    "CyclicLR triangular": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR triangular2 uneven": lambda S, o: S.CyclicLR(o, [0.01, 0.02], [0.1, 0.3], step_size_up=3,
                                                           step_size_down=5, mode="triangular2"),
    "CyclicLR exp_range": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.95,
                                                  base_momentum=0.7, max_momentum=0.95),
    "CyclicLR scale_fn": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                                                 scale_mode="iterations"),
    "CyclicLR no momentum": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2, cycle_momentum=False),
    "CosineAnnealingLR past T_max": lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.05),
    "LinearLR decreasing": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=6),
}


@needs_torch
@pytest.mark.parametrize("cls, options", [("SGD", dict(momentum=0.9)), ("Adam", {})], ids=["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_agrees_with_torch_for_30_steps(name, cls, options):
    ours, _ = trajectory(vg, SCHEDULES[name], cls=cls, **options)
    theirs, _ = trajectory(torch, SCHEDULES[name], cls=cls, **options)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    assert len(np.unique(ours[:, 0])) > 1        # the schedule did change the rate


def closed_forms():
    """name: (build, lr of a group with base rate b at epoch e) from the formulas, independent of PyTorch."""
    def triangle(e, half):        # Smith's triangular wave, 0 at the ends of a cycle, 1 in its middle
        cycle = math.floor(1 + e / (2 * half))
        return max(0.0, 1 - abs(e / half - 2 * cycle + 1)), cycle

    return {
        "ConstantLR": (SCHEDULES["ConstantLR"], lambda b, e: b * (0.25 if e < 4 else 1.0)),
        "PolynomialLR": (SCHEDULES["PolynomialLR"], lambda b, e: b * (1 - min(e, 10) / 10) ** 2),
        "MultiplicativeLR": (lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9), lambda b, e: b * 0.9 ** e),
        "SequentialLR warmup+cosine": (warmup_cosine, lambda b, e: b * (0.1 + 0.9 * e / 5) if e < 5 else
                                       0.01 + (b - 0.01) * (1 + math.cos(math.pi * (e - 5) / 20)) / 2),
        "ChainedScheduler": (SCHEDULES["ChainedScheduler constant*exponential"],
                             lambda b, e: b * 0.9 ** e * (0.1 if e < 2 else 1.0)),
        "CyclicLR triangular": (SCHEDULES["CyclicLR triangular"],
                                lambda b, e: 0.01 + 0.09 * triangle(e, 4)[0]),
        "CyclicLR triangular2": (lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
                                 lambda b, e: 0.01 + 0.09 * triangle(e, 3)[0] / 2 ** (triangle(e, 3)[1] - 1)),
        "CyclicLR exp_range": (lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.9),
                               lambda b, e: 0.01 + 0.09 * triangle(e, 4)[0] * 0.9 ** e),
    }


@pytest.mark.parametrize("name", list(closed_forms()))
def test_schedule_follows_its_formula(name):
    build, formula = closed_forms()[name]
    rows, _ = trajectory(vg, build, momentum=0.9)
    for group, base in enumerate((2.0, 0.5)):
        expected = [formula(base, e) for e in range(31)]
        np.testing.assert_allclose(rows[:, group], expected, rtol=1e-12, atol=1e-15, err_msg=f"group {group}")


def test_cyclic_lr_moves_momentum_against_the_rate():
    rows, _ = trajectory(vg, SCHEDULES["CyclicLR triangular"], momentum=0.9)
    rates, momenta = rows[:, 0], rows[:, 2]
    # momentum = max_momentum - (max_momentum - base_momentum)·(lr - base_lr)/(max_lr - base_lr)
    np.testing.assert_allclose(momenta, 0.9 - 0.1 * (rates - 0.01) / 0.09, rtol=1e-12)
    assert momenta.min() == pytest.approx(0.8) and momenta.max() == pytest.approx(0.9)
    adam_rows, _ = trajectory(vg, SCHEDULES["CyclicLR triangular"], cls="Adam", betas=(0.5, 0.99))
    np.testing.assert_allclose(adam_rows[:, 2], momenta, rtol=1e-12)      # Adam's β₁ cycles the same way


def test_sequential_lr_restarts_each_schedule_at_its_milestone():
    rows, scheduler = trajectory(vg, SCHEDULES["SequentialLR three"], steps=14)
    # ConstantLR (x0.1 for 3 epochs), then ExponentialLR from 2.0 at epoch 4, then StepLR from 2.0 at 12
    assert rows[:5, 0] == pytest.approx([0.2, 0.2, 0.2, 2.0, 2.0])
    assert rows[4:12, 0] == pytest.approx([2.0 * 0.9 ** k for k in range(8)])
    assert rows[12:15, 0] == pytest.approx([2.0, 2.0, 2.0])
    assert scheduler.last_epoch == 14


STATEFUL_SCHEDULES = ["ConstantLR long", "PolynomialLR", "MultiplicativeLR", "SequentialLR warmup+cosine",
                      "SequentialLR three", "ChainedScheduler constant*exponential",
                      "ChainedScheduler warmup*cosine*multistep", "CyclicLR triangular2 uneven", "CyclicLR scale_fn"]


def _assert_plain_data(value, where="state_dict"):
    """No functions and no optimizer inside a scheduler's state dict (it must pickle)."""
    assert not callable(value) and not isinstance(value, vg.optim.Optimizer), where
    if isinstance(value, dict):
        for key, item in value.items():
            _assert_plain_data(item, f"{where}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            _assert_plain_data(item, f"{where}[{position}]")


@pytest.mark.parametrize("name", STATEFUL_SCHEDULES)
def test_scheduler_state_dict_round_trip(name):
    build = SCHEDULES[name]

    def advance(opt, scheduler, steps):
        out = []
        for _ in range(steps):
            scheduler.step()
            out.append([g["lr"] for g in opt.param_groups] + [g["momentum"] for g in opt.param_groups])
        return out

    opt = make_optimizer(vg, momentum=0.9)
    original = build(lr_scheduler, opt)
    advance(opt, original, 7)
    saved_scheduler, saved_optimizer = original.state_dict(), opt.state_dict()
    _assert_plain_data(saved_scheduler)
    expected = advance(opt, original, 20)

    opt2 = make_optimizer(vg, momentum=0.9)
    resumed = build(lr_scheduler, opt2)
    opt2.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved_scheduler)
    assert resumed.get_last_lr() == [g["lr"] for g in opt2.param_groups]
    assert advance(opt2, resumed, 20) == expected
    assert len({row[0] for row in expected}) > 1


def test_cyclic_lr_keeps_its_own_scale_function_when_loading():
    opt = make_optimizer(vg, momentum=0.9)
    plain = lr_scheduler.CyclicLR(opt, 0.0, 1.0, step_size_up=1)          # no scale_fn of its own
    saved = plain.state_dict()
    assert "_scale_fn_custom" not in saved
    opt2 = make_optimizer(vg, momentum=0.9)
    other = lr_scheduler.CyclicLR(opt2, 0.0, 1.0, step_size_up=1, scale_fn=lambda x: 0.25 ** x)
    other.load_state_dict(saved)
    other.step()          # epoch 1, the top of the first cycle: the height is scale_fn(1)
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.25)


def test_chained_scheduler_reports_the_last_rates_and_steps_each_once():
    opt = make_optimizer(vg)
    first, second = lr_scheduler.ExponentialLR(opt, 0.5), lr_scheduler.StepLR(opt, 2, 0.1)
    chained = lr_scheduler.ChainedScheduler([first, second])
    assert chained.get_last_lr() == [2.0, 0.5]
    chained.step()
    chained.step()
    assert first.last_epoch == second.last_epoch == 2
    assert chained.get_last_lr() == pytest.approx([2.0 * 0.25 * 0.1, 0.5 * 0.25 * 0.1])


def _other_optimizer():
    return make_optimizer(vg)


SCHEDULER_ERRORS = [   # (build on a 2-group SGD optimizer, the words the message must contain)
    (lambda o: lr_scheduler.ConstantLR(o, factor=1.5), ["ConstantLR", "factor", "1.5"]),
    (lambda o: lr_scheduler.ConstantLR(o, total_iters=-1), ["ConstantLR", "total_iters", "-1"]),
    (lambda o: lr_scheduler.PolynomialLR(o, total_iters=0), ["PolynomialLR", "total_iters", "0"]),
    (lambda o: lr_scheduler.PolynomialLR(o, power="square"), ["PolynomialLR", "power", "'square'"]),
    (lambda o: lr_scheduler.MultiplicativeLR(o, [lambda e: 0.9]), ["MultiplicativeLR", "lr_lambdas", "2", "1"]),
    (lambda o: lr_scheduler.MultiplicativeLR(o, 0.9), ["MultiplicativeLR", "lr_lambda", "float"]),
    (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2), lr_scheduler.StepLR(o, 3)], milestones=[]),
     ["SequentialLR", "milestones", "2 schedulers", "0 milestones"]),
    (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2), lr_scheduler.StepLR(o, 3),
                                             lr_scheduler.StepLR(o, 4)], milestones=[6, 3]),
     ["SequentialLR", "milestones", "[6, 3]"]),
    (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(_other_optimizer(), 2)], milestones=[]),
     ["SequentialLR", "schedulers[0]", "another optimizer"]),
    (lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.ReduceLROnPlateau(o)], milestones=[]),
     ["SequentialLR", "schedulers[0]", "ReduceLROnPlateau"]),
    (lambda o: lr_scheduler.SequentialLR(o, [], milestones=[]), ["SequentialLR", "at least one"]),
    (lambda o: lr_scheduler.ChainedScheduler([]), ["ChainedScheduler", "at least one"]),
    (lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(o, 2), "StepLR"]),
     ["ChainedScheduler", "schedulers[1]", "str"]),
    (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, mode="zigzag"), ["CyclicLR", "mode", "'zigzag'"]),
    (lambda o: lr_scheduler.CyclicLR(o, [0.01], 0.1), ["CyclicLR", "base_lr", "1 values", "2 parameter groups"]),
    (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=0), ["CyclicLR", "step_size_up", "0"]),
    (lambda o: lr_scheduler.CyclicLR(o, 0.01, 0.1, scale_fn=abs, scale_mode="epochs"),
     ["CyclicLR", "scale_mode", "'epochs'"]),
    (lambda o: lr_scheduler.CyclicLR(vg.optim.Adagrad(o.param_groups[0]["params"]), 0.01, 0.1),
     ["CyclicLR", "cycle_momentum", "Adagrad"]),
]


@pytest.mark.parametrize("build, words", SCHEDULER_ERRORS, ids=[" ".join(w[:2]) for _, w in SCHEDULER_ERRORS])
def test_scheduler_arguments_are_checked_in_their_own_words(build, words):
    with pytest.raises(VizgradError) as info:
        build(make_optimizer(vg, momentum=0.9))
    assert isinstance(info.value, (ValueError, TypeError))
    message = str(info.value)
    assert message.startswith(words[0]) and all(word in message for word in words), message


def test_new_schedules_exist_in_torch_under_the_same_names():
    names = ["ConstantLR", "PolynomialLR", "MultiplicativeLR", "SequentialLR", "ChainedScheduler", "CyclicLR"]
    for name in names:
        assert issubclass(getattr(lr_scheduler, name), lr_scheduler.LRScheduler)
        if torch is not None:
            assert hasattr(torch.optim.lr_scheduler, name)
