"""The seam through which function transforms see every op application: ``vmap``'s batching
(:mod:`vizgrad.func.batched`) and forward AD's tangent propagation (:mod:`.forward_ad`).

While a transform is active, :meth:`Op.apply <vizgrad.autograd.function.Op.apply>` and
:meth:`Function.apply <vizgrad.autograd.function.Function.apply>` first offer the op to its
dispatcher, ``dispatcher(op, args, params)``, which returns the outputs or ``NotImplemented``
(none of the arguments is its kind of tensor: the op runs as usual). When no transform is
active the seam costs one check per op.
"""

from . import function

_dispatchers = []     # the active ones, in the order they were added


def add(dispatcher):
    _dispatchers.append(dispatcher)
    _install()


def remove(dispatcher):
    _dispatchers.remove(dispatcher)
    _install()


def _install():
    if not _dispatchers:
        function.transform = None
    elif len(_dispatchers) == 1:
        function.transform = _dispatchers[0]
    else:
        function.transform = _each


def _each(op, args, params):
    """The latest-added dispatcher that takes the op (the innermost transform first)."""
    for dispatcher in reversed(_dispatchers):
        out = dispatcher(op, args, params)
        if out is not NotImplemented:
            return out
    return NotImplemented
