"""What every vizgrad widget shares: its front-end bundle, throttled updates, event
subscriptions it owns, binary number series and a static fallback.

* :class:`VizgradWidget` loads its ES module and styles from ``vizgrad/widgets/static/``
  (built from ``widgets/src/widgets/`` by ``make build``); ``close()`` closes every event
  subscription the widget opened, so a closed widget leaves no listener behind.
* :class:`Coalescer` throttles updates: a burst of events becomes at most ``max_rate``
  deliveries per second, each built from the latest state only when it is sent, and
  the last one always arrives (a one-shot timer delivers it after the burst).
* :func:`float32_bytes` turns numbers into the binary buffers that widget traits carry
  (the front end reads them as ``Float32Array``), rather than JSON lists.
* A widget displays itself (``_ipython_display_``) as the widget view, its snapshot (its
  last state, which vizgrad's JupyterLab extension draws with no kernel:
  :mod:`vizgrad.widgets.snapshot`), a static picture (HTML, SVG) for front ends that cannot
  run widgets (nbconvert, GitHub), and text. The snapshot follows the widget as it changes
  (throttled, and when the running cell finishes); ``_repr_mimebundle_`` returns the same bundle.
"""

import base64
import html
import math
import os
import threading
import time
import warnings

import anywidget
import numpy as np
import traitlets  # noqa: F401  (re-exported: widget modules take their trait types from here)

from ..errors import ArgumentError, ArgumentTypeError
from ..render.html import BundleMissing
from . import snapshot

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
SHARED_CSS = "widgets.css"
DEFAULT_RATE = 20.0
_bundle_cache = {}


def read_static(name):
    """The text of a built front-end file in ``vizgrad/widgets/static/`` (cached).

    Raises:
        BundleMissing: the bundle was not built; the message says how to build it.
    """
    text = _bundle_cache.get(name)
    if text is None:
        path = os.path.join(STATIC_DIR, name)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            raise BundleMissing(
                f"vizgrad's widget bundle is missing ({path}): it is built from widgets/ with Node.js. "
                "In a source checkout run `make build` (or `npm --prefix widgets ci && npm --prefix widgets "
                "run build`), then restart the kernel.") from None
        _bundle_cache[name] = text
    return text


#: What a widget module may ask its kernel for (``assets.js``), by name: the file in static/.
ASSETS = {"layout-worker": "layout-worker.js"}


def asset_base64(name):
    """The base64 text of asset ``name`` (read once): what the browser starts the asset from."""
    key = ("base64", name)
    text = _bundle_cache.get(key)
    if text is None:
        path = os.path.join(STATIC_DIR, ASSETS[name])
        try:
            with open(path, "rb") as handle:
                text = base64.b64encode(handle.read()).decode("ascii")
        except FileNotFoundError:
            raise BundleMissing(f"vizgrad's widget bundle is missing ({path}): in a source checkout run `make build`, "
                                "then restart the kernel.") from None
        _bundle_cache[key] = text
    return text


class _BundleText:
    """Class attribute that reads a widget's ES module (``"js"``) or styles (``"css"``) from the
    static folder when anywidget asks for it, so importing vizgrad.widgets never needs the bundle."""

    def __init__(self, kind):
        self.kind = kind

    def __get__(self, widget, owner):
        if widget is None:
            return self
        bundle = owner._bundle
        if self.kind == "js":
            return read_static(f"{bundle}.js")
        own_css = os.path.join(STATIC_DIR, f"{bundle}.css")
        return read_static(SHARED_CSS) + ("\n" + read_static(f"{bundle}.css") if os.path.exists(own_css) else "")


