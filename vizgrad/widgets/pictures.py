"""Drawing helpers for the widgets' static pictures: what a front end without a widget
manager shows of a widget (nbconvert's HTML export, GitHub, a notebook reopened without
its kernel).

A picture is one self-contained SVG string: user text escaped, hover text in ``<title>``
elements, heatmaps and contour maps as PNG data URIs (:func:`vizgrad.render.html.png_data_uri`),
no script and nothing fetched. Labels are at least 11 px. :func:`html_figure` wraps one for
a ``text/html`` output, where the browser shows the ``<title>`` hover text too.

Example::

    body, height = line_chart(0, 0, 420, 200, [Line("train", steps, losses, SERIES_COLOURS[0])], "loss")
    svg = document(420, height, body, "loss curve")
"""

import html
import math
import zlib
from dataclasses import dataclass

import numpy as np

from ..render.html import png_data_uri

TEXT, MUTED, AXIS, GRID = "#1f2933", "#52606d", "#9aa5b1", "#e4e7eb"
FONT = 12                # labels
SMALL = 11               # ticks and notes: the smallest text drawn
STATIC_NOTE = "a static picture of the last state: run the cell to make it live"
LEGEND_ENTRIES = 12      # a chart's legend names at most this many lines
POINT_BUDGET = 3000      # a chart draws about this many points in all (at least 24 a line)
#: The optimizer's contour map (low dark blue, through teal and green, to pale yellow), the
#: stops of ``sequential`` in widgets/src/widgets/optimizer-core.js.
SEQUENTIAL = ((28, 35, 92), (37, 92, 140), (42, 148, 145), (110, 196, 118), (245, 240, 180))


def escape(value):
    """``value`` as text safe inside SVG/HTML elements and attributes."""
    return html.escape(str(value), quote=True)


def number(value):
    """A number in four significant digits ("n/a" when missing or not finite)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.4g}"


def document(width, height, body, label):
    """The whole SVG: white background, vizgrad's font and text colour, ``label`` for screen readers."""
    width, height = int(math.ceil(width)), int(math.ceil(height))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(label)}' "
            f"font-family='sans-serif' font-size='{FONT}' fill='{TEXT}'>"
            f"<rect width='100%' height='100%' fill='#ffffff'/>{body}</svg>")


def html_figure(svg, caption=STATIC_NOTE):
    """``svg`` inline in a ``<div>`` for a ``text/html`` output (hover texts work there), with
    ``caption`` under it."""
    note = f"<div style='font:{SMALL}px sans-serif;color:{MUTED};margin-top:2px'>{escape(caption)}</div>"
    return f"<div class='vg-static' style='max-width:100%;overflow-x:auto'>{svg}{note}</div>"


def text(x, y, content, size=FONT, anchor="start", fill=None, bold=False, extra=""):
    """One ``<text>`` element (``content`` escaped)."""
    attributes = f"x='{x:.1f}' y='{y:.1f}'"
    if size != FONT:
        attributes += f" font-size='{size}'"
    if anchor != "start":
        attributes += f" text-anchor='{anchor}'"
    if fill:
        attributes += f" fill='{fill}'"
    if bold:
        attributes += " font-weight='600'"
    return f"<text {attributes}{' ' + extra if extra else ''}>{escape(content)}</text>"


def heading(x, y, content):
    """The picture's title line: what it shows and at which step."""
    return text(x, y, content, size=14, bold=True)


def note(x, y, width, content, height=56):
    """A framed sentence where a chart has nothing to draw yet (no empty axes)."""
    return (f"<rect x='{x:.1f}' y='{y:.1f}' width='{width:.1f}' height='{height}' rx='4' fill='#f5f7fa' "
            f"stroke='{GRID}'/>" + text(x + 12, y + height / 2 + 4, content, fill=MUTED))


def image(x, y, width, height, pixels, hover=None, crisp=True, extra=""):
    """An ``<image>`` of an (h, w, 3) uint8 array stretched to ``width`` × ``height`` (``crisp``:
    each array cell a sharp block), with ``hover`` text."""
    title = f"<title>{escape(hover)}</title>" if hover else ""
    style = " style='image-rendering:pixelated'" if crisp else ""
    return (f"<image x='{x:.1f}' y='{y:.1f}' width='{width:.1f}' height='{height:.1f}' preserveAspectRatio='none'"
            f"{style} href='{png_data_uri(pixels)}'{' ' + extra if extra else ''}>{title}</image>")


def clip_id(*parts):
    """An element id from what the picture shows (a CRC of ``parts``): the same picture twice on
    a page shares its definitions, different pictures (almost surely) do not."""
    return "vg-clip-" + format(zlib.crc32(repr(parts).encode("utf-8")), "08x")


