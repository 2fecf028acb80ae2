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
from ..errors import ArgumentError
from . import pictures
from .base import SeriesBuffer, VizgradWidget
from .checks import check_count, check_rate, check_real, check_widget_options, parameter_table


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


def check_thresholds(op, vanishing, exploding, relative):
    """``(vanishing, exploding, relative)`` checked: 0 < vanishing < exploding, both finite, and
    ``relative`` (a share of the largest layer's RMS) in [0, 1)."""
    vanishing = check_real(op, "vanishing", vanishing, 0, low_open=True)
    exploding = check_real(op, "exploding", exploding, 0, low_open=True)
    if not vanishing < exploding:
        raise ArgumentError(f"{op}: vanishing ({vanishing!r}) must be below exploding ({exploding!r})")
    return vanishing, exploding, check_real(op, "relative", relative, 0, 1, high_open=True)


class GradFlowView(VizgradWidget):
    """Per-layer gradient RMS over training steps and the current step's bars.

    The view follows its model only: its steps count the backward passes that reached the
    model's parameters since the view was made (from 1); backward passes of other models
    are ignored.

    Args:
        model: a :class:`vizgrad.nn.Module` with parameters; its parameters are the layers.
        every: sample every ``every``-th backward pass (an int >= 1).
        max_points: the history keeps at most this many steps (an int >= 2; thinned evenly beyond).
        max_rate: updates per second at most (> 0).
        vanishing, exploding, relative: thresholds (defaults from :mod:`vizgrad.diagnostics`):
            0 < vanishing < exploding, finite; relative in [0, 1).
        kwargs: traits (``title``, ``layout``, ...).

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it (see docs/errors.md).

    Synced traits: ``flow`` (``layers``, ``step``, ``series`` = {steps, values, columns,
    length} as float32 buffers, ``current`` = {rms, norm, status}, ``thresholds``).
    """

    _bundle = "grad-flow-widget"

    flow = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, model, every=1, max_points=2000, max_rate=20, vanishing=diagnostics.VANISHING,
                 exploding=diagnostics.EXPLODING, relative=diagnostics.RELATIVE, **kwargs):
        # everything is checked before the widget opens a comm or a subscription
        names, params, sizes = parameter_table("GradFlowView", model)
        every = check_count("GradFlowView", "every", every)
        max_points = check_count("GradFlowView", "max_points", max_points, minimum=2)
        max_rate = check_rate("GradFlowView", "max_rate", max_rate)
        thresholds = check_thresholds("GradFlowView", vanishing, exploding, relative)
        check_widget_options("GradFlowView", type(self), kwargs)
        self._params = params
        super().__init__(**kwargs)
        self.tracker = GradFlowTracker(names, sizes, max_points, *thresholds)
        self.every = every
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
        with self._updates.lock:
            return grad_flow_svg(self.tracker)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


_BLUE, _PALE, _RED = np.array([33, 102, 172]), np.array([247, 247, 247]), np.array([178, 24, 43])


def healthy_band(rms, thresholds):
    """(low, high) of the healthy band for one step's values, as :func:`classify` decides it."""
    finite = [value for value in rms if math.isfinite(value)]
    return max(thresholds["vanishing"], thresholds["relative"] * max(finite, default=0.0)), thresholds["exploding"]


