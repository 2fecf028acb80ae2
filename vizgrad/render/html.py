"""Self-contained HTML: a graph with its backward replay, and training reports.

One file holds everything: the styles and the script inline (the bundle that
``make build`` writes to ``vizgrad/render/static/``, Graphviz compiled to WebAssembly
included), and the data as JSON in ``<script type="application/json">``. The browser
lays the graph out (in a worker started from the page's own script), so neither a
server, nor a Graphviz install, nor the network is needed; the page's Content-Security-Policy forbids every network request.

User strings (tensor, module and file names) reach the page only as JSON, with
``<``, ``>``, ``&`` and the line separators U+2028/U+2029 escaped, and the script
puts them into the page as text, never as markup.

Example::

    with vizgrad.trace() as tr:
        loss = model(x).pow(2).mean()
        loss.backward()
    tr.graph.to_html("step.html")
"""

import base64
import html
import json
import math
import os
import struct
import zlib

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
BUNDLE = ("report.js", "report.css")
REPORT_SCHEMA = "vizgrad.report"
# No network at all; 'wasm-unsafe-eval' lets Graphviz's WebAssembly compile, and the layout
# runs in a worker started from a Blob of the page's own script (worker-src blob:).
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; "
                           "worker-src blob:; style-src 'unsafe-inline'; img-src data:")
