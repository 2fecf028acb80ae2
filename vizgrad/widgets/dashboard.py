"""``dashboard(model, optimizer)``: one call that attaches to any training loop.

It shows loss and metric curves (from :func:`vizgrad.events.mark`), gradient flow per
layer (flagged as :mod:`vizgrad.diagnostics` does), weight and gradient histograms per
layer, and update/parameter ratios per layer (from the optimizer's steps)::

    board = dashboard(model, optimizer)
    board
    for step, (x, y) in enumerate(loader):
        loss = loss_fn(model(x), y)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        vizgrad.events.mark("train", loss=loss, step=step)      # one curve per value

The dashboard follows its model and optimizer only: its step counts the optimizer's
steps (without an optimizer, the backward passes that reach the model) since the
dashboard was made, and other models trained in the same kernel do not show. A mark
belongs to the model whose training step came last: marks made after another model's
step (and before this model's next one) are not drawn.

Cheap by design: it keeps a few numbers per parameter (gradient and update norms, which
the optimizer computes for it) for at most ``summary_rate`` steps per second (a budget of
one second's worth: a short run has every step), the other steps only counted (the curves then say ``sampled``); the curves are sent at most
``max_rate`` times per second and the histograms, the only full pass over the weights,
are computed at most ``histogram_rate`` times per second from a strided sample of each tensor.
``dashboard(..., display=False)`` gives the listeners without a widget (for scripts and
benchmarks); its :attr:`DashboardState.snapshot` holds what the widget would show.
"""

import math
import time

import numpy as np
import traitlets

from .. import events
from ..errors import ArgumentTypeError, public
from ..backends import backend_of
from ..render.html import SERIES_COLOURS
from .base import Coalescer, SeriesBuffer, VizgradWidget, float32_bytes, number_text
from . import pictures
from .checks import (check_bool, check_callable, check_count, check_optimizer, check_rate, check_widget_options,
                     parameter_table)
from .grad_flow import BackwardScope, GradFlowTracker, grad_flow_picture, sample_norms

HISTOGRAM_SAMPLE = 65536     # values read per tensor for a histogram, at most
RATIO_REFERENCE = 1e-3       # a commonly quoted healthy update/parameter ratio


