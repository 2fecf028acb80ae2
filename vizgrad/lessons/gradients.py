"""Gradient tools behind the checkers, usable in lessons too.

* :func:`numerical_vjp`: ``vᵀJ`` by central differences, in float64.
* :func:`check_function`: run a custom :class:`vizgrad.autograd.Function` once, catch
  what its ``backward`` returns (even when the engine would reject it, e.g. for the
  wrong shape), and compare it with finite differences of its own ``forward``.
* :func:`diagnose`: name the usual mistakes when two gradients differ (a sign, a
  transpose, a missing sum over a broadcast dimension, a forgotten upstream gradient,
  a constant factor).
* :func:`find_wrong_nodes`: run a function, record its graph, check every custom
  Function node in it locally, and return a report whose figure highlights the first
  node whose local gradient disagrees with the numerical one.

Example::

    from vizgrad.lessons import find_wrong_nodes
    report = find_wrong_nodes(lambda x, w: MySigmoid.apply(x @ w).sum(), x, w)
    report            # the graph, the faulty node in red, what is wrong with it
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..autograd import BackwardError, Function, grad as autograd_grad, no_grad
from ..creation import tensor
from ..tensor import Tensor
from ..trace import Graph, GraphEdge, GraphNode
from .figures import GraphFigure
from .framework import learner_code

RTOL, ATOL = 1e-4, 1e-6


def as_numpy(value):
    """A float64 NumPy copy of a tensor, array or number."""
    if isinstance(value, Tensor):
        return np.array(value.detach().numpy(), dtype=np.float64)
    return np.array(value, dtype=np.float64)


def close(a, b, rtol=RTOL, atol=ATOL):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _float64(array, requires_grad=False, name=None):
    return tensor(np.array(array, dtype=np.float64), requires_grad=requires_grad, name=name)


def numerical_vjp(forward, args, wrt, v, eps=1e-6):
    """For each position in ``wrt``: the gradient of ``sum(v * forward(*args))`` with respect
    to ``args[position]`` by central differences (``args`` are arrays or constants)."""
    args = [np.array(a, dtype=np.float64) if isinstance(a, (np.ndarray, Tensor)) else a for a in args]
    v = np.asarray(v, dtype=np.float64)

    def value(values):
        with no_grad():
            out = forward(*[_float64(a) if isinstance(a, np.ndarray) else a for a in values])
        return float(np.sum(v * as_numpy(out)))

    results = []
    for position in wrt:
        base = args[position]
        gradient = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            sides = []
            for delta in (eps, -eps):
                moved = base.copy()
                moved[index] += delta
                sides.append(value(args[:position] + [moved] + args[position + 1:]))
            gradient[index] = (sides[0] - sides[1]) / (2 * eps)
        results.append(gradient)
    return results


# --- naming mistakes ------------------------------------------------------------------------------
@dataclass
class Diagnosis:
    """What is wrong with one gradient: a ``kind`` code, a message and a hint."""

    kind: str
    message: str
    hint: Optional[str] = None
    details: list = field(default_factory=list)


def broadcast_axes(big, small):
    """The axes of shape ``big`` along which an input of shape ``small`` was broadcast, or
    None when ``small`` does not broadcast to ``big``."""
    lead = len(big) - len(small)
    if lead < 0 or any(s != 1 and s != b for s, b in zip(small, big[lead:])):
        return None
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(small) if s == 1 and big[lead + i] != 1)


def sum_to(array, shape):
    """Sum ``array`` down to ``shape`` (undo broadcasting)."""
    axes = broadcast_axes(array.shape, tuple(shape))
    summed = array.sum(axis=axes) if axes else array
    return summed.reshape(shape)


def _preview(array):
    array = np.asarray(array, dtype=np.float64)
    text = np.array2string(array, precision=4, suppress_small=True, separator=", ", threshold=12, edgeitems=2)
    return " ".join(text.split())


def diagnose(got, expected, name="the input", ones=None, candidates=(), what="gradient"):
    """None when ``got`` matches ``expected``; otherwise a :class:`Diagnosis`.

    Args:
        got, expected: arrays; ``expected`` has the input's shape.
        name: the input, as the learner knows it (``"b"``).
        ones: the correct gradient for an upstream gradient of ones, to spot a backward
            that ignores its ``grad_output``.
        candidates: ``[(kind, wrong_array, message, hint), ...]``: known wrong answers
            for this exercise, tried first.
    """
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    side_by_side = [f"yours: `{_preview(got)}`", f"expected: `{_preview(expected)}`"]
    if got.shape != expected.shape:
        axes = broadcast_axes(got.shape, expected.shape)
        if axes:
            dims = axes[0] if len(axes) == 1 else axes
            keep = any(i >= got.ndim - expected.ndim and expected.shape[i - (got.ndim - expected.ndim)] == 1
                       for i in axes)
            how = f"`.sum({dims}{', keepdim=True' if keep else ''})`"
            values_ok = close(sum_to(got, expected.shape), expected)
            return Diagnosis(
                "missing-broadcast-sum",
                f"The {what} for `{name}` has shape {tuple(got.shape)}, but `{name}` has shape "
                f"{tuple(expected.shape)}: `{name}` was broadcast along dimension{'s' if len(axes) > 1 else ''} "
                f"{dims} in the forward pass, and its {what} was not summed back."
                + ("" if values_ok else " (Even summed, the values would still be off.)"),
                f"A broadcast input is used once per copy, so its gradient is the sum of the copies' "
                f"gradients: {how}. The gradient of an input always has the input's shape.")
        if got.ndim == 2 and got.shape == expected.shape[::-1]:
            return Diagnosis(
                "transposed",
                f"The {what} for `{name}` has shape {tuple(got.shape)}, the transpose of `{name}`'s shape "
                f"{tuple(expected.shape)}.",
                "For `C = A @ B`: `dA = dC @ B.T` (shape of A) and `dB = A.T @ dC` (shape of B). Check each "
                "product's shape: (m, k) @ (k, n) gives (m, n).", side_by_side)
        return Diagnosis("shape", f"The {what} for `{name}` has shape {tuple(got.shape)}, but `{name}` has shape "
                                  f"{tuple(expected.shape)}.",
                         "The gradient of an input always has exactly the input's shape.")
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(expected)):
        return Diagnosis("not-finite", f"The {what} for `{name}` contains NaN or inf.",
                         "Look for a division by zero or a log/sqrt of a non-positive number.", side_by_side)
    if close(got, expected):
        return None
    for kind, wrong, message, hint in candidates:
        if wrong is not None and close(got, wrong):
            return Diagnosis(kind, message, hint, side_by_side)
    if close(got, -expected):
        return Diagnosis("sign", f"The {what} for `{name}` has the wrong sign: every element is the negative "
                                 "of the right one.",
                         "Check the sign of each local derivative, e.g. d/dx cos(x) = -sin(x), "
                         "d/dx (a - x) = -1.", side_by_side)
    if got.ndim == 2 and got.shape[0] == got.shape[1] and not close(expected, expected.T) and close(got, expected.T):
        return Diagnosis("transposed", f"The {what} for `{name}` is the transpose of the right one.",
                         "For `C = A @ B`: `dA = dC @ B.T` and `dB = A.T @ dC`.", side_by_side)
    if ones is not None and close(got, ones) and not close(ones, expected):
        return Diagnosis("ignored-upstream",
                         f"The {what} for `{name}` is the local derivative alone: it is not multiplied by the "
                         "gradient that arrives from above (`grad_output`).",
                         "Chain rule: what backward returns is `grad_output` times the local derivative.",
                         side_by_side)
    if np.all(np.abs(got) <= ATOL) and not np.all(np.abs(expected) <= ATOL):
        return Diagnosis("zero", f"The {what} for `{name}` is all zeros.",
                         "Is the gradient computed but not returned, or multiplied by zero somewhere?", side_by_side)
    mask = np.abs(expected) > 1e-6
    if mask.any():
        ratios = got[mask] / expected[mask]
        if np.allclose(ratios, ratios[0], rtol=1e-3) and close(got, ratios[0] * expected):
            return Diagnosis("scale", f"The {what} for `{name}` is {ratios[0]:.4g} times the right one.",
                             "A constant factor is off: a missing or extra 2 (from a square), or a mean "
                             "instead of a sum?", side_by_side)
    worst = np.unravel_index(np.argmax(np.abs(got - expected)), got.shape) if got.ndim else ()
    return Diagnosis("values", f"The {what} for `{name}` has the right shape but wrong values (the largest "
                               f"difference is at index {tuple(int(i) for i in worst)}: "
                               f"{float(got[worst]):.5g} instead of {float(expected[worst]):.5g}).",
                     "Write the local derivative on paper first, then translate it term by term.", side_by_side)


# --- checking one custom Function ----------------------------------------------------------------
@dataclass
class FunctionCheck:
    """The result of :func:`check_function`: ``ok``, or a :class:`Diagnosis` for the
    first input (or the forward) that is wrong."""

    op: str
    ok: bool
    diagnosis: Optional[Diagnosis] = None
    node_id: Optional[str] = None


def is_custom_function(op):
    """Whether ``op`` is a :class:`Function` subclass written outside vizgrad (a learner's)."""
    return isinstance(op, type) and issubclass(op, Function) and not op.__module__.startswith("vizgrad.")


def check_function(cls, args, names=None, seed=0, candidates=None):
    """Check ``cls``'s backward against finite differences of its own forward at ``args``.

    Args:
        cls: a :class:`vizgrad.autograd.Function` subclass.
        args: arrays or tensors (each gets a gradient) or other constants.
        names: how the learner knows each argument (``["x", "w"]``).
        candidates: ``candidates(args, v) -> {position: [(kind, wrong, message, hint), ...]}``,
            known wrong answers to recognise.

    The learner's forward and backward run inside :class:`learner_code` blocks, so a stub
    still raising NotImplementedError reaches the runner as "not done".
    """
    names = list(names or [f"input {i}" for i in range(len(args))])
    arrays = [as_numpy(a) if isinstance(a, (np.ndarray, Tensor)) else a for a in args]
    wrt = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray)]
    returned = []

    def capture(ctx, *grads):
        result = cls.backward(ctx, *grads)
        returned.append(result)
        return result

    probe = type(cls.__name__, (cls,), {"backward": staticmethod(capture), "__module__": cls.__module__})
    inputs = [_float64(a, requires_grad=True, name=names[i]) if i in wrt else a for i, a in enumerate(arrays)]
    with learner_code(f"{cls.__name__}.forward"):
        out = probe.apply(*inputs)
    if not isinstance(out, Tensor):
        return FunctionCheck(cls.__name__, False, Diagnosis(
            "forward", f"`{cls.__name__}.forward` returned {type(out).__name__}, not one Tensor.",
            "Return a single Tensor from forward."))
    if not out.requires_grad:
        return FunctionCheck(cls.__name__, False, Diagnosis(
            "forward", f"The output of `{cls.__name__}` does not require grad, so backward can never run.",
            "Return a floating-point Tensor from forward."))
    v = np.random.default_rng(seed).standard_normal(out.shape)
    engine_error = None
    with learner_code(f"{cls.__name__}.backward"):
        try:
            autograd_grad(out, [inputs[i] for i in wrt], tensor(v), allow_unused=True)
        except BackwardError as error:
            engine_error = error
    if not returned:
        return FunctionCheck(cls.__name__, False, Diagnosis(
            "backward", f"vizgrad could not run `{cls.__name__}.backward`: {engine_error}", None))
    raw = returned[0]
    raw = tuple(raw) if isinstance(raw, (tuple, list)) else (raw,)
    if len(raw) != len(args):
        return FunctionCheck(cls.__name__, False, Diagnosis(
            "gradient-count",
            f"`{cls.__name__}.backward` returned {len(raw)} gradient{'s' if len(raw) != 1 else ''}, but forward "
            f"takes {len(args)} input{'s' if len(args) != 1 else ''} ({', '.join(names)}).",
            "Return one gradient per forward input, in the same order (None for an input that needs none)."))

    def forward(*values):
        return cls.apply(*values)

    expected = numerical_vjp(forward, arrays, wrt, v)
    with_ones = numerical_vjp(forward, arrays, wrt, np.ones_like(v)) if not np.all(v == 1) else [None] * len(wrt)
    known = candidates(arrays, v) if candidates is not None else {}
    for position, want, ones in zip(wrt, expected, with_ones):
        got = raw[position]
        if got is None:
            return FunctionCheck(cls.__name__, False, Diagnosis(
                "missing-gradient", f"`{cls.__name__}.backward` returned None for `{names[position]}`, which needs "
                                    "a gradient.", "Return a Tensor of the same shape as that input."))
        if not isinstance(got, Tensor):
            return FunctionCheck(cls.__name__, False, Diagnosis(
                "not-a-tensor", f"`{cls.__name__}.backward` returned a {type(got).__name__} for "
                                f"`{names[position]}`; return Tensors.",
                "Compute the gradient with tensor operations on `grad_output` and the saved tensors."))
        problem = diagnose(as_numpy(got), want, names[position], ones, known.get(position, ()))
        if problem is not None:
            return FunctionCheck(cls.__name__, False, problem)
    if engine_error is not None:
        return FunctionCheck(cls.__name__, False, Diagnosis("backward", str(engine_error)))
    return FunctionCheck(cls.__name__, True)


