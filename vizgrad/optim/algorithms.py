"""The optimization algorithms, each its published update rule on arrays: ``update`` keeps
the buffers in place and returns the step that the base class subtracts.

Notation: p parameter, g gradient, t step number (from 1), lr learning rate.
"""

import math

from ..errors import ArgumentError, as_number, check_range
from ..backends import backend_of
from .optimizer import Optimizer


def _namespace(array):
    return backend_of(array).xp


def _into(out, function, *args):
    """``out[...] = function(*args)``, written straight into ``out`` where the backend's
    functions take ``out=`` (NumPy's and CuPy's ufuncs do), else through a temporary (the
    Array API standard has no ``out=``)."""
    try:
        function(*args, out=out)
    except TypeError:
        out[...] = function(*args)


def _check(optimizer, name, value, low=0.0, inclusive=True, high=None):
    """A hyperparameter in its range, or an error naming the optimizer, the argument and its value."""
    check_range(type(optimizer).__name__, name, value, low, high, low_open=not inclusive, high_open=True)


def _check_betas(optimizer, betas):
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ArgumentError(f"{type(optimizer).__name__}: betas must be a pair of numbers, got {betas!r}")
    for position, beta in enumerate(betas):
        _check(optimizer, f"betas[{position}]", beta, high=1.0)


