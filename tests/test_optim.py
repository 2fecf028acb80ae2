"""Optimizers and learning-rate schedules against hand-written NumPy references of the
published update rules (torch is only an optional cross-check for the schedules)."""

import math
import re

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.optim import lr_scheduler

RNG = np.random.default_rng(1234)
P0 = RNG.standard_normal(5)
GRADS = [RNG.standard_normal(5) for _ in range(3)]


def value(tensor):
    return tensor.detach().numpy()


def run_vizgrad(cls, steps=GRADS, start=P0, **options):
    """Apply ``cls`` for each fixed gradient in ``steps``; the parameter after every step."""
    p = vg.tensor(start.copy(), requires_grad=True)
    opt = cls([p], **options)
    history = []
    for g in steps:
        p.grad = vg.tensor(g.copy())
        opt.step()
        history.append(value(p).copy())
    return history


# --- references: the published rules, written out independently ---------------------
def ref_sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    p, buf, out = P0.copy(), None, []
    for g in GRADS:
        d = -g if maximize else g
        d = d + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        out.append(p)
    return out


def ref_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
             decoupled=False):
    b1, b2 = betas
    p, m, v, v_max, out = P0.copy(), np.zeros(5), np.zeros(5), np.zeros(5), []
    for t, g in enumerate(GRADS, start=1):
        d = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            d = d + weight_decay * p
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        v_max = np.maximum(v_max, v)
        m_hat = m / (1 - b1 ** t)
        v_hat = (v_max if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(p)
    return out


def ref_rmsprop(lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
    p, sq, mean, buf, out = P0.copy(), np.zeros(5), np.zeros(5), np.zeros(5), []
    for g in GRADS:
        d = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * d * d
        if centered:
            mean = alpha * mean + (1 - alpha) * d
            avg = np.sqrt(sq - mean * mean) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + d / avg
            p = p - lr * buf
        else:
            p = p - lr * d / avg
        out.append(p)
    return out


def ref_adagrad(lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10):
    p, total, out = P0.copy(), np.full(5, initial_accumulator_value), []
    for t, g in enumerate(GRADS, start=1):
        d = g + weight_decay * p
        total = total + d * d
        p = p - lr / (1 + (t - 1) * lr_decay) * d / (np.sqrt(total) + eps)
        out.append(p)
    return out


def ref_adadelta(lr, rho=0.9, eps=1e-6, weight_decay=0.0):
    p, sq, acc, out = P0.copy(), np.zeros(5), np.zeros(5), []
    for g in GRADS:
        d = g + weight_decay * p
        sq = rho * sq + (1 - rho) * d * d
        delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * d
        acc = rho * acc + (1 - rho) * delta * delta
        p = p - lr * delta
        out.append(p)
    return out


CASES = [
    ("sgd plain", vg.optim.SGD, dict(lr=0.1), ref_sgd(0.1)),
    ("sgd momentum", vg.optim.SGD, dict(lr=0.1, momentum=0.9), ref_sgd(0.1, momentum=0.9)),
    ("sgd dampening", vg.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3),
     ref_sgd(0.1, momentum=0.9, dampening=0.3)),
    ("sgd nesterov", vg.optim.SGD, dict(lr=0.1, momentum=0.8, nesterov=True),
     ref_sgd(0.1, momentum=0.8, nesterov=True)),
    ("sgd weight decay", vg.optim.SGD, dict(lr=0.1, momentum=0.5, weight_decay=0.2),
     ref_sgd(0.1, momentum=0.5, weight_decay=0.2)),
    ("sgd maximize", vg.optim.SGD, dict(lr=0.1, momentum=0.5, weight_decay=0.2, maximize=True),
     ref_sgd(0.1, momentum=0.5, weight_decay=0.2, maximize=True)),
    ("adam", vg.optim.Adam, dict(lr=0.1), ref_adam(0.1)),
    ("adam betas eps", vg.optim.Adam, dict(lr=0.05, betas=(0.5, 0.8), eps=1e-3),
     ref_adam(0.05, betas=(0.5, 0.8), eps=1e-3)),
    ("adam amsgrad", vg.optim.Adam, dict(lr=0.1, betas=(0.9, 0.5), amsgrad=True),
     ref_adam(0.1, betas=(0.9, 0.5), amsgrad=True)),
    ("adam weight decay", vg.optim.Adam, dict(lr=0.1, weight_decay=0.3), ref_adam(0.1, weight_decay=0.3)),
    ("adam maximize", vg.optim.Adam, dict(lr=0.1, weight_decay=0.3, maximize=True),
     ref_adam(0.1, weight_decay=0.3, maximize=True)),
    ("adamw", vg.optim.AdamW, dict(lr=0.1, weight_decay=0.3), ref_adam(0.1, weight_decay=0.3, decoupled=True)),
    ("adamw amsgrad", vg.optim.AdamW, dict(lr=0.1, betas=(0.9, 0.5), amsgrad=True),
     ref_adam(0.1, betas=(0.9, 0.5), weight_decay=1e-2, amsgrad=True, decoupled=True)),
    ("rmsprop", vg.optim.RMSprop, dict(lr=0.01), ref_rmsprop(0.01)),
    ("rmsprop centered", vg.optim.RMSprop, dict(lr=0.01, alpha=0.9, centered=True),
     ref_rmsprop(0.01, alpha=0.9, centered=True)),
    ("rmsprop momentum", vg.optim.RMSprop, dict(lr=0.01, momentum=0.7, weight_decay=0.1),
     ref_rmsprop(0.01, momentum=0.7, weight_decay=0.1)),
    ("rmsprop centered momentum", vg.optim.RMSprop, dict(lr=0.01, alpha=0.8, momentum=0.7, centered=True),
     ref_rmsprop(0.01, alpha=0.8, momentum=0.7, centered=True)),
    ("adagrad", vg.optim.Adagrad, dict(lr=0.1), ref_adagrad(0.1)),
    ("adagrad lr_decay", vg.optim.Adagrad, dict(lr=0.1, lr_decay=0.5, initial_accumulator_value=0.2,
                                                 weight_decay=0.1),
     ref_adagrad(0.1, lr_decay=0.5, initial_accumulator_value=0.2, weight_decay=0.1)),
    ("adadelta", vg.optim.Adadelta, dict(lr=1.0), ref_adadelta(1.0)),
    ("adadelta rho wd", vg.optim.Adadelta, dict(lr=0.5, rho=0.5, eps=1e-4, weight_decay=0.1),
     ref_adadelta(0.5, rho=0.5, eps=1e-4, weight_decay=0.1)),
]


@pytest.mark.parametrize("cls, options, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_three_steps_match_the_published_rule(cls, options, expected):
    got = run_vizgrad(cls, **options)
    for step, (mine, reference) in enumerate(zip(got, expected), start=1):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12, err_msg=f"after step {step}")
    # the update did something: a broken no-op step would match nothing above, but be explicit
    assert not np.allclose(got[-1], P0)


@pytest.mark.parametrize("cls", [vg.optim.SGD, vg.optim.Adam, vg.optim.RMSprop, vg.optim.Adagrad])
def test_parameter_without_grad_is_left_alone(cls):
    a = vg.tensor(P0.copy(), requires_grad=True)
    b = vg.tensor(P0.copy(), requires_grad=True)
    opt = cls([a, b], lr=0.1)
    a.grad = vg.tensor(GRADS[0])
    opt.step()
    np.testing.assert_array_equal(value(b), P0)
    assert b not in opt.state and a in opt.state
    assert opt.state[a]["step"] == 1


def test_invalid_hyperparameters_are_refused():
    p = vg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="lr"):
        vg.optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        vg.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match=re.escape("Adam: betas[1] must be in [0.0, 1.0), got 1.0")):
        vg.optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="rho"):
        vg.optim.Adadelta([p], rho=1.5)
    with pytest.raises(TypeError, match="single tensor"):
        vg.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="empty"):
        vg.optim.SGD([], lr=0.1)