# --- colour --------------------------------------------------------------------------------------
def ramp(stops, t):
    """Colours of ``t`` (any shape, in [0, 1]) through evenly spaced RGB ``stops``: uint8 (..., 3)."""
    stops = np.asarray(stops, dtype=np.float64)
    position = np.clip(np.nan_to_num(np.asarray(t, dtype=np.float64)), 0, 1) * (len(stops) - 1)
    low = np.minimum(position.astype(int), len(stops) - 2)
    share = (position - low)[..., None]
    return np.rint(stops[low] * (1 - share) + stops[low + 1] * share).astype(np.uint8)


def diverging_pixels(values):
    """Signed ``values`` (h, w) on vizgrad's diverging scale (orange negative, white zero, blue
    positive), scaled by their largest |value|, as the widgets draw maps."""
    from ..lessons.figures import DIVERGING
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    scale = (float(np.abs(finite).max()) if finite.size else 0.0) or 1.0
    return ramp(DIVERGING, 0.5 + values / scale / 2)


def grey_pixels(values):
    """``values`` (h, w) as a grey image: the smallest white, the largest black (the input image)."""
    values = np.asarray(values, dtype=np.float64)
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    shade = np.rint(255 - 255 * (values - low) / ((high - low) or 1.0))
    return np.repeat(np.nan_to_num(shade, nan=200)[..., None], 3, axis=2).astype(np.uint8)


# --- axes ----------------------------------------------------------------------------------------
def nice_ticks(low, high, count=5):
    """About ``count`` round tick values covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + k * step, 12) for k in range(int((high - first) / step + 1e-9) + 1)]


def tick_text(value, log=False):
    """A tick's label: powers of ten as 1e-3 on a log axis, else up to four significant digits."""
    if log:
        exponent = round(math.log10(value))
        return "1" if exponent == 0 else f"1e{exponent}"
    return f"{value:.4g}"


def short_number(value):
    """Two significant digits, exponents short: 2500, 0.061, 7.1e-5."""
    return f"{value:.2g}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")


def decade_ticks(low, high, count=6):
    """Powers of ten in [10**low, 10**high] (exponents ``low``, ``high``), thinned to about ``count``."""
    first, last = math.ceil(low - 1e-9), math.floor(high + 1e-9)
    step = max(1, math.ceil((last - first + 1) / count))
    return [10.0 ** e for e in range(first, last + 1, step)]


@dataclass
class Line:
    """One line of a :func:`line_chart`: its name, x and y values and colour."""

    name: str
    x: np.ndarray
    y: np.ndarray
    colour: str


def wants_log(lines, span=20):
    """Whether a log scale suits these lines: all values positive, spanning more than ``span``×
    (the live charts' rule, widgets/src/widgets/dashboard-widget.js)."""
    values = np.concatenate([np.asarray(line.y, dtype=np.float64) for line in lines]) if lines else np.zeros(0)
    values = values[np.isfinite(values)]
    return bool(values.size and values.min() > 0 and values.max() / values.min() > span)


def _thin(x, y, limit=600):
    """At most ``limit`` points of a line, evenly spread, the last one kept."""
    if len(x) <= limit:
        return x, y
    keep = np.unique(np.linspace(0, len(x) - 1, limit).round().astype(int))
    return x[keep], y[keep]


