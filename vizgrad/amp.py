"""Automatic mixed precision, as ``torch.amp``: :class:`autocast` and :class:`GradScaler`.

Inside ``autocast(device_type, dtype=...)`` the ops of PyTorch's lower-precision list
(matmul, mm, bmm, addmm, linear, the convolutions and transposed convolutions) cast their
floating inputs (float32, and float16 or bfloat16 when they are not ``dtype``) to ``dtype``
and compute in it; the ops of its float32 list that vizgrad has as ops of their own (the
losses ``mse_loss``, ``huber_loss``, ``smooth_l1_loss``, ``nll_loss`` (so ``cross_entropy``'s
last step), ``binary_cross_entropy`` (with logits), ``soft_margin_loss``, ``ctc_loss``, and
``prod`` and ``inverse``) cast half and bfloat16 inputs up to float32. The casts are ordinary
differentiable ``to`` nodes, so float32 weights get float32 gradients, and the graph shows
them. float64 tensors are left alone, as PyTorch leaves them.

As in PyTorch, CPU autocast computes in bfloat16 unless told otherwise
(``get_autocast_dtype("cpu")`` is ``vizgrad.bfloat16``) and also takes float16; another dtype
warns and disables the region. ``autocast("cuda")`` on a machine without a GPU warns and
disables itself, as PyTorch does.

Example::

    with vizgrad.autocast("cpu"):
        y = model(x)              # y.dtype is bfloat16: its linear layers ran in bfloat16
    loss = y.float().pow(2).mean()
"""

import functools
import sys
import types
import warnings

from . import cuda, dtypes
from .autograd import transform_hooks
from .errors import ArgumentError, ArgumentTypeError
from .ops.activation import Linear
from .ops.classification import BinaryCrossEntropy, BinaryCrossEntropyWithLogits, NllLoss
from .ops.conv import Conv, ConvTranspose
from .ops.ctc import CtcLoss
from .ops.linalg import Inverse, MatMul
from .ops.loss import Huber, MseLoss, SmoothL1
from .ops.margin import SoftMarginLoss
from .ops.reduce import Prod
from .tensor import Tensor

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype"]

LOWER_PRECISION_OPS = (MatMul, Linear, Conv, ConvTranspose)
FLOAT32_OPS = (MseLoss, Huber, SmoothL1, NllLoss, BinaryCrossEntropy, BinaryCrossEntropyWithLogits,
               SoftMarginLoss, CtcLoss, Prod, Inverse)

_DEFAULT_DTYPE = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
_SUPPORTED = {"cpu": (dtypes.bfloat16, dtypes.float16), "cuda": (dtypes.float16,)}
_ELIGIBLE = (dtypes.float16, dtypes.bfloat16, dtypes.float32)     # what autocast casts: floating, not float64
_regions = {"cpu": [], "cuda": []}      # per device type: the dtype of each enclosing region (None: disabled)


def _current(device_type):
    regions = _regions[device_type]
    return regions[-1] if regions else None


def is_autocast_enabled(device_type="cuda"):
    """Whether ops on ``device_type`` run under an enabled :class:`autocast` now."""
    return _current(_device_type("is_autocast_enabled", device_type)) is not None


def get_autocast_dtype(device_type):
    """The dtype autocast computes in on ``device_type`` (that of the innermost region, else the default)."""
    device_type = _device_type("get_autocast_dtype", device_type)
    current = _current(device_type)
    return _DEFAULT_DTYPE[device_type] if current is None else current


def will_cast(*tensors):
    """Whether an enabled autocast region on their device brings ``tensors`` (an op's inputs;
    None for an absent bias) to one dtype: the dtype checks of linear and the convolutions then
    leave it to autocast, as PyTorch casts before it checks."""
    tensors = [tensor for tensor in tensors if tensor is not None]
    device_type = tensors[0].device.type
    return (device_type in _regions and _current(device_type) is not None
            and all(tensor.dtype in _ELIGIBLE for tensor in tensors))


