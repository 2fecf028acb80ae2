"""Pictures the lessons and checkers show: a graph with highlighted nodes, a loss curve
and a classifier's decision boundary. Each object renders itself in a notebook
(``_repr_html_``) and needs nothing beyond vizgrad: the graph is an inline SVG when
Graphviz's layout is installed (``pip install 'vizgrad[svg]'``), otherwise the
self-contained interactive view (laid out in the browser), otherwise a text outline.
"""

import html

import numpy as np

from ..render.dot import quote, shape_text, to_dot

HIGHLIGHT = "#d62728"
#: vizgrad's diverging scale for signed values (orange negative, white zero, blue positive),
#: as the widgets draw feature maps, kernels and hidden units (widgets/src/widgets/optimizer-core.js).
DIVERGING = ((230, 120, 30), (245, 195, 140), (248, 248, 248), (150, 195, 230), (40, 110, 190))


def diverging_cmap():
    """:data:`DIVERGING` as a matplotlib colormap, for ``imshow`` of signed values with
    ``vmin=-limit, vmax=limit``, so the lessons' figures read like the widgets."""
    from matplotlib.colors import LinearSegmentedColormap
    return LinearSegmentedColormap.from_list("vizgrad_diverging", [tuple(c / 255 for c in rgb) for rgb in DIVERGING])
_HIGHLIGHT_STYLES = {"op": '"rounded,filled,bold"', "output": '"filled,bold"'}


class GraphFigure:
    """``graph`` (a :class:`vizgrad.Graph`) with the nodes in ``highlight`` (ids) drawn in
    red, the first of them labelled with ``note``."""

    def __init__(self, graph, highlight=(), note=None, title=None, rankdir="LR", base_dot=None):
        self.graph = graph
        self.highlight = [highlight] if isinstance(highlight, str) else [h for h in highlight if h]
        self.note, self.title, self.rankdir = note, title, rankdir
        self.base_dot = base_dot

    def dot(self):
        """DOT source: :func:`vizgrad.render.dot.to_dot` (or ``base_dot``, whose node ids are
        the graph's) plus the highlight."""
        text = self.base_dot or to_dot(self.graph, rankdir=self.rankdir, title=self.title)
        extra = []
        kinds = {node.id: node.kind for node in self.graph.nodes}
        for position, node_id in enumerate(self.highlight):
            style = _HIGHLIGHT_STYLES.get(kinds.get(node_id), '"filled,bold"')
            extra.append(f'  {quote(node_id)} [color="{HIGHLIGHT}", fontcolor="{HIGHLIGHT}", penwidth=3.5, '
                         f'fillcolor="#fde0dc", style={style}];')
            if position == 0 and self.note:
                extra.append(f'  vizgrad_note [label={quote(self.note)}, shape=note, style=filled, '
                             f'fillcolor="#fff5f4", color="{HIGHLIGHT}", fontcolor="{HIGHLIGHT}", fontsize=9];')
                extra.append(f'  vizgrad_note -> {quote(node_id)} [style=dashed, color="{HIGHLIGHT}", arrowsize=0.6];')
        body, _, _ = text.rstrip().rpartition("}")
        return body + "\n".join(extra) + "\n}\n"

    def svg(self):
        """SVG text, or None when no Graphviz binding is installed."""
        from ..render.svg import LayoutUnavailable, layout_svg
        try:
            text = layout_svg(self.dot())
        except LayoutUnavailable:
            return None
        start = text.find("<svg")
        return text[start:] if start >= 0 else text

    def text(self):
        """The graph as an indented outline, highlighted nodes marked."""
        lines = []
        for node in self.graph.nodes:
            marker = "  <-- " + (self.note or "here") if node.id in self.highlight else ""
            inputs = self.graph.inputs_of(node.id)
            source = f" <- {', '.join(inputs)}" if inputs else ""
            lines.append(f"  {node.id}: {node.label or node.kind} {shape_text(node.shape)}{source}{marker}")
        return "\n".join(lines)

    def _repr_html_(self):
        svg = self.svg()
        if svg is not None:
            return f'<div class="vizgrad-figure" style="max-width:100%;overflow:auto">{svg}</div>'
        from ..render.html import BundleMissing, page, report_data
        try:
            data = report_data(self.graph, layout="fragment")
            data["dot"] = self.dot()
            document = page(data, self.title or "vizgrad graph")
        except BundleMissing:
            return f"<pre>{html.escape(self.text())}</pre>"
        height = min(600, 140 + 60 * len(self.graph.nodes))
        return (f'<iframe class="vizgrad-graph" title="vizgrad graph" sandbox="allow-scripts" '
                f'style="width:100%;height:{height}px;border:0" srcdoc="{html.escape(document, quote=True)}">'
                "</iframe>")

    def __repr__(self):
        return f"<GraphFigure: {len(self.graph.nodes)} nodes, highlighted {self.highlight}>\n{self.text()}"