def _pair(optimizer, name, value):
    """A pair of numbers as a tuple, or an error naming the optimizer and the argument."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ArgumentError(f"{type(optimizer).__name__}: {name} must be a pair of numbers, got {value!r}")
    return tuple(as_number(type(optimizer).__name__, f"{name}[{position}]", v) for position, v in enumerate(value))


def _gradient(p, g, group, decay=None):
    """The gradient to step along: negated with ``maximize``, plus λp for a coupled weight
    decay λ (the group's ``weight_decay`` unless ``decay`` is given)."""
    if group["maximize"]:
        g = -g
    if decay is None:
        decay = group["weight_decay"]
    if decay:
        g = g + decay * p
    return g


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum (heavy-ball or Nesterov).

    g ← g + λp;  b ← μb + (1-τ)g (b = g at the first step);  g ← g + μb (Nesterov) or b;
    p ← p - lr·g.  With ``maximize`` the gradient's sign is flipped.

    Example::

        opt = vizgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loss.backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "momentum", momentum)
        _check(self, "weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ArgumentError(f"SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got "
                                f"momentum={momentum}, dampening={dampening}")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    def update(self, p, g, state, group):
        g = _gradient(p, g, group)
        momentum = group["momentum"]
        if momentum:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = _namespace(p).asarray(g, copy=True)
            else:
                buffer *= momentum
                buffer += (1 - group["dampening"]) * g
            g = g + momentum * buffer if group["nesterov"] else buffer
        return group["lr"] * g


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015), optionally AMSGrad.

    g ← g + λp;  m ← β₁m + (1-β₁)g;  v ← β₂v + (1-β₂)g²;
    p ← p - lr/(1-β₁ᵗ) · m / (√(v̂)/√(1-β₂ᵗ) + ε), with v̂ = v, or its running max (AMSGrad).
    """

    decoupled_weight_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "eps", eps)
        _check(self, "weight_decay", weight_decay)
        _check_betas(self, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def update(self, p, g, state, group):
        lr, (beta1, beta2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        xp = _namespace(p)
        if "exp_avg" not in state:
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = xp.zeros_like(p)
        m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        scratch = self._scratch_like(p)   # no parameter-sized temporaries: all in place
        coupled_decay = 0.0 if self.decoupled_weight_decay else decay
        fused = backend_of(p).fused_adam
        if fused is not None:       # one kernel where the backend has one (see Backend.fused_adam)
            step = fused(g, p, m, v, state.get("max_exp_avg_sq"), scratch, sign=-1.0 if group["maximize"] else 1.0,
                         beta1=beta1, beta2=beta2, eps=eps, step_size=lr / (1 - beta1 ** t),
                         root_correction=1 / math.sqrt(1 - beta2 ** t), decay_g=coupled_decay,
                         decay_p=lr * decay if self.decoupled_weight_decay else 0.0)
            if step is not None:
                return step
        g = _gradient(p, g, group, coupled_decay)
        m *= beta1
        _into(scratch, xp.multiply, g, 1 - beta1)
        m += scratch
        _square_average_into(v, g, beta2, scratch)
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]
            _into(v_max, xp.maximum, v_max, v)
            v = v_max
        _into(scratch, xp.sqrt, v)                     # the denominator √v / √(1-β₂ᵗ) + ε
        scratch *= 1 / math.sqrt(1 - beta2 ** t)
        scratch += eps
        _into(scratch, xp.divide, m, scratch)
        scratch *= lr / (1 - beta1 ** t)
        if decay and self.decoupled_weight_decay:     # p(1 - lr·λ) - step = p - (step + lr·λ·p)
            scratch += (lr * decay) * p
        return scratch


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): p ← p(1 - lr·λ) before
    the Adam step, instead of adding λp to the gradient."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class RMSprop(Optimizer):
    """RMSprop (Hinton), optionally centred and with momentum.

    g ← g + λp;  v ← αv + (1-α)g²;  a = √(v - ḡ²) + ε (centred, ḡ ← αḡ + (1-α)g) or √v + ε;
    b ← μb + g/a and p ← p - lr·b (momentum), else p ← p - lr·g/a.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "eps", eps)
        _check(self, "alpha", alpha)
        _check(self, "momentum", momentum)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def update(self, p, g, state, group):
        xp = _namespace(p)
        g = _gradient(p, g, group)
        alpha = group["alpha"]
        if "square_avg" not in state:
            state["square_avg"] = xp.zeros_like(p)
            if group["momentum"]:
                state["momentum_buffer"] = xp.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(p)
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * (g * g)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg *= alpha
            grad_avg += (1 - alpha) * g
            average = xp.sqrt(square_avg - grad_avg * grad_avg) + group["eps"]
        else:
            average = xp.sqrt(square_avg) + group["eps"]
        if group["momentum"]:
            buffer = state["momentum_buffer"]
            buffer *= group["momentum"]
            buffer += g / average
            return group["lr"] * buffer
        return group["lr"] * (g / average)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

    lrₜ = lr / (1 + (t-1)·decay);  g ← g + λp;  s ← s + g²;  p ← p - lrₜ·g / (√s + ε).
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                 eps=1e-10, *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "lr_decay", lr_decay)
        _check(self, "initial_accumulator_value", initial_accumulator_value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize))

    def update(self, p, g, state, group):
        xp = _namespace(p)
        g = _gradient(p, g, group)
        if "sum" not in state:
            state["sum"] = xp.full_like(p, group["initial_accumulator_value"])
        total = state["sum"]
        total += g * g
        rate = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        return rate * (g / (xp.sqrt(total) + group["eps"]))


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    g ← g + λp;  v ← ρv + (1-ρ)g²;  Δ = √(u + ε)/√(v + ε) · g;  u ← ρu + (1-ρ)Δ²;  p ← p - lr·Δ.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, *, maximize=False):
        _check(self, "lr", lr)
        rho = check_range(type(self).__name__, "rho", rho, 0, 1)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

    def update(self, p, g, state, group):
        xp = _namespace(p)
        g = _gradient(p, g, group)
        if "square_avg" not in state:
            state["square_avg"] = xp.zeros_like(p)
            state["acc_delta"] = xp.zeros_like(p)
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * (g * g)
        delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * g
        acc_delta *= rho
        acc_delta += (1 - rho) * (delta * delta)
        return group["lr"] * delta


def _average_into(average, g, weight, scratch):
    """average ← average + w·(g - average), in place: an exponential moving average that
    keeps (1-w) of the old value (PyTorch's ``lerp_``)."""
    _into(scratch, _namespace(g).subtract, g, average)
    scratch *= weight
    average += scratch


def _square_average_into(average, g, beta, scratch):
    """average ← β·average + (1-β)·g², in place."""
    average *= beta
    _into(scratch, _namespace(g).multiply, g, g)
    scratch *= 1 - beta
    average += scratch


