"""Learning-rate schedules, with PyTorch's names and rules.

Each scheduler sets ``group["lr"]`` for every parameter group of its optimizer when
it is created (epoch 0) and at each ``step()``. ``get_last_lr()`` returns the rates
last set; ``state_dict()`` / ``load_state_dict()`` save and restore a schedule.

The schedules PyTorch makes chainable (StepLR, MultiStepLR, ConstantLR, LinearLR,
ExponentialLR, PolynomialLR, CosineAnnealingLR, MultiplicativeLR) step as it does: from
the rate in force, each multiplying in its own change, so that two of them on one
optimizer (:class:`ChainedScheduler`) compose; the others set their closed form.

Example::

    opt = vizgrad.optim.SGD(model.parameters(), lr=0.1)
    sched = vizgrad.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...); sched.step()
"""

import math
from bisect import bisect_right

from ..errors import ArgumentError, ArgumentTypeError, as_int, as_number, check_range, check_size


class LRScheduler:
    """Base class. A subclass defines ``rate(base_lr, epoch)``, its closed form; a chainable
    one also ``next_rate(lr, base_lr, epoch)``: the rate at ``epoch`` from ``lr``, the rate
    in force (PyTorch's recursive rule), which ``step()`` uses."""

    _initial = False   # True during the step made at creation

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The step made at creation: to epoch 0 (or to the one after ``last_epoch``)."""
        self._initial = True
        try:
            self.step()
        finally:
            del self._initial

    def rate(self, base_lr, epoch):  # pragma: no cover - abstract
        raise NotImplementedError

    def next_rate(self, lr, base_lr, epoch):
        """The rate at ``epoch`` given the rate in force; the closed form unless the schedule chains."""
        return self.rate(base_lr, epoch)

    def step(self):
        """Advance one epoch (or one batch, for per-batch schedules) and set the new rates."""
        self.last_epoch += 1
        self._set_rates([self.next_rate(group["lr"], base, self.last_epoch)
                         for group, base in zip(self.optimizer.param_groups, self.base_lrs)])

    def _set_rates(self, rates):
        for group, rate in zip(self.optimizer.param_groups, rates):
            group["lr"] = rate
        self._record_rates()

    def _record_rates(self):
        """Keep the rates in force for ``get_last_lr()``."""
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _restart(self):
        """Back to epoch 0 (:class:`SequentialLR` at a milestone): from the closed form where
        the schedule has one, else a step from the rates in force."""
        if type(self).rate is LRScheduler.rate:
            self.last_epoch = -1
            self.step()
        else:
            self.last_epoch = 0
            self._set_rates([self.rate(base, 0) for base in self.base_lrs])

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        """Everything but the optimizer and functions (the schedule's numbers)."""
        return {key: value for key, value in self.__dict__.items()
                if key != "optimizer" and not callable(value)}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


def _per_group(scheduler, name, value, optimizer):
    """One value per parameter group: a list of them, or one value for all groups."""
    count = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ArgumentError(f"{scheduler}: {name} has {len(value)} values, but the optimizer has {count} "
                                f"parameter groups")
        return [as_number(scheduler, name, v) for v in value]
    return [as_number(scheduler, name, value)] * count


def _functions(scheduler, lr_lambda, optimizer):
    """``lr_lambda``: one function for every group, or a list with one per group."""
    count = len(optimizer.param_groups)
    functions = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * count
    if len(functions) != count:
        raise ArgumentError(f"{scheduler}: expected {count} lr_lambdas, got {len(functions)}")
    for function in functions:
        if not callable(function):
            raise ArgumentTypeError(f"{scheduler}: lr_lambda must be a function, got {type(function).__name__}")
    return functions


class LambdaLR(LRScheduler):
    """lr = base_lr · f(epoch), with ``lr_lambda`` one function or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _functions("LambdaLR", lr_lambda, optimizer)
        self._group = 0
        super().__init__(optimizer, last_epoch)

    def step(self):
        self.last_epoch += 1
        for group, base, function in zip(self.optimizer.param_groups, self.base_lrs, self.lr_lambdas):
            group["lr"] = base * function(self.last_epoch)
        self._record_rates()

    def state_dict(self):
        state = super().state_dict()
        state.pop("lr_lambdas", None)
        return state


class StepLR(LRScheduler):
    """lr = base_lr · γ^⌊epoch / step_size⌋."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = check_size("StepLR", "step_size", step_size, 1)
        self.gamma = as_number("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)

    def next_rate(self, lr, base_lr, epoch):
        return lr * self.gamma if epoch != 0 and epoch % self.step_size == 0 else lr


class MultiStepLR(LRScheduler):
    """lr = base_lr · γ^(number of milestones ≤ epoch)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = sorted(as_int("MultiStepLR", "milestones", m) for m in milestones)
        self.gamma = as_number("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * self.gamma ** bisect_right(self.milestones, epoch)

    def next_rate(self, lr, base_lr, epoch):
        count = self.milestones.count(epoch)    # a milestone listed twice decays twice
        return lr * self.gamma ** count if count else lr


class ExponentialLR(LRScheduler):
    """lr = base_lr · γ^epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = as_number("ExponentialLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * self.gamma ** epoch

    def next_rate(self, lr, base_lr, epoch):
        return lr if self._initial else lr * self.gamma


class CosineAnnealingLR(LRScheduler):
    """lr = η_min + (base_lr - η_min)(1 + cos(π·epoch/T_max))/2 (SGDR without restarts),
    stepped as PyTorch does: lr ← η_min + (lr - η_min)·(1 + cos(π·t/T_max))/(1 + cos(π·(t-1)/T_max)),
    which follows the formula and chains with other schedules."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = check_size("CosineAnnealingLR", "T_max", T_max, 1)
        self.eta_min = as_number("CosineAnnealingLR", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2

    def next_rate(self, lr, base_lr, epoch):
        if self._initial:
            return lr
        if (epoch - 1 - self.T_max) % (2 * self.T_max) == 0:    # leaving a minimum, where the ratio is 0/0
            return lr + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        ratio = (1 + math.cos(math.pi * epoch / self.T_max)) / (1 + math.cos(math.pi * (epoch - 1) / self.T_max))
        return ratio * (lr - self.eta_min) + self.eta_min


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR, Loshchilov & Hutter, 2017): within a
    cycle of T_i steps, lr = η_min + (base_lr - η_min)(1 + cos(π·T_cur/T_i))/2, and the
    rate jumps back to base_lr when a cycle ends; the first cycle lasts ``T_0`` steps and
    each one ``T_mult`` times longer than the one before."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        self.T_0 = check_size("CosineAnnealingWarmRestarts", "T_0", T_0, 1)
        self.T_mult = check_size("CosineAnnealingWarmRestarts", "T_mult", T_mult, 1)
        self.eta_min = as_number("CosineAnnealingWarmRestarts", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        if self.T_mult == 1:
            position, length = epoch % self.T_0, self.T_0
        else:
            cycle = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            position = epoch - self.T_0 * (self.T_mult ** cycle - 1) // (self.T_mult - 1)
            length = self.T_0 * self.T_mult ** cycle
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * position / length)) / 2


class LinearLR(LRScheduler):
    """lr = base_lr · (s + (e - s)·min(epoch, n)/n): from ``start_factor`` to ``end_factor``
    over ``total_iters`` steps."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        check_range("LinearLR", "start_factor", start_factor, 0, 1, low_open=True)
        check_range("LinearLR", "end_factor", end_factor, 0, 1)
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = check_size("LinearLR", "total_iters", total_iters, 1)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        progress = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)

    def next_rate(self, lr, base_lr, epoch):
        if epoch == 0:
            return lr * self.start_factor
        if self._initial or epoch > self.total_iters:
            return lr
        change = self.end_factor - self.start_factor
        return lr * (1.0 + change / (self.total_iters * self.start_factor + (epoch - 1) * change))


class ConstantLR(LRScheduler):
    """lr = base_lr · factor for the first ``total_iters`` epochs, then base_lr (a constant
    warm-up): the rate is multiplied by ``factor`` at epoch 0 and divided by it at ``total_iters``."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        self.factor = check_range("ConstantLR", "factor", factor, 0, 1)
        self.total_iters = check_size("ConstantLR", "total_iters", total_iters)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * (self.factor + (epoch >= self.total_iters) * (1 - self.factor))

    def next_rate(self, lr, base_lr, epoch):
        if epoch == 0:
            return lr * self.factor
        if epoch != self.total_iters:
            return lr
        return lr * (1.0 / self.factor) if self.factor else base_lr   # a factor of 0 cannot be divided out


class PolynomialLR(LRScheduler):
    """lr = base_lr · (1 - min(epoch, n)/n)^power: a polynomial decay to 0 over ``total_iters``
    = n epochs (linear for power 1)."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = check_size("PolynomialLR", "total_iters", total_iters, 1)
        self.power = check_range("PolynomialLR", "power", power, 0)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power

    def next_rate(self, lr, base_lr, epoch):
        if self._initial or epoch > self.total_iters:
            return lr
        n = self.total_iters
        return lr * ((1.0 - epoch / n) / (1.0 - (epoch - 1) / n)) ** self.power


class MultiplicativeLR(LRScheduler):
    """lr ← lr · f(epoch) at each step, with ``lr_lambda`` one function or one per group.

    Example::

        sched = vizgrad.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = _functions("MultiplicativeLR", lr_lambda, optimizer)
        super().__init__(optimizer, last_epoch)

    def step(self):
        self.last_epoch += 1
        if self._initial:
            self._record_rates()
        else:
            self._set_rates([group["lr"] * function(self.last_epoch)
                             for group, function in zip(self.optimizer.param_groups, self.lr_lambdas)])

    def state_dict(self):
        state = super().state_dict()
        state.pop("lr_lambdas", None)
        return state


def _positive_int(name, value):
    """OneCycleLR's step counts: positive ints, as PyTorch checks them (a ValueError)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ArgumentError(f"OneCycleLR: expected a positive integer {name}, got {value!r}")


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018), stepped once per batch: the rate rises from
    max_lr/div_factor to max_lr over ``pct_start`` of the steps, then anneals to
    max_lr/(div_factor·final_div_factor); momentum (or Adam's β₁) moves the opposite way."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ArgumentError("OneCycleLR needs total_steps, or epochs and steps_per_epoch")
            _positive_int("epochs", epochs)
            _positive_int("steps_per_epoch", steps_per_epoch)
            total_steps = epochs * steps_per_epoch
        _positive_int("total_steps", total_steps)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ArgumentError(f"OneCycleLR: expected a float between 0 and 1 for pct_start, got {pct_start!r}")
        if isinstance(max_lr, (list, tuple)) and len(max_lr) != len(optimizer.param_groups):
            raise ArgumentError(f"OneCycleLR: expected {len(optimizer.param_groups)} values for max_lr (one per "
                                f"parameter group), got {len(max_lr)}")
        if anneal_strategy not in ("cos", "linear"):
            raise ArgumentError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        groups = optimizer.param_groups
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        for group, peak in zip(groups, max_lrs):
            if last_epoch == -1:
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                           (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            for group in groups:
                if last_epoch == -1:
                    group["base_momentum"], group["max_momentum"] = base_momentum, max_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, fraction):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2 * (math.cos(math.pi * fraction) + 1)
        return (end - start) * fraction + start

    def step(self):
        self.last_epoch += 1
        step = self.last_epoch
        if step > self.total_steps:
            raise ArgumentError(f"OneCycleLR stepped {step} times but total_steps is {self.total_steps}")
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for end_step, lr_from, lr_to, momentum_from, momentum_to in self.phases:
                if step <= end_step or end_step == self.phases[-1][0]:
                    fraction = (step - start_step) / (end_step - start_step) if end_step > start_step else 1.0
                    group["lr"] = self._anneal(group[lr_from], group[lr_to], fraction)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[momentum_from], group[momentum_to], fraction)
                        if "betas" in group:
                            group["betas"] = (momentum, group["betas"][1])
                        elif "momentum" in group:
                            group["momentum"] = momentum
                    break
                start_step = end_step
        self._record_rates()


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017), stepped once per batch: the rate climbs from
    ``base_lr`` to ``max_lr`` over ``step_size_up`` steps and back over ``step_size_down``
    (default: as many), the height of each cycle scaled by

    * ``"triangular"``: 1;  ``"triangular2"``: 1/2^(cycle-1) (halved every cycle);
    * ``"exp_range"``: γ^step (decays with the step count);
    * or ``scale_fn(x)`` of the cycle number (``scale_mode="cycle"``) or of the step
      count (``"iterations"``).

    With ``cycle_momentum`` the momentum (or Adam's β₁) moves the opposite way, between
    ``max_momentum`` and ``base_momentum``.

    Example::

        opt = vizgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = vizgrad.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=500)
        for batch in loader:
            train_on(batch); sched.step()
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        base_lrs = _per_group("CyclicLR", "base_lr", base_lr, optimizer)
        self.max_lrs = _per_group("CyclicLR", "max_lr", max_lr, optimizer)
        up = float(check_range("CyclicLR", "step_size_up", step_size_up, 0, low_open=True))
        down = up if step_size_down is None else float(check_range("CyclicLR", "step_size_down", step_size_down, 0))
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if scale_fn is None:
            if mode not in ("triangular", "triangular2", "exp_range"):
                raise ArgumentError(f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' (or "
                                    f"give a scale_fn), got {mode!r}")
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        elif not callable(scale_fn):
            raise ArgumentTypeError(f"CyclicLR: scale_fn must be a function, got {type(scale_fn).__name__}")
        if scale_mode not in ("cycle", "iterations"):
            raise ArgumentError(f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.mode, self.scale_mode = mode, scale_mode
        self.gamma = as_number("CyclicLR", "gamma", gamma)
        self._scale_fn_custom = scale_fn
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ArgumentError(f"CyclicLR: cycle_momentum needs an optimizer with momentum or betas, and "
                                    f"{type(optimizer).__name__} has neither (pass cycle_momentum=False)")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("CyclicLR", "base_momentum", base_momentum, optimizer)
            self.max_momentums = _per_group("CyclicLR", "max_momentum", max_momentum, optimizer)
        if last_epoch == -1:
            for position, group in enumerate(optimizer.param_groups):
                group["lr"] = base_lrs[position]
                if self.cycle_momentum:
                    self._set_momentum(group, self.max_momentums[position])
                    group["max_momentum"] = self.max_momentums[position]
                    group["base_momentum"] = self.base_momentums[position]
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        """The height of the cycle, for cycle number (or step count) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def step(self):
        self.last_epoch += 1
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle           # where in the cycle, in [0, 1)
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        self._set_rates([low + (high - low) * height * scale for low, high in zip(self.base_lrs, self.max_lrs)])
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(group, high - (high - low) * height * scale)

    def state_dict(self):
        state = super().state_dict()
        state.pop("_scale_fn_custom", None)   # a function: the scheduler it is loaded into keeps its own
        return state


class ReduceLROnPlateau:
    """Multiply the rate by ``factor`` when a metric has stopped improving for ``patience``
    steps: ``sched.step(validation_loss)``."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0.0, eps=1e-8):
        if factor >= 1.0:
            raise ArgumentError("ReduceLROnPlateau: factor must be < 1.0")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ArgumentError("ReduceLROnPlateau: mode must be 'min' or 'max', threshold_mode 'rel' or 'abs'")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode, self.cooldown, self.eps = threshold, threshold_mode, cooldown, eps
        count = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * count
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _improved(self, value):
        if self.mode == "min":
            bound = self.best * (1 - self.threshold) if self.threshold_mode == "rel" else self.best - self.threshold
            return value < bound
        bound = self.best * (1 + self.threshold) if self.threshold_mode == "rel" else self.best + self.threshold
        return value > bound

    def step(self, metrics):
        value = float(metrics)
        self.last_epoch += 1
        if self._improved(value):
            self.best = value
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, floor)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


