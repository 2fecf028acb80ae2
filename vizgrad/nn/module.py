"""``Module`` and ``Parameter``: the building blocks of networks, as in PyTorch.

A Module owns parameters, buffers (running statistics) and child modules, found by
attribute assignment. Parameters learn their qualified name (``encoder.0.weight``)
when their module is attached to a parent; the event layer and the widgets show it.
"""

import itertools
from collections import OrderedDict, namedtuple

from ..autograd import observers
from ..autograd.grad_mode import state as _grad_state
from ..autograd.scopes import Scope
from ..autograd.hooks import add_hook
from ..device import as_device
from ..errors import DTypeError, VizgradError, format_shape, ArgumentError, ArgumentTypeError, StateDictError
from ..tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module's learnable weight: it requires grad and is listed by
    ``Module.parameters()``. ``name`` holds its qualified name once it belongs to a module.

    Example::

        self.scale = vizgrad.nn.Parameter(vizgrad.ones(3))
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from ..creation import zeros
        source = zeros(0) if data is None else data
        if not isinstance(source, Tensor):
            raise ArgumentTypeError(f"Parameter expects a Tensor, got {type(source).__name__}")
        param = Tensor._make(source._array)
        param.__class__ = cls
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        label = f" {self.name!r}" if self.name else ""
        return f"Parameter{label} containing:\n" + super().__repr__()


class UninitializedParameter(Parameter):
    """The parameter of a lazy module before its first forward: its shape is not known yet."""

    __slots__ = ()

    def __new__(cls, requires_grad=True):
        param = Parameter(None, requires_grad)
        param.__class__ = cls
        return param

    def _fail(self, *args, **kwargs):
        owner = self.name or "this parameter"
        raise VizgradError(f"{owner} belongs to a lazy module whose input size is inferred at the first "
                           "forward; run the module once on an input before using its parameters")

    shape = property(_fail)
    numel = _fail
    # every op reads a tensor's array: before the first forward there is none to read
    _array = property(_fail, lambda self, array: Tensor._array.__set__(self, array))
    __repr__ = lambda self: f"<UninitializedParameter {self.name or ''}>"  # noqa: E731


_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _state_dict_message(module, missing, unexpected, errors):
    """PyTorch's report of a state dict that does not fit: one line per kind of mismatch."""
    lines = [f"load_state_dict: Error(s) in loading state_dict for {type(module).__name__}:"]
    if missing:
        lines.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if unexpected:
        lines.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
    lines.extend(f"{error}." for error in errors)
    return "\n\t".join(lines)
_module_stack = []  # the scopes of the module calls running while an observer listens (for events)