def _device_type(op, device_type):
    if not isinstance(device_type, str):
        raise ArgumentTypeError(f"{op}: expected `device_type` of type `str`, got: `{type(device_type).__name__}`")
    if device_type not in _regions:
        raise ArgumentError(f"{op}: User specified an unsupported autocast device_type {device_type!r}; vizgrad "
                            "autocasts on 'cpu' and 'cuda'")
    return device_type


def _cast(args, target, device_type, eligible):
    """``args`` with each ``eligible`` floating tensor on ``device_type`` cast to ``target``
    (None when nothing needs a cast)."""
    changed = False
    cast = list(args)
    for position, arg in enumerate(args):
        if isinstance(arg, Tensor) and arg.dtype in eligible and arg.dtype is not target \
                and arg.device.type == device_type:
            cast[position] = arg.to(target)
            changed = True
    return cast if changed else None


def _dispatch(op, args, params):
    """The transform seam's dispatcher: the op with its inputs cast, or NotImplemented."""
    if issubclass(op, LOWER_PRECISION_OPS):
        policy = "lower"
    elif issubclass(op, FLOAT32_OPS):
        policy = "float32"
    else:
        return NotImplemented
    device_type = next((arg.device.type for arg in args if isinstance(arg, Tensor)), None)
    target = _current(device_type) if device_type in _regions else None
    if target is None:
        return NotImplemented
    cast = _cast(args, target if policy == "lower" else dtypes.float32, device_type, _ELIGIBLE)
    if cast is None:
        return NotImplemented
    return op.apply(*cast, **params)       # the cast inputs need no cast: the op runs as usual