# --- parameter groups ---------------------------------------------------------------
def test_param_groups_use_their_own_lr_and_defaults_for_the_rest():
    a = vg.tensor(P0.copy(), requires_grad=True)
    b = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    a.grad = vg.tensor(GRADS[0])
    b.grad = vg.tensor(GRADS[0])
    opt.step()
    np.testing.assert_allclose(value(a), P0 - 0.1 * GRADS[0])
    np.testing.assert_allclose(value(b), P0 - 0.5 * GRADS[0])


def test_add_param_group_later_and_its_errors():
    a = vg.tensor(P0.copy(), requires_grad=True)
    c = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.Adam([a], lr=0.01)
    opt.add_param_group({"params": [c], "lr": 0.2})
    assert opt.param_groups[1]["lr"] == 0.2 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    derived = a * 2
    with pytest.raises(ValueError, match="leaf") as info:
        opt.add_param_group({"params": [vg.tensor([1.0], requires_grad=True), derived]})
    assert "Mul" in str(info.value) and "parameter 1" in str(info.value)
    with pytest.raises(TypeError, match="only tensors"):
        opt.add_param_group({"params": [np.zeros(3)]})
    with pytest.raises(TypeError, match="dict"):
        opt.add_param_group([c])
    assert len(opt.param_groups) == 2          # failed additions left nothing behind


