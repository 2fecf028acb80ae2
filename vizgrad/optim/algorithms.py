"""The optimization algorithms, each its published update rule on arrays: ``update`` keeps
the buffers in place and returns the step that the base class subtracts.

Notation: p parameter, g gradient, t step number (from 1), lr learning rate.
"""

import math

from ..errors import ArgumentError, check_range
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
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
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
        if group["maximize"]:
            g = -g
        if coupled_decay:
            g = g + coupled_decay * p
        m *= beta1
        _into(scratch, xp.multiply, g, 1 - beta1)
        m += scratch
        v *= beta2
        _into(scratch, xp.multiply, g, g)
        scratch *= 1 - beta2
        v += scratch
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
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
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
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
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
        if group["maximize"]:
            g = -g
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
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