class DashboardState:
    """The dashboard's listeners and data, without a widget.

    Args:
        model: its parameters are the layers.
        optimizer: when given, gradient and update norms come from its ``optimizer_step``
            events; otherwise gradient norms are read after each backward pass.
        apply: ``apply(name, payload)`` delivers an update (the widget sets a trait); by
            default the payload is kept in :attr:`snapshot`.
        hold: context manager factory around each delivery (the widget's ``hold_sync``).
        max_rate: curve updates per second at most; histogram_rate: histogram updates per
            second at most; max_points: history length kept per curve; bins: histogram bins;
            summary_rate: steps per second at most whose per-parameter numbers are taken
            (None: every step). Rates are > 0, ``max_points`` an int >= 2, ``bins`` >= 1.

    A wrong argument raises a :mod:`vizgrad.errors` exception naming it, in the words of the
    function called (``dashboard``, ``Dashboard`` or ``DashboardState``).
    """

    @public("DashboardState")
    def __init__(self, model, optimizer=None, apply=None, hold=None, max_rate=20, histogram_rate=2,
                 max_points=2000, bins=30, summary_rate=100):
        op = "DashboardState"
        self.names, self._params, sizes = parameter_table(op, model)
        optimizer = check_optimizer(op, "optimizer", optimizer, self._params)
        apply, hold = check_callable(op, "apply", apply), check_callable(op, "hold", hold)
        max_rate = check_rate(op, "max_rate", max_rate)
        histogram_rate = check_rate(op, "histogram_rate", histogram_rate)
        summary_rate = check_rate(op, "summary_rate", summary_rate, allow_none=True)
        max_points, bins = check_count(op, "max_points", max_points, minimum=2), check_count(op, "bins", bins)
        self.optimizer = optimizer
        self.bins = bins
        self.max_points = max_points
        self.flow = GradFlowTracker(self.names, sizes, max_points)
        self.ratios = SeriesBuffer(len(self.names), max_points)
        self.current_ratio = np.full(len(self.names), math.nan)
        self.curves = {}            # value name -> mark name -> SeriesBuffer(1)
        self.step = 0
        self.sampled = False        # whether some steps' numbers were not taken (see summary_rate)
        self._unsampled = None      # the newest step, when its numbers were not taken
        self.snapshot = {}
        self._mark_counts = {}
        self._apply = apply or self.snapshot.__setitem__
        self._index = {name: position for position, name in enumerate(self.names)}
        for position, param in enumerate(self._params):
            if param.name:
                self._index.setdefault(param.name, position)
        self._updates = Coalescer(max_rate, hold=hold)
        self._histogram_updates = Coalescer(histogram_rate, hold=hold)
        self._scope = BackwardScope(self._params)
        self._marks_are_ours = True      # False after another model's step, until ours comes again
        self._summaries = events.SummaryBudget(summary_rate)     # backward passes (no optimizer)
        kinds = {"mark", "optimizer_step"} if optimizer is not None else {"mark", "grad_accumulated", "backward_end"}
        self._subscription = events.subscribe(self._on_event, kinds=kinds, summary_rate=summary_rate)

    @property
    def listening(self):
        return self._subscription is not None and not self._subscription.closed

    def close(self):
        """Detach from the engine and cancel pending updates."""
        if self._subscription is not None:
            self._subscription.close()
        self._updates.close()
        self._histogram_updates.close()

    def flush(self):
        """Deliver pending updates now (curves and histograms)."""
        self._updates.flush()
        self._histogram_updates.flush()

    # --- events (the per-step work: a few numbers per parameter) --------------------------
    def _on_event(self, event):
        if event.kind == "optimizer_step":
            self._marks_are_ours = event.source is self.optimizer
            if self._marks_are_ours:
                self._on_optimizer_step(event)
        elif event.kind == "grad_accumulated":
            self._scope.note(event)
        elif event.kind == "backward_end":
            self._marks_are_ours = self._scope.take()
            if not self._marks_are_ours:
                return
            with self._updates.lock:
                self.step += 1
                if not self._summaries.take(time.monotonic()):
                    self._skipped(self.step)
                else:
                    self._unsampled = None
                    self.flow.record(self.step, *sample_norms(self._params))
            self._request_all()
        else:
            self._on_mark(event)

    def _on_optimizer_step(self, event):
        if not event.summarised:            # this step's numbers were not taken: only count it
            with self._updates.lock:
                self.step += 1
                self._skipped(self.step)
            self._request_all()
            return
        count = len(self.names)
        norms = np.full(count, math.nan)
        ratios = np.full(count, math.nan)
        has_grad = np.zeros(count, dtype=bool)
        for position, summary in enumerate(event.params):
            index = self._index.get(summary.name, position if len(event.params) == count else None)
            if index is None or index >= count:
                continue
            norms[index] = summary.grad_norm
            ratios[index] = summary.update_ratio
            has_grad[index] = True
        with self._updates.lock:
            self.step += 1
            self._unsampled = None
            self.flow.record(self.step, norms, has_grad)
            self.ratios.append(self.step, ratios)
            self.current_ratio = ratios
        self._request_all()

    def _on_mark(self, event):
        if not self._marks_are_ours:
            return
        with self._updates.lock:
            count = self._mark_counts.get(event.name, 0)
            self._mark_counts[event.name] = count + 1
            x = event.values.get("step")
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                x = self.step if self.step else count
            for key, value in event.values.items():
                if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                buffer = self.curves.setdefault(key, {}).get(event.name)
                if buffer is None:
                    buffer = self.curves[key][event.name] = SeriesBuffer(1, self.max_points)
                buffer.append(x, [value])
        self._updates.request(self._push_curves, key="curves")

    def _skipped(self, step):
        """Step ``step`` went by without its numbers (see ``summary_rate``): the curves say
        they are sampled, and its gradient norms are read when the curves are next sent."""
        self.sampled = True
        self._unsampled = step

    def _request_all(self):
        self._updates.request(self._push_series, key="series")
        self._histogram_updates.request(self._push_histograms, key="histograms")

    # --- payloads (built only when delivered) ------------------------------------------------
    def _push_series(self):
        with self._updates.lock:
            if self._unsampled is not None:
                # the newest step is drawn exactly: its gradients are still there to be read,
                # unless the next step has begun (a delivery from the timer's thread): then
                # some layers that had a gradient have none, and the rows keep what they showed
                norms, has_grad = sample_norms(self._params)
                if has_grad.any() and not (self.flow.has_grad & ~has_grad).any():
                    self.flow.record(self._unsampled, norms, has_grad)
                self._unsampled = None
            flow = self.flow.payload()
            flow["sampled"] = self.sampled
            ratios = {"series": self.ratios.payload(), "reference": RATIO_REFERENCE, "sampled": self.sampled,
                      "current": [value if math.isfinite(value) else None for value in self.current_ratio.tolist()]}
            step = self.step
        self._apply("flow", flow)
        self._apply("ratios", ratios)
        self._apply("step", step)

    def _push_curves(self):
        with self._updates.lock:
            curves = {key: {name: buffer.payload() for name, buffer in lines.items()}
                      for key, lines in self.curves.items()}
        self._apply("curves", curves)

    def _push_histograms(self):
        self._apply("histograms", self.histograms())

    def histograms(self):
        """Weight and gradient histograms per layer, from a strided sample of at most
        :data:`HISTOGRAM_SAMPLE` values of each tensor."""
        result = {}
        for name, param in zip(self.names, self._params):
            entry = {"weight": histogram(param._array, self.bins)}
            if param.grad is not None:
                entry["grad"] = histogram(param.grad._array, self.bins)
            result[name] = entry
        return result


