"""Exercises of lessons 05-09: optimizers (05), vanishing and exploding gradients (06),
convolutional networks (07), the GPU (08) and higher-order gradients (09).

Each checker runs the learner's code next to vizgrad's own answer (an optimizer of
``vizgrad.optim``, ``autograd.grad``, ``functional.hessian``...) and names the usual
wrong answers, which it recognises by computing them too.

:func:`synthetic_digits` lives here as well: lesson 07 and exercise 7.4 use it when
scikit-learn (which ships the real 8×8 digits) is not installed.
"""

import math
import time

import numpy as np

from .. import creation, nn, no_grad, optim
from ..autograd import functional
from ..errors import BackwardError, DeviceError, ShapeError
from ..tensor import Tensor
from . import expect
from .framework import LearnerError, Mistake, call, exercise, learner_code
from .gradients import as_numpy, close


def _t(values, requires_grad=False, dtype="float64"):
    return creation.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=requires_grad)


def _preview(values):
    return np.array2string(np.asarray(values, dtype=np.float64), precision=5, suppress_small=True,
                           separator=", ", threshold=8, edgeitems=2).replace("\n", "")


def _side_by_side(got, want):
    return [f"yours: `{_preview(got)}`", f"expected: `{_preview(want)}`"]


def _pair(value, what, names):
    """``value`` as a tuple of ``len(names)`` items, or a Mistake saying what to return."""
    expect.not_none(value, what)
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        raise Mistake(f"{what[:1].upper()}{what[1:]} returned {type(value).__name__}; expected "
                      f"{len(names)} values, `({', '.join(names)})`.",
                      f"End with `return {', '.join(names)}`.", kind="usage")
    return tuple(value)


def _array(value, what, shape=None):
    """A float64 NumPy copy of a Tensor, array or number the learner returned."""
    expect.not_none(value, what)
    try:
        array = as_numpy(value)
    except (TypeError, ValueError):
        raise Mistake(f"{what[:1].upper()}{what[1:]} is a {type(value).__name__}; expected a tensor.",
                      kind="type") from None
    if shape is not None and array.shape != tuple(shape):
        raise Mistake(f"{what[:1].upper()}{what[1:]} has shape {array.shape}; expected {tuple(shape)}.",
                      "It must have the parameter's shape.", kind="shape")
    return array


# ==== lesson 05: optimizers ===============================================================================
def _rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2


def _rosenbrock_grad(point):
    p = _t(point, requires_grad=True)
    _rosenbrock(p).backward()
    return as_numpy(p.grad)


def _reference_path(make_optimizer, start, steps):
    """Positions of a ``vizgrad.optim`` optimizer on the Rosenbrock function, start first."""
    p = _t(start, requires_grad=True)
    optimizer = make_optimizer([p])
    path = [as_numpy(p)]
    for _ in range(steps):
        optimizer.zero_grad()
        _rosenbrock(p).backward()
        optimizer.step()
        path.append(as_numpy(p))
    return np.array(path)


def _learner_path(step, state, start, steps, what):
    """Run the learner's pure step function ``steps`` times from ``start``: ``step(p, g, *state)``
    returns ``(p, *state)``. Returns the positions, start first."""
    p = np.array(start, dtype=np.float64)
    path = [p]
    for t in range(1, steps + 1):
        grad = _rosenbrock_grad(p)
        answer = step(t, _t(p), _t(grad), state)
        p, state = answer[0], answer[1:]
        p = _array(p, f"the new parameter of {what} (step {t})", (2,))
        state = tuple(_t(_array(s, f"the state returned by {what} (step {t})", (2,))) for s in state)
        path.append(p)
        if not np.all(np.isfinite(p)):
            break
    return np.array(path)


def _simulate(update, start, steps, state_size):
    """The path of a NumPy update rule ``update(t, p, g, state) -> (p, state)``."""
    p = np.array(start, dtype=np.float64)
    state = [np.zeros(2) for _ in range(state_size)]
    path = [p]
    with np.errstate(all="ignore"):
        for t in range(1, steps + 1):
            p, state = update(t, p, _rosenbrock_grad(p) if np.all(np.isfinite(p)) else np.full(2, np.nan), state)
            path.append(p)
    return np.array(path)


def _match_path(got, want, candidates, what, not_finite_hint="Look for a division by zero."):
    """Compare two paths; name a known wrong rule when one matches; else say where they part."""
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-9):
        return
    if not np.all(np.isfinite(got)):
        first = int(np.argmax(~np.all(np.isfinite(got), axis=1)))
        raise Mistake(f"{what} reaches NaN or inf at step {first}.", not_finite_hint, kind="not-finite",
                      details=_side_by_side(got[first], want[first]))
    for kind, wrong, message, hint in candidates:
        if got.shape == wrong.shape and np.allclose(got, wrong, rtol=1e-6, atol=1e-9, equal_nan=True):
            raise Mistake(message, hint, kind=kind, details=_side_by_side(got[1], want[1]) if len(got) > 1 else ())
    count = min(len(got), len(want))
    first = next((i for i in range(count) if not np.allclose(got[i], want[i], rtol=1e-6, atol=1e-9)), count)
    raise Mistake(f"{what} parts from vizgrad's optimizer at step {first}.",
                  "Write the update rule from the lesson term by term; print your state after one step and "
                  "compare it with `optimizer.state[p]`.", kind="values",
                  details=_side_by_side(got[first], want[first]) if first < count else ())


