"""``vmap``: a function of one sample, run on a whole batch at once."""

import functools

from ..errors import ArgumentError, TransformError
from ..ops import joins, shape
from ..tensor import Tensor
from ._pytree import broadcast_prefix, spec_repr, tree_flatten, tree_unflatten
from .batched import broadcast_batch, pop_level, push_level, value_at, wrap

RANDOMNESS = ("error", "different", "same")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` of one sample made a function of a batch: ``vmap(f)(x)`` is
    ``stack([f(x[0]), f(x[1]), ...])``, computed by running ``f`` once on the whole batch.

    Args:
        func: a function of tensors (pytrees of them: tuples, lists, dicts) returning tensors.
        in_dims: the batch dim of each input: an int for all, or a tuple with one entry per
            positional argument (an int, None for an argument shared by every sample, or a
            nested structure matching that argument). Keyword arguments are shared.
        out_dims: where the batch dim goes in each output (an int, or one per output); None
            for an output that does not depend on the sample.
        randomness: what random draws inside do (dropout, ``rand``, ``randn``, ``randint``,
            ``randperm``, ``rand_like``, ...): "error" (refuse, the default), "different" (each
            sample its own draw) or "same" (one draw shared by every sample).
        chunk_size: run the batch this many samples at a time (less memory), or all at once.

    The ops in ``func`` see :class:`~vizgrad.func.batched.BatchedTensor` inputs whose ``shape``
    is one sample's; the ops with a batching rule (:mod:`vizgrad.func.rules`) run once on the
    batch; the others once per sample, with a warning. ``vmap`` nests, and composes with
    :func:`~vizgrad.func.grad` and the other transforms: ``vmap(grad(loss), in_dims=(None, 0, 0))``
    gives per-sample gradients.

    Example::

        x = vizgrad.randn(64, 3)
        vmap(lambda v: v.dot(v))(x)           # 64 squared norms: one op on a (64, 3) array
    """
    if randomness not in RANDOMNESS:
        raise TransformError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                             f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ArgumentError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", type(func).__name__)

    @functools.wraps(func)
    def batched(*args, **kwargs):
        if not args:
            raise ArgumentError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                                "are trying to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = tree_flatten(args)
        dims = _in_dims(name, in_dims, args, leaves)
        size = _batch_size(name, in_dims, leaves, dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, name, leaves, spec, dims, kwargs, size, out_dims, randomness)
        chunks = []
        for start in range(0, size, chunk_size):
            length = min(chunk_size, size - start)
            pieces = [leaf if dim is None else shape.narrow(leaf, dim, start, length)
                      for leaf, dim in zip(leaves, dims)]
            chunks.append(_run(func, name, pieces, spec, dims, kwargs, length, out_dims, randomness))
        return _joined(chunks, out_dims)

    return batched


def _in_dims(name, in_dims, args, leaves):
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): expected `in_dims` to be int or a "
                            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), args)
    if dims is None:
        raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                            f"structure of `inputs`. in_dims has structure {spec_repr(tree_flatten(in_dims)[1])} "
                            f"but inputs has structure {spec_repr(tree_flatten(args)[1])}.")
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims must be an int or None "
                                f"for each input, got {dim!r}")
        if not isinstance(leaf, Tensor):
            raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={dim} for an input "
                                f"but the input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, "
                                "please use None as the respective in_dim")
        if not -leaf.ndim <= dim < leaf.ndim:
            raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={dim} for some input, "
                                f"but that input is a Tensor of dimensionality {leaf.ndim} so expected in_dim to "
                                f"satisfy -{leaf.ndim} <= in_dim < {leaf.ndim}.")
    return [None if dim is None else dim % leaf.ndim for leaf, dim in zip(leaves, dims)]


def _batch_size(name, in_dims, leaves, dims):
    sizes = [leaf.shape[dim] for leaf, dim in zip(leaves, dims) if dim is not None]
    if not sizes:
        raise ArgumentError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): at least one input must be "
                            "batched: every in_dim is None")
    if any(size != sizes[0] for size in sizes):
        raise ArgumentError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                            f"{sizes} for the mapped dimension")
    return sizes[0]


def _run(func, name, leaves, spec, dims, kwargs, size, out_dims, randomness):
    level = push_level(size, randomness)
    try:
        inputs = [leaf if dim is None else wrap(shape.movedim(leaf, dim, 0), level) for leaf, dim in zip(leaves, dims)]
        out = func(*tree_unflatten(inputs, spec), **kwargs)
        return _unbatched(name, out, out_dims, level)
    finally:
        pop_level(level)


def _unbatched(name, out, out_dims, level):
    leaves, spec = tree_flatten(out)
    dims = broadcast_prefix(out_dims, out) if isinstance(out_dims, (int, tuple, type(None))) else None
    if dims is None:
        raise ArgumentError(f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not compatible with "
                            f"the structure of `outputs`. out_dims has structure "
                            f"{spec_repr(tree_flatten(out_dims)[1])} but outputs has structure {spec_repr(spec)}.")
    results = []
    for leaf, dim in zip(leaves, dims):
        value = value_at(leaf, level)
        if dim is None:
            if value is not None:
                raise ArgumentError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            results.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ArgumentError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. "
                                "Did you mean to set out_dims= to None for output?")
        if value is None:    # the same for every sample
            value = broadcast_batch(leaf, level.size)
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ArgumentError(f"vmap({name}, ..., out_dims={out_dims!r}): out_dims must be ints or None")
        if not -value.ndim <= dim < value.ndim:
            raise ArgumentError(f"vmap({name}, ..., out_dims={out_dims!r}): out_dim {dim} is out of range for an "
                                f"output of {value.ndim - 1} dimensions (expected to be in range of "
                                f"[{-value.ndim}, {value.ndim - 1}])")
        results.append(shape.movedim(value, 0, dim))
    return tree_unflatten(results, spec)


def _joined(chunks, out_dims):
    """The outputs of the chunks, concatenated along each output's batch dim."""
    flat = [tree_flatten(chunk)[0] for chunk in chunks]
    spec = tree_flatten(chunks[0])[1]
    dims = broadcast_prefix(out_dims, chunks[0])
    joined = [column[0] if dim is None else joins.cat(list(column), dim) for column, dim in zip(zip(*flat), dims)]
    return tree_unflatten(joined, spec)