# --- a learner's whole graph ---------------------------------------------------------------------
class GradientReport:
    """What :func:`find_wrong_nodes` found: ``graph``, ``checks`` (one per custom Function
    node, in forward order), ``wrong`` (those that failed, in backward order: the first
    is where a wrong gradient enters the backward pass) and ``figure``."""

    def __init__(self, graph, checks):
        self.graph, self.checks = graph, checks
        self.wrong = [c for c in reversed(checks) if not c.ok]
        first = self.wrong[0] if self.wrong else None
        note = f"first wrong gradient: {first.diagnosis.kind}" if first else None
        self.figure = GraphFigure(graph, [c.node_id for c in self.wrong], note=note)

    @property
    def ok(self):
        return not self.wrong

    def summary(self):
        if not self.checks:
            return "No custom Function in this graph: vizgrad's own ops are tested already."
        if self.ok:
            return (f"All {len(self.checks)} custom Function node{'s' if len(self.checks) != 1 else ''} agree with "
                    "finite differences.")
        first = self.wrong[0]
        return (f"Node `{first.node_id}` (`{first.op}`) is the first, going backward, whose local gradient "
                f"disagrees with the numerical one. {first.diagnosis.message}")

    def __repr__(self):
        return self.summary() + "\n" + self.figure.text()

    def _repr_html_(self):
        from .framework import inline_markup
        hint = ""
        if self.wrong and self.wrong[0].diagnosis.hint:
            hint = f"<div><b>Hint:</b> {inline_markup(self.wrong[0].diagnosis.hint)}</div>"
        return f"<div>{inline_markup(self.summary())}</div>{hint}{self.figure._repr_html_()}"