@exercise("5.1", "SGD with momentum, by hand", lesson="05", solution="lesson05:momentum_step")
def exercise_5_1(momentum_step):
    """``momentum_step(p, grad, buffer, lr, momentum)`` returns ``(new_p, new_buffer)``."""
    lr, mu, start, steps = 1e-3, 0.9, (-1.2, 1.0), 25

    def step(t, p, g, state):
        buffer = state[0] if state else _t(np.zeros(2))
        answer = call(momentum_step, p, g, buffer, lr, mu, what=f"your momentum_step (step {t})")
        return _pair(answer, "your momentum_step", ("new_p", "new_buffer"))

    got = _learner_path(step, (), start, steps, "your momentum_step")
    want = _reference_path(lambda params: optim.SGD(params, lr=lr, momentum=mu), start, steps)

    def rule(variant):
        def update(t, p, g, state):
            b = state[0]
            if variant == "sgd":
                return p - lr * g, [b]
            if variant == "dampened":
                b = mu * b + (1 - mu) * g
            elif variant == "order":
                p, b = p - lr * b, mu * b + g
                return p, [b]
            else:
                b = mu * b + g
            return (p + lr * b if variant == "ascent" else p - lr * b), [b]
        return _simulate(update, start, steps, 1)

    _match_path(got, want, [
        ("no-momentum", rule("sgd"), "Your step moves by `-lr * grad`: that is plain gradient descent, the buffer "
         "plays no part.", "Update the buffer first, `b = momentum * b + grad`, then step along it: "
         "`p - lr * b`, and return the new buffer too."),
        ("sign", rule("ascent"), "Your step goes *up* the slope.", "Subtract: `p - lr * b`."),
        ("dampened", rule("dampened"), "Your buffer is `momentum * b + (1 - momentum) * grad`, an exponential "
         "moving average.", "That is a valid variant (Adam's first moment), but `vizgrad.optim.SGD` (like "
         "PyTorch) adds the gradient undamped: `b = momentum * b + grad`."),
        ("order", rule("order"), "Your step uses the old buffer: the new gradient only counts from the next step.",
         "Update the buffer first, then step with the updated buffer."),
    ], "Your path")
    return [f"{steps} steps on the Rosenbrock function identical to `vg.optim.SGD(momentum=0.9)`",
            f"ends at ({got[-1][0]:.4f}, {got[-1][1]:.4f})"]


@exercise("5.2", "Adam, by hand", lesson="05", solution="lesson05:adam_step")
def exercise_5_2(adam_step):
    """``adam_step(p, grad, m, v, t, lr, beta1, beta2, eps)`` returns ``(new_p, new_m, new_v)``."""
    lr, b1, b2, eps, start, steps = 0.05, 0.9, 0.999, 1e-8, (-1.2, 1.0), 30

    def step(t, p, g, state):
        m, v = state if state else (_t(np.zeros(2)), _t(np.zeros(2)))
        answer = call(adam_step, p, g, m, v, t, lr, b1, b2, eps, what=f"your adam_step (t = {t})")
        return _pair(answer, "your adam_step", ("new_p", "new_m", "new_v"))

    try:
        got = _learner_path(step, (), start, steps, "your adam_step")
    except LearnerError as error:
        if isinstance(error.error, ZeroDivisionError):
            raise Mistake(f"Your adam_step divided by zero ({error.error}).",
                          "`t` counts from 1: the first step has t = 1, so `1 - beta1 ** t` is never zero. Use "
                          "`t` itself in the bias correction, not `t - 1`.", kind="t-from-zero") from None
        raise
    want = _reference_path(lambda params: optim.Adam(params, lr=lr, betas=(b1, b2), eps=eps), start, steps)

    def rule(variant):
        def update(t, p, g, state):
            m, v = state
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * (np.abs(g) if variant == "no-square" else g * g)
            m_hat, v_hat = (m, v) if variant == "no-correction" else (m / (1 - b1 ** t), v / (1 - b2 ** t))
            if variant == "no-sqrt":
                return p - lr * m_hat / (v_hat + eps), [m, v]
            if variant == "eps-inside":
                return p - lr * m_hat / np.sqrt(v_hat + eps), [m, v]
            return p - lr * m_hat / (np.sqrt(v_hat) + eps), [m, v]
        return _simulate(update, start, steps, 2)

    _match_path(got, want, [
        ("no-bias-correction", rule("no-correction"), "Your steps use m and v directly: without the bias "
         "correction the first steps are far too small (m and v start at zero).",
         "Divide by `1 - beta1 ** t` and `1 - beta2 ** t`: `m_hat = m / (1 - beta1 ** t)`, "
         "`v_hat = v / (1 - beta2 ** t)`, then step by `lr * m_hat / (sqrt(v_hat) + eps)`."),
        ("no-sqrt", rule("no-sqrt"), "Your step divides by v̂, not by its square root.",
         "v estimates the mean of g², so √v̂ has the units of g: `m_hat / (v_hat.sqrt() + eps)`."),
        ("no-square", rule("no-square"), "Your v averages |g| rather than g².",
         "The second moment averages squared gradients: `(1 - beta2) * grad * grad`."),
        ("eps-inside", rule("eps-inside"), "You add eps inside the square root.",
         "vizgrad (like PyTorch) adds eps after it: `sqrt(v_hat) + eps`. (The two differ only when v̂ is tiny, "
         "but the check compares with `vg.optim.Adam`.)"),
    ], "Your path", not_finite_hint="A division by zero? `t` counts from 1, so the bias corrections `1 - beta1 ** t` "
       "and `1 - beta2 ** t` are never zero (not `t - 1`), and eps keeps the denominator `sqrt(v_hat) + eps` "
       "positive.")
    return [f"{steps} steps on the Rosenbrock function identical to `vg.optim.Adam`",
            "bias-corrected moments, eps outside the square root"]