# --- charts -------------------------------------------------------------------------------
class LossCurve:
    """A line chart of ``losses`` (one per step), as inline SVG."""

    def __init__(self, losses, title="loss", width=460, height=200, log=False):
        self.losses = [float(v) for v in losses]
        self.title, self.width, self.height, self.log = title, width, height, log

    def _repr_svg_(self):
        values = np.asarray(self.losses, dtype=np.float64)
        finite = values[np.isfinite(values)]
        w, h, pad = self.width, self.height, 36
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                 'font-family="sans-serif" font-size="11">',
                 f'<rect width="{w}" height="{h}" fill="white"/>',
                 f'<text x="{pad}" y="14" font-weight="bold">{html.escape(self.title)}</text>']
        if finite.size:
            shown = np.log10(np.maximum(values, 1e-12)) if self.log else values
            low, high = float(np.nanmin(shown[np.isfinite(shown)])), float(np.nanmax(shown[np.isfinite(shown)]))
            high = high if high > low else low + 1.0
            steps = max(1, len(values) - 1)

            def point(i, v):
                return f"{pad + (w - pad - 10) * i / steps:.1f},{h - 24 - (h - 48) * (v - low) / (high - low):.1f}"
            points = " ".join(point(i, v) for i, v in enumerate(shown) if np.isfinite(v))
            parts += [f'<line x1="{pad}" y1="{h - 24}" x2="{w - 10}" y2="{h - 24}" stroke="#999"/>',
                      f'<line x1="{pad}" y1="24" x2="{pad}" y2="{h - 24}" stroke="#999"/>',
                      f'<polyline fill="none" stroke="#4c72b0" stroke-width="2" points="{points}"/>',
                      f'<text x="{pad - 4}" y="28" text-anchor="end">{_number(high, self.log)}</text>',
                      f'<text x="{pad - 4}" y="{h - 24}" text-anchor="end">{_number(low, self.log)}</text>',
                      f'<text x="{w - 10}" y="{h - 8}" text-anchor="end">step {len(values) - 1}</text>',
                      f'<text x="{pad}" y="{h - 8}">0</text>']
        parts.append("</svg>")
        return "".join(parts)

    def __repr__(self):
        if not self.losses:
            return "<LossCurve: empty>"
        return f"<LossCurve: {len(self.losses)} steps, {self.losses[0]:.4f} -> {self.losses[-1]:.4f}>"


def _number(value, log):
    return f"{10 ** value:.3g}" if log else f"{value:.3g}"


class DecisionBoundary:
    """A binary classifier's P(class 1) over the plane, with the data points on top.

    Args:
        predict: maps an (m, 2) float32 tensor of points to m scores (logits) or
            probabilities; called under ``no_grad``. None draws the points alone.
        points, labels: the data, (n, 2) and (n,) with labels 0 and 1 (tensors or arrays).
        logits: True when ``predict`` returns logits (a sigmoid is applied).
    """

    def __init__(self, predict, points, labels, logits=True, cells=64, size=320, title=None):
        from .. import creation
        from ..autograd.grad_mode import no_grad
        points = _numpy(points).astype(np.float64)
        self.labels = _numpy(labels).reshape(-1).astype(int)
        self.points, self.size, self.title = points, size, title
        (xmin, ymin), (xmax, ymax) = points.min(axis=0) - 0.5, points.max(axis=0) + 0.5
        gx, gy = np.meshgrid(np.linspace(xmin, xmax, cells), np.linspace(ymin, ymax, cells))
        grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
        self.extent = (xmin, xmax, ymin, ymax)
        self.probabilities = None
        if predict is not None:
            with no_grad():
                scores = _numpy(predict(creation.tensor(grid))).astype(np.float64).reshape(cells, cells)
            self.probabilities = 1.0 / (1.0 + np.exp(-scores)) if logits else scores

    def _repr_html_(self):
        from ..render.html import CLASS_COLOURS, decision_boundary_panel
        xmin, xmax, ymin, ymax = self.extent
        s = self.size
        colours = ["#%02x%02x%02x" % c for c in CLASS_COLOURS]
        dots = "".join(
            f'<circle cx="{s * (x - xmin) / (xmax - xmin):.1f}" cy="{s * (ymax - y) / (ymax - ymin):.1f}" r="3.2" '
            f'fill="{colours[int(label) % 2]}" stroke="white" stroke-width="0.8"/>'
            for (x, y), label in zip(self.points, self.labels))
        title = (f'<div style="font:bold 12px sans-serif;padding:2px 0">{html.escape(self.title)}</div>'
                 if self.title else "")
        image = ""
        if self.probabilities is not None:
            uri = decision_boundary_panel(self.probabilities, self.extent)["image"]
            image = (f'<image href="{uri}" x="0" y="0" width="{s}" height="{s}" '
                     'preserveAspectRatio="none"/>')
        return (f'<div class="vizgrad-boundary" style="display:inline-block;background:white;color:#212121;'
                f'padding:4px">{title}<svg xmlns="http://www.w3.org/2000/svg" width="{s}" height="{s}" '
                f'viewBox="0 0 {s} {s}">{image}{dots}<rect x="0" y="0" width="{s}" height="{s}" fill="none" '
                'stroke="#999"/></svg></div>')

    def __repr__(self):
        if self.probabilities is None:
            return f"<DecisionBoundary: {len(self.points)} points, no model>"
        share = float((self.probabilities >= 0.5).mean())
        return f"<DecisionBoundary: {share:.0%} of the plane predicted class 1>"


def _numpy(value):
    if hasattr(value, "numpy") and hasattr(value, "detach"):
        return np.asarray(value.detach().numpy())
    return np.asarray(value)
