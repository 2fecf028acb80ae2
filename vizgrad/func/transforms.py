"""The gradient transforms of :mod:`vizgrad.func`: ``grad``, ``grad_and_value``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``, as ``torch.func``'s.

Each runs the function on fresh differentiable copies of its inputs and calls
:func:`vizgrad.autograd.grad` on the result, so the function's ops record an ordinary graph.
Inside ``vmap`` the inputs are first lifted to every running vmap level
(:func:`~vizgrad.func.batched.lift`: each sample its own copy), and the backward pass of the
batch gives each sample's gradient. Transforms nest: an inner one records the graph of its
backward pass (``create_graph``) when an outer transform, or a tensor of the user's that
requires grad, needs to differentiate it.

Forward mode (``jvp``, ``jacfwd``) is reverse mode applied twice: with ``u`` a free cotangent,
``g(u) = Jᵀu`` is linear in ``u``, and the vector-Jacobian product of ``g`` with a tangent
``t`` is ``J t``. The values are exact, as forward mode's; the cost is two backward passes
and one forward pass rather than one forward pass carrying tangents.
"""

import functools

from .. import autograd
from ..autograd.grad_mode import enable_grad
from ..creation import ones_like, zeros_like
from ..errors import ArgumentError, TransformError
from ..ops import reduce
from ..tensor import Tensor
from ._pytree import spec_repr, tree_flatten, tree_map, tree_unflatten
from .batched import active_levels, levels_of, lift, physical, rewrap

_running = [0]    # how many gradient transforms are running (inner ones record their backward)


def _argnums(argnums, count, name):
    """``argnums`` as a tuple of non-negative positions, checked as PyTorch checks it."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        numbers = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) and not isinstance(n, bool) for n in argnums):
        if not argnums:
            raise TransformError(f"{name}: argnums must be non-empty")
        numbers = argnums
    else:
        raise TransformError(f"{name}: argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for number in numbers:
        if not -count <= number < count:
            raise TransformError(f"{name}: Got argnum={number}, but only {count} positional inputs")
    numbers = tuple(n % count for n in numbers)
    if len(set(numbers)) != len(numbers):
        raise TransformError(f"{name}: argnums elements must be unique, got {argnums}")
    return numbers


class _Inputs:
    """The differentiable copies of a transform's inputs (a list of pytrees).

    ``seen``: what the function is called with (batched at every running vmap level);
    ``leaves``: the plain tensors autograd differentiates with respect to; ``connected``: some
    input already requires grad (an outer transform's or the user's), so the copies stay
    connected to it and the backward pass must be recorded."""

    def __init__(self, trees, name):
        self.levels = active_levels()
        self.specs, self.leaves, self.seen, self.connected = [], [], [], False
        for tree in trees:
            tensors, spec = tree_flatten(tree)
            seen = []
            for tensor in tensors:
                if not isinstance(tensor, Tensor):
                    raise ArgumentError(f"{name}: Thing passed to transform API must be Tensor, got {type(tensor)}")
                plain = physical(lift(tensor, self.levels))
                if plain.requires_grad:
                    leaf = plain.view_as(plain)
                    self.connected = True
                else:
                    leaf = plain.detach().requires_grad_()
                self.leaves.append(leaf)
                seen.append(rewrap(leaf, self.levels))
            self.specs.append(spec)
            self.seen.append(tree_unflatten(seen, spec))
        self.record = _running[0] > 0 or self.connected

    def plain(self, tensor):
        """An output (or cotangent) as a plain tensor, batched at every level of the inputs."""
        return physical(lift(tensor, self.levels))

    def results(self, plains):
        """One pytree per input, of the gradients ``plains`` (one per leaf), batched as the inputs."""
        trees, start = [], 0
        for spec in self.specs:
            count = _leaf_count(spec)
            trees.append(tree_unflatten([rewrap(g, self.levels) for g in plains[start:start + count]], spec))
            start += count
        return trees


def _leaf_count(spec):
    return 1 if spec is None else sum(_leaf_count(child) for child in spec[2])


def _gradients(outputs, leaves, cotangents, record, retain=False):
    """d(Σ outputs·cotangents)/d(leaves), zeros for leaves the outputs do not depend on."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(leaf) for leaf in leaves]
    return list(autograd.grad([o for o, _ in pairs], leaves, grad_outputs=[c for _, c in pairs],
                              retain_graph=retain or record, create_graph=record, allow_unused=True,
                              materialize_grads=True))