@exercise("5.3", "the largest stable learning rate", lesson="05", solution="lesson05:largest_stable_lr")
def exercise_5_3(largest_stable_lr):
    """``largest_stable_lr(curvatures)``: the learning rate above which gradient descent diverges
    on a quadratic whose Hessian has eigenvalues ``curvatures`` (for x²/2 + 12.5·y²: (1, 25))."""
    cases = [(1.0, 25.0), (4.0, 2.0, 10.0), (0.5,), (3.0, 3.0, 0.01)]
    for curvatures in cases:
        what = f"your largest_stable_lr({curvatures})"
        got = expect.number(call(largest_stable_lr, curvatures, what=what), what)
        want = 2 / max(curvatures)
        if math.isclose(got, want, rel_tol=1e-6):
            continue
        wrong = [(1 / max(curvatures), "one-over-lambda",
                  f"{what} = {got:g} = 1/λ_max: the rate that reaches the minimum of the steepest direction in "
                  "one step. Larger rates still converge: they overshoot and come back, each time closer.",
                  "Along an eigenvector with curvature λ one step multiplies the distance by (1 - η·λ). For "
                  "which η is |1 - η·λ| < 1?"),
                 (2 / min(curvatures), "smallest-curvature",
                  f"{what} = {got:g} = 2/λ_min: the limit for the flattest direction. The steepest direction "
                  "diverges long before that.",
                  "Every direction must shrink, so the direction with the largest curvature decides.")]
        for value, kind, message, hint in wrong:
            if math.isclose(got, value, rel_tol=1e-6) and not math.isclose(value, want, rel_tol=1e-6):
                raise Mistake(message, hint, kind=kind)
        raise Mistake(f"{what} = {got:g}; expected {want:g}.",
                      "One gradient step on ½·Σ λᵢ·xᵢ² multiplies each xᵢ by (1 - η·λᵢ). It converges when every "
                      "factor has magnitude below 1.", kind="values")
    return ["η < 2/λ_max: the steepest direction decides", "for f = x²/2 + 12.5·y² that is 2/25 = 0.08"]


def _warmup_cosine_reference(step, total, warmup, base):
    if step < warmup:
        return base * step / warmup
    return base * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup)))


@exercise("5.4", "a warm-up then cosine schedule", lesson="05", solution="lesson05:warmup_cosine")
def exercise_5_4(warmup_cosine):
    """``warmup_cosine(step, total_steps, warmup_steps, base_lr)``: the learning rate at ``step``."""
    cases = [(100, 10, 0.1), (40, 5, 1.0)]
    for total, warmup, base in cases:
        got = np.array([expect.number(call(warmup_cosine, s, total, warmup, base,
                                           what=f"your warmup_cosine({s}, {total}, {warmup}, {base})"),
                                      f"your warmup_cosine({s}, {total}, {warmup}, {base})")
                        for s in range(total + 1)])
        want = np.array([_warmup_cosine_reference(s, total, warmup, base) for s in range(total + 1)])
        if np.allclose(got, want, rtol=1e-6, atol=1e-12):
            continue
        where = f"With total_steps={total}, warmup_steps={warmup}, base_lr={base}"
        no_half = np.array([w if s < warmup else 2 * w for s, w in enumerate(want)])
        unshifted = np.array([w if s < warmup else base * 0.5 * (1 + math.cos(math.pi * s / total))
                              for s, w in enumerate(want)])
        early = np.array([base * (s + 1) / warmup if s < warmup else w for s, w in enumerate(want)])
        candidates = [
            ("no-half", no_half, "after warm-up your rate starts at 2·base_lr.",
             "The cosine factor is ½·(1 + cos(...)), which goes from 1 down to 0."),
            ("unshifted", unshifted, "your cosine starts at step 0, not at the end of the warm-up: it jumps "
             "down when the warm-up ends.", "Measure progress from the end of the warm-up: "
             "(step - warmup_steps) / (total_steps - warmup_steps)."),
            ("warmup-off-by-one", early, "your warm-up reaches base_lr one step early (it starts at "
             "base_lr/warmup_steps, not at 0).", "The schedule starts at 0: `base_lr * step / warmup_steps`."),
        ]
        for kind, wrong, message, hint in candidates:
            if np.allclose(got, wrong, rtol=1e-6, atol=1e-12):
                raise Mistake(f"{where}, {message}", hint, kind=kind)
        first = int(np.argmax(~np.isclose(got, want, rtol=1e-6, atol=1e-12)))
        raise Mistake(f"{where}, step {first} gives {got[first]:.6g}; expected {want[first]:.6g}.",
                      "Two pieces: `base_lr * step / warmup_steps` before `warmup_steps`, then "
                      "`base_lr * 0.5 * (1 + cos(pi * progress))` with progress going from 0 to 1.", kind="values",
                      details=[f"steps 0..{min(total, 12)}: yours `{_preview(got[:13])}`",
                               f"expected `{_preview(want[:13])}`"])
    return ["0 → base_lr linearly during the warm-up", "a half cosine from base_lr down to 0 afterwards",
            "checked at every step of two schedules"]


# ==== lesson 06: vanishing and exploding gradients ========================================================
@exercise("6.1", "He initialisation", lesson="06", solution="lesson06:he_std")
def exercise_6_1(he_std):
    """``he_std(fan_in)``: the weight standard deviation that keeps ReLU activations' scale."""
    for fan_in in (2, 16, 100, 784):
        got = expect.number(call(he_std, fan_in, what=f"your he_std({fan_in})"), f"your he_std({fan_in})")
        want = math.sqrt(2 / fan_in)
        if math.isclose(got, want, rel_tol=1e-6):
            continue
        if math.isclose(got, math.sqrt(1 / fan_in), rel_tol=1e-6):
            raise Mistake(f"he_std({fan_in}) = {got:.5g} = √(1/fan_in): that keeps the variance for a linear or "
                          "tanh layer (LeCun/Xavier), not for ReLU.", "ReLU sets half of its inputs to zero, so "
                          "it halves E[z²]: the weights' variance must double to make up for it.", kind="lecun")
        if math.isclose(got, 2 / fan_in, rel_tol=1e-6):
            raise Mistake(f"he_std({fan_in}) = {got:.5g} = 2/fan_in: that is the variance.",
                          "The function returns a standard deviation: the square root of the variance.",
                          kind="variance")
        if math.isclose(got, math.sqrt(1 / (2 * fan_in)), rel_tol=1e-6):
            raise Mistake(f"he_std({fan_in}) = {got:.5g}: the factor 2 is on the wrong side.",
                          "Var(h) = fan_in · Var(w) · Var(z) / 2 should equal Var(z); solve for Var(w).",
                          kind="inverted")
        raise Mistake(f"he_std({fan_in}) = {got:.5g}; expected {want:.5g}.",
                      "Var(h) = fan_in · Var(w) · E[relu(z)²] and E[relu(z)²] = Var(z)/2. Choose Var(w) so that "
                      "Var(h) = Var(z), and return its square root.", kind="values")
    return ["√(2/fan_in) for fan_in = 2, 16, 100 and 784"]