class VizgradWidget(anywidget.AnyWidget):
    """Base class of vizgrad's widgets.

    A subclass names its bundle (``_bundle = "graph-widget"`` reads
    ``static/graph-widget.js`` and the shared ``static/widgets.css``), opens event
    subscriptions with :meth:`_subscribe` and throttles updates with :meth:`_coalescer`;
    :meth:`close` undoes both. It may override :meth:`_fallback_html` or
    :meth:`_fallback_svg` for the static picture.
    """

    _bundle = None
    _esm = _BundleText("js")
    _css = _BundleText("css")

    def __init__(self, **kwargs):
        if not self._bundle:
            raise TypeError(f"{type(self).__name__} must name its front-end bundle in _bundle")
        self._subscriptions = []
        self._coalescers = []
        try:
            super().__init__(**kwargs)
        except traitlets.TraitError as error:      # a trait given a value of the wrong kind
            raise ArgumentTypeError(f"{type(self).__name__}: {error}") from None
        self.on_msg(self._on_asset_request)
        refresh = Coalescer(max_rate=1.0 / snapshot.REFRESH_INTERVAL)
        self._snapshots = snapshot.SnapshotDisplays(self._mimebundle, refresh, settle=self.flush)
        self.observe(self._snapshot_changed, names=snapshot.state_keys(self))

    # --- what the widget owns -----------------------------------------------------
    def _subscribe(self, callback, kinds=None):
        """Subscribe ``callback`` to engine events for as long as the widget is open."""
        from .. import events
        subscription = events.subscribe(callback, kinds=kinds)
        self._subscriptions.append(subscription)
        return subscription

    def _coalescer(self, max_rate=DEFAULT_RATE, **options):
        """A :class:`Coalescer` that is closed with the widget; each flush syncs once."""
        coalescer = Coalescer(max_rate=max_rate, hold=self.hold_sync, **options)
        self._coalescers.append(coalescer)
        return coalescer

    def flush(self):
        """Send pending updates now."""
        for coalescer in self._coalescers:
            coalescer.flush()

    def _stop_listening(self):
        subscriptions = getattr(self, "_subscriptions", [])
        for subscription in subscriptions:
            subscription.close()
        subscriptions.clear()

    @property
    def listening(self):
        """Whether the widget still receives engine events."""
        return any(not subscription.closed for subscription in getattr(self, "_subscriptions", ()))

    def close(self):
        """Stop listening to events, cancel pending updates and close the front-end views."""
        self._stop_listening()
        for coalescer in getattr(self, "_coalescers", ()):
            coalescer.close()
        if hasattr(self, "_snapshots"):
            self._snapshots.close()
        super().close()

    def _on_asset_request(self, _widget, content, _buffers):
        """Send the browser an asset its module does not carry (``widgets/src/widgets/assets.js``):
        the layout engine, once per page that draws a graph."""
        if not (isinstance(content, dict) and content.get("type") == "asset"):
            return
        name = content.get("name")
        if name not in ASSETS:
            self.send({"type": "asset", "name": name, "error": f"vizgrad has no asset {name!r}"})
            return
        try:
            self.send({"type": "asset", "name": name, "base64": asset_base64(name)})
        except BundleMissing as error:          # said in the widget, where the drawing would be
            self.send({"type": "asset", "name": name, "error": str(error)})

    # --- display --------------------------------------------------------------------
    def _ipython_display_(self, **kwargs):
        """Display the bundle with a display id, and keep the handle to refresh its snapshot."""
        from IPython.display import display
        if self.comm is None:                  # closed: nothing to show live, nothing to refresh
            display({"text/plain": self._fallback_text()}, raw=True)
            return
        data, metadata = self._mimebundle()
        self._snapshots.add(display(data, metadata=metadata, raw=True, display_id=True))

    def _repr_mimebundle_(self, **kwargs):
        return self._mimebundle()

    def _mimebundle(self):
        """``(data, metadata)``: the widget view, the snapshot, HTML, SVG, text, in that order."""
        view, metadata = anywidget.AnyWidget._repr_mimebundle_(self)
        data = {snapshot.WIDGET_VIEW_MIME_TYPE: view[snapshot.WIDGET_VIEW_MIME_TYPE]}
        # neither the snapshot nor a picture may ever stop the widget from showing
        try:
            data[snapshot.MIME_TYPE] = snapshot.take(self)
        except Exception as error:
            warnings.warn(f"vizgrad could not take {type(self).__name__}'s snapshot: {type(error).__name__}: {error}",
                          RuntimeWarning)
        try:
            data["text/html"] = self._fallback_html()
        except Exception as error:
            data["text/html"] = f"<pre>{html.escape(self._fallback_text())}\n({html.escape(str(error))})</pre>"
        try:
            svg = self._fallback_svg()
        except Exception:
            svg = None            # the HTML above stands in for it
        if svg:
            data["image/svg+xml"] = svg
        data["text/plain"] = self._fallback_text()
        return data, dict(metadata)

    def _snapshot_changed(self, _change):
        self._snapshots.changed()

    def _fallback_text(self):
        return f"<{type(self).__name__} widget: run the notebook with ipywidgets to interact>"

    def _fallback_svg(self):
        """A static SVG of the widget's state, or None to use :meth:`_fallback_html`."""
        return None

    def _fallback_html(self):
        return f"<p>{html.escape(self._fallback_text())}</p>"