def line_chart(left, top, width, height, lines, title, x_label="step", y_label="", log=None, reference=None,
               empty="nothing to draw yet"):
    """A framed line chart: ``title`` over it, axes with ticks and labels, one polyline per
    :class:`Line` (hover: its name and latest value), a legend with the latest values under it.

    Args:
        left, top, width, height: where the chart goes (the plot and its axes; the legend adds rows).
        log: a log y axis (None: when :func:`wants_log` says so; non-positive values are then left out).
        reference: a y value drawn as a dashed grey line (a typical value).
        empty: the sentence shown when no line has a finite point.

    Returns:
        ``(svg fragment, height used)``.
    """
    lines = [Line(line.name, np.asarray(line.x, dtype=np.float64), np.asarray(line.y, dtype=np.float64),
                  line.colour) for line in lines]
    log = wants_log(lines) if log is None else log
    masks = [np.isfinite(line.y) & ((line.y > 0) if log else True) for line in lines]
    usable = [(line.x[mask], line.y[mask]) for line, mask in zip(lines, masks)]
    parts = [text(left, top + 14, title, bold=True)]
    if not any(len(x) for x, _ in usable):
        parts.append(note(left, top + 24, width, empty))
        return "".join(parts), 24 + 56
    plot_left, plot_top = left + 58, top + 24
    plot_w, plot_h = width - 58 - 8, height - 24 - 40
    xs = np.concatenate([x for x, _ in usable if len(x)])
    ys = np.concatenate([y for _, y in usable if len(y)])
    if reference is not None and (reference > 0 or not log):
        ys = np.append(ys, reference)
    x0, x1 = float(xs.min()), float(xs.max())
    x1 = x1 if x1 > x0 else x0 + 1
    if log:
        y0, y1 = math.log10(ys.min()), math.log10(ys.max())
        y0, y1 = (y0 - 0.5, y1 + 0.5) if y1 - y0 < 1e-9 else (y0 - 0.05 * (y1 - y0), y1 + 0.05 * (y1 - y0))
        ticks = decade_ticks(y0, y1, 5) or [10 ** round((y0 + y1) / 2)]
    else:
        y0, y1 = float(ys.min()), float(ys.max())
        pad = 0.05 * (y1 - y0) or (abs(y0) * 0.1 or 1.0)
        y0, y1 = y0 - pad, y1 + pad
        ticks = nice_ticks(y0, y1, 4)

    def px(value):
        return plot_left + (value - x0) / (x1 - x0) * plot_w

    def py(value):
        v = math.log10(value) if log else value
        return plot_top + (1 - (v - y0) / (y1 - y0)) * plot_h

    parts.append(f"<rect x='{plot_left:.1f}' y='{plot_top:.1f}' width='{plot_w:.1f}' height='{plot_h:.1f}' "
                 f"fill='none' stroke='{AXIS}'/>")
    for tick in ticks:
        y = py(tick)
        if plot_top - 0.5 <= y <= plot_top + plot_h + 0.5:
            parts.append(f"<line x1='{plot_left:.1f}' x2='{plot_left + plot_w:.1f}' y1='{y:.1f}' y2='{y:.1f}' "
                         f"stroke='{GRID}'/>")
            parts.append(text(plot_left - 5, y + 4, tick_text(tick, log), SMALL, "end", MUTED))
    for tick in nice_ticks(x0, x1, 5):
        x = px(tick)
        parts.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{plot_top + plot_h:.1f}' y2='{plot_top + plot_h + 4:.1f}' "
                     f"stroke='{AXIS}'/>")
        parts.append(text(x, plot_top + plot_h + 16, tick_text(tick), SMALL, "middle", MUTED))
    parts.append(text(plot_left + plot_w / 2, plot_top + plot_h + 32, x_label, SMALL, "middle", MUTED))
    if y_label:
        parts.append(text(0, 0, y_label + (" (log)" if log else ""), SMALL, "middle", MUTED,
                          extra=f"transform='translate({left + 10:.1f} {plot_top + plot_h / 2:.1f}) rotate(-90)'"))
    if reference is not None and (reference > 0 or not log):
        y = py(reference)
        parts.append(f"<line class='reference' x1='{plot_left:.1f}' x2='{plot_left + plot_w:.1f}' y1='{y:.1f}' "
                     f"y2='{y:.1f}' stroke='{MUTED}' stroke-dasharray='5 4'><title>typical: {number(reference)}"
                     "</title></line>")
    limit = max(24, min(600, POINT_BUDGET // max(1, len(lines))))
    for line, (x, y) in zip(lines, usable):
        if not len(x):
            continue
        count = len(x)
        x, y = _thin(x, y, limit)
        points = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x.tolist(), y.tolist()))
        style = " stroke-width='2'"
        if len(x) == 1:                                  # one point: a dot (a zero-length line, round caps)
            points, style = f"{points} {points}", " stroke-width='6' stroke-linecap='round'"
        parts.append(f"<polyline class='line' data-name='{escape(line.name)}' points='{points}' fill='none' "
                     f"stroke='{line.colour}' stroke-linejoin='round'{style}>"
                     f"<title>{escape(line.name)}: {number(float(y[-1]))} at {escape(x_label)} {x[-1]:.4g} "
                     f"({count} points)</title></polyline>")
    entries = [(f"{line.name} {number(float(y[-1])) if len(y) else 'n/a'}", line.colour)
               for line, (_, y) in zip(lines, usable)]
    if len(entries) > LEGEND_ENTRIES:
        entries = entries[:LEGEND_ENTRIES - 1] + [(f"and {len(entries) - LEGEND_ENTRIES + 1} more (hover a line)",
                                                   AXIS)]
    legend, used = legend_rows(left + 58, top + height + 2, width - 58, entries)
    parts.append(legend)
    return "".join(parts), height + used


def legend_rows(left, top, width, entries):
    """Swatches and labels (``[(label, colour)]``) in rows that wrap at ``width``; returns
    ``(fragment, height used)``."""
    parts, x, y = [], left, top
    for label, colour in entries:
        room = 18 + 6.6 * len(label) + 14
        if x > left and x + room > left + width:
            x, y = left, y + 17
        parts.append(f"<rect x='{x:.1f}' y='{y + 4:.1f}' width='12' height='4' fill='{colour}'/>")
        parts.append(text(x + 16, y + 11, label, SMALL))
        x += room
    return "".join(parts), (y - top + 17 if entries else 0)