# --- zero_grad, closure, hooks ------------------------------------------------------
def test_zero_grad_set_to_none_and_to_zeros():
    a = vg.tensor(P0.copy(), requires_grad=True)
    b = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.SGD([a, b], lr=0.1)
    (a * b).sum().backward()
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    (a * b).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert a.grad is not None and a.grad.shape == a.shape
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros(5))
    # a fresh backward after zeroing accumulates from zero, not from the old gradient
    (a * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(5, 3.0))


def test_step_with_closure_returns_the_loss_and_uses_its_gradient():
    p = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        calls.append(float(loss.item()))
        return loss

    with vg.no_grad():                      # the closure still records a graph
        loss = opt.step(closure)
    assert calls == [pytest.approx(float(np.sum(P0 ** 2)))]
    assert loss.item() == pytest.approx(float(np.sum(P0 ** 2)))
    np.testing.assert_allclose(value(p), P0 - 0.1 * 2 * P0)
    assert opt.step() is None


def test_step_pre_and_post_hooks_see_before_and_after_and_can_be_removed():
    p = vg.tensor(P0.copy(), requires_grad=True)
    opt = vg.optim.SGD([p], lr=0.1)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(("pre", o is opt, value(p).copy())))
    post = opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("post", o is opt, value(p).copy())))
    p.grad = vg.tensor(GRADS[0])
    opt.step()
    assert [s[:2] for s in seen] == [("pre", True), ("post", True)]
    np.testing.assert_array_equal(seen[0][2], P0)
    np.testing.assert_allclose(seen[1][2], P0 - 0.1 * GRADS[0])
    pre.remove()
    opt.step()
    assert [s[0] for s in seen] == ["pre", "post", "post"]
    post.remove()
    opt.step()
    assert len(seen) == 3


