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

import html
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

    def _fallback_svg(self):
        return grad_flow_svg(self.tracker)


_BLUE, _PALE, _RED = np.array([33, 102, 172]), np.array([247, 247, 247]), np.array([178, 24, 43])


def healthy_band(rms, thresholds):
    """(low, high) of the healthy band for one step's values, as :func:`classify` decides it."""
    finite = [value for value in rms if math.isfinite(value)]
    return max(thresholds["vanishing"], thresholds["relative"] * max(finite, default=0.0)), thresholds["exploding"]


def flow_colour(value, band):
    """The heatmap's colour of one RMS against the band: pale inside it (a light tint by its
    log position), blue below, red above, full colour four decades out; grey when missing."""
    if not math.isfinite(value) and not math.isinf(value):
        return "rgb(200,200,200)"
    low, high = math.log10(band[0]), math.log10(band[1])
    if value <= 0:
        u = -1.0
    elif math.isinf(value):
        u = 1.0
    else:
        t = math.log10(value)
        if t < low:
            u = -0.3 - 0.7 * min(1.0, (low - t) / 4)
        elif t > high:
            u = 0.3 + 0.7 * min(1.0, (t - high) / 4)
        else:
            u = -0.3 + 0.6 * (t - low) / (high - low) if high > low else 0.0
    end = _BLUE if u < 0 else _RED
    red, green, blue = np.round(_PALE + (end - _PALE) * min(1.0, abs(u))).astype(int)
    return f"rgb({red},{green},{blue})"


def grad_flow_svg(tracker, columns=120):
    """The gradient-flow view as a static SVG: the layers × steps heatmap (at most ``columns``
    step columns) and the latest step's bars on a log scale, with the two thresholds."""
    names, matrix, steps = tracker.names, tracker.series.matrix(), tracker.series.steps
    if len(matrix) > columns:
        keep = np.unique(np.linspace(0, len(matrix) - 1, columns).round().astype(int))
        matrix, steps = matrix[keep], steps[keep]
    row = max(2, min(16, 440 // max(1, len(names))))
    label_w, heat_w, bar_x, bar_w, top = 170, 360, 550, 200, 30
    height = top + row * len(names) + 54
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{bar_x + bar_w + 20}' height='{height}' "
             "font-family='sans-serif' font-size='12' fill='#1f2933'>",
             "<rect width='100%' height='100%' fill='#ffffff'/>",
             f"<text x='{label_w}' y='16' font-weight='600'>gradient RMS over steps (log)</text>",
             f"<text x='{bar_x}' y='16' font-weight='600'>at step {tracker.step if tracker.step is not None else '—'}</text>"]
    cell = heat_w / max(1, len(matrix))
    for column, values in enumerate(matrix):
        band = healthy_band(values.tolist(), tracker.thresholds)
        for layer, value in enumerate(values.tolist()):
            parts.append(f"<rect x='{label_w + column * cell:.1f}' y='{top + layer * row}' width='{cell + 0.3:.1f}' "
                         f"height='{row}' fill='{flow_colour(value, band)}'/>")
    last_label = -math.inf
    for layer, name in enumerate(names):
        y = top + (layer + 0.5) * row
        if y - last_label >= 13:
            parts.append(f"<text x='{label_w - 6}' y='{y + 4:.1f}' text-anchor='end'>{html.escape(name)}</text>")
            last_label = y
    band = healthy_band(tracker.rms.tolist(), tracker.thresholds)
    finite = [v for v in tracker.rms.tolist() if math.isfinite(v) and v > 0]
    low, high = math.log10(min([band[0], *finite]) / 3), math.log10(max([band[1], *finite]) * 3)

    def x_of(value):
        return bar_x + (math.log10(value) - low) / (high - low) * bar_w

    for layer, (value, status) in enumerate(zip(tracker.rms.tolist(), tracker.statuses())):
        if math.isfinite(value) and value > 0:
            parts.append(f"<rect x='{bar_x}' y='{top + layer * row + row * 0.12:.1f}' width='{x_of(value) - bar_x:.1f}' "
                         f"height='{max(1.0, row * 0.76):.1f}' fill='{STATUS_COLOURS.get(status, STATUS_COLOURS['ok'])}'>"
                         f"<title>{html.escape(names[layer])}: {number_text(value)} ({status})</title></rect>")
    for value, label, colour in ((band[0], "vanishing", STATUS_COLOURS["vanishing"]),
                                 (band[1], "exploding", STATUS_COLOURS["exploding"])):
        x = x_of(value)
        parts.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{top - 4}' y2='{top + row * len(names)}' stroke='{colour}' "
                     "stroke-dasharray='4 3' stroke-width='1.5'/>")
        anchor = "start" if label == "vanishing" else "end"
        parts.append(f"<text x='{x:.1f}' y='{height - (22 if label == 'vanishing' else 6)}' text-anchor='{anchor}' "
                     f"fill='{colour}'>{label} "
                     f"{number_text(value)}</text>")
    if len(steps):
        parts.append(f"<text x='{label_w}' y='{top + row * len(names) + 16}'>step {steps[0]:.0f}</text>")
        parts.append(f"<text x='{label_w + heat_w}' y='{top + row * len(names) + 16}' text-anchor='end'>"
                     f"step {steps[-1]:.0f}</text>")
    parts.append("</svg>")
    return "".join(parts)


#: Bar colours by status, as the widget draws them (the heatmap's blue and red ends, a calm grey).
STATUS_COLOURS = {"ok": "#7a7a7a", "vanishing": "#2166ac", "exploding": "#b2182b", "no grad": "#c8c8c8"}


def grad_flow_table(tracker, caption="gradient flow (latest step)"):
    rows = [(name, number_text(rms), status)
            for name, rms, status in zip(tracker.names, tracker.rms.tolist(), tracker.statuses())]
    return html_table(("parameter", "gradient RMS", "status"), rows, caption)
