"""SVG through Graphviz's layout, with no system install needed: pygraphviz 2.x wheels
bundle Graphviz; the ``graphviz`` package with a ``dot`` program on PATH also works.

:meth:`vizgrad.Graph.to_svg` lays out whatever it is asked to; a notebook's display path
only lays out the bounded drawing of :mod:`vizgrad.render.inline` (the first Graphviz
layout in a process costs about half a second more: fontconfig scanning fonts), and
:func:`summary_svg` is its picture where Graphviz is missing.
"""

import os
import re
import shutil
import sys
import tempfile
import threading

# The fontconfig bundled in pygraphviz's wheel is older than the system's configuration;
# when it starts (on the first layout in a process) it scans the system's config templates
# and warns about elements it does not know, e.g.
#   Fontconfig warning: "/usr/share/fontconfig/conf.avail/05-reset-dirs-sample.conf", line 6: unknown element "reset-dirs"
# The scan is compiled into that library (no setting turns it off), so the first layout's
# C-level stderr is captured and everything but these warnings is written back.
_FONTCONFIG_NOISE = re.compile(r'^Fontconfig (warning|error): "[^"]*", line \d+: unknown element', re.M)
_fontconfig_started = threading.Event()
_first_layout = threading.Lock()


class LayoutUnavailable(ImportError):
    """Neither pygraphviz nor graphviz with a ``dot`` program can be used here."""


def _without_fontconfig_noise(text):
    return "".join(line for line in text.splitlines(keepends=True) if not _FONTCONFIG_NOISE.match(line))


def _quietly_starting_fontconfig(layout):
    """Run ``layout()``; the first time, with fontconfig's start-up warnings filtered out."""
    if _fontconfig_started.is_set():
        return layout()
    with _first_layout:
        if _fontconfig_started.is_set():
            return layout()
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as captured:
            os.dup2(captured.fileno(), 2)
            try:
                return layout()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                _fontconfig_started.set()
                captured.seek(0)
                rest = _without_fontconfig_noise(captured.read().decode("utf-8", "replace"))
                if rest:
                    sys.stderr.write(rest)


def _layout_with_pygraphviz(dot_source):
    import pygraphviz
    graph = pygraphviz.AGraph(string=dot_source)
    return _quietly_starting_fontconfig(lambda: graph.draw(format="svg", prog="dot")).decode("utf-8")


def _layout_with_graphviz(dot_source):
    import graphviz
    if shutil.which("dot") is None:
        raise LayoutUnavailable("the graphviz package needs the 'dot' program on PATH")
    return graphviz.Source(dot_source).pipe(format="svg").decode("utf-8")


def layout_available():
    """Whether :func:`layout_svg` can run here (without laying anything out)."""
    try:
        import pygraphviz  # noqa: F401
        return True
    except ImportError:
        pass
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def layout_svg(dot_source):
    """SVG text for DOT source, using the first available Graphviz binding."""
    errors = []
    for attempt in (_layout_with_pygraphviz, _layout_with_graphviz):
        try:
            return attempt(dot_source)
        except (ImportError, LayoutUnavailable) as error:
            errors.append(str(error))
    raise LayoutUnavailable(
        "Graph.to_svg needs Graphviz's layout: pip install 'vizgrad[svg]' (pygraphviz, which bundles "
        "Graphviz), or install the graphviz package and the 'dot' program. Graph.to_html() needs "
        "neither: it lays out in the browser. (" + "; ".join(errors) + ")")


def to_svg(graph, **options):
    """The graph as SVG text (options as for :func:`vizgrad.render.dot.to_dot`)."""
    from .dot import to_dot
    return layout_svg(to_dot(graph, **options))



# --- the static summary: a picture with no layout engine ------------------------------
SUMMARY_MAX_ROWS = 40
_ROW, _GAP, _BOX_WIDTH, _LEFT, _TOP = 24, 10, 300, 12, 40
_FILLS = {"leaf": "#eef3fb", "parameter": "#fde9c8", "constant": "#f5f5f5", "op": "#f4f4f4",
          "output": "#e8f5e9", "group": "#ede7f6"}


def _group_field(group, name):
    return group.get(name) if isinstance(group, dict) else getattr(group, name, None)


