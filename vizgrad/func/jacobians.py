"""``jacrev``, ``jacfwd`` and ``hessian``: whole Jacobians, one vmapped pass each.

``jacrev`` maps :func:`~vizgrad.func.vjp` over the rows of the identity (one cotangent per
output element), ``jacfwd`` maps :func:`~vizgrad.func.jvp` over its columns (one tangent per
input element); :func:`~vizgrad.func.vmap` runs each batch of them at once. A Jacobian of an
output of shape ``O`` with respect to an input of shape ``I`` has shape ``O + I``.
"""

import functools

from ..creation import eye
from ..errors import ArgumentError
from ..ops import shape
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten
from .transforms import _argnums, jvp, vjp
from .vmap import vmap


def _basis(tensors):
    """The identity over all the elements of ``tensors``, split into one batch of tensors
    shaped as each: row ``k`` is 1 at the k-th element overall."""
    total = sum(t.numel() for t in tensors)
    pieces, start = [], 0
    for t in tensors:
        identity = eye(total, dtype=t.dtype, device=t.device)
        block = shape.narrow(identity, 1, start, t.numel()) if t.numel() else identity[:, :0]
        pieces.append(shape.reshape(block, (total,) + tuple(t.shape)))
        start += t.numel()
    return pieces


def _rows(batched, tensors):
    """``batched`` (the basis dim first, over all elements of ``tensors``) split per tensor:
    one piece of shape ``(t.numel(), *rest)`` each."""
    pieces, start = [], 0
    for t in tensors:
        pieces.append(shape.narrow(batched, 0, start, t.numel()))
        start += t.numel()
    return pieces


def _shaped(block, output):
    """A block of Jacobian rows (one per element of ``output``) in the shape output + input."""
    return shape.reshape(block, tuple(output.shape) + tuple(block.shape[1:]))


def _differentiated(func, args, numbers):
    """``func`` as a function of the arguments at ``numbers`` only (the others fixed)."""
    def partial(*chosen):
        call = list(args)
        for number, value in zip(numbers, chosen):
            call[number] = value
        return func(*call)
    return partial


def _check_chunk_size(name, chunk_size):
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ArgumentError(f"{name}: `chunk_size` should be greater than 0.")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by reverse mode:
    one vector-Jacobian product per output element, all in one vmapped pass (``chunk_size``
    of them at a time if given). For an output of shape O and an input of shape I the
    Jacobian has shape O + I; outputs and inputs may be pytrees (the result nests the
    inputs' structure inside the outputs'; a tuple ``argnums`` gives a tuple per output).
    ``has_aux=True``: ``func`` returns ``(output, aux)`` and this returns ``(jacobian, aux)``.

    Example::

        jacrev(vizgrad.sin)(x)          # diag(x.cos())
    """
    _check_chunk_size("jacrev", chunk_size)

    @functools.wraps(func)
    def jacobian(*args, **kwargs):
        numbers = _argnums(argnums, len(args), "jacrev")
        partial = _differentiated(functools.partial(func, **kwargs), args, numbers)
        found = vjp(partial, *[args[n] for n in numbers], has_aux=has_aux)
        output, vjp_fn = found[0], found[1]
        outputs, output_spec = tree_flatten(output)
        basis = _basis(outputs)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, output_spec))   # one tree per argnum
        per_argnum = []     # per argnum: (blocks[input][output] of shape (o.numel(), *input shape), input spec)
        for tree in rows:
            inputs, input_spec = tree_flatten(tree)
            per_argnum.append(([_rows(i, outputs) for i in inputs], input_spec))
        result = []
        for position, o in enumerate(outputs):
            trees = tuple(tree_unflatten([_shaped(blocks[position], o) for blocks in per_input], spec)
                          for per_input, spec in per_argnum)
            result.append(trees[0] if isinstance(argnums, int) else trees)
        jacobians = tree_unflatten(result, output_spec)
        return (jacobians, found[2]) if has_aux else jacobians
    return jacobian


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by forward mode:
    one Jacobian-vector product per input element, all in one vmapped pass (``randomness`` is
    that vmap's). Same shapes and structures as :func:`jacrev`.

    Example::

        jacfwd(lambda x: x ** 2)(x)     # diag(2 x)
    """
    @functools.wraps(func)
    def jacobian(*args, **kwargs):
        numbers = _argnums(argnums, len(args), "jacfwd")
        partial = _differentiated(functools.partial(func, **kwargs), args, numbers)
        primals = tuple(args[n] for n in numbers)
        leaves, primal_spec = tree_flatten(primals)
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise ArgumentError(f"jacfwd: Thing passed to transform API must be Tensor, got {type(leaf)}")

        def push(*basis_leaves):
            found = jvp(partial, primals, tree_unflatten(list(basis_leaves), primal_spec), has_aux=has_aux)
            return (found[1], found[2]) if has_aux else found[1]

        found = vmap(push, randomness=randomness)(*_basis(leaves))
        columns, aux = (found[0], tree_flatten(found[1])) if has_aux else (found, None)
        outputs, output_spec = tree_flatten(columns)
        result = []
        for column in outputs:          # (inputs' elements, *output shape)
            sample = tuple(column.shape[1:])
            blocks = []
            for block, leaf in zip(_rows(column, leaves), leaves):
                blocks.append(shape.reshape(shape.movedim(block, 0, -1), sample + tuple(leaf.shape)))
            trees = tree_unflatten(blocks, primal_spec)
            result.append(trees[0] if isinstance(argnums, int) else trees)
        jacobians = tree_unflatten(result, output_spec)
        if has_aux:
            aux_leaves, aux_spec = aux
            return jacobians, tree_unflatten([a[0] if isinstance(a, Tensor) else a for a in aux_leaves], aux_spec)
        return jacobians
    return jacobian


def hessian(func, argnums=0):
    """The matrix of second derivatives of ``func`` (a scalar function) with respect to the
    arguments at ``argnums``: ``jacfwd(jacrev(func, argnums), argnums)``; for an input of
    shape I it has shape I + I.

    Example::

        hessian(lambda x: (x ** 3).sum())(x)     # diag(6 x)
    """
    return jacfwd(jacrev(func, argnums), argnums)