class Coalescer:
    """Deliver the latest pending update at most ``max_rate`` times per second.

    ``request(build, key)`` says that ``build()`` should run (it builds a payload and
    applies it, e.g. sets traits); requests with the same key replace each other, so
    only the latest runs, and nothing is built until it is delivered. The first request
    after a quiet period is delivered at once; those that follow within ``1/max_rate``
    seconds are delivered by the first request after the interval, in the caller's thread;
    a single one-shot :class:`threading.Timer` delivers the last of them when no request
    follows (at most two intervals after it): a burst costs at most ``max_rate``
    deliveries per second plus one, and its final state always arrives. ``close()``
    cancels the timer.
    The interval counts from the end of a delivery and stretches to four times the
    delivery's duration when that is longer, so slow payloads cannot take over the loop.

    Args:
        max_rate: deliveries per second at most.
        hold: a context manager factory wrapped around each delivery (a widget's
            ``hold_sync``, so one delivery is one message to the front end).
        clock, timer: injectable for tests (``time.monotonic``, ``threading.Timer``).
    """

    COST_FACTOR = 4.0   # wait at least this many times the last delivery's duration

    def __init__(self, max_rate=DEFAULT_RATE, hold=None, clock=time.monotonic, timer=threading.Timer):
        if not max_rate > 0:
            raise ArgumentError(f"max_rate must be positive, got {max_rate!r}")
        self.interval = 1.0 / max_rate
        self.lock = threading.RLock()
        self.flushes = 0
        self._hold = hold
        self._clock = clock
        self._timer_factory = timer
        self._pending = {}
        self._timer = None
        self._last = -math.inf
        self._gap = self.interval
        self._closed = False

    @property
    def pending(self):
        return bool(self._pending)

    def request(self, build, key=None):
        """Ask for ``build()`` to run at the next delivery (replacing a pending one with ``key``)."""
        with self.lock:
            if self._closed:
                return
            self._pending[key] = build
            wait = self._last + self._gap - self._clock()
            if wait <= 0:
                self._deliver()
            elif self._timer is None:
                # The timer is the fallback for the end of a burst: while requests keep coming,
                # the first one after the interval delivers in the caller's thread (no second
                # thread competing with a training loop), and the timer is cancelled.
                self._timer = self._timer_factory(wait + self._gap, self._on_timer)
                self._timer.daemon = True
                self._timer.start()

    def flush(self):
        """Deliver what is pending now."""
        with self.lock:
            if self._pending and not self._closed:
                self._deliver()

    def close(self):
        """Drop pending updates and cancel the timer; later requests are ignored."""
        with self.lock:
            self._closed = True
            self._pending.clear()
            self._hold = None          # a cancelled timer's thread may outlive us briefly: keep nothing alive
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _on_timer(self):
        with self.lock:
            self._timer = None
            if self._pending and not self._closed:
                try:
                    self._deliver()
                except Exception as error:  # in the timer's thread nobody else would see it
                    warnings.warn(f"vizgrad widget update failed: {type(error).__name__}: {error}", RuntimeWarning)

    def _deliver(self):
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        builds = list(self._pending.values())
        self._pending.clear()
        self.flushes += 1
        started = self._clock()
        try:
            if self._hold is None:
                for build in builds:
                    build()
            else:
                with self._hold():
                    for build in builds:
                        build()
        finally:
            # The interval runs from the end of a delivery, and a costly delivery (a large
            # graph) stretches it, so updates never take more than a fifth of the time.
            self._last = self._clock()
            self._gap = max(self.interval, self.COST_FACTOR * (self._last - started))