def _moments(p, g, state, group, second="exp_avg_sq"):
    """The gradient after ``maximize`` and coupled weight decay, and the state's first and
    second moment buffers (created at the first step)."""
    if "exp_avg" not in state:
        xp = _namespace(p)
        state["exp_avg"] = xp.zeros_like(p)
        state[second] = xp.zeros_like(p)
    decay = 0.0 if group.get("decoupled_weight_decay", False) else group["weight_decay"]
    return _gradient(p, g, group, decay), state["exp_avg"], state[second]


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm (Kingma & Ba, 2015, section 7.1).

    g ← g + λp;  m ← β₁m + (1-β₁)g;  u ← max(β₂u, |g| + ε);  p ← p - lr/(1-β₁ᵗ) · m/u.

    Example::

        opt = vizgrad.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "eps", eps)
        _check(self, "weight_decay", weight_decay)
        _check_betas(self, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def update(self, p, g, state, group):
        (beta1, beta2), xp = group["betas"], _namespace(p)
        g, m, u = _moments(p, g, state, group, second="exp_inf")
        scratch = self._scratch_like(p)
        _average_into(m, g, 1 - beta1, scratch)
        u *= beta2
        _into(scratch, xp.abs, g)
        scratch += group["eps"]
        _into(u, xp.maximum, u, scratch)
        _into(scratch, xp.divide, m, u)
        scratch *= group["lr"] / (1 - beta1 ** state["step"])
        return scratch


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum (Dozat, 2016), with its momentum schedule.

    μₜ = β₁(1 - ½·0.96^(t·ψ)) (ψ = ``momentum_decay``), Πₜ = μ₁μ₂⋯μₜ;  g ← g + λp;
    m ← β₁m + (1-β₁)g;  v ← β₂v + (1-β₂)g²;  d = √(v/(1-β₂ᵗ)) + ε;
    p ← p - lr·(1-μₜ)/(1-Πₜ) · g/d - lr·μₜ₊₁/(1-Πₜμₜ₊₁) · m/d.
    With ``decoupled_weight_decay`` (NAdamW) the decay is p ← p(1 - lr·λ) instead of g ← g + λp.

    Example::

        opt = vizgrad.optim.NAdam(model.parameters(), lr=2e-3, weight_decay=1e-2, decoupled_weight_decay=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "eps", eps)
        _check(self, "weight_decay", weight_decay)
        _check(self, "momentum_decay", momentum_decay)
        _check_betas(self, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=bool(decoupled_weight_decay), maximize=maximize))

    def update(self, p, g, state, group):
        lr, (beta1, beta2), decay, xp = group["lr"], group["betas"], group["weight_decay"], _namespace(p)
        t = state["step"]
        state.setdefault("mu_product", 1.0)
        g, m, v = _moments(p, g, state, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        scratch = self._scratch_like(p)
        _average_into(m, g, 1 - beta1, scratch)
        _square_average_into(v, g, beta2, scratch)
        _into(scratch, xp.divide, v, 1 - beta2 ** t)      # the denominator d
        _into(scratch, xp.sqrt, scratch)
        scratch += group["eps"]
        momentum_step = m / scratch
        momentum_step *= lr * mu_next / (1.0 - mu_product * mu_next)
        _into(scratch, xp.divide, g, scratch)
        scratch *= lr * (1.0 - mu) / (1.0 - mu_product)
        scratch += momentum_step
        if decay and group["decoupled_weight_decay"]:    # p(1 - lr·λ) - step = p - (step + lr·λ·p)
            scratch += (lr * decay) * p
        return scratch


class RAdam(Optimizer):
    """RAdam: Adam with the variance of its adaptive rate rectified (Liu et al., 2020).

    g ← g + λp;  m ← β₁m + (1-β₁)g;  v ← β₂v + (1-β₂)g²;  ρ∞ = 2/(1-β₂) - 1;
    ρₜ = ρ∞ - 2tβ₂ᵗ/(1-β₂ᵗ);  m̂ = m/(1-β₁ᵗ);
    p ← p - lr·m̂·r·√(1-β₂ᵗ)/(√v + ε), r = √((ρₜ-4)(ρₜ-2)ρ∞ / ((ρ∞-4)(ρ∞-2)ρₜ)), while ρₜ > 5;
    p ← p - lr·m̂ (momentum SGD) in the first steps, where ρₜ ≤ 5.
    With ``decoupled_weight_decay`` the decay is p ← p(1 - lr·λ) instead of g ← g + λp.

    Example::

        opt = vizgrad.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 decoupled_weight_decay=False, *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "eps", eps)
        _check(self, "weight_decay", weight_decay)
        _check_betas(self, betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=bool(decoupled_weight_decay), maximize=maximize))

    def update(self, p, g, state, group):
        lr, (beta1, beta2), decay, xp = group["lr"], group["betas"], group["weight_decay"], _namespace(p)
        t = state["step"]
        g, m, v = _moments(p, g, state, group)
        scratch = self._scratch_like(p)
        _average_into(m, g, 1 - beta1, scratch)
        _square_average_into(v, g, beta2, scratch)
        bias1, bias2 = 1 - beta1 ** t, 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2 ** t / bias2
        if rho_t > 5.0:
            rectification = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            _into(scratch, xp.sqrt, v)
            scratch += group["eps"]
            _into(scratch, xp.divide, m, scratch)
            scratch *= lr / bias1 * math.sqrt(bias2) * rectification
        else:
            _into(scratch, xp.multiply, m, lr / bias1)
        if decay and group["decoupled_weight_decay"]:
            scratch += (lr * decay) * p
        return scratch


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993): each weight has its own step
    size, which grows while its gradient keeps its sign and shrinks when the sign flips;
    only the gradient's sign is used.

    s ← clamp(s·η₊, s_min, s_max) where g·g_prev > 0, clamp(s·η₋, ...) where g·g_prev < 0
    (then g ← 0 there: no step, and no sign to compare next time), else s unchanged;
    p ← p - sign(g)·s;  g_prev ← g.  s starts at ``lr``.

    Example::

        opt = vizgrad.optim.Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-6, 50))
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False):
        _check(self, "lr", lr)
        etas = _pair(self, "etas", etas)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ArgumentError(f"Rprop: etas must be (etaminus, etaplus) with 0 < etaminus < 1 < etaplus, "
                                f"got {etas!r}")
        step_sizes = _pair(self, "step_sizes", step_sizes)
        if not 0.0 <= step_sizes[0] <= step_sizes[1]:
            raise ArgumentError(f"Rprop: step_sizes must be (minimum, maximum) with 0 <= minimum <= maximum, "
                                f"got {step_sizes!r}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize))

    def update(self, p, g, state, group):
        xp = _namespace(p)
        (shrink, grow), (smallest, largest) = group["etas"], group["step_sizes"]
        g = _gradient(p, g, group, decay=0.0)
        if "prev" not in state:
            state["prev"] = xp.zeros_like(p)
            state["step_size"] = xp.full_like(p, group["lr"])
        prev, step_size = state["prev"], state["step_size"]
        factor = xp.sign(g * prev)        # 1: the same sign as last step, -1: it flipped, 0: a zero
        flipped = factor < 0
        factor[factor > 0] = grow
        factor[flipped] = shrink
        factor[factor == 0] = 1.0
        step_size *= factor
        _into(step_size, xp.clip, step_size, smallest, largest)
        prev[...] = g
        prev[flipped] = 0.0
        scratch = self._scratch_like(p)
        _into(scratch, xp.sign, prev)
        scratch *= step_size
        return scratch


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky, 1992), in the form of
    Bottou's "SGD tricks": SGD with a decaying rate ηₜ, and the running average of the
    iterates, ``optimizer.state[p]["ax"]``, as the estimate to use after training.

    g ← g + λ_wd·p;  p ← p(1 - λη) - ηg;  ax ← ax + μ(p - ax) (ax = p while μ = 1);
    then η ← lr/(1 + λ·lr·t)^α and μ ← 1/max(1, t - t₀) for the next step (η starts at ``lr``).

    Example::

        opt = vizgrad.optim.ASGD(model.parameters(), lr=0.01, t0=100)
        ...
        averaged = opt.state[model.weight]["ax"]
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, *, maximize=False):
        _check(self, "lr", lr)
        _check(self, "weight_decay", weight_decay)
        lambd = as_number("ASGD", "lambd", lambd)
        alpha = as_number("ASGD", "alpha", alpha)
        t0 = as_number("ASGD", "t0", t0)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))

    def update(self, p, g, state, group):
        xp = _namespace(p)
        lr, lambd = group["lr"], group["lambd"]
        g = _gradient(p, g, group)
        if "ax" not in state:
            state["eta"], state["mu"], state["ax"] = float(lr), 1.0, xp.zeros_like(p)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        scratch = self._scratch_like(p)
        _into(scratch, xp.multiply, p, lambd * eta)      # the step: λη·p + η·g
        scratch += eta * g
        if mu != 1:
            ax += ((p - scratch) - ax) * mu
        else:
            _into(ax, xp.subtract, p, scratch)            # the new p, as the base class computes it
        t = state["step"]
        state["eta"] = lr / (1 + lambd * lr * t) ** group["alpha"]
        state["mu"] = 1 / max(1, t - group["t0"])
        return scratch