#: vizgrad's categorical palette, the same as SERIES_COLOURS in widgets/src/charts.js:
#: colour-blind safe (Okabe and Ito's colours after the class blue and orange).
SERIES_COLOURS = ("#4c72b0", "#dd8452", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442")
CLASS_COLOURS = tuple(tuple(int(colour[k:k + 2], 16) for k in (1, 3, 5)) for colour in SERIES_COLOURS[:3])

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="generator" content="vizgrad {version}">
<title>{title}</title>
<style>
{style}
</style>
</head>
<body>
<div id="vizgrad-report" class="vg-report"></div>
<noscript>This vizgrad report is drawn by JavaScript: open it in a browser with scripts enabled.</noscript>
<script type="application/json" id="vizgrad-data">{data}</script>
<script>
{script}
</script>
</body>
</html>
"""


class BundleMissing(FileNotFoundError):
    """The browser bundle has not been built (it is build output, not in the source tree)."""


def read_bundle():
    """The report's (script, style) text from ``vizgrad/render/static/``."""
    texts = []
    for name in BUNDLE:
        path = os.path.join(STATIC_DIR, name)
        try:
            with open(path, encoding="utf-8") as handle:
                texts.append(handle.read())
        except FileNotFoundError:
            raise BundleMissing(
                f"vizgrad's browser bundle is missing ({path}): it is built from widgets/ with Node.js. "
                "In a source checkout run `make build` (or `npm --prefix widgets ci && npm --prefix widgets "
                "run build`), then try again.") from None
    script, style = texts
    # build.mjs escapes these; a bundle that still holds them would break out of its element
    if any(marker in script.lower() for marker in ("</script", "<!--")) or "</style" in style.lower():
        raise BundleMissing(f"the bundle in {STATIC_DIR} cannot be inlined safely; rebuild it with `make build`")
    return script, style


def script_json(data):
    """JSON text that is safe inside ``<script type="application/json">``: no user string
    can close the element or open a comment, and JavaScript parsers accept it."""
    text = json.dumps(data, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    for character, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                              ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(character, escape)
    return text


def page(data, title):
    """A complete HTML document for the report ``data`` (see :func:`report_data`)."""
    from .._version import __version__
    script, style = read_bundle()
    return _TEMPLATE.format(csp=CONTENT_SECURITY_POLICY, version=html.escape(__version__),
                            title=html.escape(title or "vizgrad"), style=style, data=script_json(data),
                            script=script)


def report_data(graph, title=None, extra=None, layout="page", **dot_options):
    """What the page's script reads: the graph's JSON, its DOT source and the ``extra`` panels."""
    from .._version import __version__
    from .dot import to_dot
    return {"schema": REPORT_SCHEMA, "version": 1, "vizgrad": __version__, "title": title, "layout": layout,
            "graph": graph.to_dict(), "dot": to_dot(graph, **dot_options), "extra": _clean(extra or {})}


def to_html(graph, path=None, title=None, extra=None, **dot_options):
    """A self-contained HTML page showing ``graph`` with its backward replay.

    Args:
        path: where to write the page; when None the HTML text is returned instead.
        title: the page's title and heading.
        extra: more panels: ``loss_curve``, ``grad_flow``, ``decision_boundary`` (see
            :func:`build_report`), ``summary`` (a dict of facts) and ``subtitle``.
        dot_options: passed to :func:`vizgrad.render.dot.to_dot` (``collapse``, ``max_nodes``, ...).

    Returns:
        The HTML text, or ``path`` when the page was written there.

    Raises:
        BundleMissing: the browser bundle was not built (run ``make build``).
    """
    text = page(report_data(graph, title or "vizgrad graph", extra, **dot_options), title or "vizgrad graph")
    if path is None:
        return text
    _write_atomically(os.fspath(path), text)
    return os.fspath(path)


def to_html_fragment(graph, height=560, **dot_options):
    """The graph view as an ``<iframe>`` whose ``srcdoc`` is a self-contained page, for
    notebooks (``Graph._repr_html_``). The frame is sandboxed: its script cannot reach the
    notebook. Returns None when the bundle was not built, so notebooks fall back to the
    graph's SVG or text form."""
    try:
        document = page(report_data(graph, layout="fragment", **dot_options), "vizgrad graph")
    except BundleMissing:
        return None
    return (f'<iframe class="vizgrad-graph" title="vizgrad graph" sandbox="allow-scripts" '
            f'style="width:100%;height:{int(height)}px;border:0" srcdoc="{html.escape(document, quote=True)}">'
            "</iframe>")


# --- training reports -----------------------------------------------------------
def build_report(path, graph, loss_curve=None, grad_flow=None, decision_boundary=None,
                 title="vizgrad training report", summary=None, subtitle=None):
    """Write a one-file training report: ``graph`` (one step, with its backward replay) and
    the training panels that are given.

    Args:
        loss_curve: losses, one per step; or ``(steps, losses)``; or ``{"steps", "values"}``.
        grad_flow: ``[(step, vizgrad.diagnostics.grad_flow(model)), ...]`` taken during
            training, or the ``{"steps", "layers", "rms", "status"}`` dict it becomes.
        decision_boundary: what :func:`decision_boundary_panel` returns.
        summary: facts shown at the top, e.g. ``{"accuracy": "98%"}``.

    Returns:
        ``path``.
    """
    extra = {"loss_curve": loss_curve_data(loss_curve) if loss_curve is not None else None,
             "grad_flow": grad_flow_data(grad_flow) if grad_flow is not None else None,
             "decision_boundary": decision_boundary, "summary": summary or {}, "subtitle": subtitle}
    return to_html(graph, path, title=title, extra={k: v for k, v in extra.items() if v is not None})


def loss_curve_data(loss_curve):
    """``{"steps": [...], "values": [...]}`` from the forms :func:`build_report` accepts."""
    if isinstance(loss_curve, dict):
        values = list(loss_curve["values"])
        steps = list(loss_curve.get("steps", range(len(values))))
    elif isinstance(loss_curve, tuple) and len(loss_curve) == 2:
        steps, values = list(loss_curve[0]), list(loss_curve[1])
    else:
        values = list(loss_curve)
        steps = list(range(len(values)))
    if len(steps) != len(values):
        raise ValueError(f"loss_curve has {len(steps)} steps but {len(values)} values")
    return {"steps": [int(s) for s in steps], "values": [_finite_or_none(v) for v in values]}


def grad_flow_data(history):
    """``{"steps", "layers", "rms": [checkpoint][layer], "status": [checkpoint][layer]}`` from
    ``[(step, rows of vizgrad.diagnostics.grad_flow), ...]`` (a dict passes through)."""
    if isinstance(history, dict):
        return history
    history = list(history)
    layers = [row.name for row in history[0][1]] if history else []
    for step, rows in history:
        if [row.name for row in rows] != layers:
            raise ValueError(f"grad_flow: the parameters at step {step} differ from those at step {history[0][0]}")
    return {"steps": [int(step) for step, _ in history], "layers": layers,
            "rms": [[_finite_or_none(row.grad_rms) for row in rows] for _, rows in history],
            "status": [[row.status for row in rows] for _, rows in history]}


def decision_boundary_panel(probabilities, extent, points=(), labels=(), classes=("class 0", "class 1"), caption=None):
    """The decision-boundary panel: a picture of a binary classifier's ``probabilities``.

    Args:
        probabilities: a (rows, columns) grid of P(class 1); row 0 is the bottom (``ymin``).
        extent: ``(xmin, xmax, ymin, ymax)`` that the grid covers.
        points: (n, 2) data coordinates drawn over the picture, coloured by ``labels`` (0 or 1).

    Returns:
        A dict for :func:`build_report`'s ``decision_boundary``.
    """
    import numpy as np
    grid = np.clip(np.asarray(probabilities, dtype=np.float64), 0.0, 1.0)[::-1]   # PNG rows run top down
    low, high = (np.array(c, dtype=np.float64) for c in CLASS_COLOURS[:2])
    confidence = np.abs(grid - 0.5)[..., None] * 2                               # 0 on the boundary
    colour = np.where(grid[..., None] >= 0.5, high, low)
    tint = 255 - (255 - colour) * (0.18 + 0.5 * confidence)                      # pale, deeper when sure
    return {"image": png_data_uri(tint.round().astype(np.uint8)),
            "extent": [float(v) for v in extent],
            "points": [[round(float(x), 4), round(float(y), 4), int(label)] for (x, y), label in zip(points, labels)],
            "classes": list(classes), "caption": caption}


def png_data_uri(pixels):
    """A ``data:image/png;base64,...`` URI of an (height, width, 3) uint8 RGB array."""
    import numpy as np
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    if pixels.ndim != 3 or pixels.shape[2] != 3:
        raise ValueError(f"png_data_uri needs an (height, width, 3) RGB array, got shape {pixels.shape}")
    height, width, _ = pixels.shape
    rows = b"".join(b"\x00" + pixels[row].tobytes() for row in range(height))   # filter 0 per row

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


# --- helpers ------------------------------------------------------------------------
def _finite_or_none(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _clean(value):
    """``value`` with non-finite floats as None (JSON has no NaN) and tuples as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _write_atomically(path, text):
    """Write ``text`` to ``path`` through a temporary file, so readers never see half a page."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