class autocast:  # noqa: N801  (PyTorch's name)
    """A region (``with``) or a function (decorator) whose ops on ``device_type`` run in mixed
    precision: see the module docstring. ``enabled=False`` turns autocast off inside an
    enclosing region; ``cache_enabled`` is accepted and changes nothing (casts are not cached).

    Example::

        @vizgrad.autocast("cpu")
        def forward(x):
            return model(x)
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _device_type("autocast", device_type)
        self.fast_dtype = _DEFAULT_DTYPE[self.device] if dtype is None else dtypes.as_dtype(dtype)
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if self.device == "cuda" and not cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          UserWarning, stacklevel=2)
            self._enabled = False
        elif self.fast_dtype not in _SUPPORTED[self.device]:
            message = ("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                       "CPU Autocast only supports dtypes of vizgrad.bfloat16, vizgrad.float16 currently."
                       if self.device == "cpu" else
                       f"In CUDA autocast, but the target dtype {self.fast_dtype.name} is not supported. "
                       "Disabling autocast.")
            warnings.warn(message, UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        regions = _regions[self.device]
        regions.append(self.fast_dtype if self._enabled else None)
        if sum(len(stack) for stack in _regions.values()) == 1:
            transform_hooks.add(_dispatch)
        return self

    def __exit__(self, *exc):
        _regions[self.device].pop()
        if not any(_regions.values()):
            transform_hooks.remove(_dispatch)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype if self._enabled else None, self._enabled):
                return function(*args, **kwargs)
        return wrapper



# --- gradient scaling ------------------------------------------------------------------

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Loss scaling for half-precision gradients, as ``torch.amp.GradScaler``: ``scale(loss)``
    multiplies the loss by the scale, ``step(optimizer)`` divides the gradients by it
    (:meth:`unscale_`) and steps unless one of them is inf/NaN, ``update()`` halves the scale
    after such a step (``backoff_factor``) and doubles it after ``growth_interval`` good ones.

    ``device="cuda"`` (the default, and ``vizgrad.cuda.amp.GradScaler``) on a machine without a
    GPU warns and disables itself, as PyTorch does: ``scale`` returns the loss unchanged and
    ``step`` is ``optimizer.step()``.

    Example::

        scaler = vizgrad.amp.GradScaler("cpu")
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._device == "cuda" and self._enabled and not cuda.is_available():
            warnings.warn("vizgrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ArgumentError(f"GradScaler: The growth factor must be > 1.0, got {growth_factor}")
            if not backoff_factor < 1.0:
                raise ArgumentError(f"GradScaler: The backoff factor must be < 1.0, got {backoff_factor}")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._scale = None              # a float32 0-d tensor, made by the first scale()
        self._growth_tracker = 0        # good steps since the scale last changed
        self._per_optimizer = {}        # id(optimizer) -> {"stage", "found_inf"}

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            from .creation import full
            self._scale = full((), self._init_scale, dtype=dtypes.float32)
        if isinstance(outputs, Tensor):
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(output) for output in outputs)
        raise ArgumentTypeError(f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, got "
                                f"{type(outputs).__name__}")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer):
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place, and note
        whether any is inf/NaN. Called by :meth:`step` unless called before it."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise ArgumentError("GradScaler.unscale_: unscale_() has already been called on this optimizer "
                                "since the last update().")
        if state["stage"] == _STEPPED:
            raise ArgumentError("GradScaler.unscale_: unscale_() is being called after step().")
        if self._scale is None:
            raise ArgumentError("GradScaler.unscale_: Attempted unscale_ but _scale is None.  This may indicate "
                                "your script did not use scaler.scale(loss or outputs) earlier in the iteration.")
        from .autograd.grad_mode import no_grad
        inverse = 1.0 / float(self._scale.item())       # the reciprocal in double, as PyTorch
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if param.grad.dtype is dtypes.float16:
                        raise ArgumentError("GradScaler.unscale_: Attempting to unscale FP16 gradients.")
                    param.grad.mul_(dtypes.float32.numpy.type(inverse).item())
                    found_inf = found_inf or not param.grad.isfinite().all().item()
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, skipped (None returned)
        when one of them is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise ArgumentError("GradScaler.step: Closure use is not currently supported if GradScaler is "
                                "enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise ArgumentError("GradScaler.step: step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Set the scale for the next iteration: ``new_scale`` (a number or a 1-element tensor)
        or, from the steps since the last update, ×backoff_factor after an inf/NaN, else
        ×growth_factor once ``growth_interval`` steps in a row were good."""
        if not self._enabled:
            return
        if self._scale is None:
            raise ArgumentError("GradScaler.update: Attempted update but _scale is None.  This may indicate your "
                                "script did not use scaler.scale(loss or outputs) earlier in the iteration.")
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else float(new_scale)
            self._scale.fill_(value)
        else:
            found = [state["found_inf"] for state in self._per_optimizer.values() if state["found_inf"] is not None]
            if not found:
                raise ArgumentError("GradScaler.update: No inf checks were recorded prior to update.")
            if any(found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    def get_scale(self):
        """The scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def state_dict(self):
        """The scale and its growth settings, as PyTorch's keys (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise ArgumentError("GradScaler.load_state_dict: The source state dict is empty, possibly because it "
                                "was saved from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


# --- vizgrad.cuda.amp, PyTorch's older spelling of the CUDA ones --------------------------

class _CudaAutocast(autocast):
    """``vizgrad.cuda.amp.autocast(enabled=True, dtype=float16)``: ``autocast("cuda", ...)``."""

    def __init__(self, enabled=True, dtype=dtypes.float16, cache_enabled=True):
        super().__init__("cuda", dtype, enabled, cache_enabled)


class _CudaGradScaler(GradScaler):
    """``vizgrad.cuda.amp.GradScaler(...)``: ``GradScaler("cuda", ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


cuda_amp = types.ModuleType("vizgrad.cuda.amp", "torch.cuda.amp's names: autocast and GradScaler on CUDA.")
cuda_amp.autocast, cuda_amp.GradScaler = _CudaAutocast, _CudaGradScaler
_CudaAutocast.__name__ = "autocast"
_CudaGradScaler.__name__ = "GradScaler"
cuda.amp = sys.modules["vizgrad.cuda.amp"] = cuda_amp      # `from vizgrad.cuda.amp import GradScaler` works
