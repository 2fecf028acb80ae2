"""Gradient tools behind the checkers, usable in lessons too.

* :func:`numerical_vjp`: ``vᵀJ`` by central differences, in float64 (from
  :mod:`vizgrad.tutor.numeric`, with ``as_numpy`` and ``close``).
* :func:`check_function`: run a custom :class:`vizgrad.autograd.Function` once, catch
  what its ``backward`` returns (even when the engine would reject it, e.g. for the
  wrong shape), and compare it with finite differences of its own ``forward``.
* :func:`diagnose`: name the usual mistakes when two gradients differ (a sign, a
  transpose, a missing sum over a broadcast dimension, a forgotten upstream gradient,
  a constant factor): the tutor's :func:`vizgrad.tutor.diagnose`, its kinds under the
  lessons' codes (:data:`vizgrad.lessons.hints.LESSON_CODES`).
* :func:`find_wrong_nodes`: run a function, record its graph, check every custom
  Function node in it locally, and return a report whose figure highlights the first
  node whose local gradient disagrees with the numerical one.

Example::

    from vizgrad.lessons import find_wrong_nodes
    report = find_wrong_nodes(lambda x, w: MySigmoid.apply(x @ w).sum(), x, w)
    report            # the graph, the faulty node in red, what is wrong with it
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..autograd import BackwardError, Function, grad as autograd_grad
from ..creation import tensor
from ..tensor import Tensor
from ..trace import Graph, GraphEdge, GraphNode
from ..tutor.diagnose import Alternative, Finding, diagnose as tutor_diagnose
from ..tutor.numeric import as_numpy, close, numerical_vjp
from .figures import GraphFigure
from .framework import learner_code
from .hints import LESSON_CODES, tutor_kind


def _float64(array, requires_grad=False, name=None):
    return tensor(np.array(array, dtype=np.float64), requires_grad=requires_grad, name=name)


# --- naming mistakes: the tutor's diagnosis, in the lessons' codes (hints.LESSON_CODES) ---------------
@dataclass
class Diagnosis(Finding):
    """What is wrong with one gradient: a lesson's ``kind`` code (see
    :data:`vizgrad.lessons.hints.LESSON_CODES`), a message and a hint."""

    @property
    def tutor_kind(self):
        return tutor_kind(self.kind)


def diagnose(got, expected, name="the input", ones=None, candidates=(), what="gradient", sizes=()):
    """None when ``got`` matches ``expected``; otherwise a :class:`Diagnosis`, found by the
    tutor's :func:`vizgrad.tutor.diagnose`.

    Args:
        got, expected: arrays; ``expected`` has the input's shape.
        name: the input, as the learner knows it (``"b"``).
        ones: the correct gradient for an upstream gradient of ones, to spot a backward
            that ignores its ``grad_output``.
        candidates: ``[(kind, wrong_array, message, hint), ...]``: known wrong answers
            for this exercise, tried first.
        what: what ``got`` is, in the message (``"gradient"``, ``"value"``).
        sizes: the sizes in the exercise (a batch size...), to name a missing ``1/N``.
    """
    alternatives = [Alternative(kind, wrong, message, hint) for kind, wrong, message, hint in candidates]
    if ones is not None and not close(ones, expected):
        alternatives.append(Alternative(
            "ignored-upstream", ones,
            f"The {what} for `{name}` is the local derivative alone: it is not multiplied by the gradient that "
            "arrives from above (`grad_output`).",
            "Chain rule: what backward returns is `grad_output` times the local derivative."))
    finding = tutor_diagnose(got, expected, name, alternatives, sizes, what=what)
    if finding is None:
        return None
    return Diagnosis(LESSON_CODES.get(finding.kind, finding.kind), finding.message, finding.hint, finding.details)


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