def flow_colours(values, band):
    """The heatmap's colours of RMS ``values`` (any shape) against the band, uint8 (..., 3): pale
    inside it (a light tint by its log position), blue below, red above, full colour four decades
    out; grey when missing."""
    values = np.asarray(values, dtype=np.float64)
    low, high = math.log10(band[0]), math.log10(band[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log10(values)
    inside = -0.3 + 0.6 * (t - low) / (high - low) if high > low else np.zeros_like(t)
    u = np.where(t < low, -0.3 - 0.7 * np.minimum(1.0, (low - t) / 4),
                 np.where(t > high, 0.3 + 0.7 * np.minimum(1.0, (t - high) / 4), inside))
    u = np.where(values <= 0, -1.0, np.where(np.isposinf(values), 1.0, u))
    end = np.where((u < 0)[..., None], _BLUE, _RED)
    colours = np.round(_PALE + (end - _PALE) * np.minimum(1.0, np.abs(np.nan_to_num(u)))[..., None]).astype(np.uint8)
    colours[np.isnan(values)] = (200, 200, 200)
    return colours


def flow_colour(value, band):
    """The heatmap's colour of one RMS against the band, as ``"rgb(r,g,b)"`` (see :func:`flow_colours`)."""
    return "rgb({},{},{})".format(*flow_colours([value], band)[0].tolist())


def grad_flow_picture(tracker, left=0, top=0, columns=160):
    """The gradient-flow view drawn from ``left``, ``top``: a caption, then per layer (a row,
    labels thinned so none overlap, flagged layers in their status colour) the heatmap of the
    RMS over the steps (a PNG of at most ``columns`` step columns, when there are two steps
    or more) and the latest step's bar on a log axis with the two thresholds dashed.

    Returns:
        ``(svg fragment, width, height)``.
    """
    names, count = tracker.names, len(tracker.names)
    if tracker.step is None:
        body = pictures.note(left, top, 560, f"{count} layers, no steps yet: run training (a backward pass) "
                                              "to fill it")
        return body, 560, 56
    matrix, steps = tracker.series.matrix(), tracker.series.steps
    if len(matrix) > columns:
        keep = np.unique(np.linspace(0, len(matrix) - 1, columns).round().astype(int))
        matrix, steps = matrix[keep], steps[keep]
    statuses = tracker.statuses()
    rms = tracker.rms.tolist()
    row = max(3, min(20, 460 // max(1, count)))
    label_w = min(220, 14 + 7 * max(len(name) for name in names))
    heat_w = 280 if len(matrix) >= 2 else 0
    bar_x = left + label_w + (heat_w + 24 if heat_w else 0)
    bar_w, status_w = 300, 86
    band = healthy_band(rms, tracker.thresholds)
    finite = [value for value in rms if math.isfinite(value) and value > 0]
    low = math.floor(math.log10(min([band[0], *finite]) / 2))
    high = math.ceil(math.log10(max([band[1], *finite]) * 2))
    rows_top = top + 54
    rows_bottom = rows_top + row * count

    def x_of(value):
        return bar_x + (math.log10(value) - low) / (high - low) * bar_w

    flagged = [(name, status) for name, status in zip(names, statuses) if status in ("vanishing", "exploding")]
    caption = (f"bars: gradient RMS per layer at step {tracker.step} (log scale); dashed: vanishing below "
               f"{pictures.number(band[0])}, exploding above {pictures.number(band[1])}")
    listed = ", ".join(f"{name} {status}" for name, status in flagged[:4])
    more = f" and {len(flagged) - 4} more" if len(flagged) > 4 else ""
    parts = [pictures.text(left, top + 14, caption, pictures.SMALL, fill=pictures.MUTED),
             pictures.text(left, top + 30, f"{len(flagged)} flagged: {listed}{more}" if flagged else "no layer flagged",
                           pictures.SMALL, fill=STATUS_COLOURS["exploding"] if flagged else pictures.MUTED)]
    last_label = -math.inf
    for layer, (name, status) in enumerate(zip(names, statuses)):
        y = rows_top + (layer + 0.5) * row
        if y - last_label >= 13:
            colour = STATUS_COLOURS[status] if status in ("vanishing", "exploding") else None
            parts.append(pictures.text(left + label_w - 6, y + 4, name, pictures.SMALL if row < 14 else pictures.FONT,
                                       "end", colour, bold=colour is not None))
            last_label = y
    if heat_w:
        parts.append(_heatmap(tracker, matrix, steps, left + label_w, rows_top, heat_w, row))
    parts.append(pictures.text(bar_x, rows_top - 6, f"at step {tracker.step}", pictures.SMALL, fill=pictures.MUTED))
    for tick in pictures.decade_ticks(low, high, 6):
        x = x_of(tick)
        parts.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{rows_top}' y2='{rows_bottom + 4}' "
                     f"stroke='{pictures.GRID}'/>")
        parts.append(pictures.text(x, rows_bottom + 15, pictures.tick_text(tick, True), pictures.SMALL, "middle",
                                   pictures.MUTED))
    for layer, (name, value, status) in enumerate(zip(names, rms, statuses)):
        y = rows_top + layer * row
        hover = f"<title>{pictures.escape(name)}: gradient RMS {pictures.number(value)} ({status})</title>"
        if math.isfinite(value) and value > 0:
            parts.append(f"<rect class='bar' data-layer='{pictures.escape(name)}' data-rms='{value:.6g}' "
                         f"x='{bar_x}' y='{y + row * 0.12:.1f}' width='{x_of(value) - bar_x:.1f}' "
                         f"height='{max(1.0, row * 0.76):.1f}' fill='{STATUS_COLOURS[status]}'>{hover}</rect>")
        elif row >= 11:
            label = "no gradient" if status == "no grad" else ("not finite" if not math.isfinite(value) else "zero")
            parts.append(pictures.text(bar_x + 4, y + row / 2 + 4, label, pictures.SMALL, fill=STATUS_COLOURS[status],
                                       extra=f"class='missing' data-layer='{pictures.escape(name)}'"))
        if status in ("vanishing", "exploding") and row >= 11:
            parts.append(pictures.text(bar_x + bar_w + 8, y + row / 2 + 4, status, pictures.SMALL,
                                       fill=STATUS_COLOURS[status]))
    for value, label in ((band[0], "vanishing"), (band[1], "exploding")):
        x = x_of(value)
        parts.append(f"<line class='threshold' data-kind='{label}' x1='{x:.1f}' x2='{x:.1f}' y1='{rows_top - 2}' "
                     f"y2='{rows_bottom + 2}' stroke='{STATUS_COLOURS[label]}' stroke-dasharray='4 3' "
                     f"stroke-width='1.5'><title>{label} threshold: {pictures.number(value)}</title></line>")
    parts.append(pictures.text(bar_x + bar_w / 2, rows_bottom + 30, "gradient RMS (log)", pictures.SMALL, "middle",
                               pictures.MUTED))
    width = bar_x - left + bar_w + status_w
    return "".join(parts), width, rows_bottom + 36 - top


def _heatmap(tracker, matrix, steps, x, top, width, row):
    """The layers × steps heatmap (one PNG, ``row`` pixels a layer) with a hover text per layer."""
    names, bottom = tracker.names, top + row * len(tracker.names)
    pixels = np.stack([flow_colours(column, healthy_band(column.tolist(), tracker.thresholds)) for column in matrix],
                      axis=1)
    over = f"over steps {steps[0]:.0f} to {steps[-1]:.0f}"
    parts = [pictures.image(x, top, width, row * len(names), pixels, f"gradient RMS of {len(names)} layers {over}: "
                            "blue below the healthy band, red above it", extra="class='heatmap'")]
    for layer, name in enumerate(names):
        shown = matrix[:, layer][np.isfinite(matrix[:, layer])]
        span = (f"from {pictures.number(float(shown[0]))} to {pictures.number(float(shown[-1]))}" if shown.size
                else "no gradient")
        parts.append(f"<rect x='{x}' y='{top + layer * row}' width='{width}' height='{row}' fill-opacity='0'>"
                     f"<title>{pictures.escape(name)}: gradient RMS {span} {over}</title></rect>")
    parts.append(pictures.text(x, top - 6, "over steps (colour: log RMS)", pictures.SMALL, fill=pictures.MUTED))
    parts.append(pictures.text(x, bottom + 15, f"step {steps[0]:.0f}", pictures.SMALL, fill=pictures.MUTED))
    parts.append(pictures.text(x + width, bottom + 15, f"step {steps[-1]:.0f}", pictures.SMALL, "end", pictures.MUTED))
    return "".join(parts)


def grad_flow_svg(tracker):
    """The gradient-flow view as one static SVG, titled with its step (see :func:`grad_flow_picture`)."""
    body, width, height = grad_flow_picture(tracker, 10, 28)
    title = f"gradient flow of {len(tracker.names)} layers" + (
        f" at step {tracker.step}" if tracker.step is not None else "")
    return pictures.document(width + 20, height + 36, pictures.heading(10, 20, title) + body, title)


#: Bar colours by status, as the widget draws them (the heatmap's blue and red ends, a calm grey).
STATUS_COLOURS = {"ok": "#7a7a7a", "vanishing": "#2166ac", "exploding": "#b2182b", "no grad": "#c8c8c8"}
