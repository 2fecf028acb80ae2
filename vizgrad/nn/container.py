"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList`` and ``ParameterDict``.

Children (and the parameters of the parameter containers) are registered under their index
("0", "1", ...) or key, so parameters get qualified names such as ``layers.0.weight`` or
``scales.0``.
"""

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..errors import ArgumentError, ArgumentTypeError, IndexingError, VizgradError
from ..tensor import Tensor
from .module import Module, Parameter


def _index(container, idx):
    """``idx`` as a non-negative position in ``container``, or an IndexError."""
    idx = operator.index(idx)
    size = len(container)
    if not -size <= idx < size:
        raise IndexingError(f"index {idx} is out of range for {type(container).__name__} of length {size}")
    return idx % size


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: children named by position, renumbered after
    deletions and insertions."""

    def _renumber(self, modules):
        self._modules.clear()
        for position, module in enumerate(modules):
            self.add_module(str(position), module)

    def __delitem__(self, idx):
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_index(self, idx)]
        self._renumber(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def _insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)

    def pop(self, key):
        module = self[key]
        del self[key]
        return module


class Sequential(_ModuleSequence):
    """Modules applied one after the other: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    Takes modules, or one OrderedDict of named modules. Supports ``len``, indexing
    (``model[0]``, ``model[-1]``), slicing (a new Sequential), iteration, ``append``,
    ``extend``, ``insert`` and ``del``.

    Example::

        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        model[0]                 # Linear(in_features=2, out_features=16, bias=True)
        model(vizgrad.randn(5, 2)).shape   # (5, 2)
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for position, module in enumerate(args):
                self.add_module(str(position), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):          # a plain Sequential: subclasses (MLP) take other arguments
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(self, idx)]

    def __setitem__(self, idx, module):
        name = list(self._modules)[_index(self, idx)]
        self.add_module(name, module)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ArgumentError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def insert(self, index, module):
        """Put ``module`` before position ``index`` (which may equal the length)."""
        if not -len(self) <= index <= len(self):
            raise IndexingError(f"Index out of range: {index}")
        self._insert(index, module)
        return self

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters belong to the owner (a plain list would hide them).

    Example::

        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        for layer in self.layers:
            x = layer(x).relu()
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(self, idx))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(self, idx)), module)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def insert(self, index, module):
        self._insert(index, module)


class ModuleDict(Module):
    """A dict of modules whose parameters belong to the owner; keeps insertion order.

    Example::

        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "box": nn.Linear(8, 4)})
        self.heads["cls"](x)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add the (key, module) pairs of a mapping or an iterable of pairs."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module


def _as_parameter(value):
    """A plain tensor becomes a Parameter (as PyTorch); Parameters, modules and other objects
    are kept as they are."""
    return Parameter(value) if isinstance(value, Tensor) and not isinstance(value, Parameter) else value


def _describe_entry(key, value, tensor_type):
    """One line of a parameter container's repr, as PyTorch prints it."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(n) for n in value.shape)
    device = value.device
    where = "" if device.type == "cpu" else f" (GPU {device.index or 0})" if device.type == "cuda" else f" ({device})"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{tensor_type(value)} of size {size}{where}]"


class ParameterList(Module):
    """A list of parameters that belong to the owner (a plain list would hide them from
    ``parameters()``, ``state_dict`` and optimizers). Plain tensors are wrapped in Parameters;
    entries are named "0", "1", ...

    Example::

        self.scales = nn.ParameterList(nn.Parameter(vizgrad.ones(4)) for _ in range(3))
        for scale in self.scales:
            x = x * scale
    """

    def __init__(self, values=None):
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(self, idx)))

    def __setitem__(self, idx, param):
        setattr(self, str(_index(self, idx)), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        """Add ``value`` (a Parameter, or a tensor made one) at the end; returns self."""
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append each of ``values``; returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise ArgumentTypeError(f"ParameterList.extend should be called with an iterable, but got "
                                    f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_describe_entry(i, value, lambda t: repr(t.dtype)) for i, value in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise VizgradError("ParameterList should not be called: it holds parameters, it computes nothing")


class ParameterDict(Module):
    """An ordered dict of parameters that belong to the owner, by string key. Plain tensors
    are wrapped in Parameters. Built from an OrderedDict (or another ParameterDict) it keeps
    that order; from a plain mapping, the keys are sorted (as PyTorch); from pairs, their order.

    Example::

        self.heads = nn.ParameterDict({"scale": nn.Parameter(vizgrad.ones(4)), "shift": vizgrad.zeros(4)})
        x * self.heads["scale"] + self.heads["shift"]
    """

    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", {})    # insertion order (values unused)
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _checked(key):
        if not isinstance(key, str):
            raise ArgumentTypeError(f"ParameterDict: keys must be strings, got {type(key).__name__} ({key!r})")
        return key

    def __getitem__(self, key):
        return getattr(self, self._checked(key))

    def __setitem__(self, key, value):
        self._keys[self._checked(key)] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

    def copy(self):
        """A new ParameterDict holding the same Parameter objects."""
        return ParameterDict(OrderedDict((key, self[key]) for key in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the last inserted (key, value)."""
        key = next(reversed(self))
        return key, self.pop(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with ``keys``, each holding ``default``."""
        return ParameterDict((key, default) for key in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((key, self[key]) for key in self._keys)

    def values(self):
        return (self[key] for key in self._keys)

    def update(self, parameters):
        """Add the (key, value) pairs of a mapping or an iterable of pairs; a plain mapping is
        added in the sorted order of its keys."""
        if not isinstance(parameters, Iterable):
            raise ArgumentTypeError("ParameterDict.update should be called with an iterable of key/value pairs, "
                                    f"but got {type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for position, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise ArgumentTypeError(f"ParameterDict update sequence element #{position} should be an "
                                            f"iterable (key, value) pair, got {type(pair).__name__}")
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ArgumentError(f"ParameterDict update sequence element #{position} has length "
                                        f"{len(pair)}; 2 is required")
                pairs.append(pair)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(_describe_entry(key, value, lambda t: t.type()) for key, value in self.items())

    def __call__(self, *args, **kwargs):
        raise VizgradError("ParameterDict should not be called: it holds parameters, it computes nothing")
