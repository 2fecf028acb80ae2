"""Learning-rate schedules, with PyTorch's names and closed-form rules.

Each scheduler sets ``group["lr"]`` for every parameter group of its optimizer when
it is created (epoch 0) and at each ``step()``. ``get_last_lr()`` returns the rates
last set; ``state_dict()`` / ``load_state_dict()`` save and restore a schedule.

Example::

    opt = vizgrad.optim.SGD(model.parameters(), lr=0.1)
    sched = vizgrad.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...); sched.step()
"""

import math

from ..errors import ArgumentError, as_int, as_number, check_range, check_size


class LRScheduler:
    """Base class: subclasses define ``rate(base_lr, epoch)``."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def rate(self, base_lr, epoch):  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self):
        """Advance one epoch (or one batch, for per-batch schedules) and set the new rates."""
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.rate(base, self.last_epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        """Everything but the optimizer and functions (the schedule's numbers)."""
        return {key: value for key, value in self.__dict__.items()
                if key != "optimizer" and not callable(value)}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """lr = base_lr · f(epoch), with ``lr_lambda`` one function or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        count = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * count
        if len(self.lr_lambdas) != count:
            raise ArgumentError(f"LambdaLR: expected {count} lr_lambdas, got {len(self.lr_lambdas)}")
        self._group = 0
        super().__init__(optimizer, last_epoch)

    def step(self):
        self.last_epoch += 1
        for group, base, function in zip(self.optimizer.param_groups, self.base_lrs, self.lr_lambdas):
            group["lr"] = base * function(self.last_epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

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


class MultiStepLR(LRScheduler):
    """lr = base_lr · γ^(number of milestones ≤ epoch)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = sorted(as_int("MultiStepLR", "milestones", m) for m in milestones)
        self.gamma = as_number("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * self.gamma ** sum(1 for m in self.milestones if m <= epoch)


class ExponentialLR(LRScheduler):
    """lr = base_lr · γ^epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = as_number("ExponentialLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return base_lr * self.gamma ** epoch


class CosineAnnealingLR(LRScheduler):
    """lr = η_min + (base_lr - η_min)(1 + cos(π·epoch/T_max))/2 (SGDR without restarts)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = check_size("CosineAnnealingLR", "T_max", T_max, 1)
        self.eta_min = as_number("CosineAnnealingLR", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def rate(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2


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
            total_steps = epochs * steps_per_epoch
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
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


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