def _detached(tree, record):
    return tree if record else tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) != 2:
        raise TransformError(f"{name}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


# --- grad, grad_and_value -----------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """``func``'s gradient with respect to the arguments at ``argnums``, and its value:
    ``grad_and_value(f)(x)`` is ``(df/dx, f(x))``; with ``has_aux=True`` ``func`` returns
    ``(output, aux)`` and this returns ``(gradient, (output, aux))``. ``func`` must return a
    scalar tensor. The gradient has the structure of the arguments (a tuple of them when
    ``argnums`` is a tuple; an argument may be a dict or tuple of tensors).

    Example::

        g, value = grad_and_value(lambda x: (x ** 2).sum())(vizgrad.tensor([1.0, 2.0]))
        g          # tensor([2., 4.])
    """
    return _grad_transform(func, argnums, has_aux, "grad_and_value", with_value=True)


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (a function returning a scalar tensor) with respect to its
    arguments at ``argnums``, as a function: ``grad(f)(x)`` is df/dx, in the structure of
    ``x``. ``has_aux=True``: ``func`` returns ``(output, aux)`` and this ``(gradient, aux)``.
    Composes with itself (``grad(grad(f))``) and with :func:`vmap` (per-sample gradients).

    Example::

        grad(lambda x: x.sin().sum())(x)            # x.cos()
        vmap(grad(loss), in_dims=(None, 0, 0))(params, inputs, targets)   # one gradient per sample
    """
    return _grad_transform(func, argnums, has_aux, "grad", with_value=False)


def _grad_transform(func, argnums, has_aux, name, with_value):
    @functools.wraps(func)
    def transformed(*args, **kwargs):
        numbers = _argnums(argnums, len(args), f"{name}(f)(*args)")
        inputs = _Inputs([args[n] for n in numbers], f"{name}(f)(*args)")
        call = list(args)
        for number, seen in zip(numbers, inputs.seen):
            call[number] = seen
        _running[0] += 1
        try:
            with enable_grad():
                output, aux = _split_aux(func(*call, **kwargs), has_aux, f"{name}(f)(*args)")
            if not isinstance(output, Tensor):
                raise TransformError(f"{name}(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.ndim != 0:
                raise TransformError(f"{name}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                     f"with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                     "instead?")
            plain = inputs.plain(output)
            gradients = _gradients([plain], inputs.leaves, [ones_like(plain)], inputs.record)
        finally:
            _running[0] -= 1
        trees = inputs.results(gradients)
        result = trees[0] if isinstance(argnums, int) else tuple(trees)
        output, aux = _detached(output, inputs.record), _detached(aux, inputs.record)
        if with_value:
            return result, ((output, aux) if has_aux else output)
        return (result, aux) if has_aux else result
    return transformed


# --- vjp ----------------------------------------------------------------------------------

def vjp(func, *primals, has_aux=False):
    """``func(*primals)`` and its vector-Jacobian product function: ``out, vjp_fn = vjp(f, x)``;
    ``vjp_fn(v)`` is ``vᵀ ∂f/∂x``, one entry per primal (always a tuple), for a cotangent
    ``v`` shaped as the output (pytrees of tensors both). ``vjp_fn`` can be called many times,
    and under :func:`vmap` (a batch of cotangents: the function then runs again on the batch).
    With ``has_aux=True`` ``func`` returns ``(output, aux)`` and this returns ``(out, vjp_fn, aux)``.

    Example::

        out, vjp_fn = vjp(vizgrad.sin, x)
        vjp_fn(vizgrad.ones_like(out))              # (x.cos(),)
    """
    inputs = _Inputs(primals, "vjp(f, *primals)")
    _running[0] += 1
    try:
        with enable_grad():
            output, aux = _split_aux(func(*inputs.seen), has_aux, "vjp(f, *primals)")
        outputs, output_spec = tree_flatten(output)
        for value in outputs:
            if not isinstance(value, Tensor):
                raise TransformError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                     f"unsupported type {type(value)}")
        plains = [inputs.plain(value) for value in outputs]
    finally:
        _running[0] -= 1

    def vjp_fn(cotangents):
        given, spec = tree_flatten(cotangents)
        if spec != output_spec:
            raise TransformError("vjp_fn: Expected pytree structure of cotangents to be the same as pytree structure "
                                 f"of outputs to the function. cotangents: {spec_repr(spec)}, primal output: "
                                 f"{spec_repr(output_spec)}")
        for position, (cotangent, value) in enumerate(zip(given, outputs)):
            if not isinstance(cotangent, Tensor):
                raise ArgumentError(f"vjp_fn: cotangents must be tensors, got {type(cotangent)} at {position}")
            if tuple(cotangent.shape) != tuple(value.shape):
                raise TransformError(f"vjp_fn: Mismatch in shape: grad_output[{position}] has a shape of "
                                     f"{tuple(cotangent.shape)} and output[{position}] has a shape of "
                                     f"{tuple(value.shape)}.")
        if any(level not in inputs.levels for cotangent in given for level in levels_of(cotangent)):
            return _vjp_again(func, primals, has_aux, given)    # a batch of cotangents: vmap(vjp_fn)
        plain_cotangents = [inputs.plain(c) for c in given]
        record = inputs.record or _running[0] > 0 or any(c.requires_grad for c in plain_cotangents)
        gradients = _gradients(plains, inputs.leaves, plain_cotangents, record, retain=True)
        return tuple(inputs.results(gradients))

    output = _detached(output, inputs.record)
    if has_aux:
        return output, vjp_fn, _detached(aux, inputs.record)
    return output, vjp_fn


def _vjp_again(func, primals, has_aux, cotangents):
    """vjp_fn under a vmap that started after vjp: the vector-Jacobian products of the batch
    of cotangents, as the gradient of Σ f(primals)·cotangent run once on the batch."""
    def weighted(*arguments):
        output = func(*arguments)
        outputs = tree_flatten(output[0] if has_aux else output)[0]
        total = None
        for value, cotangent in zip(outputs, cotangents):
            term = reduce.sum(value * cotangent)
            total = term if total is None else total + term
        return total
    return grad(weighted, argnums=tuple(range(len(primals))))(*primals)


# --- jvp ----------------------------------------------------------------------------------

def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``func(*primals)`` and its Jacobian-vector product with ``tangents``:
    ``out, jvp_out = jvp(f, (x,), (t,))`` where ``jvp_out`` is ``∂f/∂x · t``, shaped as the
    output. ``primals`` and ``tangents`` are tuples of the same structure. With
    ``has_aux=True``: ``(out, jvp_out, aux)``. Computed as two reverse passes (module docstring).

    Example::

        jvp(vizgrad.sin, (x,), (vizgrad.ones_like(x),))     # (x.sin(), x.cos())
    """
    if strict:
        raise TransformError("jvp(f, primals, tangents, strict=True): strict=True is not yet implemented")
    if not isinstance(primals, tuple):
        raise TransformError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                             "call f(*primals).")
    primal_leaves, primal_spec = tree_flatten(primals)
    tangent_leaves, tangent_spec = tree_flatten(tangents)
    if primal_spec != tangent_spec:
        raise TransformError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                             "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                             f"primals with structure {spec_repr(primal_spec)} and tangents with structure "
                             f"{spec_repr(tangent_spec)}")
    for primal, tangent in zip(primal_leaves, tangent_leaves):
        if isinstance(primal, Tensor) and isinstance(tangent, Tensor) and tuple(primal.shape) != tuple(tangent.shape):
            raise TransformError(f"jvp(f, primals, tangents): Trying to set a forward gradient that has a different "
                                 f"size than that of the original Tensor, this is not supported. Tensor is of size "
                                 f"{list(primal.shape)} while the given forward gradient is of size "
                                 f"{list(tangent.shape)}.")
        if not isinstance(tangent, Tensor):
            raise ArgumentError(f"jvp(f, primals, tangents): tangents must be Tensors, got {type(tangent)}")
    inputs = _Inputs(primals, "jvp(f, primals, tangents)")
    _running[0] += 1
    try:
        with enable_grad():
            output, aux = _split_aux(func(*inputs.seen), has_aux, "jvp(f, primals, tangents)")
            outputs, output_spec = tree_flatten(output)
            plains = [inputs.plain(value) for value in outputs]
            # Jᵀu is linear in u: its derivative is the same at any u; ones, as a backward may skip an all-zero one
            free = [ones_like(p).requires_grad_() if p.is_floating_point() else zeros_like(p) for p in plains]
            transposed = _gradients(plains, inputs.leaves, free, record=True)
            pairs = [(g, inputs.plain(t)) for g, t in zip(transposed, tangent_leaves) if g.requires_grad]
            record = inputs.record or _running[0] > 1
            products = [zeros_like(p) for p in plains]
            differentiable = [position for position, u in enumerate(free) if u.requires_grad]
            if pairs and differentiable:
                found = autograd.grad([g for g, _ in pairs], [free[i] for i in differentiable],
                                      grad_outputs=[t for _, t in pairs], create_graph=record, allow_unused=True,
                                      materialize_grads=True)
                for position, product in zip(differentiable, found):
                    products[position] = product
    finally:
        _running[0] -= 1
    products = tree_unflatten([rewrap(p, inputs.levels) for p in products], output_spec)
    output = _detached(output, inputs.record)
    if has_aux:
        return output, products, _detached(aux, inputs.record)
    return output, products