# --- state dicts ----------------------------------------------------------------------
@pytest.mark.parametrize("cls, options", [
    (vg.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (vg.optim.Adam, dict(lr=0.1, amsgrad=True)),
    (vg.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (vg.optim.Adagrad, dict(lr=0.1, lr_decay=0.1)),
    (vg.optim.Adadelta, dict(lr=0.5)),
], ids=["sgd", "adam", "rmsprop", "adagrad", "adadelta"])
@pytest.mark.parametrize("through_file", [False, True], ids=["in-memory", "vizgrad.save"])
def test_state_dict_round_trip_continues_like_an_uninterrupted_run(cls, options, through_file, tmp_path):
    grads = GRADS + [g[::-1].copy() for g in GRADS]
    uninterrupted = run_vizgrad(cls, steps=grads, **options)

    p = vg.tensor(P0.copy(), requires_grad=True)
    opt = cls([p], **options)
    for g in grads[:3]:
        p.grad = vg.tensor(g)
        opt.step()
    saved = opt.state_dict()
    if through_file:
        vg.save(saved, tmp_path / "optim.vzg")
        saved = vg.load(tmp_path / "optim.vzg")
    for g in grads[3:4]:                  # the original keeps going: the saved state must not change
        p.grad = vg.tensor(g)
        opt.step()

    resumed_param = vg.tensor(uninterrupted[2].copy(), requires_grad=True)
    resumed = cls([resumed_param], **{**options, "lr": 123.0})   # hyperparameters come from the dict
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == options["lr"]
    for step, g in enumerate(grads[3:], start=4):
        resumed_param.grad = vg.tensor(g)
        resumed.step()
        np.testing.assert_allclose(value(resumed_param), uninterrupted[step - 1], rtol=1e-12, atol=1e-14,
                                   err_msg=f"step {step}")
    assert resumed.state[resumed_param]["step"] == len(grads)


def test_load_state_dict_refuses_a_different_layout():
    a = vg.tensor([1.0], requires_grad=True)
    b = vg.tensor([1.0], requires_grad=True)
    saved = vg.optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="parameter group 0.*2 parameters"):
        vg.optim.SGD([a], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="1 parameter groups"):
        vg.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(saved)


class Tiny(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = vg.nn.Parameter(vg.tensor(P0.astype(np.float32)))

    def forward(self, x):
        return (self.w * x).sum()


@pytest.mark.parametrize("cls, options, buffers", [
    (vg.optim.Adam, dict(lr=0.1), ("exp_avg", "exp_avg_sq")),
    (vg.optim.SGD, dict(lr=0.1, momentum=0.9), ("momentum_buffer",)),
])
def test_state_follows_its_parameter_when_the_model_is_cast(cls, options, buffers):
    model = Tiny()
    opt = cls(model.parameters(), **options)
    for g in GRADS[:2]:
        model.w.grad = vg.tensor(g.astype(np.float32))
        opt.step()
    assert all(opt.state[model.w][key].dtype == np.float32 for key in buffers)
    param = model.w
    model.to(vg.float64)
    assert model.w is param and model.w.dtype == vg.float64
    model.w.grad = vg.tensor(GRADS[2])
    opt.step()
    assert model.w.dtype == vg.float64
    for key in buffers:
        assert opt.state[model.w][key].dtype == np.float64, key
    reference = (ref_adam(0.1) if cls is vg.optim.Adam else ref_sgd(0.1, momentum=0.9))[2]
    np.testing.assert_allclose(value(model.w), reference, rtol=1e-5, atol=1e-6)
    # the state dict of the cast optimizer saves float64 buffers
    state = opt.state_dict()["state"][0]
    assert all(state[key].dtype == vg.float64 for key in buffers)


def test_state_dict_loads_onto_a_float64_parameter_as_float64():
    model = Tiny()
    opt = vg.optim.Adam(model.parameters(), lr=0.1)
    model.w.grad = vg.tensor(GRADS[0].astype(np.float32))
    opt.step()
    saved = opt.state_dict()
    target = vg.tensor(P0.copy(), requires_grad=True)
    other = vg.optim.Adam([target], lr=0.1)
    other.load_state_dict(saved)
    assert other.state[target]["exp_avg"].dtype == np.float64
    assert other.state[target]["step"] == 1


# --- learning-rate schedules ----------------------------------------------------------
def make_optimizer(lr=1.0, cls=vg.optim.SGD, groups=1, **options):
    params = [{"params": [vg.tensor([0.0], requires_grad=True)]} for _ in range(groups)]
    return cls(params, lr=lr, **options)


def lr_sequence(scheduler, steps, metrics=None):
    """The first group's lr at creation and after each of ``steps`` steps."""
    rates = [scheduler.optimizer.param_groups[0]["lr"]]
    for i in range(steps):
        scheduler.step() if metrics is None else scheduler.step(metrics[i])
        rates.append(scheduler.optimizer.param_groups[0]["lr"])
        assert scheduler.get_last_lr()[0] == rates[-1]
    return rates


def cos_anneal(start, end, fraction):
    return end + (start - end) / 2 * (1 + math.cos(math.pi * fraction))


def one_cycle_closed_form(step, total, max_lr, pct_start=0.3, div=25.0, final_div=1e4, base_m=0.85, max_m=0.95,
                          anneal=cos_anneal):
    initial, low = max_lr / div, max_lr / div / final_div
    peak = pct_start * total - 1
    if step <= peak:
        f = step / peak
        return anneal(initial, max_lr, f), anneal(max_m, base_m, f)
    f = (step - peak) / (total - 1 - peak)
    return anneal(max_lr, low, f), anneal(base_m, max_m, f)


SCHEDULES = {   # name: (build, lr at epoch e for a base rate b)
    "StepLR": (lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5), lambda b, e: b * 0.5 ** (e // 3)),
    "MultiStepLR": (lambda o: lr_scheduler.MultiStepLR(o, milestones=[5, 2], gamma=0.1),
                    lambda b, e: b * 0.1 ** ((e >= 2) + (e >= 5))),
    "ExponentialLR": (lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9), lambda b, e: b * 0.9 ** e),
    "CosineAnnealingLR": (lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
                          lambda b, e: 0.01 + (b - 0.01) * (1 + math.cos(math.pi * e / 10)) / 2),
    "LambdaLR": (lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)), lambda b, e: b / (1 + e)),
    "LinearLR": (lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4),
                 lambda b, e: b * (0.25 + 0.75 * min(e, 4) / 4)),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_follows_its_closed_form(name):
    build, factor = SCHEDULES[name]
    scheduler = build(make_optimizer(lr=2.0))
    rates = lr_sequence(scheduler, 10)
    assert rates == pytest.approx([factor(2.0, e) for e in range(11)], rel=1e-12, abs=1e-15)