def _moons(n=256, seed=6):
    from ..data import make_moons
    return make_moons(n, noise=0.1, seed=seed)


def _flow_details(rows):
    return [f"`{row.name}`: gradient RMS {row.grad_rms:.1e} ({row.status})" for row in rows
            if row.name.endswith("weight")][:12]


@exercise("6.2", "layer normalisation by hand", lesson="06", solution="lesson06:layer_norm")
def exercise_6_2(layer_norm):
    """``layer_norm(x, eps=1e-5)``: each row of ``x`` (n, d) shifted and scaled to mean 0 and
    variance 1 over its d features: ``(x - mean) / sqrt(var + eps)``, biased variance."""
    rng = np.random.default_rng(62)
    values = 3 * rng.standard_normal((6, 10)) + rng.uniform(-5, 5, (6, 1))
    x = _t(values, requires_grad=True)
    what = "your layer_norm(x)"
    out = expect.tensor(call(layer_norm, x, what=what), what)
    got = _array(out, "the output of your layer_norm", (6, 10))
    reference = _t(values, requires_grad=True)
    want_tensor = nn.functional.layer_norm(reference, (10,), eps=1e-5)
    want = as_numpy(want_tensor)
    if not close(got, want, rtol=1e-4, atol=1e-6):
        mean, var = values.mean(axis=1, keepdims=True), values.var(axis=1, keepdims=True)
        candidates = [
            ("batch-norm", (values - values.mean(0)) / np.sqrt(values.var(0) + 1e-5), "You normalised each "
             "*column* (each feature over the batch): that is batch normalisation.",
             "Layer normalisation works on each sample alone: take the mean and variance over the last dim, "
             "`x.mean(dim=-1, keepdim=True)`."),
            ("unbiased", (values - mean) / np.sqrt(values.var(axis=1, ddof=1, keepdims=True) + 1e-5),
             "You used the unbiased variance (dividing by d - 1).", "Layer normalisation divides by d: "
             "`((x - mean) ** 2).mean(dim=-1, keepdim=True)`."),
            ("no-sqrt", (values - mean) / (var + 1e-5), "You divided by the variance, not by the standard "
             "deviation.", "Divide by `(var + eps).sqrt()`."),
            ("no-centering", values / np.sqrt(var + 1e-5), "Your rows are scaled but not centred: their mean "
             "is not 0.", "Subtract each row's mean first."),
        ]
        for kind, wrong, message, hint in candidates:
            if close(got, wrong, rtol=1e-4, atol=1e-6):
                raise Mistake(message, hint, kind=kind, details=_side_by_side(got[0], want[0]))
        raise Mistake("Your output differs from layer normalisation's.", "(x - mean) / sqrt(var + eps), with mean "
                      "and (biased) variance over the last dim of each row.", kind="values",
                      details=_side_by_side(got[0], want[0]))
    weights = _t(rng.standard_normal((6, 10)))
    with learner_code("the backward pass through your layer_norm"):
        (out * weights).sum().backward()
    (want_tensor * weights).sum().backward()
    if x.grad is None:
        raise Mistake("No gradient reaches x through your layer_norm.", "Use vizgrad operations only (no NumPy, "
                      "no `.detach()`), so backward can go through it.", kind="no-grad")
    expect.close_values(x.grad, reference.grad, "the gradient through your layer_norm")
    return ["each row has mean 0 and variance 1 (biased, with eps)", "the gradient flows through it, as through "
            "`F.layer_norm`"]


@exercise("6.3", "a deep network whose gradients flow", lesson="06", solution="lesson06:make_deep_net")
def exercise_6_3(make_deep_net):
    """``make_deep_net(depth)``: a module (n, 2) → (n, 2) logits with at least ``depth`` hidden
    Linear layers whose gradients neither vanish nor explode, and which trains."""
    from ..diagnostics import grad_flow
    depth = 20
    creation.manual_seed(63)
    model = call(make_deep_net, depth, what=f"your make_deep_net({depth})")
    if not isinstance(model, nn.Module):
        raise Mistake(f"make_deep_net returned {type(model).__name__}; expected an `nn.Module`.",
                      "Return the model, e.g. an `nn.Sequential(...)`.", kind="type")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if len(linears) < depth:
        raise Mistake(f"Your network has {len(linears)} Linear layers; asked for at least {depth}.",
                      "Build `depth` hidden layers: the point is to make a *deep* network train.", kind="too-shallow")
    X, y = _moons(256, seed=63)
    logits = call(model, X, what="your network's forward")
    expect.shape(expect.tensor(logits, "your network"), (256, 2), "Your network's output",
                 "Two logits per point (the two moons): end with a Linear(..., 2).")
    with learner_code("your network's backward"):
        nn.functional.cross_entropy(logits, y).backward()
    rows = grad_flow(model)
    bad = [row for row in rows if row.status in ("vanishing", "exploding")]
    if bad:
        kind = bad[0].status
        raise Mistake(f"{len(bad)} of your network's {len(rows)} parameters have {kind} gradients "
                      f"(the first: `{bad[0].name}`, RMS {bad[0].grad_rms:.1e}).",
                      "Use what the lesson showed: ReLU with He initialisation, a normalisation layer, or "
                      "residual connections.", kind=kind, details=_flow_details(rows))
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    with learner_code("training your network"):
        for _ in range(150):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(X), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    if not all(math.isfinite(v) for v in losses):
        raise Mistake("The loss became NaN or inf while training your network with Adam (lr 0.01).",
                      "Something explodes: look at the scale of the initial weights.", kind="diverged")
    model.eval()
    with no_grad():
        accuracy = float((as_numpy(model(X).argmax(1)) == as_numpy(y)).mean())
    model.train()
    if accuracy < 0.9:
        raise Mistake(f"After 150 Adam steps your network classifies {accuracy:.0%} of the training points; "
                      "the goal is 90%.", "The gradients flow, but it does not learn well: a network of "
                      "width 16 to 64 with ReLU and He initialisation (or residual blocks) does this easily.",
                      kind="accuracy", details=[f"loss {losses[0]:.3f} → {losses[-1]:.3f}"])
    return [f"{len(linears)} Linear layers, every gradient ok", f"loss {losses[0]:.3f} → {losses[-1]:.3f} in 150 "
            f"Adam steps, {accuracy:.0%} accuracy"]