def record_graph(fn, args):
    """Run ``fn(*args)`` and record the ops that build its autograd graph.

    Returns ``(output, graph, applications)`` where ``applications`` lists, for every
    custom Function node, ``(graph node id, Function class, input tensors)``.
    """
    from .. import events
    graph = Graph()
    ids = {}
    applications = []

    def node_for(tensor, fallback):
        node_id = ids.get(tensor.uid)
        if node_id is None:
            node_id = ids[tensor.uid] = f"n{len(graph.nodes)}"
            graph.nodes.append(GraphNode(id=node_id, kind="leaf", label=tensor.name or fallback,
                                         name=tensor.name, shape=list(tensor.shape), dtype=tensor.dtype.name,
                                         requires_grad=bool(tensor.requires_grad)))
        return node_id

    def on_op(event):
        if event.node_id is None:      # not part of any graph (no_grad, e.g. inside a Function's forward)
            return
        sources = [node_for(t, f"input {i}") for i, t in enumerate(event.inputs)]
        for position, output in enumerate(event.outputs):
            node_id = ids[output.uid] = f"n{len(graph.nodes)}"
            graph.nodes.append(GraphNode(id=node_id, kind="op", label=event.op, op=event.op,
                                         shape=list(output.shape), dtype=output.dtype.name, requires_grad=True))
            for index, source in enumerate(sources):
                graph.edges.append(GraphEdge(source, node_id, index, list(event.inputs[index].shape)))
            node = output.grad_fn
            # re-applying needs every argument: only Functions called with tensors alone are checked
            if (position == 0 and node is not None and is_custom_function(node.op)
                    and len(node.next_edges) == len(event.inputs)):
                applications.append((node_id, node.op, [t.detach().clone() for t in event.inputs]))

    for position, value in enumerate(args):
        if isinstance(value, Tensor):
            node_for(value, f"input {position}")
    with events.subscribe(on_op, kinds={"op"}):
        with learner_code():
            output = fn(*args)
    if isinstance(output, Tensor) and output.uid in ids:
        graph.node(ids[output.uid]).kind = "output"
    return output, graph, applications


def find_wrong_nodes(fn, *args, seed=0):
    """Run ``fn(*args)``, check each custom Function node locally (its backward against
    finite differences of its forward, at the inputs it really got), and return a
    :class:`GradientReport` whose figure highlights the wrong nodes.

    Functions applied to anything but tensors (``Scale.apply(x, 3.0)``) cannot be re-run
    from what the graph recorded, and are not checked."""
    from .framework import LearnerError, NotDone, learner_error_message
    _, graph, applications = record_graph(fn, args)
    checks = []
    for node_id, op, inputs in applications:
        names = [graph.node(source).label for source in graph.inputs_of(node_id)]
        try:
            check = check_function(op, inputs, names if len(names) == len(inputs) else None, seed=seed)
        except NotDone:
            check = FunctionCheck(op.__name__, False, Diagnosis(
                "not-done", f"`{op.__name__}` still raises NotImplementedError.", "Write its forward and backward."))
        except LearnerError as error:
            check = FunctionCheck(op.__name__, False, Diagnosis(
                "exception", learner_error_message(error.error, error.what)))
        check.node_id = node_id
        checks.append(check)
    return GradientReport(graph, checks)
