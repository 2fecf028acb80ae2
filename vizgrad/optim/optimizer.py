"""The optimizer base class: parameter groups, per-parameter state, hooks, state dicts.

Updates run on the parameters' arrays with in-place Array API operators, under no
recording, so a step costs what a hand-written NumPy update costs. State lives in
backend arrays keyed by parameter; when a parameter moves to another device or dtype
(``model.to(...)``), its state follows at the next step.
"""

import math
from collections import OrderedDict

import numpy as np

from ..autograd import observers
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.hooks import add_hook
from ..backends import backend_of
from ..backends.base import is_array
from ..errors import VizgradError, ArgumentError, ArgumentTypeError
from ..tensor import Tensor


class Optimizer:
    """Base class of optimizers.

    Subclasses define ``defaults`` (via ``__init__``) and ``update(param, grad, state, group)``
    which keeps its buffers in ``state`` and returns the step: the base class applies
    ``param ← param - step`` (and reports the step's norm to listeners).

    Args:
        params: an iterable of tensors, or of dicts ``{"params": [...], "lr": ...}``
            (parameter groups with their own hyperparameters).
        defaults: hyperparameters for groups that do not set them.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}
        self._scratch = {}  # (array type, shape, dtype, device) -> a buffer (see _scratch_like)
        self._step_pre_hooks = OrderedDict()
        self._step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise ArgumentTypeError(f"{type(self).__name__} expects an iterable of tensors (e.g. "
                                    "model.parameters()), not a single tensor: wrap it in a list")
        groups = list(params)
        if not groups:
            raise ArgumentError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group of parameters with its own hyperparameters (others from ``defaults``)."""
        if not isinstance(param_group, dict):
            raise ArgumentTypeError("a parameter group must be a dict with a 'params' entry")
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for position, param in enumerate(group["params"]):
            if not isinstance(param, Tensor):
                raise ArgumentTypeError(f"{type(self).__name__} can optimize only tensors; parameter {position} "
                                        f"of the group is a {type(param).__name__}")
            if not param.is_leaf:
                raise ArgumentError(f"{type(self).__name__} can optimize only leaf tensors; parameter "
                                    f"{position} is the result of {param.grad_fn.name()}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ArgumentError("some parameters appear in more than one parameter group")
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear the gradients of all optimized parameters (to None, or to zeros)."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    if set_to_none:
                        param.grad = None
                    else:
                        param.grad = Tensor._make(param._backend().xp.zeros_like(param.grad._array))
        if observers.active:
            observers.notify("zero_grad", self)

    def step(self, closure=None):
        """Update every parameter that has a gradient. ``closure`` re-evaluates the model and
        returns the loss (needed by some algorithms; allowed for all)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for hook in list(self._step_pre_hooks.values()):
            hook(self, (), {})
        # what each update did (norms), for listeners of optimizer_step that want them this step
        observed = bool(observers.active) and observers.wanted("optimizer_step")
        summaries = [] if observed and observers.wanted("optimizer_summaries") else None
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    grad = param.grad._array
                    if param.grad._array.shape != param._array.shape:
                        raise VizgradError(
                            f"{type(self).__name__}: the gradient of a parameter of shape {param.shape} "
                            f"has shape {param.grad.shape}")
                    state = self.state.get(param)
                    if state is None:
                        state = self.state[param] = {"step": 0}
                    else:
                        _follow_parameter(state, param._array)
                    state["step"] += 1
                    array = param._array
                    step = self.update(array, grad, state, group)
                    array -= step
                    param._bump_version()
                    if summaries is not None:
                        summaries.append(_summary(param, grad, step, state, group, len(summaries)))
        if observed:
            observers.notify("optimizer_step", self, summaries)
        for hook in list(self._step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def update(self, param, grad, state, group):  # pragma: no cover - abstract
        """The step to take, ``param ← param - step``, for one parameter's array and its
        gradient; ``state`` holds the parameter's buffers (``state["step"]`` counts from 1).
        It may return a buffer it keeps (see :meth:`_scratch_like`)."""
        raise NotImplementedError

    def _scratch_like(self, array):
        """A buffer of ``array``'s shape, dtype and device for an update's intermediate values,
        kept between steps (fresh parameter-sized temporaries every step cost page faults) and
        shared by all parameters of that layout. Its contents are whatever the last update
        left there."""
        key = (type(array), array.shape, array.dtype, str(getattr(array, "device", "")))
        buffer = self._scratch.get(key)
        if buffer is None:
            buffer = self._scratch[key] = backend_of(array).xp.zeros_like(array)
        return buffer

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before each step. Returns a removable handle."""
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after each step. Returns a removable handle."""
        return add_hook(self._step_post_hooks, hook)

    # --- state dicts ---------------------------------------------------------
    def state_dict(self):
        """Hyperparameters per group and per-parameter state, with parameters numbered in order.
        State arrays become tensors (so ``vizgrad.save`` can write them)."""
        index = {}
        groups = []
        for group in self.param_groups:
            numbers = []
            for param in group["params"]:
                index.setdefault(id(param), len(index))
                numbers.append(index[id(param)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": numbers})
        state = {}
        for group in self.param_groups:
            for param in group["params"]:
                if param in self.state:
                    state[index[id(param)]] = {k: (Tensor._make(_copied(v)) if is_array(v) else v)
                                               for k, v in self.state[param].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore what :meth:`state_dict` returned, onto the same parameters in the same order."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ArgumentError(f"the state dict has {len(groups)} parameter groups, this optimizer "
                                f"{len(self.param_groups)}")
        params = {}
        for position, (saved, group) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ArgumentError(f"parameter group {position}: the state dict has {len(saved['params'])} "
                                    f"parameters, this optimizer {len(group['params'])}")
            for number, param in zip(saved["params"], group["params"]):
                params[number] = param
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {}
        for number, entries in state_dict["state"].items():
            param = params[int(number)]
            state = {}
            for key, value in entries.items():
                if isinstance(value, Tensor):
                    value = _copied(value.to(device=param.device, dtype=param.dtype if value.is_floating_point()
                                             else value.dtype)._array)
                state[key] = value
            self.state[param] = state

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for position, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {position}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _copied(array):
    return backend_of(array).xp.asarray(array, copy=True)


def _norm(array):
    if type(array) is np.ndarray and (array.dtype == np.float32 or array.dtype == np.float64):
        flat = array.reshape(-1)          # the common case, without the namespace look-ups below
        squares = float(np.dot(flat, flat))
        if math.isfinite(squares) or not np.isfinite(flat).all():
            return math.sqrt(squares)
    xp = backend_of(array).xp
    vecdot = getattr(xp, "vecdot", None)
    if vecdot is not None and array.dtype in (xp.float32, xp.float64):
        # one dot product in the array's own precision (BLAS on NumPy): ~8x cheaper than
        # squaring a float64 copy, and every observed step pays this for every parameter
        flat = xp.reshape(array, (-1,))
        squares = float(vecdot(flat, flat))
        if math.isfinite(squares) or not bool(xp.all(xp.isfinite(flat))):
            return math.sqrt(squares)
        # float32 squares overflowed although every value is finite (NumPy warns): redo in float64
    return float(xp.sqrt(xp.sum(xp.astype(array, xp.float64) ** 2)))


def _summary(param, grad, step, state, group, position):
    """What one step did to ``param``: norms of its gradient, update (``step``, subtracted
    from it) and value, and of each state buffer (the event layer's ``optimizer_step``)."""
    update_norm = _norm(step)
    param_norm = _norm(param._array)
    return {"name": param.name or f"param{position}", "lr": float(group.get("lr", 0.0)),
            "grad_norm": _norm(grad), "update_norm": update_norm, "param_norm": param_norm,
            "update_ratio": update_norm / param_norm if param_norm else 0.0,
            "state": {key: (_norm(value) if is_array(value) else value) for key, value in state.items()}}


def _follow_parameter(state, param):
    """Move or cast state arrays that no longer match their parameter's device or dtype."""
    backend = backend_of(param)
    for key, value in state.items():
        if not is_array(value):
            continue
        if type(value) is not type(param):
            source = backend_of(value)
            value = backend.asarray(source.to_numpy(value), None, backend.device_index(param))
        if value.dtype != param.dtype:
            value = backend.xp.astype(value, param.dtype)
        state[key] = value