def _summary_rows(graph):
    """(rows, edges, hidden): a row per node but scalar constants, or per top-level module once the graph passes
    SUMMARY_MAX_ROWS nodes, in the order the forward pass made them; edges as row pairs. Only the
    SUMMARY_MAX_ROWS rows nearest the output are kept (and made), ``hidden`` counts the others."""
    from .dot import module_of
    nodes = [node for node in graph.nodes if node.kind != "constant" or node.shape]   # numbers stay with their ops
    grouped = len(nodes) > SUMMARY_MAX_ROWS
    keys = [node.id for node in nodes]             # each node's row: itself, or its top-level module's
    if grouped:
        for index, node in enumerate(nodes):
            top = module_of(node).partition(".")[0]
            if top:
                keys[index] = "module:" + top
    order = list(dict.fromkeys(keys))              # the rows, in order of first appearance
    hidden = max(0, len(order) - SUMMARY_MAX_ROWS)    # keep the rows nearest the output
    row_of = {key: index for index, key in enumerate(order[hidden:])}
    labels = {_group_field(g, "name"): _group_field(g, "label") for g in (getattr(graph, "groups", None) or ())}
    rows = [None] * len(row_of)
    for node, key in zip(nodes, keys):
        index = row_of.get(key)
        if index is None:
            continue
        if rows[index] is None:
            if key.startswith("module:"):
                top = key[len("module:"):]
                label = f"{top} · {labels[top]}" if labels.get(top) else top
                rows[index] = {"kind": "group", "label": label, "count": 0}
            else:
                rows[index] = {"kind": node.kind, "label": _node_summary(node), "count": 1}
        if rows[index]["kind"] == "group":
            rows[index]["count"] += 1
    node_rows = {node.id: row_of.get(key) for node, key in zip(nodes, keys)}
    edges = {(node_rows.get(e.source), node_rows.get(e.target)) for e in graph.edges}
    return rows, sorted((a, b) for a, b in edges if a is not None and b is not None and a != b), hidden


def _node_summary(node):
    from .dot import shape_text
    title = node.name or node.label or node.op or node.kind
    sample = (node.value or {}).get("sample") if not node.shape else None
    detail = f"= {sample[0]:.4g}" if sample and sample[0] is not None else shape_text(node.shape)
    detail = "" if title.endswith(detail) else f"  {detail}"        # labels such as 'input (4, 8)'
    return f"{title}{f' · {node.op}' if node.op and node.op != title else ''}{detail}"


def summary_svg(graph, title="vizgrad graph"):
    """A static picture of ``graph`` drawn without any layout engine, in time linear in its
    size: one row per node in the order the forward pass made them (one per top-level
    module for graphs over ``SUMMARY_MAX_ROWS`` nodes, at most that many rows), data flow as
    arcs on the right. It is the notebook output's picture where Graphviz cannot run (see
    :mod:`vizgrad.render.inline` for the drawing made where it can)."""
    from html import escape
    rows, edges, hidden = _summary_rows(graph)
    ops = sum(1 for node in graph.nodes if node.op)
    step = _ROW + _GAP
    top = _TOP + (step if hidden else 0)
    reach = max((b - a for a, b in edges), default=0)
    width = _LEFT + _BOX_WIDTH + 30 + min(240, 14 * reach)
    height = top + len(rows) * step + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
             f'<text x="{_LEFT}" y="18" font-weight="bold">{escape(title)}: {len(graph.nodes)} nodes, {ops} ops</text>',
             f'<text x="{_LEFT}" y="32" fill="#666" font-size="11">a summary; JupyterLab with vizgrad draws it '
             f'interactively</text>']
    if hidden:
        parts.append(f'<text x="{_LEFT}" y="{top - _GAP - 4}" fill="#666">… {hidden} earlier rows not shown</text>')
    right = _LEFT + _BOX_WIDTH
    for a, b in edges:
        y1, y2 = top + a * step + _ROW / 2, top + b * step + _ROW / 2
        bulge = right + min(240, 14 * (b - a))
        parts.append(f'<path d="M{right} {y1:.0f} C{bulge} {y1:.0f} {bulge} {y2:.0f} {right + 4} {y2:.0f}" '
                     'fill="none" stroke="#888" marker-end="url(#vg-arrow)"/>')
    parts.append('<defs><marker id="vg-arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
                 'orient="auto"><path d="M6 0L0 3L6 6z" fill="#888"/></marker></defs>')
    for index, row in enumerate(rows):
        y = top + index * step
        label = row["label"] if row["kind"] != "group" else f'{row["label"]}  ({row["count"]} nodes)'
        label = label if len(label) <= 46 else label[:45] + "…"
        parts.append(f'<rect x="{_LEFT}" y="{y}" width="{_BOX_WIDTH}" height="{_ROW}" rx="5" '
                     f'fill="{_FILLS.get(row["kind"], _FILLS["op"])}" stroke="#777"/>'
                     f'<text x="{_LEFT + 8}" y="{y + 16}">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
