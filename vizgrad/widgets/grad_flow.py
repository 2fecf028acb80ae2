"""``GradFlowView``: per-layer gradient size over training, vanishing and exploding
layers flagged.

After every backward pass that reaches the model's parameters (passes through other
models in the same kernel are not its subject and are ignored) the view reads the gradient norm of each parameter of the
model (one dot product per parameter: cheap), turns it into a root-mean-square and
flags it with :mod:`vizgrad.diagnostics`' thresholds (vanishing below 1e-7 or 1e-3 of
the largest layer, exploding above 1e3 or NaN/inf). The browser draws a layers × steps heatmap (log scale,
blue below the healthy band, red above it) and, on the same rows, the current step's bars
with the two thresholds as lines. Series travel as float32 buffers;
updates reach the browser at most ``max_rate`` times per second.

Example::

    view = GradFlowView(model)
    view                                  # then train: the view follows every backward
    view.statuses()                       # {"0.weight": "ok", ...} at the latest step
"""

import math

import numpy as np
import traitlets

from .. import diagnostics
from ..backends import backend_of
from .base import SeriesBuffer, VizgradWidget, html_table, number_text


def squared_norm(array):
    """The sum of squares of a backend array, as a Python float (inf/NaN when it has them)."""
    if isinstance(array, np.ndarray):
        flat = array.reshape(-1)
        if flat.dtype.kind != "f":
            flat = flat.astype(np.float64)
        return float(np.dot(flat, flat))
    xp = backend_of(array).xp
    return float(xp.sum(array * array))


def classify(rms, has_grad, vanishing=diagnostics.VANISHING, exploding=diagnostics.EXPLODING,
             relative=diagnostics.RELATIVE):
    """Status of each layer from its gradient RMS, as :func:`vizgrad.diagnostics.grad_flow`
    decides it: "no grad", "exploding" (not finite or above ``exploding``), "vanishing"
    (below ``vanishing`` or ``relative`` times the largest) or "ok"."""
    finite = [value for value, present in zip(rms, has_grad) if present and math.isfinite(value)]
    largest = max(finite, default=0.0)
    statuses = []
    for value, present in zip(rms, has_grad):
        if not present:
            statuses.append("no grad")
        elif not math.isfinite(value) or value > exploding:
            statuses.append("exploding")
        elif value < vanishing or (largest > 0 and value < relative * largest):
            statuses.append("vanishing")
        else:
            statuses.append("ok")
    return statuses


class GradFlowTracker:
    """Gradient RMS per layer over steps, bounded (see :class:`~vizgrad.widgets.base.SeriesBuffer`).

    Args:
        names: one name per parameter ("layer").
        sizes: the number of elements of each parameter.
    """

    def __init__(self, names, sizes, max_points=2000, vanishing=diagnostics.VANISHING,
                 exploding=diagnostics.EXPLODING, relative=diagnostics.RELATIVE):
        self.names = list(names)
        self.sizes = np.maximum(np.asarray(sizes, dtype=np.float64), 1.0)
        self.thresholds = {"vanishing": vanishing, "exploding": exploding, "relative": relative}
        self.series = SeriesBuffer(len(self.names), max_points)
        self.step = None
        self.rms = np.full(len(self.names), math.nan)
        self.norms = np.full(len(self.names), math.nan)
        self.has_grad = np.zeros(len(self.names), dtype=bool)

    def record(self, step, norms, has_grad=None):
        """Add one step: ``norms`` are L2 norms of the gradients (NaN where a layer has none)."""
        norms = np.asarray(norms, dtype=np.float64)
        self.step = step
        self.norms = norms
        self.has_grad = ~np.isnan(norms) if has_grad is None else np.asarray(has_grad, dtype=bool)
        with np.errstate(invalid="ignore", over="ignore"):
            self.rms = norms / np.sqrt(self.sizes)
        self.series.append(step, np.where(self.has_grad, self.rms, math.nan))

    def statuses(self):
        return classify(self.rms.tolist(), self.has_grad.tolist(), **self.thresholds)

    def payload(self):
        """What the front end draws: the layers, the RMS series (float32 buffers) and the
        current step's values and statuses."""
        def clean(values):
            return [value if math.isfinite(value) else None for value in values.tolist()]
        return {"layers": self.names, "step": self.step, "series": self.series.payload(),
                "current": {"rms": clean(self.rms), "norm": clean(self.norms), "status": self.statuses()},
                "thresholds": dict(self.thresholds)}

    def flagged(self):
        """``{name: status}`` of the layers that are not "ok" at the latest step."""
        return {name: status for name, status in zip(self.names, self.statuses()) if status not in ("ok", "no grad")}