def test_lambda_lr_per_group_functions():
    opt = make_optimizer(lr=1.0, groups=2)
    opt.param_groups[1]["lr"] = 4.0
    scheduler = lr_scheduler.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: e + 1])
    for _ in range(3):
        scheduler.step()
    assert scheduler.get_last_lr() == [0.125, 16.0]
    with pytest.raises(ValueError, match="expected 2 lr_lambdas, got 3"):
        lr_scheduler.LambdaLR(make_optimizer(groups=2), [abs, abs, abs])


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_one_cycle_lr_and_momentum(strategy):
    anneal = cos_anneal if strategy == "cos" else (lambda a, b, f: a + (b - a) * f)
    opt = make_optimizer(lr=0.1, momentum=0.9)
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=20, anneal_strategy=strategy)
    rates, momenta = [opt.param_groups[0]["lr"]], [opt.param_groups[0]["momentum"]]
    for _ in range(19):
        scheduler.step()
        rates.append(opt.param_groups[0]["lr"])
        momenta.append(opt.param_groups[0]["momentum"])
    expected = [one_cycle_closed_form(s, 20, 1.0, anneal=anneal) for s in range(20)]
    assert rates == pytest.approx([e[0] for e in expected], rel=1e-12)
    assert momenta == pytest.approx([e[1] for e in expected], rel=1e-12)
    assert rates[0] == pytest.approx(1.0 / 25) and max(rates) == pytest.approx(1.0)
    assert rates[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert min(momenta) == pytest.approx(0.85) and momenta[0] == momenta[-1] == pytest.approx(0.95)
    scheduler.step()  # PyTorch allows one step past the schedule (the loop's last step() call)
    with pytest.raises(ValueError, match="total_steps is 20"):
        scheduler.step()


def test_one_cycle_cycles_adams_beta1():
    opt = make_optimizer(lr=0.1, cls=vg.optim.Adam, betas=(0.9, 0.99))
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=0.5, epochs=2, steps_per_epoch=5)
    betas = [opt.param_groups[0]["betas"]]
    for _ in range(9):
        scheduler.step()
        betas.append(opt.param_groups[0]["betas"])
    expected = [one_cycle_closed_form(s, 10, 0.5)[1] for s in range(10)]
    assert [b[0] for b in betas] == pytest.approx(expected)
    assert all(b[1] == 0.99 for b in betas)


def test_reduce_lr_on_plateau():
    opt = make_optimizer(lr=1.0)
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    metrics = [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.79999]
    # bad epochs: 0 0 1 2 3->cut 0 1 2 3->cut; the last improvement is below the 1e-4 relative threshold
    assert lr_sequence(scheduler, len(metrics), metrics)[1:] == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25]


def test_reduce_lr_on_plateau_cooldown_min_lr_and_max_mode():
    opt = make_optimizer(lr=1.0)
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=2,
                                               min_lr=0.05, threshold=0.1, threshold_mode="abs")
    metrics = [1.0, 1.05, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2]
    # 1.0 improves; 1.05 is within the absolute threshold (bad -> cut to 0.1, cooldown 2);
    # 1.2 improves (cooldown 1 left), 1.2 is bad but ignored (cooldown ends); the next bad epoch
    # cuts to max(0.01, min_lr) = 0.05, and the floor holds after that
    assert lr_sequence(scheduler, len(metrics), metrics)[1:] == pytest.approx(
        [1.0, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05])
    with pytest.raises(ValueError, match="factor"):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)