def histogram(array, bins=30):
    """``{"counts": float32 bytes, "low", "high", "nan", "inf", "sampled"}`` of a backend array,
    over a strided sample of at most :data:`HISTOGRAM_SAMPLE` values."""
    size = int(np.prod(array.shape)) if len(array.shape) else 1
    stride = max(1, -(-size // HISTOGRAM_SAMPLE))
    flat = array.reshape(-1)[::stride]
    if not isinstance(flat, np.ndarray):
        flat = backend_of(flat).to_numpy(flat)
    values = np.asarray(flat, dtype=np.float32)
    finite_mask = np.isfinite(values)
    finite = values[finite_mask] if not finite_mask.all() else values
    nan = int(np.isnan(values).sum()) if finite.size != values.size else 0
    inf = int(values.size - finite.size - nan)
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        if high == low:
            low, high = low - 0.5, high + 0.5
        counts, _ = np.histogram(finite, bins=bins, range=(low, high))
        mean, std = float(finite.mean()), float(finite.std())
    else:
        low, high, counts, mean, std = 0.0, 1.0, np.zeros(bins), math.nan, math.nan
    return {"counts": float32_bytes(counts), "low": low, "high": high, "nan": nan, "inf": inf,
            "mean": mean if math.isfinite(mean) else None, "std": std if math.isfinite(std) else None,
            "sampled": stride > 1, "size": size}


class Dashboard(VizgradWidget):
    """The training dashboard widget (made by :func:`dashboard`).

    Synced traits: ``layers``; ``flow`` (as :class:`~vizgrad.widgets.GradFlowView`'s);
    ``ratios`` (``series`` of update/parameter ratios per layer, ``current``, ``reference``);
    ``curves`` (value name → mark name → {steps, values} float32 buffers); ``histograms``
    (layer → {weight, grad}: counts as float32 buffers, low, high, ...); ``step``; ``tab``,
    the panel shown (``"curves"``: the marked curves and the update ratios, ``"flow"``: the
    gradient flow, ``"histograms"``), chosen by the tabs in the browser or from Python.
    """

    _bundle = "dashboard-widget"

    layers = traitlets.List(traitlets.Unicode()).tag(sync=True)
    flow = traitlets.Dict().tag(sync=True)
    ratios = traitlets.Dict().tag(sync=True)
    curves = traitlets.Dict().tag(sync=True)
    histograms = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    title = traitlets.Unicode("Training").tag(sync=True)
    tab = traitlets.Enum(("curves", "flow", "histograms"), "curves").tag(sync=True)

    @public("Dashboard")
    def __init__(self, model, optimizer=None, max_rate=20, histogram_rate=2, max_points=2000, bins=30,
                 summary_rate=100, **kwargs):
        # every argument is checked (by the state) before a comm opens
        check_widget_options("Dashboard", type(self), kwargs)
        state = DashboardState(model, optimizer, apply=self._apply, hold=self.hold_sync, max_rate=max_rate,
                               histogram_rate=histogram_rate, max_points=max_points, bins=bins,
                               summary_rate=summary_rate)
        try:
            super().__init__(**kwargs)
        except BaseException:             # a trait's value refused: nothing may keep listening
            state.close()
            raise
        self.state = state
        self.layers = list(self.state.names)
        self.state._push_series()
        self.state._push_histograms()

    @property
    def listening(self):
        return self.state.listening

    def _apply(self, name, payload):
        setattr(self, name, payload)

    def flush(self):
        """Send pending updates now."""
        self.state.flush()

    def close(self):
        state = getattr(self, "state", None)
        if state is not None:
            state.close()
        super().close()

    def _fallback_text(self):
        state = self.state
        latest = []
        for key, lines in state.curves.items():
            for name, buffer in lines.items():
                if len(buffer):
                    latest.append(f"{name} {key} {number_text(float(buffer.matrix()[-1, 0]))}")
        return f"<Dashboard: step {state.step}; {', '.join(latest) or 'no marks yet'}>"

    def _fallback_svg(self):
        with self.state._updates.lock:
            return dashboard_svg(self.state, self.title)

    def _fallback_html(self):
        return pictures.html_figure(self._fallback_svg())


def dashboard_svg(state, title="Training"):
    """The dashboard as one static SVG: a chart per marked value (every mark's line), the
    update/parameter ratios per layer (log, the typical ratio dashed), then the gradient flow."""
    heading = f"{title} at step {state.step}" + (" (sampled)" if state.sampled else "")
    if state.step == 0 and not state.curves:
        body = pictures.heading(10, 20, heading) + pictures.note(10, 34, 600, "no steps yet: run training to fill it "
                                                                          "(the dashboard follows the model's steps)")
        return pictures.document(620, 100, body, heading)
    half, gap, chart_h = 430, 20, 200
    charts = []
    for key, marks in state.curves.items():
        lines = [pictures.Line(name, buffer.steps, buffer.matrix()[:, 0], SERIES_COLOURS[k % len(SERIES_COLOURS)])
                 for k, (name, buffer) in enumerate(marks.items())]
        charts.append({"lines": lines, "title": key, "y_label": key})
    if not charts:
        charts.append({"lines": [], "title": "curves", "empty": "no marks yet: call vizgrad.events.mark('train', "
                                                                "loss=loss)"})
    ratios = state.ratios.matrix()
    charts.append({"lines": [pictures.Line(name, state.ratios.steps, ratios[:, k],
                                           SERIES_COLOURS[k % len(SERIES_COLOURS)])
                             for k, name in enumerate(state.names)],
                   "title": "update / parameter ratio ‖Δw‖/‖w‖", "y_label": "ratio", "log": True,
                   "reference": RATIO_REFERENCE,
                   "empty": "no optimizer steps yet" if state.optimizer is not None else
                   "no optimizer: dashboard(model, optimizer) draws these"})
    parts = [pictures.heading(10, 20, heading)]
    top = 32
    for first in range(0, len(charts), 2):
        used = 0
        for column, chart in enumerate(charts[first:first + 2]):
            fragment, height = pictures.line_chart(10 + column * (half + gap), top, half, chart_h, chart["lines"],
                                                   chart["title"], y_label=chart.get("y_label", ""),
                                                   log=chart.get("log"), reference=chart.get("reference"),
                                                   empty=chart.get("empty", ""))
            parts.append(fragment)
            used = max(used, height)
        top += used + 16
    parts.append(pictures.text(10, top + 14, "gradient flow", bold=True))
    flow, flow_width, flow_height = grad_flow_picture(state.flow, 10, top + 20)
    parts.append(flow)
    width = max(2 * half + gap, flow_width) + 20
    return pictures.document(width, top + 20 + flow_height + 8, "".join(parts), heading)


@public("dashboard")
def dashboard(model, optimizer=None, display=True, **options):
    """A training dashboard for ``model`` (and ``optimizer``) that follows any training loop.

    Args:
        model: a :class:`vizgrad.nn.Module`.
        optimizer: a :class:`vizgrad.optim.Optimizer`, for update ratios and cheap gradient norms.
        display: False gives the listeners alone (a :class:`DashboardState`, no widget,
            no Jupyter needed at run time); call its ``close()`` when done.
        options: ``max_rate``, ``histogram_rate``, ``max_points``, ``bins``, ``summary_rate``
            (and the widget's traits, ``title``, ``tab``, when displayed).

    Returns:
        A :class:`Dashboard` widget (or a :class:`DashboardState` when ``display`` is False).
    """
    check_bool("dashboard", "display", display)
    if not display:
        return DashboardState(model, optimizer, **_check_options(options))
    return Dashboard(model, optimizer, **options)


_OPTIONS = ("max_rate", "histogram_rate", "max_points", "bins", "summary_rate")


def _check_options(options):
    """The keyword arguments of ``dashboard(..., display=False)``: :data:`_OPTIONS` only."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ArgumentTypeError(f"dashboard: got an unexpected keyword argument {unknown[0]!r}; "
                                f"the options are {list(_OPTIONS)}")
    return options