class Module:
    """Base class of every layer and network.

    Subclasses create parameters and child modules in ``__init__`` (after
    ``super().__init__()``) and define ``forward``; calling the module runs the hooks
    around ``forward``.

    Example::

        class Net(vizgrad.nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = vizgrad.nn.Linear(2, 16)
                self.out = vizgrad.nn.Linear(16, 1)

            def forward(self, x):
                return self.out(self.hidden(x).relu())
    """

    _version = 1

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_qualified_name", "")
        object.__setattr__(self, "training", True)

    # --- registration --------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise VizgradError(f"cannot assign {name!r} before Module.__init__() was called: "
                               "call super().__init__() first in your module's __init__")
        if isinstance(value, Parameter):
            if name not in self._parameters:    # a re-assigned parameter keeps its place, as in PyTorch
                self._remove(name)
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if name not in self._modules:       # and so does a re-assigned submodule
                self._remove(name)
            self.add_module(name, value)
        elif name in self._parameters:
            if value is not None:
                raise ArgumentTypeError(f"cannot assign a {type(value).__name__} to parameter {name!r}: "
                                        "assign a vizgrad.nn.Parameter or None")
            self._parameters[name] = None
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise ArgumentTypeError(f"cannot assign a {type(value).__name__} to buffer {name!r}: assign a Tensor "
                                        "or None")
            self._buffers[name] = value
        elif name in self._modules:
            if value is not None:
                raise ArgumentTypeError(f"cannot assign a {type(value).__name__} to child module {name!r}")
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def __delattr__(self, name):
        if name in self.__dict__:               # a plain attribute (``_remove`` would pop it silently)
            object.__delattr__(self, name)
        elif not self._remove(name):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def _remove(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                return True
        self.__dict__.pop(name, None)
        return False

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter or None) under ``name``."""
        _check_name(self, name)
        if param is not None and not isinstance(param, Parameter):
            raise ArgumentTypeError(f"cannot register a {type(param).__name__} as parameter {name!r}: "
                                    "wrap it in vizgrad.nn.Parameter")
        self._parameters[name] = param
        if param is not None:
            param.name = _join(self._qualified_name, name)

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is part of the module's state but not learned (e.g. running means);
        ``persistent=False`` leaves it out of ``state_dict``."""
        _check_name(self, name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"buffer {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)
        if tensor is not None and tensor.name is None:
            tensor.name = _join(self._qualified_name, name)

    def add_module(self, name, module):
        """Add a child module; its parameters' names get this prefix."""
        _check_name(self, name)
        if module is not None and not isinstance(module, Module):
            raise ArgumentTypeError(f"{type(module).__name__} is not a Module")
        self._modules[name] = module
        if module is not None:
            module._rename(_join(self._qualified_name, name))

    register_module = add_module

    def _rename(self, qualified):
        previous = self._qualified_name
        object.__setattr__(self, "_qualified_name", qualified)
        for name, param in self._parameters.items():
            if param is not None:
                param.name = _join(qualified, name)
        for name, buffer in self._buffers.items():
            if buffer is not None and buffer.name == _join(previous, name):   # a name register_buffer gave it
                buffer.name = _join(qualified, name)
        for name, child in self._modules.items():
            if child is not None:
                child._rename(_join(qualified, name))

    # --- traversal -----------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(name, module)`` for this module and every descendant, depth first."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, _join(prefix, name), remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and child not in seen:
                seen.add(child)
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry, prefix, recurse, remove_duplicate=True):
        seen = set()
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield _join(module_prefix, name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(qualified name, parameter)`` pairs, each parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target):
        module = self
        for part in target.split(".") if target else ():
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no submodule {part!r} (looking for {target!r})")
            module = module._modules[part]
        return module

    # --- modes and conversions -----------------------------------------------
    def train(self, mode=True):
        """Training mode (dropout active, batch statistics used) for this module and its children."""
        if not isinstance(mode, bool):
            raise ArgumentError(f"{type(self).__name__}.train: training mode is expected to be a bool, got "
                                f"{type(mode).__name__} ({mode!r})")
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self):
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's gradient (to None, or to zeros)."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:                             # zeros even where the gradient is inf or nan
                param.grad = Tensor._make(param._backend().xp.zeros_like(param.grad._array))

    def apply(self, fn):
        """Call ``fn(module)`` on every descendant, then on this module (e.g. custom init)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, dtype=None, device=None):
        """Move parameters and buffers to a device and/or cast floating ones to a dtype, in place:
        the Parameter objects stay the same, so optimizers keep working (their state follows
        at the next step)."""
        from .. import dtypes
        for arg in args:
            if isinstance(arg, dtypes.dtype) or (isinstance(arg, str) and arg in dtypes._BY_NAME):
                dtype = arg
            else:
                device = arg
        target_device = None if device is None else as_device(device)
        target_dtype = None if dtype is None else dtypes.as_dtype(dtype)
        if target_dtype is not None and not target_dtype.is_floating_point:
            raise DTypeError(f"Module.to only casts to floating dtypes, got {target_dtype.name}")

        def convert(tensor):
            moved = tensor.detach().to(device=target_device)
            if target_dtype is not None and tensor.is_floating_point():
                moved = moved.to(target_dtype)
            return moved._array

        for module in self.modules():
            for param in module._parameters.values():
                if param is not None:
                    param._array = convert(param)
                    if param.grad is not None:
                        param.grad = Tensor._make(convert(param.grad))
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    buffer._array = convert(buffer)
        return self

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self):
        return self.to("float32")

    def double(self):
        return self.to("float64")

    def half(self):
        return self.to("float16")

    def bfloat16(self):
        return self.to("bfloat16")

    # --- state ---------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False, transform=None):
        """Parameters and persistent buffers by qualified name (detached unless ``keep_vars``).
        ``transform(name, tensor)`` may change each entry (e.g. store float16)."""
        state = OrderedDict() if destination is None else destination
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")):
            for name, param in module._parameters.items():
                if param is not None:
                    state[_join(module_prefix, name)] = param if keep_vars else param.detach()
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    state[_join(module_prefix, name)] = buffer if keep_vars else buffer.detach()
        if transform is not None:
            for key in list(state):
                state[key] = transform(key, state[key])
        return state

    def load_state_dict(self, state_dict, strict=True, transform=None):
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        With ``strict`` (the default), missing and unexpected keys raise an error that lists
        them; shape mismatches always raise, naming the key and both shapes. Returns the
        ``(missing_keys, unexpected_keys)``. ``transform(name, tensor)`` may change each entry
        first (e.g. cast float16 back to float32).
        """
        own = self.state_dict(keep_vars=True)
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        if strict and (missing or unexpected):
            raise StateDictError(_state_dict_message(self, missing, unexpected, []), missing, unexpected)
        errors = []
        updates = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if transform is not None:
                value = transform(key, value)
            if not isinstance(value, Tensor):
                errors.append(f"{key!r} is a {type(value).__name__}, not a Tensor")
                continue
            if isinstance(target, UninitializedParameter):
                errors.append(f"{key!r} belongs to a lazy module that has not run yet")
                continue
            if value.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {format_shape(value.shape)} "
                              f"from checkpoint, the shape in current model is {format_shape(target.shape)}")
                continue
            if value.is_floating_point() != target.is_floating_point():
                errors.append(f"{key!r} has dtype {value.dtype.name} in the state dict but "
                              f"{target.dtype.name} in the model")
                continue
            updates.append((target, value))
        if errors:
            raise StateDictError(_state_dict_message(self, missing if strict else [], unexpected if strict else [],
                                                     errors), missing, unexpected)
        for target, value in updates:
            converted = value.detach().to(device=target.device, dtype=target.dtype)
            target._array = converted._array.copy() if converted._array is value._array else converted._array
            target._bump_version()
        return _IncompatibleKeys(missing, unexpected)

    # --- calling and hooks ---------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        # the common case first: no hooks and nobody listening; the ops forward makes keep
        # this call's scope (autograd/scopes.py), so every graph can group them by module
        outer = _grad_state.scope
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or observers.active):
            _grad_state.scope = Scope(self, outer)
            try:
                return self.forward(*args, **kwargs)
            finally:
                _grad_state.scope = outer
        for hook in list(self._forward_pre_hooks.values()) if self._forward_pre_hooks else ():
            result = hook(self, args)
            if observers.active:
                observers.notify("hook_ran", "module", f"{self._qualified_name or type(self).__name__}: forward pre-hook")
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        observed = bool(observers.active)
        scope = _grad_state.scope = Scope(self, outer)
        if observed:
            _module_stack.append(scope)
            observers.module_entered(self, args)
        try:
            if self._backward_hooks:
                from .hooks import call_with_backward_hooks
                output = call_with_backward_hooks(self, args, kwargs)
            else:
                output = self.forward(*args, **kwargs)
        finally:
            _grad_state.scope = outer
            if observed:
                _module_stack.pop()
        if observed:
            observers.module_exited(self, args, output)
        for hook in list(self._forward_hooks.values()) if self._forward_hooks else ():
            result = hook(self, args, output)
            if observers.active:
                observers.notify("hook_ran", "module", f"{self._qualified_name or type(self).__name__}: forward hook")
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook):
        """``hook(module, args)`` runs before ``forward``; it may return replacement args."""
        return add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """``hook(module, args, output)`` runs after ``forward``; it may return a replacement output."""
        return add_hook(self._forward_hooks, hook)

    def register_full_backward_hook(self, hook):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to the
        module's inputs have been computed; it may return replacement ``grad_input``."""
        return add_hook(self._backward_hooks, hook)

    # --- printing ------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_repr}")
        if not lines:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(itertools.chain(super().__dir__(), self._parameters, self._buffers, self._modules)))


def current_module_path():
    """The dotted path, from the outermost module called, of the innermost module whose
    forward is running ('' outside any)."""
    scope = _grad_state.scope
    return scope.path if scope is not None else ""


def _join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


def _check_name(module, name):
    if not isinstance(name, str) or not name or "." in name:
        raise ArgumentError(f"{type(module).__name__}: names of parameters, buffers and modules must be non-empty "
                       f"strings without '.', got {name!r}")