# ==== lesson 07: convolutional networks ===================================================================
@exercise("7.1", "the output size of a convolution", lesson="07", solution="lesson07:conv_output_size")
def exercise_7_1(conv_output_size):
    """``conv_output_size(n, kernel, stride, padding)``: the output length along one dimension."""
    cases = [(8, 3, 1, 0), (8, 3, 1, 1), (28, 5, 2, 2), (7, 2, 2, 0), (10, 4, 3, 1), (5, 5, 1, 0)]
    got = []
    for n, k, s, p in cases:
        what = f"your conv_output_size({n}, {k}, {s}, {p})"
        got.append(expect.number(call(conv_output_size, n, k, s, p, what=what), what))
    formulas = [
        ("right", lambda n, k, s, p: (n + 2 * p - k) // s + 1, None, None),
        ("missing-one", lambda n, k, s, p: (n + 2 * p - k) // s, "you count the steps between windows, not the "
         "windows.", "A window starts at 0, s, 2s, ...: the last start is at most n + 2p - k, so there are "
         "(n + 2p - k) // s + 1 of them."),
        ("one-side-padding", lambda n, k, s, p: (n + p - k) // s + 1, "you pad only one side.",
         "Padding p adds p zeros on *each* side: the padded length is n + 2p."),
        ("no-floor", lambda n, k, s, p: (n + 2 * p - k) / s + 1, "you divide without rounding down.",
         "A window that does not fit is not computed: use integer division `//`."),
    ]
    for kind, formula, message, hint in formulas:
        if all(math.isclose(g, formula(*case)) for g, case in zip(got, cases)):
            if kind == "right":
                return [f"{len(cases)} cases, with padding, strides and windows that do not fit"]
            wrong = next(i for i, case in enumerate(cases) if formula(*case) != formulas[0][1](*case))
            raise Mistake(f"For n, kernel, stride, padding = {cases[wrong]} you return {got[wrong]:g}, expected "
                          f"{formulas[0][1](*cases[wrong])}: {message}", hint, kind=kind)
    wrong = next(i for i, case in enumerate(cases) if not math.isclose(got[i], formulas[0][1](*case)))
    raise Mistake(f"For n, kernel, stride, padding = {cases[wrong]} you return {got[wrong]:g}; expected "
                  f"{formulas[0][1](*cases[wrong])}.", "Pad both sides (n + 2p), subtract the kernel, divide by "
                  "the stride (rounding down), add one.", kind="values")


def _conv_case(seed, batch=2, channels=3, out_channels=4, size=(6, 7), kernel=(3, 2)):
    rng = np.random.default_rng(seed)
    x = _t(rng.standard_normal((batch, channels, *size)), requires_grad=True)
    w = _t(rng.standard_normal((out_channels, channels, *kernel)), requires_grad=True)
    y = nn.functional.conv2d(x, w)
    g = _t(rng.standard_normal(tuple(y.shape)))
    y.backward(g)
    return x, w, g


@exercise("7.2", "conv2d's input gradient", lesson="07", solution="lesson07:conv2d_input_grad")
def exercise_7_2(conv2d_input_grad):
    """``conv2d_input_grad(grad_out, weight)``: ∂L/∂x of ``conv2d(x, weight)`` (stride 1, no padding)."""
    conv2d = nn.functional.conv2d
    for seed, shapes in [(72, {}), (73, {"batch": 1, "channels": 1, "out_channels": 1, "size": (5, 5),
                                         "kernel": (3, 3)})]:
        x, w, g = _conv_case(seed, **shapes)
        what = f"your conv2d_input_grad (input {tuple(x.shape)}, kernel {tuple(w.shape)})"
        try:
            got = call(conv2d_input_grad, g.detach(), w.detach(), what=what)
        except LearnerError as error:
            if isinstance(error.error, ShapeError):
                raise Mistake(f"vizgrad said: {error.error}", "The backward convolution maps O channels back to "
                              "C: swap the kernel's first two axes (`weight.transpose(0, 1)`), and pad by "
                              "kernel size - 1 on each side.", kind="channels") from None
            raise
        got = _array(got, what)
        want = as_numpy(x.grad)
        if got.shape == want.shape and close(got, want):
            continue
        kh, kw = w.shape[2:]
        with no_grad():
            unflipped = as_numpy(conv2d(g, w.transpose(0, 1), padding=(kh - 1, kw - 1)))
        if got.shape == want.shape and close(got, unflipped) and not close(unflipped, want):
            raise Mistake("Your gradient is the full correlation of grad_out with the kernel *unflipped*.",
                          "Each output y[i, j] used x[i + a, j + b] with weight w[a, b]; gathering those "
                          "contributions at x runs over the kernel backwards: `weight.flip(2, 3)`.",
                          kind="no-flip", details=_side_by_side(got.ravel()[:6], want.ravel()[:6]))
        if got.shape != want.shape:
            raise Mistake(f"Your gradient has shape {got.shape}; the input has shape {want.shape}.",
                          "A 'full' convolution pads grad_out by kernel size - 1 on each side, so the result "
                          "grows back to the input's size.", kind="shape")
        raise Mistake("Your gradient has the right shape but wrong values.", "conv2d(grad_out, "
                      "weight.flip(2, 3).transpose(0, 1), padding=(kh - 1, kw - 1)), or "
                      "`conv_transpose2d(grad_out, weight)`, which is the same thing.", kind="values",
                      details=_side_by_side(got.ravel()[:6], want.ravel()[:6]))
    return ["matches autograd for 3 → 4 channels with a 3×2 kernel", "and for one channel with a 3×3 kernel"]


@exercise("7.3", "conv2d's weight gradient", lesson="07", solution="lesson07:conv2d_weight_grad")
def exercise_7_3(conv2d_weight_grad):
    """``conv2d_weight_grad(x, grad_out)``: ∂L/∂weight of ``conv2d(x, weight)`` (stride 1, no padding)."""
    for seed in (74, 75):
        x, w, g = _conv_case(seed)
        what = f"your conv2d_weight_grad (input {tuple(x.shape)}, grad_out {tuple(g.shape)})"
        got = _array(call(conv2d_weight_grad, x.detach(), g.detach(), what=what), what)
        want = as_numpy(w.grad)
        if got.shape == want.shape and close(got, want):
            continue
        if got.shape != want.shape:
            raise Mistake(f"Your gradient has shape {got.shape}; the weight has shape {want.shape}.",
                          "Treat the batch as the channels being summed over: with x as (C, N, H, W) and grad_out "
                          "as (O, N, h, w), `conv2d(x, grad_out)` has shape (C, O, kh, kw); transpose back.",
                          kind="shape")
        if close(got, want[:, :, ::-1, ::-1]):
            raise Mistake("Your gradient is the right one flipped in both spatial axes.",
                          "For the weight there is no flip: ∂L/∂w[a, b] = Σ grad_out[i, j] · x[i + a, j + b], a "
                          "correlation of x with grad_out.", kind="flipped")
        if close(got, want / x.shape[0]):
            raise Mistake("Your gradient is the right one divided by the batch size.",
                          "The weight is shared by every image in the batch: its gradient is the *sum* of their "
                          "contributions.", kind="mean")
        raise Mistake("Your gradient has the right shape but wrong values.",
                      "∂L/∂w[o, c, a, b] = Σ over the batch and positions of grad_out[n, o, i, j] · "
                      "x[n, c, i + a, j + b].", kind="values", details=_side_by_side(got.ravel()[:6], want.ravel()[:6]))
    return ["matches autograd for two random cases (3 → 4 channels, 3×2 kernel, batch 2)"]


# A 3×5 bitmap of each digit (rows top to bottom, '#' is ink): what synthetic_digits draws.
_GLYPHS = {
    0: ["###", "#.#", "#.#", "#.#", "###"], 1: [".#.", "##.", ".#.", ".#.", "###"],
    2: ["###", "..#", "###", "#..", "###"], 3: ["###", "..#", ".##", "..#", "###"],
    4: ["#.#", "#.#", "###", "..#", "..#"], 5: ["###", "#..", "###", "..#", "###"],
    6: ["###", "#..", "###", "#.#", "###"], 7: ["###", "..#", ".#.", ".#.", ".#."],
    8: ["###", "#.#", "###", "#.#", "###"], 9: ["###", "#.#", "###", "..#", "###"],
}


def synthetic_digits(n_samples=1000, noise=0.1, seed=0):
    """Small 8×8 images of the digits 0-9: a 3×5 font, in a thin (3 pixels wide) or bold (6
    wide) variant, near the centre (shifted by up to a pixel), with noise. A stand-in for ``vizgrad.data.load_digits``
    where scikit-learn is not installed.

    Returns ``(X, y)`` like ``load_digits``: X float32 of shape (n, 1, 8, 8) in [0, 1], y int64.
    """
    rng = np.random.default_rng(seed)
    images = np.zeros((n_samples, 1, 8, 8))
    labels = rng.integers(0, 10, n_samples)
    for index, label in enumerate(labels):
        glyph = np.array([[ch == "#" for ch in row] for row in _GLYPHS[int(label)]], dtype=np.float64)
        if rng.random() < 0.5:
            glyph = np.repeat(glyph, 2, axis=1)
        height, width = glyph.shape
        top = (8 - height) // 2 + rng.integers(-1, 2)        # near the centre, as in the real digits
        left = min(max((8 - width) // 2 + rng.integers(-1, 2), 0), 8 - width)
        images[index, 0, top:top + height, left:left + width] = glyph
    images = np.clip(images + noise * rng.standard_normal(images.shape), 0.0, 1.0)
    return (creation.tensor(images.astype(np.float32)), creation.tensor(labels.astype(np.int64)))


def lesson_digits():
    """``(X, y, source)``: scikit-learn's digits when it is installed, else :func:`synthetic_digits`."""
    from ..data import load_digits
    try:
        X, y = load_digits()
        return X, y, "scikit-learn's 8×8 digits"
    except ImportError:
        X, y = synthetic_digits(1797)
        return X, y, "synthetic 8×8 digits (scikit-learn is not installed)"


@exercise("7.4", "a small CNN that reads digits", lesson="07", solution="lesson07:make_cnn")
def exercise_7_4(make_cnn):
    """``make_cnn()``: a module (n, 1, 8, 8) → (n, 10) with at least one Conv2d; 90% accuracy on
    held-out digits after 4 epochs of Adam."""
    from ..data import DataLoader, TensorDataset
    creation.manual_seed(74)
    model = call(make_cnn, what="your make_cnn()")
    if not isinstance(model, nn.Module):
        raise Mistake(f"make_cnn returned {type(model).__name__}; expected an `nn.Module`.",
                      "Return the model, e.g. an `nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), ...)`.", kind="type")
    if not any(isinstance(m, nn.Conv2d) for m in model.modules()):
        raise Mistake("Your model has no `nn.Conv2d` layer.", "This one is about convolutions: start with "
                      "`nn.Conv2d(1, 8, 3, padding=1)`.", kind="no-conv")
    X, y, _ = lesson_digits()
    order = np.random.default_rng(74).permutation(len(X))
    train, test = creation.tensor(order[:1400]), creation.tensor(order[1400:])
    try:
        out = model(X[:4])
    except Exception as error:
        raise LearnerError(error, "your model on a batch of (4, 1, 8, 8) images") from error
    expect.shape(expect.tensor(out, "your model"), (4, 10), "Your model's output on 4 images",
                 "End with `nn.Flatten()` and a `nn.Linear(..., 10)`: one score per digit.")
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(TensorDataset(X[train], y[train]), batch_size=64, shuffle=True,
                        generator=creation.Generator().manual_seed(74))
    started = time.perf_counter()
    with learner_code("training your CNN"):
        for _ in range(4):
            for xb, yb in loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(xb), yb).backward()
                optimizer.step()
            if time.perf_counter() - started > 60:
                raise Mistake("Training your CNN for 4 epochs took over a minute.", "Use fewer or smaller "
                              "layers: 8 and 16 channels with 3×3 kernels are plenty for 8×8 images.", kind="slow")
    model.eval()
    with no_grad():
        accuracy = float((as_numpy(model(X[test]).argmax(1)) == as_numpy(y[test])).mean())
    model.train()
    if accuracy < 0.9:
        raise Mistake(f"After 4 epochs your CNN reads {accuracy:.0%} of {len(test)} held-out digits correctly; the "
                      "goal is 90%.", "Two conv layers (8 and 16 channels, 3×3, padding 1) with ReLU and "
                      "MaxPool2d(2) after each, then Flatten and Linear(16·2·2, 10), get there.", kind="accuracy")
    return [f"{accuracy:.1%} of {len(test)} held-out digits after 4 epochs "
            f"({time.perf_counter() - started:.1f} s of training)"]


# ==== lesson 08: the GPU ==================================================================================
@exercise("8.1", "pick a device", lesson="08", solution="lesson08:pick_device")
def exercise_8_1(pick_device):
    """``pick_device()``: ``"cuda"`` when ``vg.cuda.is_available()``, else ``"cpu"``."""
    from .. import cuda
    got = call(pick_device, what="your pick_device()")
    expect.not_none(got, "your pick_device()")
    want = "cuda" if cuda.is_available() else "cpu"
    name = str(getattr(got, "type", got))
    if name in ("gpu", "GPU", "cupy"):
        raise Mistake(f"pick_device() returned {got!r}, which is not a device name.",
                      "Devices are named as in PyTorch: `\"cuda\"` for the GPU, `\"cpu\"` otherwise.", kind="name")
    if name.split(":")[0] != want:
        raise Mistake(f"pick_device() returned {got!r}, but here `vg.cuda.is_available()` is "
                      f"{cuda.is_available()}.", "Return `\"cuda\" if vg.cuda.is_available() else \"cpu\"`: decide "
                      "at run time, so the same notebook runs everywhere.", kind="wrong-device")
    try:
        creation.zeros(2, device=got)
    except (DeviceError, ValueError, TypeError) as error:
        raise Mistake(f"`vg.zeros(2, device={got!r})` fails: {error}", kind="unusable") from None
    return [f"{got!r} here, where a GPU is {'available' if want == 'cuda' else 'not available'}"]


@exercise("8.2", "GFLOP/s of a matrix product", lesson="08", solution="lesson08:matmul_gflops")
def exercise_8_2(matmul_gflops):
    """``matmul_gflops(n, seconds)``: billions of floating-point operations per second of an
    n×n by n×n matrix product that took ``seconds``."""
    for n, seconds in [(1024, 0.01), (256, 2e-4), (4096, 1.5)]:
        what = f"your matmul_gflops({n}, {seconds})"
        got = expect.number(call(matmul_gflops, n, seconds, what=what), what)
        want = 2 * n ** 3 / seconds / 1e9
        if math.isclose(got, want, rel_tol=1e-6):
            continue
        if math.isclose(got, want / 2, rel_tol=1e-6):
            raise Mistake(f"{what} = {got:.4g}, half of {want:.4g}: you count n³ operations.",
                          "Each of the n³ terms of the product is a multiply *and* an add: 2n³ operations.",
                          kind="half")
        if math.isclose(got, want * 1e9, rel_tol=1e-6):
            raise Mistake(f"{what} = {got:.4g}: that is FLOP/s, not GFLOP/s.", "Divide by 1e9.", kind="units")
        if math.isclose(got, 2 * n ** 2 / seconds / 1e9, rel_tol=1e-6):
            raise Mistake(f"{what} = {got:.4g}: you count 2n² operations.", "The product has n² entries, each a sum "
                          "of n products.", kind="values")
        raise Mistake(f"{what} = {got:.4g}; expected {want:.4g}.", "Operations: 2n³ (n² entries, n multiply-adds "
                      "each); divide by the seconds and by 1e9.", kind="values")
    return ["2n³ / seconds / 1e9 for three sizes"]


# ==== lesson 09: higher-order gradients ===================================================================
@exercise("9.1", "a second derivative", lesson="09", solution="lesson09:second_derivative")
def exercise_9_1(second_derivative):
    """``second_derivative(f, x0)``: f''(x0) as a float, by differentiating twice with vizgrad."""
    cases = [("x³", lambda x: x ** 3, 2.0, lambda a: 6 * a, lambda a: 3 * a * a),
             ("sin(x)", lambda x: x.sin(), 1.0, lambda a: -math.sin(a), math.cos),
             ("x·exp(x)", lambda x: x * x.exp(), 0.5, lambda a: (2 + a) * math.exp(a),
              lambda a: (1 + a) * math.exp(a))]
    for name, f, x0, second, first in cases:
        what = f"your second_derivative(f, {x0}) for f(x) = {name}"
        try:
            value = call(second_derivative, f, x0, what=what)
        except LearnerError as error:
            if isinstance(error.error, BackwardError):
                raise Mistake(f"vizgrad said: {error.error}", "The first `grad` must keep its own graph, so it "
                              "can be differentiated again: `vg.autograd.grad(y, x, create_graph=True)`.",
                              kind="create-graph") from None
            raise
        got = expect.number(value, what)
        if math.isclose(got, second(x0), rel_tol=1e-5, abs_tol=1e-8):
            continue
        if math.isclose(got, first(x0), rel_tol=1e-5, abs_tol=1e-8):
            raise Mistake(f"For f(x) = {name} at x = {x0} you return {got:.6g}: that is f'(x0), the first "
                          "derivative.", "Differentiate the first derivative once more: a second "
                          "`vg.autograd.grad(dy, x)`.", kind="first-derivative")
        raise Mistake(f"For f(x) = {name} at x = {x0} you return {got:.6g}; f''(x0) = {second(x0):.6g}.",
                      "`(dy,) = vg.autograd.grad(y, x, create_graph=True)`, then `(d2y,) = vg.autograd.grad(dy, x)`.",
                      kind="values")
    return ["f'' of x³, sin(x) and x·exp(x)"]


def _hvp_function(x):
    """A smooth scalar function of a vector: ¼Σx⁴ + Σ x_i x_{i+1} + Σ sin(x)."""
    return (x ** 4).sum() / 4 + (x[:-1] * x[1:]).sum() + x.sin().sum()


@exercise("9.2", "a Hessian-vector product", lesson="09", solution="lesson09:hvp")
def exercise_9_2(hvp):
    """``hvp(f, x, v)``: H(x)·v for scalar f, by double backward, without forming H."""
    rng = np.random.default_rng(92)
    x, v = rng.standard_normal(6), rng.standard_normal(6)
    what = "your hvp(f, x, v)"
    try:
        got = call(hvp, _hvp_function, _t(x, requires_grad=True), _t(v), what=what)
    except LearnerError as error:
        if isinstance(error.error, BackwardError):
            raise Mistake(f"vizgrad said: {error.error}", "The gradient must stay differentiable: "
                          "`(g,) = vg.autograd.grad(f(x), x, create_graph=True)`, then differentiate `(g * v).sum()`.",
                          kind="create-graph") from None
        raise
    got = _array(got, what, (6,))
    H = as_numpy(functional.hessian(_hvp_function, _t(x)))
    want = H @ v
    if not close(got, want):
        grad = as_numpy(functional.vjp(_hvp_function, _t(x))[1])
        candidates = [("gradient", grad, "You return the gradient ∇f(x), not H·v.",
                       "Take the gradient of `(g * v).sum()` with respect to x, where g = ∇f(x)."),
                      ("grad-times-v", grad * v, "You return ∇f(x) ⊙ v, elementwise.",
                       "H·v = ∇ₓ(∇f(x) · v): differentiate the dot product once more."),
                      ("diagonal", np.diag(H) * v, "You return diag(H) ⊙ v: the mixed second derivatives are "
                       "missing.", "Differentiate the scalar `(g * v).sum()`, not each component of g separately.")]
        for kind, wrong, message, hint in candidates:
            if close(got, wrong):
                raise Mistake(message, hint, kind=kind, details=_side_by_side(got, want))
        raise Mistake("Your H·v differs from the Hessian's.", "`(g,) = grad(f(x), x, create_graph=True)`; "
                      "`(hv,) = grad((g * v).sum(), x)`.", kind="values", details=_side_by_side(got, want))
    n = 4000
    big_x, big_v = _t(rng.standard_normal(n), requires_grad=True), _t(rng.standard_normal(n))
    started = time.perf_counter()
    functional.hvp(_hvp_function, big_x.detach(), big_v)          # what two backward passes cost here
    reference = time.perf_counter() - started
    started = time.perf_counter()
    big = _array(call(hvp, _hvp_function, big_x, big_v, what=f"your hvp for a vector of {n}"),
                 f"your hvp for a vector of {n}", (n,))
    seconds = time.perf_counter() - started
    bx, bv = as_numpy(big_x), as_numpy(big_v)
    exact = 3 * bx ** 2 * bv - np.sin(bx) * bv
    exact[:-1] += bv[1:]
    exact[1:] += bv[:-1]
    if not close(big, exact):
        raise Mistake(f"For a vector of {n}, your H·v is wrong.", kind="values", details=_side_by_side(big, exact))
    if seconds > 1.0 + 100 * reference:
        raise Mistake(f"For a vector of {n}, your hvp took {seconds:.1f} s where two backward passes take "
                      f"{reference * 1000:.0f} ms: it seems to build the {n}×{n} Hessian.",
                      "Two backward passes are enough, whatever the size: never form H.", kind="slow")
    return ["H·v matches the Hessian's for a vector of 6", f"a vector of {n} in {seconds * 1000:.0f} ms: "
            "no Hessian was formed"]


@exercise("9.3", "the largest Hessian eigenvalue by power iteration", lesson="09",
          solution="lesson09:top_eigenvalue")
def exercise_9_3(top_eigenvalue):
    """``top_eigenvalue(f, x, steps)``: the largest eigenvalue of f's Hessian at x, by power
    iteration on Hessian-vector products."""
    rng = np.random.default_rng(93)
    basis, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    eigenvalues = np.array([7.0, 3.0, 1.5, 0.5, 0.1])
    A = _t(basis @ np.diag(eigenvalues) @ basis.T)

    def quadratic(x):
        return 0.5 * (x * (A @ x)).sum()

    cases = [("½xᵀAx with eigenvalues 7, 3, 1.5, 0.5, 0.1", quadratic, rng.standard_normal(5), 7.0),
             ("the Rosenbrock function at (1, 1)", _rosenbrock, np.array([1.0, 1.0]),
              float(np.linalg.eigvalsh(np.array([[802.0, -400.0], [-400.0, 200.0]]))[-1]))]
    for name, f, x, want in cases:
        what = f"your top_eigenvalue for {name}"
        value = call(top_eigenvalue, f, _t(x, requires_grad=True), 100, what=what)
        if isinstance(value, Tensor) and value.numel() > 1 or isinstance(value, np.ndarray) and value.size > 1:
            raise Mistake(f"{what} returned a vector; expected the eigenvalue (a number).",
                          "After the iterations, the eigenvalue is the Rayleigh quotient vᵀHv for the unit vector "
                          "v: `(v * hvp(v)).sum().item()`.", kind="vector")
        got = expect.number(value, what)
        if math.isclose(got, want, rel_tol=1e-3):
            continue
        raise Mistake(f"For {name} you return {got:.6g}; the largest eigenvalue is {want:.6g}.",
                      "Start from a random unit vector v; repeat: w = H·v, v = w / ‖w‖. Then λ = vᵀ(H·v).",
                      kind="values")
    return ["λ_max = 7 for a quadratic with a known spectrum",
            f"λ_max ≈ {cases[1][3]:.2f} for the Rosenbrock function at its minimum"]
