"""Batched tensors: what the function ``vmap`` transforms sees.

A :class:`BatchedTensor` stands for one sample of a batch: its ``shape`` is the shape of a
sample (the *logical* shape), while it holds the whole batch as ``_value``, a tensor whose
dim 0 is the batch dim of its :class:`Level`. An op applied to batched tensors runs once on
the whole batch: :meth:`Op.apply <vizgrad.autograd.function.Op.apply>` hands it to
:func:`dispatch` (through :mod:`vizgrad.autograd.transform_hooks`), which finds the op's
batching rule (:mod:`vizgrad.func.rules`): the rule
moves the batch dims into place, shifts ``dim`` arguments past the batch dim, applies the op
to the values and wraps the result at the same level.

Nested ``vmap`` calls make nested levels: a tensor batched at levels 1 and 2 is
``BatchedTensor(level 2, value=BatchedTensor(level 1, value=plain))`` and its plain tensor
holds the batch dims in level order, ``(B1, B2, *sample)``. A rule at level 2 applies its op to
values that may still be batched at level 1; that application dispatches again, at level 1.

Autograd runs on the plain tensors underneath (:func:`physical`): gradients of a batch are
computed in one backward pass. The gradient transforms (:mod:`vizgrad.func.transforms`) lift
their inputs to every active level (:func:`lift`), so that each sample has its own copy and
the backward pass of the batch gives each sample's gradient.
"""

import warnings

from .. import creation
from ..autograd import transform_hooks
from ..errors import TransformError, check_dim
from ..tensor import Tensor

_new = object.__new__
_levels = []        # the active vmap levels, outermost first


class Level:
    """One running ``vmap``: its batch size and randomness mode; ``depth`` orders nested ones."""

    __slots__ = ("depth", "size", "randomness")

    def __init__(self, depth, size, randomness):
        self.depth, self.size, self.randomness = depth, size, randomness

    def __repr__(self):
        return f"Level(depth={self.depth}, size={self.size})"


#: vmap's refusal of a random draw in its "error" randomness mode (PyTorch's words).
RANDOM_IN_ERROR_MODE = ("vmap: called random operation while in randomness error mode. Please either use the "
                        "'same' or 'different' randomness flags on vmap or perform the randomness operation out of vmap")


def push_level(size, randomness):
    level = Level(len(_levels) + 1, size, randomness)
    _levels.append(level)
    if len(_levels) == 1:
        transform_hooks.add(dispatch)
        creation.vmap_random = random_draws
    return level


def pop_level(level):
    _levels.remove(level)
    if not _levels:
        transform_hooks.remove(dispatch)
        creation.vmap_random = None


def random_draws(name):
    """What a random creation function (``rand``, ``randn``, ``randint``, ``randperm``) does
    inside vmap, as PyTorch's: refuse under a level in "error" mode; draw once for every sample
    under "same"; under "different", one draw per sample. Returns None (draw as usual) or
    ``(batch sizes, rewrap)``: draw with the levels' sizes first, then ``rewrap`` the result."""
    levels = [level for level in _levels if level.randomness != "same"]
    if any(level.randomness == "error" for level in levels):
        raise TransformError(RANDOM_IN_ERROR_MODE.replace("vmap:", f"vmap: {name}:", 1))
    if not levels:
        return None

    def rewrap(tensor):
        for level in levels:          # outermost first: each takes its batch dim off the front
            tensor = wrap(tensor, level)
        return tensor
    return tuple(level.size for level in levels), rewrap


def active_levels():
    return tuple(_levels)


def _item_error(what):
    return TransformError(
        f"vmap: It looks like you're calling {what} on a Tensor. We don't support vmap over calling "
        f"{what} on a Tensor, please try to rewrite what you're doing with other operations (a value "
        "that depends on the sample cannot steer Python code under vmap)")