@pytest.mark.parametrize("build", [
    lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
    lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=8),
    lambda o: lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
    lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=12),
    lambda o: lr_scheduler.ReduceLROnPlateau(o, patience=1, factor=0.5),
], ids=["StepLR", "Cosine", "LambdaLR", "OneCycleLR", "Plateau"])
def test_scheduler_state_dict_round_trip(build):
    metrics = [1.0, 2.0, 3.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    plateau = "Plateau" in type(build(make_optimizer(momentum=0.9))).__name__

    def advance(scheduler, start, stop):
        out = []
        for i in range(start, stop):
            scheduler.step(metrics[i]) if plateau else scheduler.step()
            out.append(scheduler.optimizer.param_groups[0]["lr"])
        return out

    opt = make_optimizer(momentum=0.9)
    original = build(opt)
    advance(original, 0, 4)
    saved_sched, saved_opt = original.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched
    expected = advance(original, 4, 10)

    opt2 = make_optimizer(momentum=0.9)
    resumed = build(opt2)
    opt2.load_state_dict(saved_opt)
    resumed.load_state_dict(saved_sched)
    assert resumed.last_epoch == 4
    assert advance(resumed, 4, 10) == pytest.approx(expected, rel=1e-12)


def test_schedules_agree_with_torch():
    torch = pytest.importorskip("torch")

    def torch_rates(make, steps=10, metrics=None):
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=2.0, momentum=0.9)
        scheduler = make(opt)
        rates = [opt.param_groups[0]["lr"]]
        for i in range(steps):
            opt.step()
            scheduler.step() if metrics is None else scheduler.step(metrics[i])
            rates.append(opt.param_groups[0]["lr"])
        return rates

    T = torch.optim.lr_scheduler
    pairs = [
        (lambda o: T.StepLR(o, 3, 0.5), SCHEDULES["StepLR"][0]),
        (lambda o: T.MultiStepLR(o, [2, 5], 0.1), SCHEDULES["MultiStepLR"][0]),
        (lambda o: T.ExponentialLR(o, 0.9), SCHEDULES["ExponentialLR"][0]),
        (lambda o: T.CosineAnnealingLR(o, 10, 0.01), SCHEDULES["CosineAnnealingLR"][0]),
        (lambda o: T.LinearLR(o, 0.25, 1.0, 4), SCHEDULES["LinearLR"][0]),
        (lambda o: T.OneCycleLR(o, 1.0, total_steps=11), lambda o: lr_scheduler.OneCycleLR(o, 1.0, total_steps=11)),
        (lambda o: T.OneCycleLR(o, 1.0, total_steps=11, three_phase=True),
         lambda o: lr_scheduler.OneCycleLR(o, 1.0, total_steps=11, three_phase=True)),
    ]
    for make_torch, make_mine in pairs:
        assert lr_sequence(make_mine(make_optimizer(lr=2.0, momentum=0.9)), 10) == pytest.approx(
            torch_rates(make_torch), rel=1e-9)
    metrics = [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.79999]
    assert lr_sequence(lr_scheduler.ReduceLROnPlateau(make_optimizer(lr=2.0), factor=0.5, patience=2), 10,
                       metrics) == pytest.approx(
        torch_rates(lambda o: T.ReduceLROnPlateau(o, factor=0.5, patience=2), metrics=metrics))


def test_optimizers_agree_with_torch():
    torch = pytest.importorskip("torch")
    pairs = [
        (vg.optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1)),
        (vg.optim.Adam, torch.optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
        (vg.optim.AdamW, torch.optim.AdamW, dict(lr=0.1, weight_decay=0.1)),
        (vg.optim.RMSprop, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
        (vg.optim.Adagrad, torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.2)),
        (vg.optim.Adadelta, torch.optim.Adadelta, dict(lr=0.5)),
    ]
    for mine, theirs, options in pairs:
        p = torch.tensor(P0.copy(), requires_grad=True)
        opt = theirs([p], **options)
        for g in GRADS:
            p.grad = torch.tensor(g)
            opt.step()
        np.testing.assert_allclose(run_vizgrad(mine, **options)[-1], p.detach().numpy(), rtol=1e-9,
                                   err_msg=mine.__name__)