def sample_norms(params):
    """Gradient L2 norms of ``params`` (NaN where a parameter has no gradient, or a NaN one)
    and which parameters have a gradient."""
    norms = np.full(len(params), math.nan)
    has_grad = np.zeros(len(params), dtype=bool)
    for position, param in enumerate(params):
        grad = param.grad
        if grad is not None:
            has_grad[position] = True
            norms[position] = math.sqrt(squared_norm(grad._array))
    return norms, has_grad


class BackwardScope:
    """Whether a backward pass reached some of ``params``: fed the ``grad_accumulated``
    events, it notes when one of them received a gradient; :meth:`take` at
    ``backward_end`` answers for the pass that ended and starts over."""

    def __init__(self, params):
        self.uids = frozenset(param.uid for param in params)
        self.reached = False

    def note(self, event):
        if event.tensor_id in self.uids:
            self.reached = True

    def take(self):
        reached, self.reached = self.reached, False
        return reached


def parameter_table(model):
    """(names, parameters, sizes) of ``model``'s parameters, in module order."""
    named = list(model.named_parameters())
    if not named:
        raise ValueError(f"{type(model).__name__} has no parameters to follow")
    names = [name for name, _ in named]
    params = [param for _, param in named]
    sizes = [int(np.prod(param.shape)) if len(param.shape) else 1 for param in params]
    return names, params, sizes


class GradFlowView(VizgradWidget):
    """Per-layer gradient RMS over training steps and the current step's bars.

    The view follows its model only: its steps count the backward passes that reached the
    model's parameters since the view was made (from 1); backward passes of other models
    are ignored.

    Args:
        model: a :class:`vizgrad.nn.Module`; its parameters are the layers.
        every: sample every ``every``-th backward pass.
        max_points: the history keeps at most this many steps (thinned evenly beyond).
        max_rate: updates per second at most.
        vanishing, exploding, relative: thresholds (defaults from :mod:`vizgrad.diagnostics`).

    Synced traits: ``flow`` (``layers``, ``step``, ``series`` = {steps, values, columns,
    length} as float32 buffers, ``current`` = {rms, norm, status}, ``thresholds``).
    """

    _bundle = "grad-flow-widget"

    flow = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, model, every=1, max_points=2000, max_rate=20, vanishing=diagnostics.VANISHING,
                 exploding=diagnostics.EXPLODING, relative=diagnostics.RELATIVE, **kwargs):
        names, self._params, sizes = parameter_table(model)     # refuse a model without parameters first
        super().__init__(**kwargs)
        self.tracker = GradFlowTracker(names, sizes, max_points, vanishing, exploding, relative)
        self.every = max(1, int(every))
        self._backwards = 0
        self._updates = self._coalescer(max_rate)
        self._scope = BackwardScope(self._params)
        self._subscribe(self._on_event, kinds={"grad_accumulated", "backward_end"})
        self._push()

    def sample(self):
        """Read the gradients now (also what happens after each backward pass)."""
        with self._updates.lock:
            self.tracker.record(self._backwards, *sample_norms(self._params))
        self._updates.request(self._push, key="flow")

    def statuses(self):
        """``{layer: status}`` at the latest sample."""
        return dict(zip(self.tracker.names, self.tracker.statuses()))

    def _on_event(self, event):
        if event.kind == "grad_accumulated":
            self._scope.note(event)
        elif self._scope.take():
            self._on_backward_end()

    def _on_backward_end(self):
        self._backwards += 1
        if (self._backwards - 1) % self.every == 0:
            self.sample()

    def _push(self):
        with self._updates.lock:
            self.flow = self.tracker.payload()

    def _fallback_text(self):
        flagged = self.tracker.flagged()
        summary = ", ".join(f"{name}: {status}" for name, status in flagged.items()) or "no flagged layers"
        return f"<GradFlowView: {len(self.tracker.names)} layers, {len(self.tracker.series)} steps; {summary}>"

    def _fallback_html(self):
        return grad_flow_table(self.tracker)


def grad_flow_table(tracker, caption="gradient flow (latest step)"):
    rows = [(name, number_text(rms), status)
            for name, rms, status in zip(tracker.names, tracker.rms.tolist(), tracker.statuses())]
    return html_table(("parameter", "gradient RMS", "status"), rows, caption)
