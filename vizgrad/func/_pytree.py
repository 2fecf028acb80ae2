"""Nested containers of tensors ("pytrees"), as the transforms of :mod:`vizgrad.func` take
and return them: tuples, lists and dicts (in their insertion order) are containers, named
tuples too; anything else is a leaf.

A spec records a tree's shape: ``None`` for a leaf, else ``(type, keys, children)``.
"""


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order, and the spec that rebuilds the tree."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = list(tree)
        return (dict, keys, [_flatten(tree[key], leaves) for key in keys])
    if isinstance(tree, (tuple, list)):
        kind = type(tree) if _is_namedtuple(tree) else (tuple if isinstance(tree, tuple) else list)
        return (kind, None, [_flatten(item, leaves) for item in tree])
    leaves.append(tree)
    return None


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` with ``leaves`` in its places."""
    iterator = iter(leaves)
    return _unflatten(iterator, spec)


def _unflatten(leaves, spec):
    if spec is None:
        return next(leaves)
    kind, keys, children = spec
    items = [_unflatten(leaves, child) for child in children]
    if kind is dict:
        return dict(zip(keys, items))
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)    # a named tuple


def tree_map(function, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([function(leaf) for leaf in leaves], spec)


def spec_repr(spec):
    """A spec as PyTorch's messages print one: ``*`` for a leaf, ``(*, *)`` for a pair."""
    if spec is None:
        return "*"
    kind, keys, children = spec
    parts = [spec_repr(child) for child in children]
    if kind is dict:
        return "{" + ", ".join(f"{key!r}: {part}" for key, part in zip(keys, parts)) + "}"
    if kind is list:
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def broadcast_prefix(prefix, tree):
    """One value of ``prefix`` per leaf of ``tree``, where ``prefix`` is a tree whose leaves
    stand for whole subtrees of ``tree`` (``in_dims=(0, None)`` for ``(x, {"a": t, "b": u})``:
    0 for x, None for both t and u). Returns None when the structures do not match."""
    out = []
    return out if _broadcast(prefix, tree, out) else None


def _broadcast(prefix, tree, out):
    if prefix is None or isinstance(prefix, int):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return True
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or list(prefix) != list(tree):
            return False
        return all(_broadcast(prefix[key], tree[key], out) for key in prefix)
    if isinstance(prefix, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or isinstance(prefix, list) != isinstance(tree, list) \
                or len(prefix) != len(tree):
            return False
        return all(_broadcast(p, t, out) for p, t in zip(prefix, tree))
    out.append(prefix)       # an invalid dim: the caller names it
    return True