class BatchedTensor(Tensor):
    """One sample of a batch, as ``vmap``'s function sees it (see the module docstring).

    ``shape``, ``ndim``, ``size()`` and ``len()`` describe one sample; ops batch through their
    rules. Reading values into Python (``item``, ``tolist``, ``bool``, ``numpy``) is refused, as
    in PyTorch: the batch has one value per sample."""

    __slots__ = ("_value", "_level")

    def __init__(self, *args, **kwargs):
        raise TransformError("BatchedTensor is made by vizgrad.func.vmap, not directly")

    # what the plain-tensor code reads
    @property
    def _array(self):
        return physical(self)._array

    @_array.setter
    def _array(self, value):
        raise TransformError("vmap: in-place operations on a batched tensor are not supported; write the "
                             "function out of place (y = x + 1 rather than x += 1)")

    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        raise TransformError("vmap: requires_grad cannot be set on a batched tensor: differentiate with "
                             "vizgrad.func.grad or vjp inside the vmapped function")

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def grad(self):
        return None

    @property
    def _output_nr(self):
        return self._value._output_nr

    @property
    def shape(self):
        return self._value.shape[1:]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[check_dim("size", dim, self.ndim)]

    @property
    def ndim(self):
        return self._value.ndim - 1

    def dim(self):
        return self._value.ndim - 1

    ndimension = dim

    def numel(self):
        count = 1
        for n in self.shape:
            count *= n
        return count

    nelement = numel

    def __len__(self):
        if self.ndim == 0:
            raise TransformError("len() of a 0-d tensor")
        return self.shape[0]

    def detach(self):
        return wrap(self._value.detach(), self._level)

    def item(self):
        raise _item_error(".item()")

    def tolist(self):
        raise _item_error(".tolist()")

    def numpy(self):
        raise _item_error(".numpy()")

    def __bool__(self):
        raise _item_error("bool()")

    def __float__(self):
        raise _item_error("float()")

    def __int__(self):
        raise _item_error("int()")

    def __index__(self):
        raise _item_error("an index conversion")

    def __array__(self, dtype=None, copy=None):
        raise _item_error("a conversion to a NumPy array")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise TransformError("vmap: backward() of a batched tensor is not supported: use vizgrad.func.grad "
                             "or vizgrad.func.vjp inside the vmapped function")

    def requires_grad_(self, requires_grad=True):
        raise TransformError("vmap: requires_grad_() cannot be called on a batched tensor: differentiate "
                             "with vizgrad.func.grad or vjp inside the vmapped function")

    def __getitem__(self, key):
        from ..ops.index import getitem
        from .rules import per_sample  # lazy: func.rules builds on BatchedTensor
        items = key if type(key) is tuple else (key,)
        if any(type(item) is BatchedTensor for item in items):   # an index that differs per sample
            return per_sample(lambda sample, *indices: getitem(sample, _rebuilt_key(items, indices)),
                              self, *[item for item in items if type(item) is BatchedTensor],
                              name="indexing with a batched index")
        return getitem(self, key)

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level.depth}, bdim=0, value=\n    {self._value!r}\n)"

    def __deepcopy__(self, memo):
        raise TransformError("vmap: a batched tensor cannot be deep-copied")


def _rebuilt_key(items, indices):
    indices = iter(indices)
    return tuple(next(indices) if type(item) is BatchedTensor else item for item in items)


def wrap(value, level):
    """``value`` (its dim 0 the batch dim of ``level``) as a BatchedTensor at ``level``."""
    tensor = _new(BatchedTensor)
    tensor._value = value
    tensor._level = level
    return tensor


def value_at(tensor, level):
    """``tensor``'s value at ``level`` (batch dim first), or None when it is not batched there."""
    if type(tensor) is BatchedTensor and tensor._level is level:
        return tensor._value
    return None


def physical(tensor):
    """The plain tensor underneath every level: the batch dims first, in level order."""
    while type(tensor) is BatchedTensor:
        tensor = tensor._value
    return tensor


def levels_of(tensor):
    """The levels ``tensor`` is batched at, outermost first."""
    levels = []
    while type(tensor) is BatchedTensor:
        levels.append(tensor._level)
        tensor = tensor._value
    return levels[::-1]


def lift(tensor, levels):
    """``tensor`` batched at each of ``levels`` (outermost first): at the levels it is not
    batched at, each sample gets the same values (a broadcast, read-only)."""
    if not levels:
        return tensor
    *outer, inner = levels
    if type(tensor) is BatchedTensor and tensor._level is inner:
        return wrap(lift(tensor._value, outer), inner)
    below = lift(tensor, outer)
    return wrap(broadcast_batch(below, inner.size), inner)


def broadcast_batch(tensor, size):
    """``tensor`` with a new dim 0 of ``size`` (each entry the same values): an expand."""
    from ..ops.shape import expand, unsqueeze
    return expand(unsqueeze(tensor, 0), (size,) + tuple(tensor.shape))


def rewrap(plain, levels):
    """A plain tensor with the batch dims of ``levels`` first, as a BatchedTensor at each."""
    for level in levels:
        plain = wrap(plain, level)
    return plain


def dispatch(op, args, params):
    """Apply ``op`` through its batching rule at the innermost level among ``args``;
    NotImplemented when no argument is batched (the op runs as usual)."""
    level = None
    for arg in (*args, *params.values()):
        if type(arg) is BatchedTensor and (level is None or arg._level.depth > level.depth):
            level = arg._level
    if level is None:
        return NotImplemented
    from .rules import fallback, rule_for  # lazy: func.rules builds on BatchedTensor
    if any(type(value) is BatchedTensor for value in params.values()):   # the rules batch positional arguments
        return fallback(op, level, args, params)
    return rule_for(op)(op, level, args, params)


def warn_per_sample(name):
    """Warn once per op (or what else) that runs once per sample: vmap's slow path."""
    warnings.warn(f"vmap: there is no batching rule for {name}, so it runs once per sample (a Python loop "
                  "over the batch) and the results are stacked: correct, but slower. "
                  "vizgrad.func.rules lists the ops that batch.", PerSampleWarning, stacklevel=4)


class PerSampleWarning(UserWarning):
    """An op ran once per sample under ``vmap`` (no batching rule): PyTorch's performance warning."""
