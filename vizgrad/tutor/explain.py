"""``vizgrad.explain_grad(tensor, loss=None)`` (and ``Tensor.explain_grad()``): why this
tensor's ``.grad`` is what it is, as one of :data:`REASONS` with a sentence, the fix, and a
drawing of the path from the loss to the tensor (the cut marked).

Example::

    h = x @ w
    loss = h.relu().sum()
    loss.backward()
    h.grad                    # None
    h.explain_grad()          # not_leaf: ... call h.retain_grad() before loss.backward()
"""

import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..autograd.function import AccumulateGrad
from ..errors import ArgumentTypeError, public
from ..tensor import Tensor
from . import graph_facts, source
from .compare import name_of
from .numeric import as_numpy, close
from .report import panel

#: The reasons :func:`explain_grad` gives, in the order docs/tutor.md explains them.
REASONS = ("ok", "not_leaf", "requires_grad_false", "created_under_no_grad", "detached", "not_used_by_loss",
           "backward_not_called", "accumulated", "rebound")


@dataclass
class Explanation:
    """Why ``name``'s ``.grad`` is what it is: ``reason`` (one of :data:`REASONS`),
    ``message`` (a sentence), ``fix`` (None when nothing needs fixing), ``cut`` (the code
    where the path from the loss was cut, if it was) and ``graph`` (drawn with ``path``
    highlighted, the tensor first)."""

    name: str
    reason: str
    message: str
    fix: Optional[str] = None
    cut: Optional[str] = None
    graph: object = None
    path: list = field(default_factory=list)

    def __str__(self):
        lines = [f"{self.name}.grad: {self.reason}", self.message.replace("`", "")]
        if self.fix:
            lines.append("Fix: " + self.fix.replace("`", ""))
        if self.graph is not None:
            lines += ["", self._figure().text()]
        return "\n".join(lines)

    __repr__ = __str__

    def _figure(self):
        from ..lessons.figures import GraphFigure
        note = f"cut: {self.cut}" if self.cut else self.reason
        return GraphFigure(self.graph, self.path, note=note)

    def _repr_html_(self):
        from ..lessons.framework import inline_markup
        parts = [panel(self.reason == "ok", f"<code>{inline_markup(self.name)}.grad</code>: {self.reason}",
                       "vizgrad-explain-grad"), f"<div>{inline_markup(self.message)}</div>"]
        if self.fix:
            parts.append(f"<div><b>Fix:</b> {inline_markup(self.fix)}</div>")
        if self.graph is not None:
            parts.append(f'<div style="margin-top:6px">{self._figure()._repr_html_()}</div>')
        return "".join(parts) + "</div>"


@public("explain_grad")
def explain_grad(tensor, loss=None, names=None):
    """Why ``tensor.grad`` is what it is.

    Args:
        tensor: the tensor whose ``.grad`` puzzles you.
        loss: the tensor you called (or will call) ``backward()`` on; without it the answer
            is about the tensor alone.
        names: the namespace that names tensors (default: the caller's variables); the
            caller's code is read too, to tell ``no_grad`` blocks and ``.detach()`` apart.

    Returns:
        an :class:`Explanation`: ``.reason`` (one of :data:`REASONS`), ``.message``,
        ``.fix``, and the path from ``loss`` to the tensor drawn in a notebook.
    """
    return explain_from(tensor, loss, sys._getframe(1), names)


def explain_from(tensor, loss, frame, names=None):
    """:func:`explain_grad` for the code running in ``frame`` (``Tensor.explain_grad`` passes its caller's)."""
    for what, value in (("tensor", tensor), ("loss", loss)):
        if value is not None and not isinstance(value, Tensor):
            raise ArgumentTypeError(f"explain_grad: {what} must be a Tensor, got {type(value).__name__}")
    namespace = frame.f_locals if names is None else names
    name = name_of(tensor, namespace, 0) if tensor.name is None else tensor.name
    if name == "tensor 0":
        name = "this tensor"
    facts = _Facts(tensor, loss, name, namespace, source.assignments(frame))
    explanation = facts.explain()
    facts.draw(explanation)
    return explanation


