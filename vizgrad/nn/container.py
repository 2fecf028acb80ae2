"""Containers: ``Sequential``, ``ModuleList`` and ``ModuleDict``.

Children are registered under their index ("0", "1", ...) or key, so parameters get
qualified names such as ``layers.0.weight``.
"""

import operator
from collections import OrderedDict

from ..errors import ArgumentError, IndexingError
from .module import Module


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