def _check_schedulers(name, schedulers, optimizer):
    if len(schedulers) < 1:
        raise ArgumentError(f"{name} expects at least one scheduler, got none")
    for position, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise ArgumentTypeError(f"{name}: schedulers[{position}] is a {type(scheduler).__name__}, not a "
                                    f"learning-rate scheduler")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ArgumentError(f"{name}: schedulers[{position}] is a ReduceLROnPlateau, whose step needs a "
                                f"metric; it cannot be combined")
        if scheduler.optimizer is not optimizer:
            raise ArgumentError(f"{name}: schedulers[{position}] ({type(scheduler).__name__}) belongs to another "
                                f"optimizer")


class _Combined(LRScheduler):
    """A scheduler made of others: its state dict holds theirs."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        self.__dict__.update({key: value for key, value in state_dict.items() if key != "_schedulers"})
        for scheduler, saved in zip(self._schedulers, state_dict["_schedulers"]):
            scheduler.load_state_dict(saved)


class SequentialLR(_Combined):
    """One scheduler after another: ``schedulers[i]`` runs from ``milestones[i-1]`` (where it
    restarts at its epoch 0) until ``milestones[i]``.

    Example (5 epochs of linear warm-up, then cosine annealing)::

        warmup = lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)
        cosine = lr_scheduler.CosineAnnealingLR(opt, T_max=95)
        sched = lr_scheduler.SequentialLR(opt, schedulers=[warmup, cosine], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        schedulers = list(schedulers)
        _check_schedulers("SequentialLR", schedulers, optimizer)
        milestones = [as_int("SequentialLR", "milestones", m) for m in milestones]
        if len(milestones) != len(schedulers) - 1:
            raise ArgumentError(f"SequentialLR expects one milestone fewer than schedulers, got {len(schedulers)} "
                                f"schedulers and {len(milestones)} milestones")
        if milestones != sorted(milestones):
            raise ArgumentError(f"SequentialLR: milestones must be increasing, got {milestones}")
        self._schedulers, self._milestones = schedulers, milestones
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:          # undo what creating the schedulers did
            group["lr"] = group["initial_lr"]
        self._undo_steps(self)
        self._initial_step()

    def _undo_steps(self, scheduler):
        """Take back the creation step of every scheduler inside ``scheduler``."""
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def _first(self):
        """The scheduler that runs at epoch 0."""
        return self._schedulers[bisect_right(self._milestones, 0)]

    def _initial_step(self):
        """Epoch 0 of the scheduler that runs first."""
        first = self._first()
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _restart(self):    # a SequentialLR inside a SequentialLR, at a milestone
        self.last_epoch = 0
        first = self._first()
        first._restart()
        self._last_lr = first.get_last_lr()

    def step(self):
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._restart()
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Combined):
    """Several schedulers stepped together: each ``step()`` steps each in turn, so the
    chainable ones multiply their changes (a warm-up factor on top of a decay, say).

    Example::

        sched = lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=2),
                                               lr_scheduler.ExponentialLR(opt, gamma=0.9)])
    """

    def __init__(self, schedulers, optimizer=None):
        schedulers = list(schedulers)
        if optimizer is None and schedulers:
            optimizer = getattr(schedulers[0], "optimizer", None)
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._record_rates()

    def _initial_step(self):    # inside a SequentialLR
        for scheduler in self._schedulers:
            scheduler._initial_step()
        self._record_rates()

    def _restart(self):
        for scheduler in self._schedulers:
            scheduler._restart()
        self._record_rates()

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._record_rates()