class _Facts:
    """What is known about one tensor, and the reason it leads to."""

    def __init__(self, tensor, loss, name, namespace, assigned):
        self.tensor, self.loss, self.name = tensor, loss, name
        self.namespace, self.assigned = namespace, assigned
        self.order = graph_facts.run_order(loss) if loss is not None else []
        edge = graph_facts.edge_of(tensor)
        self.node = edge[0] if edge is not None else None
        self.in_loss = loss is not None and (tensor is loss or self.node in set(self.order))

    def explain(self):
        t, name = self.tensor, self.name
        if t.grad_fn is not None:
            rebound = self._rebound()
            if rebound is not None:
                return rebound
        if self.loss is not None and not self.in_loss and t.requires_grad:
            return self._not_in_loss()
        if not t.requires_grad:
            return self._no_grad()
        if t.grad_fn is not None and not t.retains_grad:
            op = t.grad_fn.name()
            return Explanation(name, "not_leaf",
                               f"`{name}` is not a leaf: it is the output of {op}. backward() fills `.grad` only "
                               f"for leaves (tensors created with requires_grad=True), so `{name}.grad` stays "
                               "None, as in PyTorch.",
                               f"Call `{name}.retain_grad()` before `backward()`, or read the gradient with "
                               f"`vizgrad.autograd.grad(loss, {name})`.")
        return self._grad_state()

    def _rebound(self):
        """``w = w - lr * w.grad`` outside no_grad: the name now holds a non-leaf made from the old leaf."""
        node = self.tensor.grad_fn
        edges = [edge for edge in node.next_edges if edge is not None]
        if node.op.__name__ not in ("Sub", "Add") or len(edges) != 1 or type(edges[0][0]) is not AccumulateGrad:
            return None
        old = edges[0][0].variable
        if old.grad is None or tuple(old.shape) != tuple(self.tensor.shape):
            return None
        assignment = self.assigned.get(self.name)
        code = f" (`{assignment.code}`)" if assignment is not None else ""
        return Explanation(self.name, "rebound",
                           f"`{self.name}` no longer names the leaf you created: the update{code} ran with "
                           f"gradients on, so `{self.name}` is now the result of {node.name()} on the old leaf, a "
                           "non-leaf whose `.grad` is never filled; the next backward() cannot reach the new "
                           "values' gradient either.",
                           f"Update in place without recording: `with vizgrad.no_grad(): {self.name} -= lr * "
                           f"{self.name}.grad`, then `{self.name}.grad = None` (or use an optimizer).")

    def _no_grad(self):
        name, assignment = self.name, self.assigned.get(self.name)
        partner = self._shares_memory_with()
        if assignment is not None and assignment.cut in ("detach", "data"):
            how = ".detach()" if assignment.cut == "detach" else ".data"
            return Explanation(name, "detached",
                               f"`{name}` was cut from the graph by `{how}` in `{assignment.code}`: it shares "
                               f"`{assignment.detached}`'s values but none of its history, and does not require "
                               "grad.", f"Use `{assignment.detached}` itself where you need gradients; keep "
                               f"`{how}` for values you only read (logging, plotting).", cut=assignment.code)
        if partner is not None:
            other, tensor = partner
            made = f", the output of {tensor.grad_fn.name()}" if tensor.grad_fn is not None else ""
            return Explanation(name, "detached",
                               f"`{name}` shares its memory with `{other}`{made}, but not its history: it was made "
                               f"with `.detach()` (or `.data`), so it does not require grad.",
                               f"Use `{other}` itself where you need gradients.", cut=f"{other}.detach()")
        if assignment is not None and assignment.cut == "no_grad":
            return Explanation(name, "created_under_no_grad",
                               f"`{name}` was made inside a no_grad block (`{assignment.code}`): nothing computed "
                               "there is recorded, so it has no history and does not require grad.",
                               "Compute it outside `with vizgrad.no_grad():`; keep that block for updates and "
                               "evaluation.", cut=assignment.code)
        floating = self.tensor.is_floating_point()
        return Explanation(name, "requires_grad_false",
                           f"`{name}` does not require grad, so no backward pass computes a gradient for it"
                           + ("." if floating else f" (and it cannot: its dtype is {self.tensor.dtype.name}; "
                                                   "only floating-point tensors have gradients)."),
                           f"Create it with `requires_grad=True`, or call `{name}.requires_grad_()` before using "
                           "it." if floating else f"Convert it first: `{name} = {name}.float().requires_grad_()`.")

    def _shares_memory_with(self):
        counter = self.tensor._counter
        if counter is None:
            return None
        for other, value in self.namespace.items():
            if (isinstance(value, Tensor) and value is not self.tensor and value._counter is counter
                    and value.requires_grad and not other.startswith("_")):
                return other, value
        return None

    def _not_in_loss(self):
        name = self.name
        for cut_name, assignment in self.assigned.items():
            if assignment.cut and cut_name != name and source.depends_on(self.assigned, cut_name, name) and \
                    source.depends_on(self.assigned, self._loss_name(), cut_name):
                reason = "created_under_no_grad" if assignment.cut == "no_grad" else "detached"
                call = ".detach()" if assignment.cut == "detach" else ".data"
                how = "inside a no_grad block" if assignment.cut == "no_grad" else f"by `{call}`"
                return Explanation(name, reason,
                                   f"`{self._loss_name()}` does not depend on `{name}` through the graph: the path "
                                   f"was cut {how} at `{assignment.code}`, so no gradient reaches `{name}`.",
                                   f"Compute `{cut_name}` with gradients on (without `{call}`)."
                                   if assignment.cut != "no_grad" else
                                   f"Compute `{cut_name}` outside the no_grad block.", cut=assignment.code)
        return Explanation(name, "not_used_by_loss",
                           f"`{self._loss_name()}` was not computed from `{name}`: `{name}` is not in its graph, so "
                           f"backward() leaves `{name}.grad` " + ("None." if self.tensor.grad is None else
                                                                  "as it was (from another computation)."),
                           f"Check that `{self._loss_name()}` really uses `{name}` (not a copy, or a variable of "
                           "the same name from an earlier cell).")

    def _loss_name(self):
        if self.loss is None:
            return "the loss"
        found = name_of(self.loss, self.namespace, 0)
        return "the loss" if found == "tensor 0" else found

    def _grad_state(self):
        t, name = self.tensor, self.name
        accumulator = self.node if type(self.node) is AccumulateGrad else None
        if t.grad is None:
            if accumulator is None and t.grad_fn is None:
                return Explanation(name, "not_used_by_loss",
                                   f"`{name}` requires grad, but no graph that is still alive uses it, so no "
                                   "backward pass can reach it.",
                                   f"Compute the loss from `{name}`, then call `loss.backward()`.")
            if self.loss is not None and graph_facts.freed(self.order):
                message = (f"The graph of `{self._loss_name()}` went through backward() but `{name}.grad` is None: "
                           "it was reset since (`zero_grad()` sets it to None) or backward ran with `inputs=` "
                           f"leaving `{name}` out.")
            else:
                message = (f"`{name}` is in the graph, but no backward pass has reached it yet: `.grad` is filled "
                           "when you call `backward()` on the loss.")
            return Explanation(name, "backward_not_called", message, f"Call `{self._loss_name()}.backward()` first.")
        loss = self._loss_name()
        if self.loss is not None and self.loss.grad_fn is not None and self.loss.grad_fn.last_pass is None:
            return Explanation(name, "backward_not_called",
                               f"`{loss}.backward()` has not run yet: `{name}.grad` holds what earlier backward "
                               "passes left there, not this loss's gradient.",
                               f"Reset it (`{name}.grad = None`, or `optimizer.zero_grad()`), then call "
                               f"`{loss}.backward()`.")
        record = t._grad_record
        passes = record[1] if record is not None else 1
        ratio = self._ratio_to_fresh_gradient() if passes <= 1 else None
        if passes > 1 or ratio is not None:
            how = f"the sum of {passes} backward passes" if passes > 1 else (
                f"about {ratio:.3g} times the gradient of `{loss}`" if ratio else f"not the gradient of `{loss}` alone")
            return Explanation(name, "accumulated",
                               f"`{name}.grad` is {how}: backward() adds into `.grad`, and nothing reset it in "
                               "between.", "Call `optimizer.zero_grad()` (or set `.grad = None`) before each "
                                           "`backward()`.")
        of = f" of `{loss}`" if self.loss is not None else ""
        return Explanation(name, "ok", f"`{name}.grad` holds the gradient{of} from one backward pass, shape "
                                       f"{tuple(t.grad.shape)}.")

    def _ratio_to_fresh_gradient(self):
        """None when ``.grad`` equals ``loss``'s gradient (or it cannot be computed again: the
        graph was freed); else the constant ratio between them, 0.0 when there is none."""
        if self.loss is None or graph_facts.freed(self.order):
            return None
        fresh = as_numpy(graph_facts.gradients(self.loss, [self.tensor])[0])
        kept = as_numpy(self.tensor.grad)
        if close(kept, fresh):
            return None
        mask = np.abs(fresh) > 1e-12
        ratios = kept[mask] / fresh[mask] if mask.any() else np.zeros(1)
        return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=1e-4) and ratios[0] else 0.0

    def draw(self, explanation):
        """Attach the graph to ``explanation``: the loss's (the path to the tensor highlighted),
        else the tensor's own history."""
        from ..trace import graph
        root = self.loss if self.loss is not None else (self.tensor if self.tensor.grad_fn is not None else None)
        if root is None:
            return
        names = {n: v for n, v in self.namespace.items() if isinstance(v, Tensor) and not n.startswith("_")}
        drawn = graph(root, values=False, names=names)
        explanation.graph = drawn
        labels = {self.name, self.tensor.name}
        start = next((node.id for node in drawn.nodes if node.label in labels), None)
        output = next((node.id for node in drawn.nodes if node.kind == "output"), None)
        explanation.path = _path(drawn, start, output) if start is not None else [output]


def _path(drawn, start, end):
    """The node ids on the paths from ``start`` to ``end`` (following data flow), ``start`` first."""
    consumers = {}
    for edge in drawn.edges:
        consumers.setdefault(edge.source, []).append(edge.target)
    reach, stack = {start}, [start]
    while stack:
        for target in consumers.get(stack.pop(), ()):
            if target not in reach:
                reach.add(target)
                stack.append(target)
    producers = {}
    for edge in drawn.edges:
        producers.setdefault(edge.target, []).append(edge.source)
    back, stack = {end}, [end]
    while stack:
        for source_id in producers.get(stack.pop(), ()):
            if source_id not in back:
                back.add(source_id)
                stack.append(source_id)
    on_path = reach & back if end in reach else {start}
    return [start] + [node.id for node in drawn.nodes if node.id in on_path and node.id != start]
