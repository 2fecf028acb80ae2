"""``vizgrad.tutor.compare(loss, grads)``: a learner's hand-written backward pass checked
against the engine's, tensor by tensor in backward order, the first wrong one located on the
graph and its mistake named (see :data:`vizgrad.tutor.KINDS`).

Example::

    logits = h @ W2 + b2
    loss = vg.nn.functional.cross_entropy(logits, y)
    dlogits = (softmax(logits) - onehot(y)) / n
    dW2 = h.T @ dlogits
    db2 = dlogits                         # forgot .sum(0)
    vg.tutor.compare(loss, {"dlogits": dlogits, "W2": dW2, "b2": db2})
    # b2: wrong (missing_broadcast_sum) ... the graph with b2 in red
"""

import sys

from ..errors import ArgumentError, ArgumentTypeError, ShapeError, public
from ..tensor import Tensor
from . import graph_facts
from .diagnose import diagnose
from .numeric import as_numpy
from .predict import predicted_mistakes
from .report import Report, row

NAME = "tutor.compare"


@public(NAME)
def compare(loss, grads, names=None):
    """Check hand-computed gradients of ``loss`` against vizgrad's.

    Args:
        loss: the scalar tensor whose backward pass the learner wrote by hand.
        grads: ``{tensor or name: gradient}``; a name is a variable of the caller (or of
            ``names``) holding a tensor of ``loss``'s graph. A name may also be written with
            a leading ``d`` (``"dW"`` for ``W``) when no variable has that name. Gradients are
            tensors, arrays or numbers.
        names: the namespace in which names are looked up (default: the caller's variables).

    Returns:
        a :class:`vizgrad.tutor.Report`: ``.ok``, ``.first_wrong`` (the first wrong tensor
        in backward order), ``.kind``, ``.message``, ``.rows`` (one per tensor, as makemore's
        ``cmp``: exact, approximate or wrong, with the largest difference).
    """
    if not isinstance(loss, Tensor):
        raise ArgumentTypeError(f"{NAME}: loss must be a Tensor, got {type(loss).__name__}")
    if loss.numel() != 1:
        raise ShapeError(f"{NAME}: loss must have one element (the number you call backward() on), got shape "
                         f"{tuple(loss.shape)}: reduce it first (.sum(), .mean())")
    if not loss.requires_grad:
        raise ArgumentError(f"{NAME}: loss does not require grad, so it has no backward pass to compare with; "
                            "vizgrad.explain_grad(loss) says why")
    if not isinstance(grads, dict) or not grads:
        raise ArgumentTypeError(f"{NAME}: grads must be a non-empty dict {{tensor or name: gradient}}, got "
                                f"{type(grads).__name__}")
    namespace = sys._getframe(1).f_locals if names is None else names
    entries = resolve(grads, namespace, NAME)
    tensors = [tensor for _, tensor, _ in entries]
    steps = graph_facts.positions(loss, tensors)
    for (name, tensor, _), step in zip(entries, steps):
        if step is None or not tensor.requires_grad:
            raise ArgumentError(f"{NAME}: `{name}` (shape {tuple(tensor.shape)}) is not part of loss's graph, so it "
                                f"has no gradient to compare with; vizgrad.explain_grad({name}, loss) says why")
    expected, uses = graph_facts.reference(loss, tensors, NAME)
    sizes = graph_facts.sizes(loss)
    drawn = graph_of(loss, entries, namespace)
    order = sorted(range(len(entries)), key=lambda i: steps[i])
    label = node_labels(entries, namespace)
    rows = []
    for index in order:
        name, tensor, learner = entries[index]
        got = _learner_array(name, learner)
        alternatives = predicted_mistakes(name, tensor, uses[index], label)
        finding = diagnose(got, expected[index], name, alternatives, sizes)
        rows.append(row(name, got, expected[index], finding, node_id(drawn, name, tensor)))
    passed = f"All {len(rows)} gradient{'s' if len(rows) != 1 else ''} agree with vizgrad's backward pass."
    return Report("vizgrad.tutor.compare", rows, passed, drawn)


def _learner_array(name, value):
    try:
        return as_numpy(value)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{NAME}: the gradient given for `{name}` is a {type(value).__name__}; give a tensor, "
                                "an array or a number") from None


def resolve(grads, namespace, who):
    """``[(name, tensor, learner's gradient), ...]`` for the items of ``grads``."""
    entries = []
    for position, (key, value) in enumerate(grads.items()):
        if isinstance(key, Tensor):
            entries.append((name_of(key, namespace, position), key, value))
            continue
        if not isinstance(key, str):
            raise ArgumentTypeError(f"{who}: the keys of grads are tensors or variable names, got "
                                    f"{type(key).__name__} {key!r}")
        tensor = namespace.get(key)
        if not isinstance(tensor, Tensor) and key.startswith("d") and isinstance(namespace.get(key[1:]), Tensor):
            key, tensor = key[1:], namespace[key[1:]]
        if not isinstance(tensor, Tensor):
            known = sorted(n for n, v in namespace.items() if isinstance(v, Tensor) and not n.startswith("_"))
            raise ArgumentError(f"{who}: no tensor named {key!r} among the variables ({', '.join(known) or 'none'}); "
                                "pass the tensor itself as the key, or names=locals()")
        entries.append((key, tensor, value))
    return entries


def name_of(tensor, namespace, position):
    """The variable that holds ``tensor``, else its ``name``, else ``tensor <position>``."""
    for name, value in namespace.items():
        if value is tensor and not name.startswith("_"):
            return name
    return tensor.name or f"tensor {position}"


def node_labels(entries, namespace):
    """``label(node, fallback)``: the variable holding the tensor an autograd node made (or,
    for an ``AccumulateGrad``, its leaf), the checked names first."""
    found = {}
    named = [(name, tensor) for name, tensor, _ in entries]
    named += [(name, value) for name, value in namespace.items() if isinstance(value, Tensor) and name[:1] != "_"]
    for name, tensor in named:
        edge = graph_facts.edge_of(tensor)
        if edge is not None and edge[1] == 0:
            found.setdefault(edge[0], name)

    def label(node, fallback):
        return found.get(node, fallback)
    return label


def graph_of(loss, entries, namespace):
    """``loss``'s graph, its nodes named after the caller's variables and the checked names."""
    from ..trace import graph
    names = {name: value for name, value in namespace.items() if isinstance(value, Tensor)}
    names.update({name: tensor for name, tensor, _ in entries})
    return graph(loss, values=False, names=names)


def node_id(drawn, name, tensor):
    """The id of the node drawn for the tensor the learner calls ``name``."""
    labels = {name, tensor.name}
    for node in drawn.nodes:
        if node.label in labels:
            return node.id
    return None