# --- binary series -------------------------------------------------------------------
def float32_bytes(values):
    """``values`` (any array-like of numbers) as little-endian float32 bytes; NaN marks gaps."""
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).astype("<f4")).tobytes()


def from_float32_bytes(data, columns=None):
    """Read back what :func:`float32_bytes` wrote (a row-major (-1, columns) matrix when given)."""
    array = np.frombuffer(bytes(data), dtype="<f4")
    return array.reshape(-1, columns) if columns else array


class SeriesBuffer:
    """Rows of numbers over training steps, bounded: past ``max_points`` rows, every other
    row is dropped and only every second later step is kept, so a long run still spans its
    whole history in at most ``max_points`` rows. The latest row is always shown (after
    the kept ones), so a curve ends at the current step.

    Each row is ``columns`` numbers for one step (e.g. one gradient norm per layer).
    """

    def __init__(self, columns, max_points=2000):
        if max_points < 2:
            raise ArgumentError(f"max_points must be at least 2, got {max_points!r}")
        self.columns = columns
        self.max_points = max_points
        self.stride = 1
        self._steps = []
        self._rows = []
        self._seen = 0
        self._latest = None       # (step, row) of the latest append when the stride skipped it

    def __len__(self):
        return len(self._steps) + (self._latest is not None)

    def append(self, step, row):
        """Add ``row`` (``columns`` numbers) for ``step``; returns whether it is kept for good."""
        self._seen += 1
        self._latest = (step, row)
        if (self._seen - 1) % self.stride:
            return False
        if len(self._steps) >= self.max_points - 1:          # one place stays for the latest row
            self._steps = self._steps[::2]
            self._rows = self._rows[::2]
            self.stride *= 2
            if (self._seen - 1) % self.stride:
                return False
        self._steps.append(step)
        self._rows.append(row)
        self._latest = None
        return True

    @property
    def steps(self):
        steps = self._steps + ([self._latest[0]] if self._latest is not None else [])
        return np.asarray(steps, dtype=np.float64)

    def matrix(self):
        """The rows as a (len, columns) float64 array."""
        rows = self._rows + ([self._latest[1]] if self._latest is not None else [])
        if not rows:
            return np.zeros((0, self.columns))
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), self.columns)

    def payload(self):
        """``{"steps": bytes, "values": bytes, "columns": n, "length": len}`` for a trait."""
        return {"steps": float32_bytes(self.steps), "values": float32_bytes(self.matrix()),
                "columns": self.columns, "length": len(self)}


def html_table(header, rows, caption=None):
    """A small escaped HTML table for the static fallbacks."""
    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(str(c))}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:2px 8px'>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    title = f"<caption style='text-align:left;font-weight:600'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table style='border-collapse:collapse;font:12px sans-serif'>{title}<tr>{head}</tr>{body}</table>"


def number_text(value):
    """A number in four significant digits ("—" for None or non-finite)."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.4g}"


__all__ = ["BundleMissing", "Coalescer", "SeriesBuffer", "VizgradWidget", "float32_bytes", "from_float32_bytes",
           "read_static", "traitlets"]
